/* See analysis.h. */
#include "analysis.h"

/* n frames of one TX timestamp and one latency into the histogram: the first is a jitter sample unless
 * the frame before it carried the same timestamp (a TX burst split across two RX bursts). */
static inline void add_latency(struct lr_stream *s, uint32_t ts, uint32_t v, uint64_t n)
{
	if (n == 0)
		return;
	if (s->lat.count == 0 || ts != s->lat_ts) {
		lr_hist_add(&s->lat, v);
		n--;
	}
	lr_hist_count(&s->lat, v, n);
	s->lat_ts = ts;
}

void lr_analyse_one(struct lr_port *p, const struct lr_rx_frame *f, int st, uint32_t now_ns32, uint64_t now)
{
	struct lr_stream *s = lr.streams[f->stream];
	/* A measured frame of a stream another engine sends counts from WARMUP on: this receiving half can
	 * still be in WARMUP, its first iteration, when the sender's first frames arrive. A stream this
	 * engine sends has no measured frame of this trial before RUNNING. */
	int first = s != NULL && s->tx_port < 0 ? LR_WARMUP : LR_RUNNING;
	if (st < first || st > LR_DRAINING || s == NULL || !s->in_trial || s->rx_port != p->id ||
	    (f->flags & 0xfe) != LR_TRIAL_BITS(lr.trial.id)) {
		if (f->flags & LR_FLAG_WARMUP)
			p->rx_warmup++;
		else
			p->rx_stale++;
		return;
	}
	if (f->flags & LR_FLAG_WARMUP) {
		p->rx_warmup++;
		return;
	}
	uint64_t seq = f->seq;
	if (f->flow != (uint16_t)lr_mod(seq, s->flows, &s->flows_div)) {
		s->bad_flow++;
		return;
	}
	s->last_rx_tsc = now;
	enum lr_seq_class c = lr_seqwin_add(&s->win, seq);
	s->rx_bytes += f->frame_size;
	if (st == LR_DRAINING)
		s->late++;
	if (c == LR_SEQ_DUPLICATE)
		return;
	s->class_rx[s->cycle_class[lr_mod(seq, s->cycle_len, &s->cycle_div)]]++;
	add_latency(s, f->ts_ns, now_ns32 - f->ts_ns, 1);
}

/* A run: consecutive frames of one stream that arrive in order while it is measured, the common case.
 * Its counters live in this local struct, which never escapes, so the compiler keeps them in registers
 * (stream fields would be reloaded and stored for every frame: frame bytes may alias them), and they
 * are added to the stream once, when the run ends. The frames of one TX burst share a timestamp and
 * those of one RX burst an arrival time: within a run, frames of one latency are frames of one TX burst,
 * and they go into the histogram together. */
struct run {
	struct lr_stream *s; /* NULL: no run */
	uint8_t stream, flags;
	/* the stream's constants, copied: a store into the stream (a class count) could alias them */
	uint64_t *bits, nbits_mask;
	uint32_t flows, cycle_len;
	uint64_t next;  /* the sequence number that continues the run */
	uint32_t flow;  /* the flow of next */
	uint32_t pos;   /* next's position in the size cycle */
	uint64_t frames, bytes;
	uint64_t word, mask; /* the window word next falls in, and the bits the run set in it */
	uint32_t lat;        /* the latency of the last lat_n frames */
	uint64_t lat_n;
};

static inline bool run_open(struct run *r, struct lr_port *p, const struct lr_rx_frame *f, int st)
{
	struct lr_stream *s = lr.streams[f->stream];
	if (s == NULL || !s->in_trial || s->rx_port != p->id || f->flags != LR_TRIAL_BITS(lr.trial.id))
		return false;
	/* measured and not late (lr_analyse_one's rule without DRAINING, which counts late frames) */
	if (st != LR_RUNNING && !(st == LR_WARMUP && s->tx_port < 0))
		return false;
	if (f->seq != s->win.next || f->flow != (uint16_t)lr_mod(f->seq, s->flows, &s->flows_div))
		return false;
	uint64_t i = f->seq & (s->win.nbits - 1);
	*r = (struct run){.s = s,
			  .stream = f->stream,
			  .flags = f->flags,
			  .bits = s->win.bits,
			  .nbits_mask = s->win.nbits - 1,
			  .flows = s->flows,
			  .cycle_len = s->cycle_len,
			  .next = f->seq,
			  .flow = f->flow,
			  .pos = (uint32_t)lr_mod(f->seq, s->cycle_len, &s->cycle_div),
			  .word = i >> 6};
	return true;
}

static inline bool run_continues(const struct run *r, const struct lr_rx_frame *f)
{
	return r->s != NULL && f->seq == r->next && f->stream == r->stream && f->flags == r->flags &&
	       f->flow == (uint16_t)r->flow;
}

static inline void run_add(struct run *r, const struct lr_rx_frame *f, uint32_t now_ns32)
{
	struct lr_stream *s = r->s;
	uint64_t i = r->next & r->nbits_mask;
	if ((i >> 6) != r->word) {
		/* in order, a bit's position still holds the number nbits before it: setting it is clearing
		 * that and setting this one (as lr_seqwin_add) */
		r->bits[r->word] |= r->mask;
		r->word = i >> 6;
		r->mask = 0;
	}
	r->mask |= 1ull << (i & 63);
	r->next++;
	if (++r->flow == r->flows)
		r->flow = 0;
	r->frames++;
	r->bytes += f->frame_size;
	if (r->cycle_len > 1) {
		s->class_rx[s->cycle_class[r->pos]]++;
		if (++r->pos == r->cycle_len)
			r->pos = 0;
	}
	uint32_t v = now_ns32 - f->ts_ns;
	if (v != r->lat) {
		add_latency(s, now_ns32 - r->lat, r->lat, r->lat_n);
		r->lat = v;
		r->lat_n = 0;
	}
	r->lat_n++;
}

static inline void run_close(struct run *r, uint32_t now_ns32, uint64_t now)
{
	struct lr_stream *s = r->s;
	if (s == NULL)
		return;
	r->bits[r->word] |= r->mask;
	s->win.next = r->next;
	s->win.rx += r->frames;
	s->rx_bytes += r->bytes;
	if (r->cycle_len == 1) /* counted here, not per frame (run_add) */
		s->class_rx[s->cycle_class[0]] += r->frames;
	add_latency(s, now_ns32 - r->lat, r->lat, r->lat_n);
	s->last_rx_tsc = now;
	r->s = NULL;
}

void lr_analyse_burst(struct lr_port *p, const struct lr_rx_frame *f, unsigned n, int st, uint32_t now_ns32,
		      uint64_t now)
{
	struct run r = {.s = NULL};
	for (unsigned i = 0; i < n; i++) {
		if (!run_continues(&r, &f[i])) {
			run_close(&r, now_ns32, now);
			if (!run_open(&r, p, &f[i], st)) {
				lr_analyse_one(p, &f[i], st, now_ns32, now);
				continue;
			}
		}
		run_add(&r, &f[i], now_ns32);
	}
	run_close(&r, now_ns32, now);
}
