/* The fast path: each worker lcore owns some queue pairs of some ports; it sends its lanes of the streams
 * (engine.h: lane k of a stream goes out by TX queue k of its TX port) at their paced rates, analyses
 * every frame received on its RX queues, and answers ARP/ND on them (on the TX queue of the same pair) at
 * all times. Worker 0 also moves the trial through its phases. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "analysis.h"
#include "engine.h"

static bool in_prefix(const uint8_t *a, const uint8_t *net, unsigned len)
{
	unsigned i = 0;
	for (; len >= 8; len -= 8, i++)
		if (a[i] != net[i])
			return false;
	if (len) {
		uint8_t m = (uint8_t)(0xff << (8 - len));
		if ((a[i] & m) != (net[i] & m))
			return false;
	}
	return true;
}

/* The worker of whichever RX queue the answer arrived on learns it: two queues' workers would write the
 * same gateway's MAC, and control reads it only after peer_known (release). */
static void learn_peer(struct lr_port *p, const uint8_t *mac)
{
	if (p->static_peer || mac == NULL)
		return;
	memcpy(p->peer_mac, mac, 6);
	atomic_store_explicit(&p->peer_known, true, memory_order_release);
}

static void tx_one(struct lr_port *p, unsigned q, const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(lr.pool);
	if (m == NULL) {
		p->q[q].tx_alloc_fail++;
		return;
	}
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame, len);
	m->data_len = m->pkt_len = (uint32_t)len;
	/* the worker that received the request owns the TX queue of the same pair too */
	if (rte_eth_tx_burst(p->id, (uint16_t)q, &m, 1) == 1)
		p->q[q].tx_arp++;
	else
		rte_pktmbuf_free(m);
}

/* The tester owns its test subnet: it answers for every address in it except the gateway, so a DUT
 * that forwards to many destination addresses (flows varying dst) finds them all. */
static void handle_arp(struct lr_port *p, unsigned q, const struct lr_parsed *ps)
{
	p->q[q].rx_arp++;
	if (!p->has_ip4)
		return;
	if (p->has_gw4 && memcmp(ps->arp_spa, p->gw4, 4) == 0)
		learn_peer(p, ps->arp_sha);
	if (ps->arp_op == 1 && in_prefix(ps->arp_tpa, p->ip4, p->ip4_len) &&
	    !(p->has_gw4 && memcmp(ps->arp_tpa, p->gw4, 4) == 0)) {
		uint8_t buf[128];
		size_t n = lr_build_arp(buf, p->vlan, 2, p->mac, ps->arp_tpa, ps->arp_sha, ps->arp_spa, ps->arp_sha);
		tx_one(p, q, buf, n);
	}
}

static void handle_nd(struct lr_port *p, unsigned q, const struct lr_parsed *ps)
{
	static const struct lr_ip unspecified;
	p->q[q].rx_arp++;
	if (!p->has_ip6)
		return;
	if (ps->kind == LR_KIND_NA) {
		if (p->has_gw6 && memcmp(ps->nd_target.b, p->gw6.b, 16) == 0)
			learn_peer(p, ps->nd_lladdr);
		return;
	}
	if (p->has_gw6 && memcmp(ps->nd_src.b, p->gw6.b, 16) == 0)
		learn_peer(p, ps->nd_lladdr);
	if (memcmp(ps->nd_src.b, unspecified.b, 16) == 0) /* duplicate address detection: stay quiet */
		return;
	if (in_prefix(ps->nd_target.b, p->ip6.b, p->ip6_len) &&
	    !(p->has_gw6 && memcmp(ps->nd_target.b, p->gw6.b, 16) == 0)) {
		uint8_t buf[128];
		const uint8_t *dst_mac = ps->nd_lladdr ? ps->nd_lladdr : ps->eth_src;
		size_t n = lr_build_na(buf, p->vlan, p->mac, dst_mac, &ps->nd_target, &ps->nd_src);
		tx_one(p, q, buf, n);
	}
}

static inline void analyse_tag(struct lr_run *run, struct lr_port *p, unsigned q, const struct lr_tag *tag,
			       const struct rte_mbuf *m, int st, uint32_t now_ns32, uint64_t now)
{
	struct lr_rx_frame f = {.seq = tag->seq,
				.ts_ns = tag->ts_ns,
				.frame_size = m->pkt_len + LR_FCS_LEN,
				.flow = tag->flow,
				.stream = tag->stream,
				.flags = tag->flags};
	lr_analyse_next(run, p, q, &f, st, now_ns32, now);
}

