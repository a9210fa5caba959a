/* Unit tests of the engine's DPDK-linked arithmetic (no EAL, no ports): the reciprocal modulo RX uses to
 * find a frame's flow and IMIX cycle position from its sequence number. */
#include <inttypes.h>
#include <stdio.h>

#include "engine.h"

struct lr_engine lr; /* engine.h declares it; nothing here reads it */

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

int main(void)
{
	/* 1 (no division), small and prime divisors, a power of two, the largest flow count and cycle length */
	static const uint64_t divisors[] = {1, 2, 3, 7, 10, 12, 1000, 1024, 4093, 65535, 65536, LR_MAX_CYCLE};
	uint64_t x = 0x9e3779b97f4a7c15ull, checked = 0, bad = 0;
	for (unsigned i = 0; i < sizeof(divisors) / sizeof(divisors[0]); i++) {
		uint64_t d = divisors[i];
		struct rte_reciprocal_u64 r = rte_reciprocal_value_u64(d);
		for (unsigned k = 0; k < 200000; k++) {
			/* every small number, numbers near 2^64, and random ones of every magnitude */
			uint64_t a = k < 1000 ? k : k < 2000 ? UINT64_MAX - (k - 1000) : xorshift(&x) >> (k % 64);
			checked++;
			if (lr_mod(a, d, &r) != a % d) {
				if (bad++ < 5)
					fprintf(stderr, "lr_mod(%" PRIu64 ", %" PRIu64 ") = %" PRIu64 ", want %" PRIu64 "\n", a, d,
						lr_mod(a, d, &r), a % d);
			}
		}
	}
	if (bad) {
		fprintf(stderr, "engine unit tests: %" PRIu64 " of %" PRIu64 " wrong\n", bad, checked);
		return 1;
	}
	printf("engine unit tests: all passed (%" PRIu64 " reciprocal modulos)\n", checked);
	return 0;
}
