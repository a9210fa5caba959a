/* Analysis of received test frames: per stream and RX queue (struct lr_rxq), the frames and bytes, the
 * sequence (loss, reordering, duplicates), the size classes and the latency. Called by the worker of the
 * RX queue q that received them, frame by frame in the order of its RX burst; only that worker writes these
 * counters (see engine.h). */
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

/* Books a frame of the tester's that no trial measures (an earlier trial's, a warm-up frame, a corrupted
 * one): the DUT still forwards onto the port (QUIET waits for the port to fall quiet) and, on the stream's
 * own RX port, the stream (the stall rule reads it: a DUT still forwarding an earlier trial has not
 * stalled). s may be NULL (a stream this engine does not know). */
void lr_unmeasured(struct lr_port *p, unsigned q, const struct lr_stream *s, uint64_t seq, uint64_t now);

/* Counts one frame, whatever it is: warm-up, a frame of an earlier trial, a wrong flow, a loss, a
 * reordered or duplicated frame, a late one while draining. st is the trial state read after the burst
 * was received; now its arrival time (TSC) and now_ns32 the same in ns modulo 2^32. The reference: every
 * faster path below counts exactly what this would (engine_unit_test checks it). */
void lr_analyse_one(struct lr_port *p, unsigned q, const struct lr_rx_frame *f, int st, uint32_t now_ns32,
		    uint64_t now);

/* A run: consecutive frames of one stream that arrive in order while it is measured, the common case.
 * Its counters live in this struct, a local of the receiving loop that never escapes, so the compiler
 * keeps them in registers (stream fields would be reloaded and stored for every frame: frame bytes may
 * alias them); they are added to the stream once, when the run ends. The frames of one TX burst share a
 * timestamp and those of one RX burst an arrival time: within a run, frames of one latency are frames of
 * one TX burst, and they go into the histogram together. A run never outlives its RX burst. */
struct lr_run {
	struct lr_stream *s; /* NULL: no run */
	struct lr_rxq *q;    /* the stream's state on the queue the run arrives on */
	uint32_t tag_head;   /* lr_tag_head(flags, stream) of its frames */
	/* the stream's constants, copied: a store into the stream (a class count) could alias them */
	uint32_t flows, cycle_len;
	uint64_t first, next; /* the run's first sequence number, and the one that continues it */
	uint32_t flow;	      /* the flow of next */
	uint32_t pos;	      /* next's position in the size cycle */
	uint64_t bytes;
	uint32_t lat, lat_tx; /* the latency and TX stamp of the frames from lat_from to next - 1 */
	uint64_t lat_from;
};

/* Whether a frame of stream s with these tag flags, arriving on port p in state st, belongs to the
 * measurement: a stream of this trial received on p, the trial's bits in flags, a state in which it counts.
 * A measured frame of a stream another engine sends counts from WARMUP on: this receiving half can still
 * be in WARMUP, its first iteration, when the sender's first frames arrive. A stream this engine sends has
 * no measured frame of this trial before RUNNING. Warm-up frames (LR_FLAG_WARMUP set) are never measured. */
static inline bool lr_measured(const struct lr_stream *s, const struct lr_port *p, uint8_t flags, int st)
{
	if (s == NULL || !s->in_trial || s->rx_port != p->id || flags != LR_TRIAL_BITS(lr.trial.id))
		return false;
	return st >= (s->tx_port < 0 ? LR_WARMUP : LR_RUNNING) && st <= LR_DRAINING;
}

/* n frames of one TX timestamp and one latency into the histogram: the first is a jitter sample unless
 * the frame before it carried the same timestamp (a TX burst split across two RX bursts). */
static inline void lr_add_latency(struct lr_rxq *q, uint32_t ts, uint32_t v, uint64_t n)
{
	if (n == 0)
		return;
	if (unlikely(lr.realtime && v > INT32_MAX)) {
		q->lat_negative += n;
		q->lat_ts = ts;
		return;
	}
	if (q->lat.count == 0 || ts != q->lat_ts) {
		lr_hist_add(&q->lat, v);
		n--;
	}
	lr_hist_count(&q->lat, v, n);
	q->lat_ts = ts;
}