/* Received frames go back to the pool. The common case (one segment, a direct mbuf with no other
 * reference, from the engine's pool) is collected, while the parser has the mbuf at hand, and put straight
 * into this lcore's mempool cache at the end of the burst: rte_pktmbuf_free_bulk would do the same after
 * another pass over the mbufs, per-frame checks and a thread-local lookup that cost more than the put.
 * Anything else takes the generic path. */
static inline void release(struct rte_mbuf *m, void **done, unsigned *ndone)
{
	if (m->nb_segs == 1 && m->pool == lr.pool && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1)
		done[(*ndone)++] = m;
	else
		rte_pktmbuf_free(m);
}

#define RX_PREFETCH 4

/* The flags a port that verifies checksums (lr_port.rx_cksum) sets on a frame whose IPv4 header or UDP
 * checksum is wrong (BAD); NONE (both bits: not checked in the data, but known intact) is not wrong. */
#define RX_CKSUM_BAD_BITS (RTE_MBUF_F_RX_IP_CKSUM_BAD | RTE_MBUF_F_RX_L4_CKSUM_BAD)

static inline bool rx_cksum_bad(const struct rte_mbuf *m)
{
	return (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
	       (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_BAD;
}

/* A frame the port found corrupted is never counted as received: a measured frame among them is missing
 * from the stream (lost, unless an intact copy of it arrives too) and counted as corrupted, so that the loss
 * has its reason. It still shows that the DUT forwards: no stall. */
static void count_corrupted(struct lr_port *p, unsigned q, const uint8_t *data, uint32_t len, int st, uint64_t now)
{
	p->q[q].rx_bad_cksum++;
	struct lr_tag tag;
	struct lr_parsed ps;
	const struct lr_tag *t = NULL;
	if (lr_parse_tag(data, len, &tag))
		t = &tag;
	else if (lr_parse(data, len, &ps) == LR_KIND_TAGGED)
		t = &ps.tag;
	if (t == NULL)
		return;
	struct lr_stream *s = lr.streams[t->stream];
	if (lr_measured(s, p, t->flags, st)) {
		/* a corrupted frame's tag is not to be trusted, its lane bits neither: a lane the stream has no
		 * state for is the DUT's corruption here, never the tester's set-up (lr_analyse_one counts
		 * intact frames of unknown lanes as that) */
		struct lr_rxq *r = lr_rxq_of(s, q, t->seq);
		if (r == NULL)
			r = s->rxq[q][0];
		r->corrupted++;
		lr_publish_u64(&r->last_rx_tsc, now);
	}
}

/* A NIC's frames arrive by DMA (at best into the last-level cache), and memif copies the whole burst (32 x
 * 1518 B is more than L1) before the first one is parsed: headers are fetched a few frames ahead of the
 * parser, as DPDK's l3fwd does. Called once per frame i. */
static inline void prefetch_ahead(struct rte_mbuf **pkts, uint16_t i, uint16_t n)
{
	if (i + RX_PREFETCH < n)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i + RX_PREFETCH], void *));
}

/* Frames from i on that continue the open run (analysis.h), counted and released in one pass; returns the
 * first that does not. The run is copied into a local whose address never escapes, so its counters stay
 * in registers for the whole stretch. */
static inline uint16_t rx_run(struct lr_run *run, struct rte_mbuf **pkts, uint16_t i, uint16_t n, uint32_t now_ns32,
			      void **done, unsigned *ndone)
{
	struct lr_run r = *run;
	for (; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (((m->ol_flags & RX_CKSUM_BAD_BITS) && rx_cksum_bad(m)) ||
		    !lr_run_extend(&r, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, m->pkt_len + LR_FCS_LEN,
				   now_ns32))
			break; /* the general path takes it, and fetches ahead for it */
		prefetch_ahead(pkts, i, n);
		release(m, done, ndone);
	}
	*run = r;
	return i;
}

/* cache: this lcore's cache of lr.pool, looked up once per worker (rte_lcore_id() is a thread-local
 * variable of the EAL library: a function call per lookup, once per burst otherwise) */
