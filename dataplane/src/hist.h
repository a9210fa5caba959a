/* Latency histogram: log-linear buckets (32 per power of two, so any value is within 3 % of its
 * bucket's bounds), exact below 32 ns, covering 0 .. 2^32 ns. Fixed size: no allocation per trial. */
#ifndef LR_HIST_H
#define LR_HIST_H

#include <stdint.h>

#define LR_HIST_SUB 32u
#define LR_HIST_BUCKETS (28u * LR_HIST_SUB)

struct lr_hist {
	uint64_t count, sum, min, max;
	uint64_t j16;      /* RFC 3550 interarrival jitter times 16 */
	uint64_t prev;     /* previous frame's latency, for the jitter */
	uint64_t b[LR_HIST_BUCKETS];
};

void lr_hist_reset(struct lr_hist *h);
unsigned lr_hist_index(uint64_t v);
uint64_t lr_hist_upper(unsigned idx);
void lr_hist_add(struct lr_hist *h, uint64_t v);
/* The q-quantile (0 < q <= 1) as the upper bound of its bucket, clamped to [min, max]. */
uint64_t lr_hist_quantile(const struct lr_hist *h, double q);
/* Adds src into dst (e.g. two directions or repetitions). */
void lr_hist_merge(struct lr_hist *dst, const struct lr_hist *src);

#endif
