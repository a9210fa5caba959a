/* The transmit path: each worker sends its lanes of the trial's streams (engine.h: lane k of a stream goes
 * out by TX queue k of its TX port) at their paced rates, or a back-to-back trial's bursts whole, and the
 * control frames (ARP/ND requests) of the ports whose queue 0 it owns. Frames are built from the stream's
 * templates (frame.h) in mbufs of tx_pool and stamped with their TX time at the last moment. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "engine.h"
#include "idle.h"
#include "timeline.h"
#include "tx.h"

/* ARP/ND requests the control thread queued for the port: queue 0's worker sends them (one consumer) */
void lr_send_control_frames(struct lr_port *p)
{
	struct rte_mbuf *m[8];
	unsigned n = rte_ring_sc_dequeue_burst(p->ctl_tx, (void **)m, 8, NULL);
	if (n == 0)
		return;
	uint16_t sent = rte_eth_tx_burst(p->id, 0, m, (uint16_t)n);
	p->q[0].tx_arp += sent;
	for (unsigned i = sent; i < n; i++)
		rte_pktmbuf_free(m[i]);
}

static void account(const struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, uint16_t n, uint64_t now)
{
	/* one size: no need to read n mbufs for it */
	if (s->nclasses == 1)
		x->tx_bytes += (uint64_t)n * s->class_size[0];
	else
		for (uint16_t i = 0; i < n; i++)
			x->tx_bytes += m[i]->pkt_len + LR_FCS_LEN;
	if (n && x->tx_frames == 0)
		x->tx_first_tsc = now;
	if (n)
		x->tx_last_tsc = now;
	/* the leader reads it while watching for a stall (trial.c) */
	lr_publish_u64(&x->tx_frames, x->tx_frames + n);
	/* 1 ms windows, each from where the previous one ended: a sender on schedule puts rate/1000 frames
	 * (plus one burst) in each; one that fell behind and caught up puts its backlog in one */
	if (now - x->win_start_tsc >= lr.tsc_per_ms) {
		if (x->win_frames > x->peak_win_frames)
			x->peak_win_frames = x->win_frames;
		x->win_start_tsc = x->win_start_tsc && now - x->win_start_tsc < 2 * lr.tsc_per_ms
					   ? x->win_start_tsc + lr.tsc_per_ms
					   : now;
		x->win_frames = 0;
	}
	x->win_frames += n;
}

void lr_free_pending(struct lr_txq *x)
{
	if (x->n_pending)
		rte_pktmbuf_free_bulk(x->pending + x->pending_off, x->n_pending);
	x->n_pending = x->pending_off = 0;
}

/* Test frames come from tx_pool, whose mbufs carry nothing but test frames: with a zero payload only
 * the headers and tag (LR_MAX_HDR_TAG bytes) are rewritten, the zeros behind them stay from the pool's
 * creation. Other payloads are copied whole. */

/* Headers that vary per flow: every frame gets its own addresses, ports and full tag. x: the lane's TX
 * state (warm-up frames are lane 0's, numbered by the stream's warm_sent). */
static void build_varying(struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, unsigned n, bool warm,
			  uint8_t flags, uint32_t ts)
{
	struct lr_flow_fields ff;
	for (unsigned i = 0; i < n; i++) {
		uint64_t seq;
		uint32_t pos, flow;
		if (warm) {
			seq = s->warm_sent++;
			pos = (uint32_t)(seq % s->cycle_len);
			flow = (uint32_t)(seq % s->flows);
		} else {
			seq = x->seq++;
			pos = x->pos;
			flow = x->flow;
			if (++x->pos == s->cycle_len)
				x->pos = 0;
			if (++x->flow == s->flows)
				x->flow = 0;
		}
		unsigned cls = s->cycle_class[pos];
		const struct lr_tmpl *t = &s->tmpl[cls];
		lr_flow_fields(&s->hdr, s->vary, flow, &ff);
		struct lr_tag tag = {.flags = flags, .stream = (uint8_t)s->id, .seq = seq, .ts_ns = ts, .flow = (uint16_t)flow};
		m[i]->data_off = RTE_PKTMBUF_HEADROOM;
		lr_frame_write(rte_pktmbuf_mtod(m[i], uint8_t *), t, &ff, &tag, s->copy_len[cls]);
		m[i]->data_len = m[i]->pkt_len = t->len;
	}
}

/* Fixed headers (one flow): the burst's constant tag fields go into the templates once, and each frame
 * is a template copy plus its sequence number and checksum. A stream of several lanes has workers copying
 * its templates at once: none writes them, each frame gets the tag fields itself (a few stores more). */