static unsigned rx_queue(struct lr_port *p, unsigned q, bool counting, struct rte_mempool_cache *cache)
{
	struct rte_mbuf *pkts[LR_BURST];
	uint16_t n = rte_eth_rx_burst(p->id, (uint16_t)q, pkts, LR_BURST);
	if (n == 0)
		return 0;
	/* The state is read only now, after the burst: a frame can only be here after its sender started
	 * the trial, and a state read earlier (at the top of the loop, before a preemption) can predate the
	 * TRIAL command and so count a measured frame as stale. */
	int st = counting ? atomic_load_explicit(&lr.trial.state, memory_order_acquire) : LR_IDLE;
	uint64_t now = rte_rdtsc();
	uint32_t now_ns32 = (uint32_t)lr_tsc_to_ns(now);
	p->q[q].rx_total += n;
	void *done[LR_BURST];
	unsigned ndone = 0;
	/* Frames are parsed and analysed in the order they arrived, in one pass: the common one (the next
	 * frame of the run the one before it opened) straight from its bytes, any other by the parser. */
	for (uint16_t i = 0; i < n && i < RX_PREFETCH; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	struct lr_run run = {.s = NULL};
	for (uint16_t i = 0; i < n; i++) {
		if (run.s != NULL) {
			i = rx_run(&run, pkts, i, n, now_ns32, done, &ndone);
			if (i == n)
				break;
		}
		struct rte_mbuf *m = pkts[i];
		struct lr_parsed ps;
		prefetch_ahead(pkts, i, n);
		/* only the first segment is parsed: headers and tag always fit in it */
		const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
		struct lr_tag tag;
		if (unlikely(rx_cksum_bad(m))) {
			count_corrupted(p, q, data, m->data_len, st, now);
		} else if (lr_parse_tag(data, m->data_len, &tag)) {
			analyse_tag(&run, p, q, &tag, m, st, now_ns32, now);
		} else {
			switch (lr_parse(data, m->data_len, &ps)) {
			case LR_KIND_TAGGED:
				analyse_tag(&run, p, q, &ps.tag, m, st, now_ns32, now);
				break;
			case LR_KIND_ARP:
				handle_arp(p, q, &ps);
				break;
			case LR_KIND_NS:
			case LR_KIND_NA:
				handle_nd(p, q, &ps);
				break;
			default:
				p->q[q].rx_foreign++;
			}
		}
		release(m, done, &ndone);
	}
	lr_run_close(&run, now_ns32, now);
	if (ndone)
		rte_mempool_generic_put(lr.pool, done, ndone, cache);
	return n;
}

/* ARP/ND requests the control thread queued for the port: queue 0's worker sends them (one consumer) */
static void send_control_frames(struct lr_port *p)
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

static void account(struct lr_txq *x, struct rte_mbuf **m, uint16_t n, uint64_t now)
{
	for (uint16_t i = 0; i < n; i++)
		x->tx_bytes += m[i]->pkt_len + LR_FCS_LEN;
	if (n && x->tx_frames == 0)
		x->tx_first_tsc = now;
	if (n)
		x->tx_last_tsc = now;
	x->tx_frames += n;
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

static void free_pending(struct lr_txq *x)
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
			  uint8_t flags, uint8_t **pkts, uint32_t *sums)
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
		struct lr_tag tag = {.flags = flags, .stream = (uint8_t)s->id, .seq = seq, .ts_ns = 0, .flow = (uint16_t)flow};
		m[i]->data_off = RTE_PKTMBUF_HEADROOM;
		uint8_t *pkt = pkts[i] = rte_pktmbuf_mtod(m[i], uint8_t *);
		lr_frame_write(pkt, t, &ff, &tag, s->copy_len[cls]);
		sums[i] = (uint16_t)~lr_get16(pkt + t->l4_off + 6);
		m[i]->data_len = m[i]->pkt_len = t->len;
	}
}

/* Fixed headers (one flow): the burst's constant tag fields go into the templates once, and each frame
 * is a template copy plus its sequence number (its checksum comes with the stamp). A stream of several lanes has workers copying
 * its templates at once: none writes them, each frame gets the tag fields itself (a few stores more). */
