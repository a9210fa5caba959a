/* A stream's TX lanes (txq.c; struct lr_txq in engine.h), which control sets up before a trial and sums
 * for RESULT: the workers only write them. */
#ifndef LR_TXQ_H
#define LR_TXQ_H

#include <stdint.h>

#include "engine.h"

/* A stream's lanes set up for a trial (burst: the trial's, 0 for a paced one); their counts summed */
void lr_txq_reset(struct lr_stream *s, unsigned lanes, uint64_t burst);
struct lr_tx_sum {
	uint64_t tx_frames, tx_bytes, first_tsc, last_tsc, lag_ns, peak_fps, restamped;
	uint64_t rx_too_big;
	uint32_t too_big_mtu;
};
void lr_txq_merge(const struct lr_stream *s, struct lr_tx_sum *sum);
/* frames of size class c the lanes sent */
uint64_t lr_txq_class_tx(const struct lr_stream *s, unsigned c);

#endif