static void build_fixed(struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, unsigned n, bool warm,
			uint8_t flags, uint32_t ts)
{
	uint64_t sums[LR_MAX_CLASSES];
	struct lr_tag tag = {.flags = flags, .stream = (uint8_t)s->id, .ts_ns = ts, .flow = 0};
	bool shared = s->lanes > 1;
	for (unsigned c = 0; c < s->nclasses; c++)
		sums[c] = shared ? lr_tmpl_tag_sum(&s->tmpl[c], &tag) : lr_tmpl_stamp(&s->tmpl[c], &tag);
	uint64_t seq = warm ? s->warm_sent : x->seq;
	if (s->nclasses == 1) {
		const struct lr_tmpl *t = &s->tmpl[0];
		size_t copy_len = s->copy_len[0];
		for (unsigned i = 0; i < n; i++) {
			m[i]->data_off = RTE_PKTMBUF_HEADROOM;
			uint8_t *pkt = rte_pktmbuf_mtod(m[i], uint8_t *);
			lr_frame_write_seq(pkt, t, sums[0], seq + i, copy_len);
			if (shared)
				lr_tag_put_fixed(pkt + t->tag_off, &tag);
			m[i]->data_len = m[i]->pkt_len = t->len;
		}
	} else {
		uint32_t pos = warm ? (uint32_t)(seq % s->cycle_len) : x->pos;
		for (unsigned i = 0; i < n; i++) {
			unsigned cls = s->cycle_class[pos];
			const struct lr_tmpl *t = &s->tmpl[cls];
			m[i]->data_off = RTE_PKTMBUF_HEADROOM;
			uint8_t *pkt = rte_pktmbuf_mtod(m[i], uint8_t *);
			lr_frame_write_seq(pkt, t, sums[cls], seq + i, s->copy_len[cls]);
			if (shared)
				lr_tag_put_fixed(pkt + t->tag_off, &tag);
			m[i]->data_len = m[i]->pkt_len = t->len;
			if (++pos == s->cycle_len)
				pos = 0;
		}
	}
	if (warm) {
		s->warm_sent += n;
	} else {
		x->seq += n;
		x->pos = (uint32_t)((x->pos + n) % s->cycle_len);
	}
}

/* The TX stamp says when a burst is handed to the PMD, the frames of one burst sharing it as they leave
 * together. It is written as the frames are built, in one pass, from the clock read before the build plus
 * the time a build of that many frames takes (learned from the bursts before: x->build_tsc, a full burst's
 * and per frame of a short one). The clock read after the build checks it: a burst whose build took
 * longer or shorter than predicted by more than STAMP_TOLERANCE_NS (a cache miss more than usual, an
 * interrupt) is stamped again with the time read then (lr_frame_restamp, a rare second pass). So every
 * stamp is within that tolerance of the hand-over, without a second pass over every burst (which cost
 * 1-5 ns a 64 B frame: two stores more per frame in a loop bound by its stores), and without counting the
 * build of up to 32 frames (about 300 ns on net_null at 64 B) as the DUT's latency, as a stamp read before
 * the build would. Restamped bursts are counted (RESULT tx_restamped_bursts). */
#define STAMP_TOLERANCE_NS 100

/* Builds n frames of lane x (or warm-up frames) stamped ts. */
static void build(struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, unsigned n, bool warm, uint32_t ts)
{
	uint8_t flags = LR_TRIAL_BITS(lr.trial.id) | (warm ? LR_FLAG_WARMUP : 0);
	/* a fragmentable frame's IP ID changes per frame, and the IPv4 header checksum with it */
	if (s->vary || s->fragmentable)
		build_varying(s, x, m, n, warm, flags, ts);
	else
		build_fixed(s, x, m, n, warm, flags, ts);
}

static void restamp_at(const struct lr_stream *s, struct rte_mbuf **m, unsigned n, uint32_t ts_ns);

/* Builds and stamps a burst (see STAMP_TOLERANCE_NS). */
static void build_stamped(struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, unsigned n, bool warm)
{
	uint64_t predicted = n == LR_BURST ? x->build_tsc[1] : x->build_tsc[0] * n;
	uint64_t t0 = rte_rdtsc();
	build(s, x, m, n, warm, (uint32_t)lr_tsc_to_ns(t0 + predicted));
	uint64_t t1 = rte_rdtsc(), took = t1 - t0;
	int64_t off = (int64_t)took - (int64_t)predicted;
	if ((uint64_t)(off < 0 ? -off : off) * 1000000000ull > (uint64_t)STAMP_TOLERANCE_NS * lr.tsc_hz) {
		restamp_at(s, m, n, (uint32_t)lr_tsc_to_ns(t1));
		x->restamped++;
	}
	/* learned as an average over the last 8 or so: full bursts apart, short ones per frame */
	if (n == LR_BURST)
		x->build_tsc[1] = (7 * x->build_tsc[1] + took) / 8;
	else
		x->build_tsc[0] = (7 * x->build_tsc[0] + took / n) / 8;
}

