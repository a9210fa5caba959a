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

static inline unsigned lr_hist_index(uint64_t v)
{
	if (v < LR_HIST_SUB)
		return (unsigned)v;
	if (v > UINT32_MAX)
		v = UINT32_MAX;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 5 */
	unsigned sub = (unsigned)(v >> (e - 5)) & (LR_HIST_SUB - 1);
	return (e - 4) * LR_HIST_SUB + sub;
}

uint64_t lr_hist_upper(unsigned idx);
/* n frames of latency v that are not new jitter samples (see lr_hist_add). */
static inline void lr_hist_count(struct lr_hist *h, uint64_t v, uint64_t n)
{
	if (n == 0)
		return;
	h->prev = v;
	h->count += n;
	h->sum += v * n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->b[lr_hist_index(v)] += n;
}

/* One frame of latency v that is a new sample of the RFC 3550 interarrival jitter: the caller decides
 * (a frame with a TX timestamp of its own; the frames of one TX burst share one, and their differences
 * of zero would only shrink the jitter by the burst length). Once per received frame: inline. */
static inline void lr_hist_add(struct lr_hist *h, uint64_t v)
{
	if (h->count) {
		uint64_t d = v > h->prev ? v - h->prev : h->prev - v;
		/* J += (|D| - J) / 16, kept as 16 J so the integer arithmetic keeps its precision */
		h->j16 = h->j16 + d - ((h->j16 + 8) >> 4);
	}
	lr_hist_count(h, v, 1);
}

/* The q-quantile (0 < q <= 1) as the upper bound of its bucket, clamped to [min, max]. */
uint64_t lr_hist_quantile(const struct lr_hist *h, double q);
/* Adds src into dst (e.g. two directions or repetitions). */
void lr_hist_merge(struct lr_hist *dst, const struct lr_hist *src);

#endif
