/* See hist.h. */
#include "hist.h"

#include <string.h>

void lr_hist_reset(struct lr_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t lr_hist_width(unsigned idx)
{
	return idx < LR_HIST_SUB ? 1 : 1ull << (idx / LR_HIST_SUB - 1);
}

uint64_t lr_hist_lower(unsigned idx)
{
	if (idx < LR_HIST_SUB)
		return idx;
	return (uint64_t)(LR_HIST_SUB + idx % LR_HIST_SUB) * lr_hist_width(idx);
}

uint64_t lr_hist_upper(unsigned idx)
{
	return lr_hist_lower(idx) + lr_hist_width(idx) - 1;
}

/* The bucket of the nearest-rank sample of the q-quantile (LR_HIST_BUCKETS for an empty histogram). */
static unsigned quantile_bucket(const struct lr_hist *h, double q)
{
	if (!h->count)
		return LR_HIST_BUCKETS;
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < LR_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			return i;
	}
	return LR_HIST_BUCKETS - 1;
}

uint64_t lr_hist_quantile(const struct lr_hist *h, double q)
{
	unsigned i = quantile_bucket(h, q);
	if (i == LR_HIST_BUCKETS)
		return 0;
	uint64_t v = lr_hist_lower(i) + (lr_hist_width(i) - 1) / 2;
	if (v > h->max)
		v = h->max;
	if (v < h->min)
		v = h->min;
	return v;
}

uint64_t lr_hist_resolution(const struct lr_hist *h, double q)
{
	unsigned i = quantile_bucket(h, q);
	return i == LR_HIST_BUCKETS ? 0 : lr_hist_width(i) / 2;
}

void lr_hist_merge(struct lr_hist *dst, const struct lr_hist *src)
{
	if (!src->count)
		return;
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	if (src->j16 > dst->j16)
		dst->j16 = src->j16;
	for (unsigned i = 0; i < LR_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}
