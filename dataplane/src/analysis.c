/* See analysis.h. */
#include "analysis.h"

void lr_analyse_one(struct lr_port *p, const struct lr_rx_frame *f, int st, uint32_t now_ns32, uint64_t now)
{
	struct lr_stream *s = lr.streams[f->stream];
	if (!lr_measured(s, p, f->flags & ~LR_FLAG_WARMUP, st)) {
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
	lr_add_latency(s, f->ts_ns, now_ns32 - f->ts_ns, 1);
}

static inline bool run_open(struct lr_run *r, struct lr_port *p, const struct lr_rx_frame *f, int st)
{
	struct lr_stream *s = lr.streams[f->stream];
	/* measured and not late (lr_analyse_one counts a frame that arrives while DRAINING as late) */
	if (!lr_measured(s, p, f->flags, st) || st == LR_DRAINING)
		return false;
	if (f->seq != s->win.next || f->flow != (uint16_t)lr_mod(f->seq, s->flows, &s->flows_div))
		return false;
	*r = (struct lr_run){.s = s,
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

void lr_run_close(struct lr_run *r, uint32_t now_ns32, uint64_t now)
{
	struct lr_stream *s = r->s;
	if (s == NULL)
		return;
	lr_seqwin_set_range(s->win.bits, s->win.nbits - 1, r->first, r->next);
	uint64_t frames = r->next - r->first;
	s->win.next = r->next;
	s->win.rx += frames;
	s->rx_bytes += r->bytes;
	if (r->cycle_len == 1) /* counted here, not per frame (lr_run_add) */
		s->class_rx[s->cycle_class[0]] += frames;
	lr_add_latency(s, now_ns32 - r->lat, r->lat, r->next - r->lat_from);
	s->last_rx_tsc = now;
	r->s = NULL;
}

void lr_analyse_next(struct lr_run *r, struct lr_port *p, const struct lr_rx_frame *f, int st, uint32_t now_ns32,
		     uint64_t now)
{
	if (!run_continues(r, f)) {
		lr_run_close(r, now_ns32, now);
		if (!run_open(r, p, f, st)) {
			lr_analyse_one(p, f, st, now_ns32, now);
			return;
		}
	}
	lr_run_add(r, f->frame_size, f->ts_ns, now_ns32);
}

void lr_analyse_burst(struct lr_port *p, const struct lr_rx_frame *f, unsigned n, int st, uint32_t now_ns32,
		      uint64_t now)
{
	struct lr_run r = {.s = NULL};
	for (unsigned i = 0; i < n; i++)
		lr_analyse_next(&r, p, &f[i], st, now_ns32, now);
	lr_run_close(&r, now_ns32, now);
}
