/* A stream's RX state per RX queue and sender lane (rxq.c; struct lr_rxq in engine.h), which control
 * allocates, resets and merges: the workers only write it. */
#ifndef LR_RXQ_H
#define LR_RXQ_H

#include <stdint.h>

#include "engine.h"

/* A stream's per-queue RX state for each queue of its RX port, allocated once (0, or -1 when out of
 * memory); reset before a trial; merged over the queues into sum (the queues that received a measured
 * frame of it in *nq_seen) */
int lr_rxq_alloc(struct lr_stream *s, unsigned nq, unsigned lanes);
void lr_rxq_reset(struct lr_stream *s);
void lr_rxq_merge(const struct lr_stream *s, struct lr_rxq *sum, unsigned *nq_seen);
/* a stream's measured frames received so far, over its RX queues (control's POLL) */
uint64_t lr_rxq_frames(const struct lr_stream *s);

#endif
