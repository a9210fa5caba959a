/* The receive path: each RX queue's worker takes its bursts, analyses every test frame (analysis.h) in the
 * order it arrived, answers ARP/ND on the TX queue of the same pair, and counts everything else. A frame's
 * arrival time is when the kernel put it in an af_packet port's ring (kernel_rx_time.h), so that a worker
 * that slept, or that the OS ran late, adds nothing to the latency; elsewhere, when the worker polled. */
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "analysis.h"
#include "engine.h"
#include "kernel_rx_time.h"
#include "rx.h"

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
			       const struct rte_mbuf *m, int st, uint32_t arrival_ns32, uint64_t now)
{
	struct lr_rx_frame f = {.seq = tag->seq,
				.ts_ns = tag->ts_ns,
				.frame_size = m->pkt_len + LR_FCS_LEN,
				.flow = tag->flow,
				.stream = tag->stream,
				.flags = tag->flags};
	lr_analyse_next(run, p, q, &f, st, arrival_ns32, now);
}

/* Fragments. A frame sent with DF clear (STREAM df=0) that a hop fragmented arrives as a first fragment,
 * which carries the tag and is analysed as the frame (received, its size the whole frame's), and the rest,
 * which carry nothing of ours but the source, destination and IP ID they share with the first (RFC 791).
 * Nothing is reassembled: the receiver counts the frames that came in fragments, those whose every byte came,
 * and their fragments, gathering a datagram's fragments in a slot of a small table per RX queue (engine.h
 * lr_portq.frag), in whatever order they come. */
static inline struct lr_frag_slot *frag_slot(struct lr_portq *pq, const struct lr_parsed *ps)
{
	uint32_t h = (ps->frag_src ^ ps->frag_dst ^ ps->frag_id) * 2654435761u;
	return &pq->frag[(h >> 16) & (LR_FRAG_SLOTS - 1)];
}

/* Whether the slot holds this fragment's datagram (of this trial). */
static inline bool frag_same(const struct lr_frag_slot *sl, const struct lr_parsed *ps, uint32_t trial)
{
	return sl->used && sl->trial == trial && sl->id == ps->frag_id && sl->src == ps->frag_src &&
	       sl->dst == ps->frag_dst;
}

/* The slot of this fragment's datagram, taken anew (from another datagram, or one of an earlier trial) unless
 * it holds this datagram already. Fragments that waited in a slot taken from them for a first that never
 * came are unmatched (those still waiting when the trial ends are not counted). */
static struct lr_frag_slot *frag_claim(struct lr_portq *pq, const struct lr_parsed *ps)
{
	struct lr_frag_slot *sl = frag_slot(pq, ps);
	uint32_t trial = lr.trial.id;
	if (frag_same(sl, ps, trial))
		return sl;
	if (sl->used && sl->trial == trial && !sl->first)
		pq->rx_frag_unmatched += sl->early;
	*sl = (struct lr_frag_slot){
	    .src = ps->frag_src, .dst = ps->frag_dst, .id = ps->frag_id, .trial = trial, .used = true};
	return sl;
}

/* Whether a later fragment starting where this one does came to the slot before (a copy); remembered if
 * not. (A datagram past the largest frame is none of ours: its offsets are not kept.) */
static bool frag_copy(struct lr_frag_slot *sl, uint16_t off)
{
	unsigned unit = off / 8u;
	if (unit >= LR_FRAG_WORDS * 64u)
		return false;
	uint64_t bit = 1ull << (unit & 63u);
	if (sl->starts[unit >> 6] & bit)
		return true;
	sl->starts[unit >> 6] |= bit;
	return false;
}

/* A datagram is whole once the bytes of its fragments reach its end (told by its last fragment); a hop's
 * fragments do not overlap. A copy of a fragment (the same offset; a copy of the first never comes here)
 * adds no bytes, so a frame missing a fragment never counts as whole for another's copy; it still counts
 * in the fragments. */
static void frag_add(struct lr_frag_slot *sl, const struct lr_parsed *ps, struct lr_rxq *r)
{
	bool copy = ps->frag_off != 0 && frag_copy(sl, ps->frag_off);
	if (!copy && (sl->end == 0 || sl->bytes < sl->end))
		sl->bytes += ps->frag_len;
	if (ps->frag_end != 0)
		sl->end = ps->frag_end;
	if (r != NULL) {
		r->fragments++;
		if (!sl->whole && sl->end != 0 && sl->bytes == sl->end) {
			sl->whole = true;
			r->fragmented_whole++;
		}
	}
}

