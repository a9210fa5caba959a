/* Latency histogram: log-linear buckets, 1024 per power of two, so a value and its bucket's middle are within
 * 0.05 % of each other (three significant digits, as HdrHistogram keeps), exact below 1024 ns, covering
 * 0 .. 2^32 ns. The finer buckets cost the receiver nothing per frame (the same shift and mask as coarser
 * ones; a stream's latencies fall in a few dozen of them); they cost memory (184 KiB a histogram, reset
 * once per trial). Fixed size: no allocation per trial. */
#ifndef LR_HIST_H
#define LR_HIST_H

#include <stdint.h>

#define LR_HIST_SUB_BITS 10u
#define LR_HIST_SUB (1u << LR_HIST_SUB_BITS)
#define LR_HIST_BUCKETS ((32u - LR_HIST_SUB_BITS + 1u) * LR_HIST_SUB)

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
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= LR_HIST_SUB_BITS */
	unsigned sub = (unsigned)(v >> (e - LR_HIST_SUB_BITS)) & (LR_HIST_SUB - 1);
	return (e - LR_HIST_SUB_BITS + 1) * LR_HIST_SUB + sub;
}

/* The smallest and the largest value bucket idx holds, and the values it holds (1 below LR_HIST_SUB). */
uint64_t lr_hist_lower(unsigned idx);
uint64_t lr_hist_upper(unsigned idx);
uint64_t lr_hist_width(unsigned idx);
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

/* The q-quantile (0 < q <= 1): the nearest-rank sample's bucket, as its middle (rounded down), clamped to
 * [min, max]: within half the bucket's width of the sample, 0.05 % (lr_hist_resolution). */
uint64_t lr_hist_quantile(const struct lr_hist *h, double q);
/* How far the q-quantile may be from the sample it stands for, in ns: half its bucket's width (0 below
 * LR_HIST_SUB, where buckets are exact). */
uint64_t lr_hist_resolution(const struct lr_hist *h, double q);
/* Adds src into dst (e.g. two directions or repetitions). */
void lr_hist_merge(struct lr_hist *dst, const struct lr_hist *src);

#endif