/* Frames stamped already, stamped again with ts_ns (lr_frame_restamp takes the old stamp out of the
 * checksum): frames the ring handed back leave later, and a burst whose build the prediction missed. */
static void restamp_at(const struct lr_stream *s, struct rte_mbuf **m, unsigned n, uint32_t ts_ns)
{
	uint16_t l4 = s->tmpl[0].l4_off, tag = s->tmpl[0].tag_off;
	for (unsigned i = 0; i < n; i++)
		lr_frame_restamp(rte_pktmbuf_mtod(m[i], uint8_t *), l4, tag, ts_ns);
}

/* Sends what is due of lane k of stream s (by TX queue k of its port); returns how many frames it handed
 * to the PMD. */
unsigned lr_tx_stream(struct lr_stream *s, unsigned k, int st, uint64_t now)
{
	struct lr_port *p = &lr.ports[s->tx_port];
	struct lr_txq *x = &s->txq[k];
	if (x->n_pending) {
		/* the frames the ring handed back leave now, not when they were built: their stamp says so, or
		 * their wait in the tester would count as the DUT's latency */
		if (st == LR_RUNNING)
			restamp_at(s, x->pending + x->pending_off, x->n_pending, (uint32_t)lr_tsc_to_ns(rte_rdtsc()));
		uint16_t n = rte_eth_tx_burst(p->id, (uint16_t)k, x->pending + x->pending_off, (uint16_t)x->n_pending);
		if (st == LR_RUNNING)
			account(s, x, x->pending + x->pending_off, n, now);
		x->pending_off += n;
		x->n_pending -= n;
		if (x->n_pending)
			return n;
		x->pending_off = 0;
	}
	uint64_t want;
	bool warm = st == LR_WARMUP;
	if (warm) {
		/* one frame of every flow, at the trial's rate, so the DUT learns them before we count; lane 0's */
		if (k != 0)
			return 0;
		uint64_t since = now > lr.trial.start_tsc ? now - lr.trial.start_tsc : 0;
		uint64_t due = (uint64_t)((double)since * s->fps / (double)lr.tsc_hz) + 1;
		uint64_t cap = s->flows < 65536 ? s->flows : 65536;
		if (due > cap)
			due = cap;
		want = due > s->warm_sent ? due - s->warm_sent : 0;
	} else if (lr.trial.burst) {
		want = x->burst_left;
	} else {
		/* frame g of the stream leaves at g / fps; frames due in [0, duration) only, so a trial of d seconds
		 * at r frames/s offers exactly ceil(d * r) frames however late in the loop we look at the clock;
		 * this lane sends those at positions k, k + lanes, .. */
		/* another worker's clock can be read a moment before the leader's that started the measurement */
		uint64_t elapsed = now > lr.trial.meas_start_tsc ? now - lr.trial.meas_start_tsc : 0;
		if (elapsed >= lr.trial.duration_tsc)
			elapsed = lr.trial.duration_tsc - 1;
		uint64_t due = lr_lane_share((uint64_t)((double)elapsed * s->fps / (double)lr.tsc_hz) + 1, k, s->lanes);
		want = due > x->built ? due - x->built : 0;
		/* how far behind its schedule the lane fell: a preempted worker sends late, in a burst */
		if (want > x->max_backlog)
			x->max_backlog = want;
		if (unlikely(want > x->lag_mark))
			lr_timeline_event(&x->lag_events, &x->lag_ack, &x->lag_from_tsc,
					  lr.trial.meas_start_tsc +
						  (uint64_t)((double)(k + x->built * s->lanes) * (double)lr.tsc_hz / s->fps));
	}
	if (want == 0)
		return 0;
	unsigned n = want < LR_BURST ? (unsigned)want : LR_BURST;
	struct rte_mbuf **m = x->pending;
	/* raw: a pooled mbuf already has next = NULL and nb_segs = 1 (rte_mbuf_raw_alloc); build() sets the
	 * only other fields a test frame needs (data_off, data_len, pkt_len; no offload flags are used) */
	if (rte_mempool_get_bulk(lr.tx_pool, (void **)m, n) != 0) {
		p->q[k].tx_alloc_fail++;
		return 0;
	}
	build_stamped(s, x, m, n, warm);
	if (!warm) {
		x->built += n;
		if (lr.trial.burst)
			x->burst_left -= n;
	}
	uint16_t sent = rte_eth_tx_burst(p->id, (uint16_t)k, m, (uint16_t)n);
	if (!warm)
		account(s, x, m, sent, now);
	if (sent < n) {
		p->q[k].tx_full++;
		x->pending_off = sent;
		x->n_pending = n - sent;
		if (warm) /* warm-up frames are best effort */
			lr_free_pending(x);
	}
	return sent;
}