static void analyse_first_fragment(struct lr_run *run, struct lr_port *p, unsigned q, const struct lr_parsed *ps,
				   int st, uint32_t arrival_ns32, uint64_t now)
{
	const struct lr_tag *tag = &ps->tag;
	struct lr_rx_frame f = {.seq = tag->seq,
				.ts_ns = tag->ts_ns,
				.frame_size = ps->frame_size,
				.flow = tag->flow,
				.stream = tag->stream,
				.flags = tag->flags};
	lr_analyse_next(run, p, q, &f, st, arrival_ns32, now);
	const struct lr_stream *s = lr.streams[tag->stream];
	struct lr_rxq *r = lr_measured(s, p, tag->flags, st) ? lr_rxq_of(s, q, tag->seq) : NULL;
	struct lr_frag_slot *sl = frag_slot(&p->q[q], ps);
	if (frag_same(sl, ps, lr.trial.id) && sl->first && sl->stream == tag->stream && sl->seq == tag->seq) {
		/* a copy of a first fragment that came: a duplicate (the analysis counted it as one); another frame
		 * whose ID is the same (a warm-up frame's, 16 bits repeat) starts a datagram of its own below */
		if (sl->measured && r != NULL)
			r->fragments++;
		return;
	}
	sl = frag_claim(&p->q[q], ps);
	if (sl->first) /* the slot held another frame of this ID: this one's datagram starts afresh */
		*sl = (struct lr_frag_slot){.src = ps->frag_src, .dst = ps->frag_dst, .id = ps->frag_id,
					    .trial = lr.trial.id, .used = true};
	sl->first = true;
	sl->stream = tag->stream;
	sl->seq = tag->seq;
	sl->measured = r != NULL;
	if (r != NULL) {
		r->fragmented++;
		r->fragments += sl->early; /* those that came before it */
	}
	sl->early = 0;
	frag_add(sl, ps, r);
}

/* A later fragment: counted in its frame's stream once the first came, before it or after. */
static void count_fragment(struct lr_port *p, unsigned q, const struct lr_parsed *ps)
{
	struct lr_frag_slot *sl = frag_claim(&p->q[q], ps);
	if (!sl->first) {
		sl->early++;
		frag_add(sl, ps, NULL);
		return;
	}
	/* of a warm-up frame, or an earlier trial's: as its first, not counted */
	const struct lr_stream *s = lr.streams[sl->stream];
	struct lr_rxq *r = sl->measured && s != NULL ? lr_rxq_of(s, q, sl->seq) : NULL;
	frag_add(sl, ps, r);
}

/* An ICMP error refusing one of this trial's frames as too big: counted at the port, and in the stream whose
 * frame it quotes when it came back to that stream's TX port, on the lane of this queue pair (its worker's). */