/* Whether the run's stream has one flow and one frame size, the common case: the flow of every frame is 0
 * and its size class is counted when the run ends, so the loop that extends the run (lr_run_extend, given
 * this as a constant the compiler folds, as per_frame_arrival) keeps neither the flow nor the position in
 * the size cycle. With them the run did not fit the registers: its byte count was an add to memory per
 * frame. */
static inline bool lr_run_plain(const struct lr_run *r)
{
	return r->flows == 1 && r->cycle_len == 1;
}

/* The frame that continues the run (its sequence number, stream, flags and flow checked). The fewer
 * fields it updates, the more of the run stays in registers: the frame count is next - first, the frames of
 * one latency next - lat_from, and the window's bits first .. next - 1 are set a word at a time when the
 * run ends (lr_run_close): a per-frame bit kept a value in memory from frame to frame, a fifth of the
 * receiver's own time per frame. Frames of one latency group are frames of one TX stamp arriving at one
 * time; when a burst's frames share one arrival time (per_frame_arrival false, a constant the compiler
 * folds), one latency means one TX stamp and the stamp need not be compared. */
static inline void lr_run_add(struct lr_run *r, uint32_t frame_size, uint32_t ts_ns, uint32_t now_ns32,
			      bool per_frame_arrival, bool plain)
{
	struct lr_stream *s = r->s;
	uint64_t seq = r->next++;
	r->bytes += frame_size;
	if (!plain) {
		if (++r->flow == r->flows)
			r->flow = 0;
		if (r->cycle_len > 1) {
			r->q->class_rx[s->cycle_class[r->pos]]++;
			if (++r->pos == r->cycle_len)
				r->pos = 0;
		}
	}
	uint32_t v = now_ns32 - ts_ns;
	if (v != r->lat || (per_frame_arrival && ts_ns != r->lat_tx)) {
		lr_add_latency(r->q, r->lat_tx, r->lat, seq - r->lat_from);
		r->lat = v;
		r->lat_tx = ts_ns;
		r->lat_from = seq;
	}
}

/* The receiver's common case, straight from the frame's bytes: an untagged IPv4 (no options) or IPv6 UDP
 * test frame that continues the open run. True: counted (as lr_parse_tag, then lr_analyse_next, would
 * count it). False: nothing done, the frame takes the general path. Checking the frame against the tag the
 * run expects (lr_is_next) instead of decoding it, and counting it in the same pass, is what lets one core
 * analyse every frame at nearly the rate another only frees them. len: bytes in the first segment; plain:
 * lr_run_plain(r), which the caller tests once for a stretch of frames. */
static inline bool lr_run_extend(struct lr_run *r, const uint8_t *p, uint32_t len, uint32_t frame_size,
				 uint32_t now_ns32, bool per_frame_arrival, bool plain)
{
	uint32_t ts_ns;
	if (r->s == NULL || !lr_is_next(p, len, r->tag_head, r->next, plain ? 0 : (uint16_t)r->flow, &ts_ns))
		return false;
	lr_run_add(r, frame_size, ts_ns, now_ns32, per_frame_arrival, plain);
	return true;
}

/* Counts a parsed test frame: it continues the open run, or the run ends and the frame opens another or
 * is counted alone (lr_analyse_one). */
void lr_analyse_next(struct lr_run *r, struct lr_port *p, unsigned q, const struct lr_rx_frame *f, int st,
		     uint32_t now_ns32, uint64_t now);
/* Adds the run's counters to its stream; the end of every RX burst (now: its receipt, TSC). */
void lr_run_close(struct lr_run *r, uint64_t now);

/* Counts the n frames of one burst, in order: lr_analyse_next on each, then lr_run_close. arrival: each
 * frame's arrival (ns modulo 2^32), NULL: all at now_ns32. */
void lr_analyse_burst(struct lr_port *p, unsigned q, const struct lr_rx_frame *f, unsigned n, int st,
		      const uint32_t *arrival, uint32_t now_ns32, uint64_t now);

#endif