/* Sends what worker w's streams had due before the end of the measurement but did not send yet because
 * the worker was not running (preempted by the OS on a shared core): a trial of d seconds at r frames/s
 * offers ceil(d·r) frames. Bounded to 10 ms: a tester that cannot catch up is saturated, and RESULT says
 * so. Then their frames still pending are dropped: the measurement is over. */
void lr_catch_up(struct lr_trial *t, unsigned w, uint64_t now)
{
	lr_idle_ordinary(&lr.workers[w]); /* up to 10 ms flat out: never as a real-time thread */
	uint64_t until = now + lr.tsc_hz / 100;
	for (unsigned i = 0; i < t->nstreams * LR_MAX_QUEUES; i++) {
		struct lr_stream *s = lr.streams[t->streams[i / LR_MAX_QUEUES]];
		unsigned k = i % LR_MAX_QUEUES;
		if (!lr_sends(s, k, w))
			continue;
		struct lr_txq *x = &s->txq[k];
		if (!t->burst) {
			uint64_t total = (uint64_t)((double)(t->duration_tsc - 1) * s->fps / (double)lr.tsc_hz) + 1;
			total = lr_lane_share(total, k, s->lanes);
			for (uint64_t t_now = rte_rdtsc(); (x->built < total || x->n_pending) && t_now < until;
			     t_now = rte_rdtsc())
				lr_tx_stream(s, k, LR_RUNNING, t_now);
		}
		lr_free_pending(x);
	}
	atomic_store_explicit(&lr.workers[w].drained, true, memory_order_release);
	/* the leader may be asleep until the last worker has drained */
	if (w != 0)
		lr_wake(&lr.workers[0]);
}

/* A back-to-back trial: whether every burst worker w sends is with the PMD, whole. */
bool lr_bursts_sent(unsigned w)
{
	for (unsigned i = 0; i < lr.trial.nstreams; i++) {
		const struct lr_stream *s = lr.streams[lr.trial.streams[i]];
		for (unsigned k = 0; k < LR_MAX_QUEUES; k++)
			if (lr_sends(s, k, w) && (s->txq[k].burst_left || s->txq[k].n_pending))
				return false;
	}
	return true;
}


/* When the next frame of lane k of stream s is due (TSC), UINT64_MAX when none is left in this trial. Frame
 * P of the stream (lane k sends P = k, k + L, ..) is due once elapsed·fps >= P (tx_stream's schedule). */
static uint64_t lane_next_due(const struct lr_stream *s, unsigned k, int st, uint64_t now)
{
	const struct lr_txq *x = &s->txq[k];
	if (x->n_pending)
		return now; /* the PMD's ring was full: offered again at once */
	if (s->fps <= 0)
		return UINT64_MAX;
	double tsc_per_frame = (double)lr.tsc_hz / s->fps;
	if (st == LR_WARMUP) {
		uint64_t cap = s->flows < 65536 ? s->flows : 65536;
		if (k != 0 || s->warm_sent >= cap)
			return UINT64_MAX;
		return lr.trial.start_tsc + (uint64_t)((double)s->warm_sent * tsc_per_frame);
	}
	double at = (double)(k + x->built * s->lanes) * tsc_per_frame;
	if (at >= (double)lr.trial.duration_tsc)
		return UINT64_MAX;
	return lr.trial.meas_start_tsc + (uint64_t)at + 1;
}

uint64_t lr_tx_next_due(unsigned w, int st, uint64_t now)
{
	if (st != LR_WARMUP && st != LR_RUNNING)
		return UINT64_MAX;
	if (st == LR_RUNNING && lr.trial.burst)
		return now; /* a burst leaves at once, whole */
	uint64_t due = UINT64_MAX;
	for (unsigned i = 0; i < lr.trial.nstreams; i++) {
		const struct lr_stream *s = lr.streams[lr.trial.streams[i]];
		for (unsigned k = 0; k < s->lanes; k++)
			if (lr_sends(s, k, w)) {
				uint64_t d = lane_next_due(s, k, st, now);
				if (d < due)
					due = d;
			}
	}
	return due;
}
