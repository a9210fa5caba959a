/* Analysis of received test frames: per stream, the frames and bytes, the sequence (loss, reordering,
 * duplicates), the size classes and the latency. Called by the worker that received them, once per RX
 * burst; only that worker writes these counters (see engine.h). */
#ifndef LR_ANALYSIS_H
#define LR_ANALYSIS_H

#include "engine.h"

/* What the parser found in one received test frame. */
struct lr_rx_frame {
	uint64_t seq;
	uint32_t ts_ns;
	uint32_t frame_size; /* on the wire, with FCS */
	uint16_t flow;
	uint8_t stream, flags;
};

/* Counts one frame, whatever it is: warm-up, a frame of an earlier trial, a wrong flow, a loss, a
 * reordered or duplicated frame, a late one while draining. st is the trial state read after the burst
 * was received; now its arrival time (TSC) and now_ns32 the same in ns modulo 2^32. */
void lr_analyse_one(struct lr_port *p, const struct lr_rx_frame *f, int st, uint32_t now_ns32, uint64_t now);

/* Counts the n frames of one burst, in order: exactly what lr_analyse_one on each would count, faster. */
void lr_analyse_burst(struct lr_port *p, const struct lr_rx_frame *f, unsigned n, int st, uint32_t now_ns32,
		      uint64_t now);

#endif
