/* See hist.h. */
#include "hist.h"

#include <string.h>

void lr_hist_reset(struct lr_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t lr_hist_upper(unsigned idx)
{
	if (idx < LR_HIST_SUB)
		return idx;
	unsigned e = idx / LR_HIST_SUB + 4;
	uint64_t sub = idx % LR_HIST_SUB;
	uint64_t low = (LR_HIST_SUB + sub) << (e - 5);
	return low + (1ull << (e - 5)) - 1;
}

uint64_t lr_hist_quantile(const struct lr_hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < LR_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t v = lr_hist_upper(i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
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
