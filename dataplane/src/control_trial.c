/* The verbs that run a trial: TRIAL (sets up the streams' frames and counters, then hands the trial to the
 * worker by publishing WARMUP), POLL and WAIT (its progress), ABORT (asks the worker to end it), and QUIET
 * (the DUT's rest before the next). */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "control_trial.h"
#include "engine.h"
#include "idle.h"
#include "kernel_drops.h"
#include "pools.h"
#include "rxq.h"
#include "timeline.h"
#include "trial.h"
#include "txq.h"


static void prepare_tx(struct lr_stream *s)
{
	struct lr_port *p = &lr.ports[s->tx_port];
	struct lr_hdr_cfg *h = &s->hdr;
	memcpy(h->src_mac, p->mac, 6);
	memcpy(h->dst_mac, p->peer_mac, 6);
	h->vlan = p->vlan;
	h->l3 = s->l3;
	h->src = s->src;
	h->dst = s->dst;
	h->sport = s->sport;
	h->dport = s->dport;
	h->dscp = s->dscp;
	h->fragmentable = s->fragmentable;
	for (unsigned i = 0; i < sizeof(s->random_bytes); i++)
		s->random_bytes[i] = (uint8_t)((i * 2654435761u + (unsigned)s->id * 40503u) >> 13);
	for (unsigned c = 0; c < s->nclasses; c++) {
		s->tmpl[c].data = s->tmpl_mem + (size_t)c * LR_MAX_FRAME;
		lr_tmpl_build(&s->tmpl[c], h, s->class_size[c], s->payload, s->random_bytes, sizeof(s->random_bytes));
		if (s->payload != LR_PAYLOAD_ZEROS || lr.tx_copy_whole)
			s->copy_len[c] = s->tmpl[c].len;
		else
			s->copy_len[c] = s->tmpl[c].len <= LR_COPY_LINE ? LR_COPY_LINE : LR_MAX_HDR_TAG;
		if (s->vary == 0) {
			struct lr_flow_fields ff;
			lr_flow_fields(h, 0, 0, &ff);
			lr_tmpl_fix_flow(&s->tmpl[c], &ff);
		}
	}
}

/* burst: the trial's (0 for a paced one), shared out over the stream's lanes */
static void reset_counters(struct lr_stream *s, uint64_t burst)
{
	lr_txq_reset(s, s->tx_port >= 0 ? lr.ports[s->tx_port].nq : 0, burst);
	lr_rxq_reset(s);
}

