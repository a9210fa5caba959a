/* A stream's RX state per RX queue and sender lane (engine.h, struct lr_rxq): allocated when the stream is
 * defined, never in a trial; merged over queues and lanes when control reports, by the rules engine.h
 * argues are exact. */
#include <stdlib.h>
#include <string.h>

#include "rxq.h"
#include "engine.h"

static int alloc_one(struct lr_rxq **slot)
{
	uint64_t nbits = 1ull << lr.window_bits;
	if (*slot == NULL) {
		/* a queue's counters on cache lines of their own: aligned as the type asks */
		struct lr_rxq *r = aligned_alloc(_Alignof(struct lr_rxq), sizeof(*r));
		uint64_t *bits = r ? lr_seqwin_alloc(nbits) : NULL;
		if (bits == NULL) {
			free(r);
			return -1;
		}
		memset(r, 0, sizeof(*r));
		lr_seqwin_init(&r->win, bits, nbits);
		lr_hist_reset(&r->lat);
		*slot = r;
	}
	return 0;
}

int lr_rxq_alloc(struct lr_stream *s, unsigned nq, unsigned lanes)
{
	for (unsigned q = 0; q < nq && q < LR_MAX_QUEUES; q++)
		for (unsigned k = 0; k < lanes && k < LR_MAX_QUEUES; k++)
			if (alloc_one(&s->rxq[q][k]) != 0)
				return -1;
	return 0;
}

void lr_rxq_reset(struct lr_stream *s)
{
	for (unsigned i = 0; i < LR_MAX_QUEUES * LR_MAX_QUEUES; i++) {
		struct lr_rxq *r = s->rxq[i / LR_MAX_QUEUES][i % LR_MAX_QUEUES];
		if (r == NULL)
			continue;
		lr_seqwin_reset(&r->win);
		r->rx_bytes = r->late = r->bad_flow = r->corrupted = r->unknown_lane = r->last_rx_tsc = r->lat_negative = 0;
		r->fragmented = r->fragmented_whole = r->fragments = 0;
		r->lat_ts = 0;
		memset(r->class_rx, 0, sizeof(r->class_rx));
		lr_hist_reset(&r->lat);
	}
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Counts and the latency histogram add up (each frame is counted on one queue and lane only); the longest
 * distances (in frames of one lane) and the last receipt are the largest of any; the jitter is the largest
 * (lr_hist_merge), as a stream's jitter over two paths is at least each path's. */
void lr_rxq_merge(const struct lr_stream *s, struct lr_rxq *sum, unsigned *nq_seen)
{
	memset(sum, 0, sizeof(*sum));
	lr_hist_reset(&sum->lat);
	*nq_seen = 0;
	for (unsigned i = 0; i < LR_MAX_QUEUES * LR_MAX_QUEUES; i++) {
		unsigned q = i / LR_MAX_QUEUES, k = i % LR_MAX_QUEUES;
		const struct lr_rxq *r = s->rxq[q][k];
		if (r == NULL)
			continue;
		bool seen_before = false; /* this queue counted once, whatever its lanes */
		for (unsigned j = 0; j < k; j++)
			seen_before |= s->rxq[q][j] && s->rxq[q][j]->win.rx;
		if (r->win.rx && !seen_before)
			(*nq_seen)++;
		sum->win.rx += r->win.rx;
		sum->win.dup += r->win.dup;
		sum->win.reordered += r->win.reordered;
		sum->win.beyond += r->win.beyond;
		sum->win.early += r->win.early;
		sum->win.max_late = max64(sum->win.max_late, r->win.max_late);
		sum->win.max_early = max64(sum->win.max_early, r->win.max_early);
		sum->rx_bytes += r->rx_bytes;
		sum->late += r->late;
		sum->bad_flow += r->bad_flow;
		sum->corrupted += r->corrupted;
		sum->fragmented += r->fragmented;
		sum->fragments += r->fragments;
		sum->fragmented_whole += r->fragmented_whole;
		sum->unknown_lane += r->unknown_lane;
		sum->lat_negative += r->lat_negative;
		sum->last_rx_tsc = max64(sum->last_rx_tsc, r->last_rx_tsc);
		for (unsigned c = 0; c < LR_MAX_CLASSES; c++)
			sum->class_rx[c] += r->class_rx[c];
		lr_hist_merge(&sum->lat, &r->lat);
	}
}

uint64_t lr_rxq_frames(const struct lr_stream *s)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < LR_MAX_QUEUES * LR_MAX_QUEUES; i++) {
		const struct lr_rxq *r = s->rxq[i / LR_MAX_QUEUES][i % LR_MAX_QUEUES];
		if (r)
			n += r->win.rx;
	}
	return n;
}
