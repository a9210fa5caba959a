/* The timeline of a long trial (PROTOCOL.md, "The timeline"): every position of each stream's schedule
 * judged received or lost once it has had settle_ms to arrive, counted in bins by when it was due, and
 * every run of consecutive losses (an outage) found to the frame; the bins the tester spoiled flagged.
 *
 * A collector thread does it, off the fast path: it reads the workers' sequence windows behind them (a
 * frame is received if any RX queue's window of its lane has its bit), so the windows need to span only
 * settle_ms and a margin at the lane's rate, and memory does not grow with the trial. The workers add
 * only what the collector cannot see from outside: a sending lane that fell behind and a worker's gap
 * between two passes that ended before the collector looked (lr_timeline_event). */
#ifndef LR_TIMELINE_H
#define LR_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "control_proto.h"
#include "engine.h"

/* the flags of a bin the tester spoiled (PROTOCOL.md) */
enum { LR_TL_LAG = 1, LR_TL_PAUSE = 2, LR_TL_RX_DROP = 4, LR_TL_WINDOW = 8, LR_TL_UNSENT = 16 };

struct lr_tl_params {
	uint64_t bin_ms, settle_ms, outage_frames, lag_ms, gap_ms, duration_ms;
};

/* A worker's event for the collector (a lane's lag, a worker's gap): counted, and from when it mattered
 * if it is the first since the collector acknowledged the last it saw (later ones in between start no
 * earlier). The count is stored last and fenced, so a collector that sees this lane's frames sent after
 * the event sees the event too. Rare: off the common path. */
static inline void lr_timeline_event(uint64_t *events, const uint64_t *ack, uint64_t *from, uint64_t from_tsc)
{
	uint64_t n = *events;
	if (n == lr_peek_u64(ack))
		lr_publish_u64(from, from_tsc);
	__atomic_store_n(events, n + 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Whether a timeline can be kept for the trial's streams at these rates (frames/s, one per stream): a
 * paced trial of streams this engine sends and receives, whose lanes' windows span settle_ms and the
 * collector's margin. 0, or -1 with o saying why. */
int lr_timeline_check(const struct lr_tl_params *p, const int *streams, const double *fps, unsigned n,
		      uint64_t burst, struct out *o);
/* Starts the collector for the trial control is about to publish (its streams set up, counters reset);
 * the workers' event marks are set here. 0, or -1 with o saying why (no thread). */
int lr_timeline_start(const struct lr_tl_params *p, struct out *o);
/* Starts the collector thread, once the trial is published. 0, or -1 with o saying why. */
int lr_timeline_run(struct out *o);
/* The trial has no timeline: the workers' event marks off. */
void lr_timeline_off(void);
/* Waits for the collector's last look at a finished trial (it ends by itself once the trial is done or
 * aborted); no-op without one. Control calls it before anything that reads what the collector reads
 * destructively (the kernel's drop counts) or resets what it reads. */
void lr_timeline_join(void);
/* TIMELINE: the bins and outages from the given numbers on. */
int lr_timeline_put(struct args *a, struct out *o);

#endif
