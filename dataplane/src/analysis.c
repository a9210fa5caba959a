/* See analysis.h. */
#include "analysis.h"

void lr_unmeasured(struct lr_port *p, unsigned q, const struct lr_stream *s, uint64_t seq, uint64_t now)
{
	lr_publish_u64(&p->q[q].last_unmeasured_tsc, now);
	if (s != NULL && s->defined && s->rx_port == p->id) {
		struct lr_rxq *r = lr_rxq_of(s, q, seq);
		if (r != NULL)
			lr_publish_u64(&r->last_unmeasured_tsc, now);
	}
}

void lr_analyse_one(struct lr_port *p, unsigned q, const struct lr_rx_frame *f, int st, uint32_t now_ns32,
		    uint64_t now)
{
	struct lr_stream *s = lr.streams[f->stream];
	if (!lr_measured(s, p, f->flags & ~LR_FLAG_WARMUP, st)) {
		/* a trial's counters are its own: what arrives after its end (its own frames later than the drain
		 * among them) is no earlier trial's in the next, which resets them */
		if (f->flags & LR_FLAG_WARMUP)
			p->q[q].rx_warmup++;
		else if (st >= LR_WARMUP && st <= LR_DRAINING)
			p->q[q].rx_stale++;
		lr_unmeasured(p, q, s, f->seq, now);
		return;
	}
	if (f->flags & LR_FLAG_WARMUP) {
		p->q[q].rx_warmup++;
		lr_unmeasured(p, q, s, f->seq, now);
		return;
	}
	uint64_t seq = f->seq;
	struct lr_rxq *r = lr_rxq_of(s, q, seq);
	if (r == NULL) { /* a lane the stream has no state for: the tester was set up short of the sender's */
		s->rxq[q][0]->unknown_lane++;
		return;
	}
	if (f->flow != (uint16_t)lr_mod(seq, s->flows, &s->flows_div)) {
		r->bad_flow++;
		return;
	}
	lr_publish_u64(&r->last_rx_tsc, now);
	/* the window holds the lane's own numbers (engine.h, lanes) */
	enum lr_seq_class c = lr_seqwin_add(&r->win, seq & LR_SEQ_MASK);
	r->rx_bytes += f->frame_size;
	if (st == LR_DRAINING)
		r->late++;
	if (c == LR_SEQ_DUPLICATE)
		return;
	r->class_rx[s->cycle_class[lr_mod(seq, s->cycle_len, &s->cycle_div)]]++;
	lr_add_latency(r, f->ts_ns, now_ns32 - f->ts_ns, 1);
}

static inline bool run_open(struct lr_run *r, struct lr_port *p, unsigned q, const struct lr_rx_frame *f, int st)
{
	struct lr_stream *s = lr.streams[f->stream];
	/* measured and not late (lr_analyse_one counts a frame that arrives while DRAINING as late) */
	if (!lr_measured(s, p, f->flags, st) || st == LR_DRAINING)
		return false;
	struct lr_rxq *rq = lr_rxq_of(s, q, f->seq);
	if (rq == NULL || (f->seq & LR_SEQ_MASK) != rq->win.next ||
	    f->flow != (uint16_t)lr_mod(f->seq, s->flows, &s->flows_div))
		return false;
	*r = (struct lr_run){.s = s,
			     .q = rq,
			     .tag_head = lr_tag_head(f->flags, f->stream),
			     .flows = s->flows,
			     .cycle_len = s->cycle_len,
			     .first = f->seq,
			     .next = f->seq,
			     .flow = f->flow,
			     .pos = (uint32_t)lr_mod(f->seq, s->cycle_len, &s->cycle_div),
			     .lat_from = f->seq};
	return true;
}

static inline bool run_continues(const struct lr_run *r, const struct lr_rx_frame *f)
{
	return r->s != NULL && f->seq == r->next && lr_tag_head(f->flags, f->stream) == r->tag_head &&
	       f->flow == (uint16_t)r->flow;
}

void lr_run_close(struct lr_run *r, uint64_t now)
{
	struct lr_stream *s = r->s;
	if (s == NULL)
		return;
	struct lr_rxq *q = r->q;
	/* a run is of one lane: its numbers in the window are the low bits */
	lr_seqwin_set_range(q->win.bits, q->win.nbits - 1, r->first & LR_SEQ_MASK, r->next & LR_SEQ_MASK);
	uint64_t frames = r->next - r->first;
	/* after the bits: the timeline's collector reads bits below next (timeline.c) */
	__atomic_store_n(&q->win.next, r->next & LR_SEQ_MASK, __ATOMIC_RELEASE);
	q->win.rx += frames;
	q->rx_bytes += r->bytes;
	if (r->cycle_len == 1) /* counted here, not per frame (lr_run_add) */
		q->class_rx[s->cycle_class[0]] += frames;
	lr_add_latency(q, r->lat_tx, r->lat, r->next - r->lat_from);
	lr_publish_u64(&q->last_rx_tsc, now);
	r->s = NULL;
}

void lr_analyse_next(struct lr_run *r, struct lr_port *p, unsigned q, const struct lr_rx_frame *f, int st,
		     uint32_t now_ns32, uint64_t now)
{
	if (!run_continues(r, f)) {
		lr_run_close(r, now);
		if (!run_open(r, p, q, f, st)) {
			lr_analyse_one(p, q, f, st, now_ns32, now);
			return;
		}
	}
	lr_run_add(r, f->frame_size, f->ts_ns, now_ns32, true, false);
}

void lr_analyse_burst(struct lr_port *p, unsigned q, const struct lr_rx_frame *f, unsigned n, int st,
		      const uint32_t *arrival, uint32_t now_ns32, uint64_t now)
{
	struct lr_run r = {.s = NULL};
	for (unsigned i = 0; i < n; i++)
		lr_analyse_next(&r, p, q, &f[i], st, arrival ? arrival[i] : now_ns32, now);
	lr_run_close(&r, now);
}