static void count_too_big(struct lr_port *p, unsigned q, const struct lr_parsed *ps)
{
	struct lr_portq *pq = &p->q[q];
	pq->rx_too_big++;
	if (ps->too_big_mtu != 0 && (pq->too_big_mtu == 0 || ps->too_big_mtu < pq->too_big_mtu))
		pq->too_big_mtu = ps->too_big_mtu;
	struct lr_stream *s = lr.streams[ps->too_big_stream];
	if (s == NULL || !s->in_trial || s->tx_port != p->id || q >= s->lanes)
		return;
	struct lr_txq *x = &s->txq[q];
	x->rx_too_big++;
	if (ps->too_big_mtu != 0 && (x->too_big_mtu == 0 || ps->too_big_mtu < x->too_big_mtu))
		x->too_big_mtu = ps->too_big_mtu;
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
	} else {
		lr_unmeasured(p, q, s, t->seq, now);
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

/* A frame's arrival time, ns modulo 2^32: its own (arr, the kernel's receive times of an af_packet port's
 * burst), or the burst's (when the worker polled). A constant NULL arr in an inlined copy folds away: the
 * ports without kernel times pay nothing for them. */
#define ARRIVAL(arr, i, burst_ns32) ((arr) ? (arr)[i] : (burst_ns32))

/* Frames from i on that continue the open run (analysis.h), counted and released in one pass; returns the
 * first that does not. The run is copied into a local whose address never escapes, so its counters stay
 * in registers for the whole stretch. */
static inline __attribute__((always_inline)) uint16_t rx_run_as(struct lr_run *run, struct rte_mbuf **pkts, uint16_t i,
								    uint16_t n, const uint32_t *arr, uint32_t now_ns32,
								    void **done, unsigned *ndone, bool plain)
{
	struct lr_run r = *run;
	for (; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (((m->ol_flags & RX_CKSUM_BAD_BITS) && rx_cksum_bad(m)) ||
		    !lr_run_extend(&r, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, m->pkt_len + LR_FCS_LEN,
				   ARRIVAL(arr, i, now_ns32), arr != NULL, plain))
			break; /* the general path takes it, and fetches ahead for it */
		prefetch_ahead(pkts, i, n);
		release(m, done, ndone);
	}
	*run = r;
	return i;
}

/* rx_run_as, its loop compiled for the run's kind of stream (lr_run_plain). */
static inline __attribute__((always_inline)) uint16_t rx_run(struct lr_run *run, struct rte_mbuf **pkts, uint16_t i,
								 uint16_t n, const uint32_t *arr, uint32_t now_ns32,
								 void **done, unsigned *ndone)
{
	if (lr_run_plain(run))
		return rx_run_as(run, pkts, i, n, arr, now_ns32, done, ndone, true);
	return rx_run_as(run, pkts, i, n, arr, now_ns32, done, ndone, false);
}

/* One received burst, parsed and analysed in the order it arrived: the common frame (the next of the run
 * the one before it opened) straight from its bytes, any other by the parser. arr: each frame's arrival
 * (NULL: all at now_ns32). */
static inline __attribute__((always_inline)) void rx_analyse(struct lr_port *p, unsigned q, struct rte_mbuf **pkts,
							     uint16_t n, int st, uint64_t now, uint32_t now_ns32,
							     const uint32_t *arr, struct rte_mempool_cache *cache)
{
	void *done[LR_BURST];
	unsigned ndone = 0;
	for (uint16_t i = 0; i < n && i < RX_PREFETCH; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	struct lr_run run = {.s = NULL};
	for (uint16_t i = 0; i < n; i++) {
		if (run.s != NULL) {
			i = rx_run(&run, pkts, i, n, arr, now_ns32, done, &ndone);
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
			analyse_tag(&run, p, q, &tag, m, st, ARRIVAL(arr, i, now_ns32), now);
		} else {
			switch (lr_parse(data, m->data_len, &ps)) {
			case LR_KIND_TAGGED:
				analyse_tag(&run, p, q, &ps.tag, m, st, ARRIVAL(arr, i, now_ns32), now);
				break;
			case LR_KIND_ARP:
				handle_arp(p, q, &ps);
				break;
			case LR_KIND_NS:
			case LR_KIND_NA:
				handle_nd(p, q, &ps);
				break;
			case LR_KIND_FRAG_FIRST:
				analyse_first_fragment(&run, p, q, &ps, st, ARRIVAL(arr, i, now_ns32), now);
				break;
			case LR_KIND_FRAG_REST:
				count_fragment(p, q, &ps);
				break;
			case LR_KIND_TOO_BIG:
				/* an error about a frame of an earlier trial (a DUT that answers late) says nothing of
				 * this one's sizes */
				if ((ps.too_big_flags & ~LR_FLAG_WARMUP) != LR_TRIAL_BITS(lr.trial.id))
					break;
				count_too_big(p, q, &ps);
				break;
			default:
				p->q[q].rx_foreign++;
			}
		}
		release(m, done, &ndone);
	}
	lr_run_close(&run, now);
	if (ndone)
		rte_mempool_generic_put(lr.pool, done, ndone, cache);
}

unsigned lr_rx_queue(struct lr_port *p, unsigned q, bool counting, struct rte_mempool_cache *cache)
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
	struct lr_portq *pq = &p->q[q];
	pq->rx_total += n;
	bool measuring = st == LR_RUNNING || st == LR_DRAINING;
	if (measuring) {
		if (now - pq->rx_win_start_tsc >= lr.tsc_per_ms) {
			if (pq->rx_win_frames > pq->rx_peak_win)
				pq->rx_peak_win = pq->rx_win_frames;
			pq->rx_win_start_tsc = now - pq->rx_win_start_tsc < 2 * lr.tsc_per_ms ? pq->rx_win_start_tsc + lr.tsc_per_ms : now;
			pq->rx_win_frames = 0;
		}
		pq->rx_win_frames += n;
	}
	if (pq->kring.map != NULL) {
		uint32_t arr[LR_BURST];
		lr_kring_arrivals(&pq->kring, pkts, n, now_ns32, arr, measuring ? &pq->rx_times : NULL);
		rx_analyse(p, q, pkts, n, st, now, now_ns32, arr, cache);
	} else {
		if (measuring)
			pq->rx_times.polled += n; /* all timed when the worker polled */
		rx_analyse(p, q, pkts, n, st, now, now_ns32, NULL, cache);
	}
	return n;
}
