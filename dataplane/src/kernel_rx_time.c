/* See kernel_rx_time.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_packet.h>

#include <rte_cycles.h>
#include <rte_kvargs.h>

#include "engine.h"
#include "kernel_drops.h"
#include "kernel_rx_time.h"

/* The af_packet PMD's ring geometry (its defaults, and its arguments as it reads them: a key is matched
 * anywhere in the argument's name, by atoi). */
struct ring_geometry {
	unsigned block_size, frame_size, frames;
};

static int geometry_arg(const char *key, const char *value, void *opaque)
{
	struct ring_geometry *g = opaque;
	/* as the PMD reads it (atoi: the leading digits, 0 for none) */
	unsigned v = value ? (unsigned)strtoul(value, NULL, 10) : 0;
	if (strstr(key, "blocksz"))
		g->block_size = v;
	else if (strstr(key, "framesz"))
		g->frame_size = v;
	else if (strstr(key, "framecnt"))
		g->frames = v;
	return 0;
}

static struct ring_geometry ring_geometry(const char *devargs)
{
	struct ring_geometry g = {.block_size = (unsigned)getpagesize(), .frame_size = 2048, .frames = 512};
	struct rte_kvargs *kv = devargs ? rte_kvargs_parse(devargs, NULL) : NULL;
	if (kv != NULL)
		(void)rte_kvargs_process(kv, NULL, geometry_arg, &g);
	rte_kvargs_free(kv);
	return g;
}

unsigned lr_kring_frames(const char *devargs)
{
	return ring_geometry(devargs).frames;
}

unsigned lr_kring_open(int ifindex, const char *devargs, unsigned nq, struct lr_kring *rings)
{
	int fds[LR_MAX_QUEUES];
	int found = lr_kernel_socket_fds(ifindex, fds, LR_MAX_QUEUES);
	struct ring_geometry g = ring_geometry(devargs);
	unsigned mapped = 0;
	for (unsigned q = 0; q < nq; q++) {
		struct lr_kring *k = &rings[q];
		memset(k, 0, sizeof(*k));
		k->fd = (int)q < found ? fds[q] : -1;
		if (k->fd < 0 || g.frame_size == 0 || g.frame_size > g.block_size || g.frames == 0)
			continue;
		/* the PMD maps its RX ring and TX ring as one: the mapping must be that size, or the kernel
		 * refuses it (so a geometry read wrong cannot map the wrong bytes) */
		size_t blocks = g.frames / (g.block_size / g.frame_size);
		size_t len = 2 * (size_t)g.block_size * blocks;
		void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, k->fd, 0);
		if (map == MAP_FAILED) {
			fprintf(stderr, "linerate-engine: af_packet queue %u: its ring could not be mapped to read the kernel's "
					"receive times (latency is then timed when the worker polls)\n", q);
			continue;
		}
		k->map = map;
		k->map_len = len;
		k->frame_size = g.frame_size;
		k->frames = g.frames;
		mapped++;
	}
	return mapped;
}

/* The bytes of a slot that must equal the frame's for the slot to be the frame's: the headers and the tag
 * (sequence number, stamp) of any test frame are in its first 64. */
#define MATCH_BYTES 64u

/* The kernel's receive time of slot i (ns, CLOCK_REALTIME) if the slot holds this frame, 0 if not. The
 * header is read before and after the bytes are compared: a slot the kernel is filling again changes it. */
static uint64_t slot_time(const struct lr_kring *k, uint32_t i, const struct rte_mbuf *m)
{
	const volatile struct tpacket2_hdr *h = (const volatile struct tpacket2_hdr *)(k->map + (size_t)i * k->frame_size);
	uint32_t sec = h->tp_sec, nsec = h->tp_nsec, snap = h->tp_snaplen, mac = h->tp_mac;
	rte_compiler_barrier();
	uint32_t len = m->data_len < MATCH_BYTES ? m->data_len : MATCH_BYTES;
	if (snap != m->data_len || mac + len > k->frame_size || sec == 0)
		return 0;
	if (memcmp((const uint8_t *)(k->map + (size_t)i * k->frame_size + mac), rte_pktmbuf_mtod(m, const void *), len) != 0)
		return 0;
	rte_compiler_barrier();
	if (h->tp_sec != sec || h->tp_nsec != nsec)
		return 0;
	return (uint64_t)sec * 1000000000ull + nsec;
}

/* The slot that holds this frame, searched over the whole ring (k->frames if none): after frames the
 * engine never saw (read before it followed the ring), the PMD's position is found again. */
static uint32_t find_slot(const struct lr_kring *k, const struct rte_mbuf *m)
{
	for (uint32_t i = 0; i < k->frames; i++)
		if (slot_time(k, i, m))
			return i;
	return k->frames;
}

/* The engine's clock (TSC) and CLOCK_REALTIME at one moment: the TSC read either side of the realtime, within
 * 2 us of each other (a thread preempted between the reads would pair the two clocks that far apart, and
 * shift every arrival of the burst by as much); false when no try came that close. */
static bool clock_pair(uint64_t *tsc, uint64_t *real_ns)
{
	for (int i = 0; i < 4; i++) {
		struct timespec ts;
		uint64_t a = rte_rdtsc();
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t b = rte_rdtsc();
		if (b - a <= 2 * lr.tsc_hz / 1000000) {
			*tsc = a + (b - a) / 2;
			*real_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			return true;
		}
	}
	return false;
}

void lr_kring_arrivals(struct lr_kring *k, struct rte_mbuf *const *pkts, unsigned n, uint32_t polled_ns32,
		       uint32_t *arrival, struct lr_rx_times *times)
{
	uint64_t tsc, real;
	if (!clock_pair(&tsc, &real))
		real = 0; /* no pairing: every frame of the burst is timed by the poll */
	uint32_t now32 = real ? (uint32_t)lr_tsc_to_ns(tsc) : polled_ns32;
	bool searched = false;
	for (unsigned i = 0; i < n; i++) {
		uint64_t t = slot_time(k, k->next, pkts[i]);
		if (t == 0 && !searched) {
			/* once a burst: a frame of a slot that does not match is rare (frames read before the engine
			 * followed the ring), a search per frame would cost a ring's reads each */
			searched = true;
			uint32_t at = find_slot(k, pkts[i]);
			if (at < k->frames) {
				k->next = at;
				t = slot_time(k, at, pkts[i]);
			}
		}
		if (++k->next == k->frames)
			k->next = 0;
		/* a receive time after now, or more than a second ago, is not one this frame can have (a clock
		 * stepped, or a timestamp of another clock): the frame is timed by the poll */
		if (t == 0 || real == 0 || t > real || real - t > 1000000000ull) {
			arrival[i] = polled_ns32;
			if (times)
				times->polled++;
			continue;
		}
		uint64_t wait = real - t;
		arrival[i] = now32 - (uint32_t)wait;
		if (times) {
			times->kernel++;
			if (wait > times->wait_max_ns)
				times->wait_max_ns = wait;
		}
	}
}