static void build_fixed(struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, unsigned n, bool warm,
			uint8_t flags, uint8_t **pkts, uint32_t *frame_sums)
{
	uint64_t sums[LR_MAX_CLASSES];
	struct lr_tag tag = {.flags = flags, .stream = (uint8_t)s->id, .ts_ns = 0, .flow = 0};
	bool shared = s->lanes > 1;
	for (unsigned c = 0; c < s->nclasses; c++)
		sums[c] = shared ? lr_tmpl_tag_sum(&s->tmpl[c], &tag) : lr_tmpl_stamp(&s->tmpl[c], &tag);
	uint64_t seq = warm ? s->warm_sent : x->seq;
	if (s->nclasses == 1) {
		const struct lr_tmpl *t = &s->tmpl[0];
		size_t copy_len = s->copy_len[0];
		for (unsigned i = 0; i < n; i++) {
			m[i]->data_off = RTE_PKTMBUF_HEADROOM;
			uint8_t *pkt = pkts[i] = rte_pktmbuf_mtod(m[i], uint8_t *);
			frame_sums[i] = lr_frame_write_seq_sum(pkt, t, sums[0], seq + i, copy_len);
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
			uint8_t *pkt = pkts[i] = rte_pktmbuf_mtod(m[i], uint8_t *);
			frame_sums[i] = lr_frame_write_seq_sum(pkt, t, sums[cls], seq + i, s->copy_len[cls]);
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

/* Builds the burst's frames but for their TX stamp: they carry ts_ns = 0 until stamp() writes the time they
 * leave, and with it their UDP checksum (a fixed-header frame has none before; a varying one has the zero
 * stamp's). pkts[i], sums[i]: frame i's data and its sum but the checksum, for stamp(). */
static void build(struct lr_stream *s, struct lr_txq *x, struct rte_mbuf **m, unsigned n, bool warm, uint8_t **pkts,
		  uint32_t *sums)
{
	uint8_t flags = LR_TRIAL_BITS(lr.trial.id) | (warm ? LR_FLAG_WARMUP : 0);
	if (s->vary)
		build_varying(s, x, m, n, warm, flags, pkts, sums);
	else
		build_fixed(s, x, m, n, warm, flags, pkts, sums);
}

/* The TX stamp, read as late as the software can: after the burst is built, the last thing before
 * rte_eth_tx_burst. Read before building (as it once was), the copies and checksums of up to LR_BURST
 * frames (and their mbufs' cache misses) came before it and every frame's latency included them, though
 * no DUT had the frame yet. One timestamp per burst, as the frames leave together in one tx_burst call.
 * Each frame gets it with its checksum from the sum build() kept (lr_frame_stamp_sum: a few adds, two
 * stores, no load from the frame), not a rebuild. The price is a second pass over the burst's first data
 * lines: about 1 ns a frame on net_null (64 B, CPU time per frame 9.8 -> 10.9 ns, medians on a loaded
 * 2-core VM; 12.0 with the pass in order, more still reading each checksum back from the frame). */
static void stamp(const struct lr_stream *s, uint8_t *const *pkts, const uint32_t *sums, unsigned n)
{
	struct lr_stamp st = lr_stamp_of((uint32_t)lr_tsc_to_ns(rte_rdtsc()));
	/* every size class of a stream has the same headers: one offset for all */
	uint16_t l4 = s->tmpl[0].l4_off, tag = s->tmpl[0].tag_off;
	/* the last built first, its lines the likeliest still in L1 (measured above) */
	for (unsigned i = n; i-- > 0;)
		lr_frame_stamp_sum(pkts[i], l4, tag, st, sums[i]);
}

/* Frames the ring handed back, stamped already: their stamp is replaced (lr_frame_restamp takes the old
 * one out of the checksum). */
static void restamp(const struct lr_stream *s, struct rte_mbuf **m, unsigned n)
{
	uint32_t ts = (uint32_t)lr_tsc_to_ns(rte_rdtsc());
	uint16_t l4 = s->tmpl[0].l4_off, tag = s->tmpl[0].tag_off;
	for (unsigned i = 0; i < n; i++)
		lr_frame_restamp(rte_pktmbuf_mtod(m[i], uint8_t *), l4, tag, ts);
}

/* Sends what is due of lane k of stream s (by TX queue k of its port); returns how many frames it handed
 * to the PMD. */
static unsigned tx_stream(struct lr_stream *s, unsigned k, int st, uint64_t now)
{
	struct lr_port *p = &lr.ports[s->tx_port];
	struct lr_txq *x = &s->txq[k];
	if (x->n_pending) {
		/* the frames the ring handed back leave now, not when they were built: their stamp says so, or
		 * their wait in the tester would count as the DUT's latency */
		if (st == LR_RUNNING)
			restamp(s, x->pending + x->pending_off, x->n_pending);
		uint16_t n = rte_eth_tx_burst(p->id, (uint16_t)k, x->pending + x->pending_off, (uint16_t)x->n_pending);
		if (st == LR_RUNNING)
			account(x, x->pending + x->pending_off, n, now);
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
	uint8_t *pkts[LR_BURST];
	uint32_t sums[LR_BURST];
	build(s, x, m, n, warm, pkts, sums);
	if (!warm) {
		x->built += n;
		if (lr.trial.burst)
			x->burst_left -= n;
	}
	stamp(s, pkts, sums, n);
	uint16_t sent = rte_eth_tx_burst(p->id, (uint16_t)k, m, (uint16_t)n);
	if (!warm)
		account(x, m, sent, now);
	if (sent < n) {
		p->q[k].tx_full++;
		x->pending_off = sent;
		x->n_pending = n - sent;
		if (warm) /* warm-up frames are best effort */
			free_pending(x);
	}
	return sent;
}

/* Whether lane k of stream s is sent by worker w (it owns TX queue k of the stream's TX port). */
static inline bool sends(const struct lr_stream *s, unsigned k, unsigned w)
{
	return s->tx_port >= 0 && k < s->lanes && lr.ports[s->tx_port].q[k].owner == w;
}

/* The other workers must be done with this trial's counters and sending before the leader publishes the
 * end, because the control thread reads the counters (RESULT) and resets them (next TRIAL) from then on. */
static void quiesce_others(void)
{
	atomic_store_explicit(&lr.stop, true, memory_order_release);
	for (unsigned w = 1; w < lr.nworkers; w++)
		while (!atomic_load_explicit(&lr.workers[w].stopped, memory_order_acquire) &&
		       !atomic_load_explicit(&lr.quit, memory_order_relaxed))
			rte_pause();
}

static void resume_others(void)
{
	atomic_store_explicit(&lr.stop, false, memory_order_release);
	/* wait for the acknowledgements, so that the next quiesce cannot take a stale one */
	for (unsigned w = 1; w < lr.nworkers; w++)
		while (atomic_load_explicit(&lr.workers[w].stopped, memory_order_acquire) &&
		       !atomic_load_explicit(&lr.quit, memory_order_relaxed))
			rte_pause();
}

static void finish(struct lr_trial *t, int state, const char *reason, uint64_t now)
{
	quiesce_others();
	/* every other worker is parked: their lanes' pending frames are the leader's to free */
	for (unsigned i = 0; i < t->nstreams; i++)
		for (unsigned k = 0; k < LR_MAX_QUEUES; k++)
			free_pending(&lr.streams[t->streams[i]]->txq[k]);
	if (reason)
		snprintf(t->reason, sizeof(t->reason), "%s", reason);
	if (!t->meas_end_tsc)
		t->meas_end_tsc = now;
	t->end_tsc = now;
	atomic_store_explicit(&t->state, state, memory_order_release);
	resume_others();
}

/* Sends what worker w's streams had due before the end of the measurement but did not send yet because
 * the worker was not running (preempted by the OS on a shared core): a trial of d seconds at r frames/s
 * offers ceil(d·r) frames. Bounded to 10 ms: a tester that cannot catch up is saturated, and RESULT says
 * so. Then their frames still pending are dropped: the measurement is over. */
static void catch_up(struct lr_trial *t, unsigned w, uint64_t now)
{
	uint64_t until = now + lr.tsc_hz / 100;
	for (unsigned i = 0; i < t->nstreams * LR_MAX_QUEUES; i++) {
		struct lr_stream *s = lr.streams[t->streams[i / LR_MAX_QUEUES]];
		unsigned k = i % LR_MAX_QUEUES;
		if (!sends(s, k, w))
			continue;
		struct lr_txq *x = &s->txq[k];
		if (!t->burst) {
			uint64_t total = (uint64_t)((double)(t->duration_tsc - 1) * s->fps / (double)lr.tsc_hz) + 1;
			total = lr_lane_share(total, k, s->lanes);
			for (uint64_t t_now = rte_rdtsc(); (x->built < total || x->n_pending) && t_now < until;
			     t_now = rte_rdtsc())
				tx_stream(s, k, LR_RUNNING, t_now);
		}
		free_pending(x);
	}
	atomic_store_explicit(&lr.workers[w].drained, true, memory_order_release);
}

/* Whether every worker has sent what its streams had due (catch_up): from then on, and no sooner, the
 * drain counts down, so that the last frame due has the whole drain to arrive. */
static bool all_drained(void)
{
	for (unsigned w = 0; w < lr.nworkers; w++)
		if (!atomic_load_explicit(&lr.workers[w].drained, memory_order_acquire))
			return false;
	return true;
}

/* when the leader next looks for a stalled stream, and when every worker had drained (0: not yet) */
static uint64_t stall_check_tsc, drained_tsc;

/* The leader moves the trial through its phases; returns the state the rest of this iteration works in. */
static int advance(uint64_t *nowp)
{
	struct lr_trial *t = &lr.trial;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	if (st < LR_WARMUP || st > LR_DRAINING)
		return st;
	/* The caller read the clock before the state: control may have started the trial in between. The
	 * caller's clock moves up to the start too, or its pacing would count from before the trial began. */
	if (*nowp < t->start_tsc)
		*nowp = t->start_tsc;
	uint64_t now = *nowp;
	if (atomic_load_explicit(&t->abort_req, memory_order_acquire)) {
		finish(t, LR_ABORTED, "aborted", now);
		return LR_ABORTED;
	}
	switch (st) {
	case LR_WARMUP:
		/* warm-up frames are best effort: none is left pending (tx_stream) */
		if (now - t->start_tsc >= t->warmup_tsc) {
			t->meas_start_tsc = now;
			st = LR_RUNNING;
			atomic_store_explicit(&t->state, st, memory_order_release);
		}
		break;
	case LR_RUNNING: {
		bool end = true;
		if (t->burst) {
			/* each worker says when its bursts are all with the PMD (burst_sent): its counts are its own */
			for (unsigned w = 0; w < lr.nworkers; w++)
				if (!atomic_load_explicit(&lr.workers[w].burst_sent, memory_order_acquire))
					end = false;
		} else {
			end = now - t->meas_start_tsc >= t->duration_tsc;
		}
		if (t->stall_tsc && !end && now >= stall_check_tsc) {
			/* read from the RX workers' lines once a millisecond, not every pass */
			stall_check_tsc = now + lr.tsc_per_ms;
			for (unsigned i = 0; i < t->nstreams; i++) {
				struct lr_stream *s = lr.streams[t->streams[i]];
				if (s->rx_port < 0)
					continue;
				/* a stream's last receipt is its RX workers' to write, by a clock read after this one
				 * perhaps: signed; before any receipt, the start counts. A stall is the DUT's only if every
				 * worker of the port's RX queues has polled since (a receiver that paused has the frames
				 * waiting in its ring). */
				const struct lr_port *rp = &lr.ports[s->rx_port];
				uint64_t last = t->meas_start_tsc, polled = UINT64_MAX;
				for (unsigned q = 0; q < rp->nq; q++) {
					uint64_t pw = lr_peek_u64(&lr.workers[rp->q[q].owner].last_tsc);
					for (unsigned k = 0; k < LR_MAX_QUEUES; k++) {
						uint64_t l = s->rxq[q][k] ? lr_peek_u64(&s->rxq[q][k]->last_rx_tsc) : 0;
						if ((int64_t)(l - last) > 0)
							last = l;
					}
					if (polled == UINT64_MAX || (int64_t)(pw - polled) < 0)
						polled = pw;
				}
				if ((int64_t)(now - last) > (int64_t)t->stall_tsc && (int64_t)(polled - last) > (int64_t)t->stall_tsc) {
					finish(t, LR_ABORTED, "dut-stalled", now);
					return LR_ABORTED;
				}
			}
		}
		if (end) {
			t->meas_end_tsc = now;
			drained_tsc = 0;
			st = LR_DRAINING;
			atomic_store_explicit(&t->state, st, memory_order_release);
		}
		break;
	}
	case LR_DRAINING:
		if (!drained_tsc && all_drained())
			drained_tsc = now;
		/* a worker that never got to drain (preempted through a whole second) has its streams' shortfall
		 * reported as the tester's limit (RESULT): the trial ends without it */
		if ((drained_tsc && now - drained_tsc >= t->drain_tsc) || now - t->meas_end_tsc >= t->drain_tsc + lr.tsc_hz) {
			finish(t, LR_DONE, NULL, now);
			return LR_DONE;
		}
		break;
	}
	return st;
}

/* The time since this worker's previous pass, kept while a trial measures or drains: its longest gap is
 * how long frames could wait for it (struct lr_worker). */
static inline void note_pass(struct lr_worker *h, int st, uint64_t now)
{
	if (st != LR_RUNNING && st != LR_DRAINING) {
		lr_publish_u64(&h->last_tsc, 0);
		return;
	}
	if (h->last_tsc && now - h->last_tsc > h->max_gap_tsc)
		h->max_gap_tsc = now - h->last_tsc;
	lr_publish_u64(&h->last_tsc, now);
}

/* A back-to-back trial: whether every burst worker w sends is with the PMD, whole. */
static bool bursts_sent(unsigned w)
{
	for (unsigned i = 0; i < lr.trial.nstreams; i++) {
		const struct lr_stream *s = lr.streams[lr.trial.streams[i]];
		for (unsigned k = 0; k < LR_MAX_QUEUES; k++)
			if (sends(s, k, w) && (s->txq[k].burst_left || s->txq[k].n_pending))
				return false;
	}
	return true;
}

int lr_worker_main(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	struct lr_worker *me = &lr.workers[w];
	bool leader = w == 0;
	struct rte_mempool_cache *cache = rte_mempool_default_cache(lr.pool, rte_lcore_id());
	/* what this worker last said in me->stopped (zero at start): said again only when it changes, as the
	 * leader reads the flag's cache line on every pass of a burst trial or a drain */
	bool said_stopped = false;
	while (!atomic_load_explicit(&lr.quit, memory_order_relaxed)) {
		/* while stopped, frames still get ARP/ND answers; none is counted and no test frame is sent */
		bool counting = leader || !atomic_load_explicit(&lr.stop, memory_order_acquire);
		if (!leader && said_stopped == counting) {
			said_stopped = !counting;
			atomic_store_explicit(&me->stopped, said_stopped, memory_order_release);
		}
		uint64_t now = rte_rdtsc();
		int st = leader ? advance(&now) : atomic_load_explicit(&lr.trial.state, memory_order_acquire);
		/* stopped, nothing is counted or sent; before the leader's warm-up starts (or when it skips it),
		 * nothing is due */
		if (!counting || (!leader && st == LR_WARMUP && (lr.trial.warmup_tsc == 0 || now < lr.trial.start_tsc)))
			st = LR_IDLE;
		note_pass(me, st, now);
		if (st == LR_DRAINING && !atomic_load_explicit(&me->drained, memory_order_relaxed))
			catch_up(&lr.trial, w, now);
		unsigned work = 0, sent = 0;
		for (unsigned i = 0; i < me->nqueues; i++) {
			struct lr_port *p = &lr.ports[me->queues[i].port];
			unsigned q = me->queues[i].queue;
			work += rx_queue(p, q, counting, cache);
			if (q == 0)
				send_control_frames(p);
		}
		if (st == LR_WARMUP || st == LR_RUNNING) {
			/* receiving took time: the clock read at the top is stale for pacing; read again only if
			 * something sends (a clock read costs as much as parsing a few frames) */
			bool fresh = work == 0;
			for (unsigned i = 0; i < lr.trial.nstreams; i++) {
				struct lr_stream *s = lr.streams[lr.trial.streams[i]];
				for (unsigned k = 0; k < s->lanes; k++) {
					if (!sends(s, k, w))
						continue;
					if (!fresh) {
						now = rte_rdtsc();
						fresh = true;
					}
					sent += tx_stream(s, k, st, now);
				}
			}
			if (st == LR_RUNNING && lr.trial.burst && bursts_sent(w))
				atomic_store_explicit(&me->burst_sent, true, memory_order_release);
		}
		/* A worker that shares its CPU (a cgroup quota below a CPU per spinning lcore) must not spin:
		 * spinning burns the quota and the kernel then stops every thread of the tester for the rest of
		 * the period, which turns pacing into bursts. Sleeping when idle costs up to idle_sleep_us of
		 * latency resolution. */
		if (lr.idle_sleep_us && work == 0 && sent == 0)
			rte_delay_us_sleep(lr.idle_sleep_us);
	}
	return 0;
}