int do_trial(struct args *a, struct out *o)
{
	if (lr_trial_active())
		return fail(o, "busy", "TRIAL: a trial is running");
	/* the last trial's collector may still be taking its last look at the counters this one resets */
	lr_timeline_join();
	const char *streams = arg(a, "streams"), *rates = arg(a, "rates"), *unit = arg(a, "unit");
	uint64_t dur, warm, drain, burst, stall, id;
	struct lr_tl_params tlp;
	if (get_u64(a, o, "id", 0, 0x7fffffff, 0, &id) || get_u64(a, o, "duration_ms", 0, 2592000000ull, 0, &dur) || get_u64(a, o, "warmup_ms", 0, 600000, 0, &warm) ||
	    get_u64(a, o, "drain_ms", 0, 600000, 2000, &drain) ||
	    get_u64(a, o, "burst", 0, 1ull << 40, 0, &burst) || get_u64(a, o, "stall_ms", 0, 600000, 0, &stall) ||
	    get_u64(a, o, "bin_ms", 0, 10000, 0, &tlp.bin_ms) || get_u64(a, o, "settle_ms", 10, 60000, 200, &tlp.settle_ms) ||
	    get_u64(a, o, "outage_frames", 2, 1ull << 40, 2, &tlp.outage_frames) ||
	    get_u64(a, o, "tester_lag_ms", 1, 60000, 1, &tlp.lag_ms) || get_u64(a, o, "tester_gap_ms", 1, 60000, 1, &tlp.gap_ms))
		return -1;
	bool timeline = arg(a, "bin_ms") != NULL;
	if (!timeline && (arg(a, "settle_ms") || arg(a, "outage_frames") || arg(a, "tester_lag_ms") || arg(a, "tester_gap_ms")))
		return fail(o, "bad-request", "TRIAL: settle_ms, outage_frames, tester_lag_ms and tester_gap_ms are the timeline's: give bin_ms too");
	if (timeline && tlp.bin_ms < 10)
		return fail(o, "bad-value", "bin_ms=%llu: want 10 to 10000", (unsigned long long)tlp.bin_ms);
	if (check_unused(a, o, "TRIAL"))
		return -1;
	double ids[LR_MAX_TRIAL_STREAMS], r[LR_MAX_TRIAL_STREAMS];
	unsigned ns, nr = 0;
	if (!streams || parse_list(streams, ids, LR_MAX_TRIAL_STREAMS, &ns))
		return fail(o, "bad-request", "TRIAL: streams= wants a list of stream ids");
	if (!burst && (!rates || parse_list(rates, r, LR_MAX_TRIAL_STREAMS, &nr) || nr != ns))
		return fail(o, "bad-request", "TRIAL: rates= wants one rate per stream");
	if (!burst && dur == 0)
		return fail(o, "bad-request", "TRIAL: duration_ms= (or burst=) is required");
	int u = 0; /* 0 fps, 1 l2bps, 2 l1bps */
	if (unit && !strcmp(unit, "l2bps"))
		u = 1;
	else if (unit && !strcmp(unit, "l1bps"))
		u = 2;
	else if (unit && strcmp(unit, "fps") != 0)
		return fail(o, "bad-value", "unit=%s: want fps, l2bps or l1bps", unit);
	for (unsigned i = 0; i < ns; i++) {
		int id = (int)ids[i];
		struct lr_stream *s = id >= 0 && id < LR_MAX_STREAMS ? lr.streams[id] : NULL;
		if (s == NULL || !s->defined)
			return fail(o, "bad-value", "streams: stream %d is not defined", id);
		if (s->tx_port >= 0 && !atomic_load(&lr.ports[s->tx_port].peer_known))
			return fail(o, "unresolved", "stream %d: port %d has no next hop yet (RESOLVE it or give peer_mac)",
				    id, s->tx_port);
		if (!burst && r[i] <= 0 && s->tx_port >= 0)
			return fail(o, "bad-value", "rates: stream %d rate must be positive", id);
	}
	if (timeline) {
		int sid[LR_MAX_TRIAL_STREAMS];
		double fps[LR_MAX_TRIAL_STREAMS];
		for (unsigned i = 0; i < ns; i++) {
			const struct lr_stream *s = lr.streams[(int)ids[i]];
			sid[i] = s->id;
			fps[i] = burst ? 0 : u == 0 ? r[i] : u == 1 ? r[i] / (s->mean_frame * 8) : r[i] / ((s->mean_frame + 20) * 8);
		}
		tlp.duration_ms = dur;
		if (lr_timeline_check(&tlp, sid, fps, ns, burst, o))
			return -1;
	}
	for (int i = 0; i < LR_MAX_STREAMS; i++)
		if (lr.streams[i])
			lr.streams[i]->in_trial = false;
	/* tx_pool's payload areas stay zero only while no frame with another payload was built in them */
	bool nonzero = false, zero = false;
	for (unsigned i = 0; i < ns; i++) {
		struct lr_stream *s = lr.streams[(int)ids[i]];
		if (s->tx_port >= 0 && s->payload != LR_PAYLOAD_ZEROS)
			nonzero = true;
		else if (s->tx_port >= 0)
			zero = true;
	}
	if (zero && !nonzero && lr.tx_pool_dirty) {
		lr_zero_tx_pool();
		lr.tx_pool_dirty = false;
	}
	lr.tx_pool_dirty |= nonzero;
	lr.tx_copy_whole = zero && nonzero;
	struct lr_trial *t = &lr.trial;
	/* the new trial's number before any counter is zeroed, the streams' too: an ICMP error about a frame of
	 * the trial before, arriving from here on, is no longer counted (rx.c) */
	t->id = id ? (uint32_t)id : t->id + 1;
	t->nstreams = ns;
	for (unsigned i = 0; i < ns; i++) {
		struct lr_stream *s = lr.streams[(int)ids[i]];
		t->streams[i] = s->id;
		reset_counters(s, burst);
		if (s->tx_port >= 0)
			prepare_tx(s);
		double rate = burst ? 0 : r[i];
		s->fps = u == 0 ? rate : u == 1 ? rate / (s->mean_frame * 8) : rate / ((s->mean_frame + 20) * 8);
		s->in_trial = true;
	}
	for (unsigned i = 0; i < lr.nports; i++)
		for (unsigned q = 0; q < LR_MAX_QUEUES; q++) {
			struct lr_portq *pq = &lr.ports[i].q[q];
			pq->rx_foreign = pq->rx_arp = pq->tx_arp = pq->rx_stale = pq->rx_warmup = pq->rx_total =
				pq->tx_alloc_fail = pq->tx_full = pq->rx_bad_cksum = pq->rx_too_big = 0;
			pq->too_big_mtu = 0;
			pq->rx_frag_unmatched = 0; /* (the fragment table's slots carry their trial) */
			pq->rx_times = (struct lr_rx_times){0};
			pq->rx_win_start_tsc = pq->rx_win_frames = pq->rx_peak_win = 0;
		}
	for (unsigned i = 0; i < lr.nports; i++) {
		rte_eth_stats_reset(lr.ports[i].id);
		struct lr_port *p = &lr.ports[i];
		p->rx_kernel_drops = p->rx_kernel_rollovers_base = 0;
		p->rx_kernel_unread = 0;
		if (p->af_packet && !lr.mask_rx_misses) {
			/* reading resets the drops; a socket this read misses keeps its earlier drops and leaves the
			 * rollover base short: the trial is invalid for it, and says why */
			uint64_t earlier;
			p->rx_kernel_unread = lr_kernel_read(p->if_index, p->nq, &earlier, &p->rx_kernel_rollovers_base);
		}
	}
	/* no worker writes its health or its drain outside measurement and drain: safe to reset before WARMUP
	 * is published */
	for (unsigned i = 0; i < lr.nworkers; i++) {
		lr.workers[i].max_gap_tsc = lr.workers[i].slept_tsc = lr.workers[i].sleeps = 0;
		atomic_store_explicit(&lr.workers[i].drained, false, memory_order_relaxed);
		atomic_store_explicit(&lr.workers[i].burst_sent, false, memory_order_relaxed);
	}
	t->burst = burst;
	t->warmup_tsc = warm * lr.tsc_hz / 1000;
	t->duration_tsc = dur * lr.tsc_hz / 1000;
	t->drain_tsc = drain * lr.tsc_hz / 1000;
	t->stall_tsc = stall * lr.tsc_hz / 1000;
	t->meas_start_tsc = t->meas_end_tsc = t->end_tsc = 0;
	t->reason[0] = 0;
	t->stalled_stream = -1;
	atomic_store(&t->abort_req, false);
	if (timeline ? lr_timeline_start(&tlp, o) : (lr_timeline_off(), 0))
		return -1;
	t->start_tsc = rte_rdtsc();
	atomic_store_explicit(&t->state, LR_WARMUP, memory_order_release);
	lr_wake_all();
	if (timeline && lr_timeline_run(o)) {
		/* a trial without the timeline it was asked for would be no answer: ended at once */
		atomic_store_explicit(&t->abort_req, true, memory_order_release);
		lr_wake(&lr.workers[0]);
		return -1;
	}
	put(o, "{\"ok\":true,\"trial\":%u}", t->id);
	return 0;
}


static void put_poll(struct out *o)
{
	struct lr_trial *t = &lr.trial;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	uint64_t end = st >= LR_DONE ? t->end_tsc : rte_rdtsc();
	uint64_t elapsed = st == LR_IDLE ? 0 : (end - t->start_tsc) * 1000 / lr.tsc_hz;
	put(o, "{\"ok\":true,\"trial\":%u,\"state\":\"%s\",\"elapsed_ms\":%llu,\"streams\":[", t->id, lr_state_name(st),
	    (unsigned long long)elapsed);
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct lr_stream *s = lr.streams[t->streams[i]];
		uint64_t tx = 0;
		for (unsigned k = 0; k < s->lanes; k++)
			tx += s->txq[k].tx_frames;
		put(o, "%s{\"id\":%d,\"tx_frames\":%llu,\"rx_frames\":%llu}", i ? "," : "", s->id,
		    (unsigned long long)tx, (unsigned long long)lr_rxq_frames(s));
	}
	put(o, "]}");
}

int do_poll(struct args *a, struct out *o)
{
	if (check_unused(a, o, "POLL"))
		return -1;
	put_poll(o);
	return 0;
}

int do_wait(struct args *a, struct out *o)
{
	uint64_t timeout;
	if (get_u64(a, o, "timeout_ms", 0, 86400000, 86400000, &timeout) || check_unused(a, o, "WAIT"))
		return -1;
	uint64_t end = rte_rdtsc() + timeout * lr.tsc_hz / 1000;
	/* the leader signals the end (lr_signal_done): control sleeps until then, a second at a time */
	for (uint64_t now = rte_rdtsc(); lr_trial_active() && now < end; now = rte_rdtsc()) {
		uint64_t left_ms = (end - now) * 1000 / lr.tsc_hz + 1;
		lr_wait_done(left_ms < 1000 ? (unsigned)left_ms : 1000);
	}
	put_poll(o);
	return 0;
}

int do_abort(struct args *a, struct out *o)
{
	if (check_unused(a, o, "ABORT"))
		return -1;
	atomic_store_explicit(&lr.trial.abort_req, true, memory_order_release);
	lr_wake(&lr.workers[0]);
	for (int i = 0; i < 100 && lr_trial_active(); i++)
		lr_wait_done(10);
	put_poll(o);
	return 0;
}

/* When a frame of the tester's last arrived on any port (0: none since the engine started): the last trial's
 * measured frames, and what no trial measures (between trials every frame: the workers read their queues
 * then too, and book it, analysis.h). */
static uint64_t last_arrival(void)
{
	uint64_t last = 0;
	for (unsigned i = 0; i < lr.nports; i++)
		for (unsigned q = 0; q < lr.ports[i].nq; q++) {
			uint64_t l = lr_peek_u64(&lr.ports[i].q[q].last_unmeasured_tsc);
			last = l > last ? l : last;
		}
	for (int i = 0; i < LR_MAX_STREAMS; i++) {
		const struct lr_stream *s = lr.streams[i];
		if (s == NULL || !s->defined || s->rx_port < 0)
			continue;
		for (unsigned q = 0; q < lr.ports[s->rx_port].nq; q++)
			for (unsigned k = 0; k < LR_MAX_QUEUES; k++) {
				uint64_t l = s->rxq[q][k] ? lr_peek_u64(&s->rxq[q][k]->last_rx_tsc) : 0;
				last = l > last ? l : last;
			}
	}
	return last;
}

/* The earliest of the workers' last looks at their queues (their passes' starts). */
static uint64_t looked_since_all(void)
{
	uint64_t least = UINT64_MAX;
	for (unsigned w = 0; w < lr.nworkers; w++) {
		uint64_t l = __atomic_load_n(&lr.workers[w].looked_tsc, __ATOMIC_ACQUIRE);
		least = l < least ? l : least;
	}
	return least == UINT64_MAX ? 0 : least;
}

/* QUIET: the DUT rests until nothing has arrived from it for quiet_ms, at most max_ms after the request. A
 * DUT that queues deeply may still be forwarding an earlier trial, and a trial begun then measures its
 * frames waiting behind that backlog (RFC 2544 lets the DUT settle between trials). */
int do_quiet(struct args *a, struct out *o)
{
	if (lr_trial_active())
		return fail(o, "busy", "QUIET: a trial is running");
	uint64_t quiet_ms, max_ms;
	if (get_u64(a, o, "quiet_ms", 1, 600000, 0, &quiet_ms) || get_u64(a, o, "max_ms", 0, 60000, 10000, &max_ms) ||
	    check_unused(a, o, "QUIET"))
		return -1;
	if (quiet_ms == 0)
		return fail(o, "bad-request", "QUIET: quiet_ms= is required");
	uint64_t quiet = quiet_ms * lr.tsc_per_ms, max = max_ms * lr.tsc_per_ms, start = rte_rdtsc(), now;
	bool missed = false;
	for (;;) {
		uint64_t looked = looked_since_all();
		now = rte_rdtsc();
		uint64_t last = last_arrival();
		/* quiet: nothing for the quiet time, by the reads of workers that looked after it had passed */
		uint64_t after = last ? last + quiet : start;
		if ((int64_t)(now - after) >= 0 && (int64_t)(looked - after) >= 0)
			break;
		if (now - start >= max) {
			missed = true;
			break;
		}
		uint64_t until = last + quiet < start + max ? last + quiet : start + max;
		if ((int64_t)(now - after) >= 0) {
			/* the quiet time has passed: every worker looks once more (a sleeping one is woken) */
			lr_wake_all();
			until = now + lr.tsc_per_ms;
		}
		uint64_t ns = (uint64_t)((double)(until - now) * lr.ns_per_tsc) + 1000;
		struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
		nanosleep(&ts, NULL);
	}
	put(o, "{\"ok\":true,\"waited_ns\":%llu,\"quiet\":%s}", (unsigned long long)((double)(now - start) * lr.ns_per_tsc),
	    missed ? "false" : "true");
	return 0;
}
