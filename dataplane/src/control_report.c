/* RESULT: the counts of a finished trial, per stream (frames, bytes, sequence, latency, size classes), per
 * port (what the engine and the port dropped or could not place) and per worker (its longest stall). */
#include <string.h>

#include <rte_ethdev.h>

#include "control_report.h"
#include "engine.h"
#include "kernel_drops.h"
#include "rxq.h"
#include "timeline.h"
#include "trial.h"
#include "txq.h"

/* A worker's longest gap in the trial beyond the sleeps it chose, with a gap still going on when the trial
 * ended (it has not passed since, and its next pass, outside the trial, books nothing): frames waited that
 * long for it, whenever RESULT is asked. */
static uint64_t worker_gap_tsc(const struct lr_worker *w)
{
	uint64_t gap = w->max_gap_tsc;
	uint64_t polled = lr_peek_u64(&w->polled_tsc), until = lr_peek_u64(&w->sleep_until);
	uint64_t since = polled > until ? polled : until, end = lr.trial.end_tsc;
	if (polled != 0 && end > since && end - since > gap)
		gap = end - since;
	return gap;
}

static void put_latency(struct out *o, const struct lr_stream *s, const struct lr_rxq *rx)
{
	const struct lr_hist *h = &rx->lat;
	bool local = s->tx_port >= 0 && s->rx_port >= 0;
	const char *clock = local ? "local" : lr.realtime ? "realtime" : "unsynchronised";
	if (!local && !lr.realtime) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":%llu}", clock,
		    (unsigned long long)h->count);
		return;
	}
	if (rx->lat_negative > 0) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":%llu,\"negative\":%llu}", clock,
		    (unsigned long long)h->count, (unsigned long long)rx->lat_negative);
		return;
	}
	if (h->count == 0) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":0}", clock);
		return;
	}
	uint64_t p999 = lr_hist_quantile(h, 0.999);
	put(o,
	    "\"latency\":{\"valid\":true,\"clock\":\"%s\",\"count\":%llu,\"min_ns\":%llu,\"mean_ns\":%llu,"
	    "\"max_ns\":%llu,\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,\"p9999_ns\":%llu,"
	    "\"pdv_ns\":%llu,\"jitter_ns\":%llu,\"resolution_ns\":%llu,\"hist_sub\":%u,\"hist\":[",
	    clock, (unsigned long long)h->count, (unsigned long long)h->min, (unsigned long long)(h->sum / h->count),
	    (unsigned long long)h->max, (unsigned long long)lr_hist_quantile(h, 0.5),
	    (unsigned long long)lr_hist_quantile(h, 0.9), (unsigned long long)lr_hist_quantile(h, 0.99),
	    (unsigned long long)p999, (unsigned long long)lr_hist_quantile(h, 0.9999),
	    (unsigned long long)(p999 - h->min), (unsigned long long)(h->j16 / 16),
	    (unsigned long long)lr_hist_resolution(h, 0.9999), LR_HIST_SUB);
	bool first = true;
	for (unsigned i = 0; i < LR_HIST_BUCKETS; i++)
		if (h->b[i]) {
			put(o, "%s[%llu,%llu]", first ? "" : ",", (unsigned long long)lr_hist_upper(i),
			    (unsigned long long)h->b[i]);
			first = false;
		}
	put(o, "]}");
}

int do_result(struct args *a, struct out *o)
{
	if (check_unused(a, o, "RESULT"))
		return -1;
	struct lr_trial *t = &lr.trial;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	if (st == LR_IDLE)
		return fail(o, "no-trial", "RESULT: no trial has run");
	if (st != LR_DONE && st != LR_ABORTED)
		return fail(o, "busy", "RESULT: trial %u is still %s", t->id, lr_state_name(st));
	/* the timeline's collector reads the kernel's drop counts (reading resets them): its last look first */
	lr_timeline_join();
	uint64_t meas_end = t->meas_end_tsc ? t->meas_end_tsc : t->end_tsc;
	uint64_t meas = t->meas_start_tsc && meas_end > t->meas_start_tsc ? meas_end - t->meas_start_tsc : 0;
	put(o, "{\"ok\":true,\"trial\":%u,\"state\":\"%s\",\"reason\":\"%s\",\"stalled_stream\":%d,\"duration_ns\":%llu,"
	       "\"streams\":[",
	    t->id, lr_state_name(st), t->reason, t->stalled_stream, (unsigned long long)((double)meas * lr.ns_per_tsc));
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct lr_stream *s = lr.streams[t->streams[i]];
		/* Offered is judged by frames: a trial of d s at r frames/s must send ceil(d·r) frames. A late
		 * look at the clock (the OS preempting the worker) stretches the measured interval but does
		 * not make the tester the bottleneck; frames it could not send do. */
		struct lr_tx_sum tx;
		lr_txq_merge(s, &tx);
		double secs = (double)t->duration_tsc / (double)lr.tsc_hz;
		if (t->burst)
			secs = tx.last_tsc > tx.first_tsc ? (double)(tx.last_tsc - tx.first_tsc) / (double)lr.tsc_hz : 0;
		double achieved = secs > 0 ? (double)tx.tx_frames / secs : 0;
		uint64_t expected = t->burst ? 0 : (uint64_t)((double)(t->duration_tsc - 1) * s->fps / (double)lr.tsc_hz) + 1;
		bool saturated = s->tx_port >= 0 && !t->burst && st == LR_DONE && (double)tx.tx_frames < (double)expected * 0.995;
		/* Loss is the runner's to compute from these counts (PROTOCOL.md): with a stream's two halves
		 * on two engines, only it has both. */
		/* the stream's RX queues merged (engine.h: why the sums are exact); static: 7 kB of histogram */
		static struct lr_rxq m;
		unsigned nq_seen;
		lr_rxq_merge(s, &m, &nq_seen);
		uint64_t rx = m.win.rx, dup = m.win.dup;
		put(o,
		    "%s{\"id\":%d,\"target_fps\":%.3f,\"achieved_fps\":%.3f,\"saturated\":%s,\"tx_frames\":%llu,"
		    "\"tx_bytes\":%llu,\"rx_frames\":%llu,\"rx_bytes\":%llu,\"duplicates\":%llu,"
		    "\"reordered\":%llu,\"early\":%llu,\"late\":%llu,\"beyond_window\":%llu,\"max_late\":%llu,"
		    "\"max_early\":%llu,"
		    "\"bad_flow\":%llu,\"unknown_lane\":%llu,\"corrupted\":%llu,\"tx_max_lag_ns\":%llu,\"scheduled_frames\":%llu,"
		    "\"tx_peak_fps\":%llu,\"tx_restamped_bursts\":%llu,\"rx_too_big\":%llu,\"too_big_mtu\":%u,"
		    "\"rx_queues\":%u,\"fragmented\":%llu,"
		    "\"fragmented_whole\":%llu,\"fragments\":%llu,",
		    i ? "," : "", s->id, t->burst ? 0.0 : s->fps, achieved, saturated ? "true" : "false",
		    (unsigned long long)tx.tx_frames, (unsigned long long)tx.tx_bytes, (unsigned long long)rx,
		    (unsigned long long)m.rx_bytes, (unsigned long long)dup,
		    (unsigned long long)m.win.reordered, (unsigned long long)m.win.early, (unsigned long long)m.late,
		    (unsigned long long)m.win.beyond, (unsigned long long)m.win.max_late,
		    (unsigned long long)m.win.max_early,
		    (unsigned long long)m.bad_flow, (unsigned long long)m.unknown_lane, (unsigned long long)m.corrupted,
		    (unsigned long long)tx.lag_ns,
		    (unsigned long long)(s->tx_port < 0 ? 0 : t->burst ? t->burst : expected),
		    (unsigned long long)tx.peak_fps, (unsigned long long)tx.restamped,
		    (unsigned long long)tx.rx_too_big, tx.too_big_mtu, nq_seen, (unsigned long long)m.fragmented,
		    (unsigned long long)m.fragmented_whole, (unsigned long long)m.fragments);
		put_latency(o, s, &m);
		put(o, ",\"classes\":[");
		for (unsigned c = 0; c < s->nclasses; c++) {
			uint64_t ctx = s->tx_port >= 0 ? lr_txq_class_tx(s, c) : 0;
			put(o, "%s{\"size\":%u,\"tx_frames\":%llu,\"rx_frames\":%llu}", c ? "," : "",
			    s->class_size[c], (unsigned long long)ctx, (unsigned long long)m.class_rx[c]);
		}
		put(o, "]}");
	}
	put(o, "],\"ports\":[");
	for (unsigned i = 0; i < lr.nports; i++) {
		struct lr_port *p = &lr.ports[i];
		/* each queue's worker counted its own */
		struct lr_portq c;
		memset(&c, 0, sizeof(c));
		for (unsigned q = 0; q < p->nq; q++) {
			const struct lr_portq *pq = &p->q[q];
			c.rx_foreign += pq->rx_foreign;
			c.rx_arp += pq->rx_arp;
			c.tx_arp += pq->tx_arp;
			c.rx_stale += pq->rx_stale;
			c.rx_warmup += pq->rx_warmup;
			c.tx_alloc_fail += pq->tx_alloc_fail;
			c.tx_full += pq->tx_full;
			c.rx_bad_cksum += pq->rx_bad_cksum;
			c.rx_too_big += pq->rx_too_big;
			c.rx_frag_unmatched += pq->rx_frag_unmatched;
			if (pq->too_big_mtu != 0 && (c.too_big_mtu == 0 || pq->too_big_mtu < c.too_big_mtu))
				c.too_big_mtu = pq->too_big_mtu;
		}
		struct rte_eth_stats es;
		memset(&es, 0, sizeof(es));
		rte_eth_stats_get(p->id, &es);
		uint64_t rollovers = 0;
		if (p->af_packet && !lr.mask_rx_misses) {
			uint64_t drops, now_rollovers;
			unsigned unread = lr_kernel_read(p->if_index, p->nq, &drops, &now_rollovers);
			p->rx_kernel_drops += drops; /* a later RESULT adds what was dropped since */
			/* a read of this trial that missed a socket keeps the trial invalid, even if a later read
			 * finds it again: what it dropped in between may have been lost with a socket reopened */
			if (unread > p->rx_kernel_unread)
				p->rx_kernel_unread = unread;
			/* sockets reopened since the trial started count from zero again */
			rollovers = now_rollovers >= p->rx_kernel_rollovers_base ? now_rollovers - p->rx_kernel_rollovers_base
										  : now_rollovers;
		}
		/* how its measured frames were timed (kernel_rx_time.h); how fast they came (its queues' peaks
		 * added: at most the port's, never below it); and the longest its ring was left unread: what its
		 * frames waited by the kernel's times, else its workers' longest gap and the sleep they may choose
		 * on a queue nothing wakes them for (idle.h) */
		struct lr_rx_times tm = {0};
		uint64_t peak = 0, unread_ns = 0;
		for (unsigned q = 0; q < p->nq; q++) {
			const struct lr_portq *pq = &p->q[q];
			tm.kernel += pq->rx_times.kernel;
			tm.polled += pq->rx_times.polled;
			if (pq->rx_times.wait_max_ns > tm.wait_max_ns)
				tm.wait_max_ns = pq->rx_times.wait_max_ns;
			peak += (pq->rx_peak_win > pq->rx_win_frames ? pq->rx_peak_win : pq->rx_win_frames) * 1000;
			uint64_t gap = (uint64_t)((double)worker_gap_tsc(&lr.workers[pq->owner]) * lr.ns_per_tsc);
			if (pq->kring.fd < 0 && !lr.spin)
				gap += (uint64_t)lr.rx_sleep_us * 1000;
			if (gap > unread_ns)
				unread_ns = gap;
		}
		if (tm.kernel > 0 && tm.polled == 0)
			unread_ns = tm.wait_max_ns;
		put(o,
		    "%s{\"id\":%u,\"rx_kernel_timed\":%llu,\"rx_poll_timed\":%llu,\"rx_wait_max_ns\":%llu,"
		    "\"rx_misses_counted\":%s,\"rx_ring\":%u,\"rx_peak_fps\":%llu,\"rx_unread_max_ns\":%llu,"
		    "\"rx_foreign\":%llu,\"rx_arp\":%llu,\"tx_arp\":%llu,\"rx_stale\":%llu,"
		    "\"rx_warmup\":%llu,\"imissed\":%llu,\"ierrors\":%llu,\"oerrors\":%llu,\"rx_nombuf\":%llu,"
		    "\"tx_alloc_fail\":%llu,\"tx_full\":%llu,\"rx_bad_checksum\":%llu,\"rx_kernel_drops\":%llu,"
		    "\"rx_kernel_rollovers\":%llu,\"rx_kernel_unread\":%u,\"rx_too_big\":%llu,\"too_big_mtu\":%u,"
		    "\"rx_fragments_unmatched\":%llu}",
		    i ? "," : "", i, (unsigned long long)tm.kernel, (unsigned long long)tm.polled,
		    (unsigned long long)tm.wait_max_ns, p->rx_misses_counted ? "true" : "false", p->rx_ring,
		    (unsigned long long)peak, (unsigned long long)unread_ns, (unsigned long long)c.rx_foreign,
		    (unsigned long long)c.rx_arp,
		    (unsigned long long)c.tx_arp, (unsigned long long)c.rx_stale, (unsigned long long)c.rx_warmup,
		    (unsigned long long)es.imissed, (unsigned long long)es.ierrors, (unsigned long long)es.oerrors,
		    (unsigned long long)es.rx_nombuf, (unsigned long long)c.tx_alloc_fail,
		    (unsigned long long)c.tx_full, (unsigned long long)c.rx_bad_cksum,
		    (unsigned long long)p->rx_kernel_drops, (unsigned long long)rollovers, p->rx_kernel_unread,
		    (unsigned long long)c.rx_too_big, c.too_big_mtu, (unsigned long long)c.rx_frag_unmatched);
	}
	put(o, "],\"workers\":[");
	for (unsigned i = 0; i < lr.nworkers; i++) {
		const struct lr_worker *w = &lr.workers[i];
		put(o, "%s{\"lcore\":%u,\"role\":\"txrx\",\"ports\":[", i ? "," : "", w->lcore);
		for (unsigned k = 0; k < w->nports; k++)
			put(o, "%s%u", k ? "," : "", w->ports[k]);
		/* the queue pairs it served, with the frames each RX queue received in the trial and the test
		 * frames each TX queue sent (the lanes of the streams it sent) */
		put(o, "],\"queues\":[");
		for (unsigned k = 0; k < w->nqueues; k++) {
			unsigned port = w->queues[k].port, q = w->queues[k].queue;
			uint64_t tx = 0;
			for (unsigned i = 0; i < t->nstreams; i++) {
				const struct lr_stream *s = lr.streams[t->streams[i]];
				if (s->tx_port == (int)port && q < s->lanes)
					tx += s->txq[q].tx_frames;
			}
			put(o, "%s{\"port\":%u,\"queue\":%u,\"rx_frames\":%llu,\"tx_frames\":%llu}", k ? "," : "", port, q,
			    (unsigned long long)lr.ports[port].q[q].rx_total, (unsigned long long)tx);
		}
		/* its longest gap beyond the sleeps it chose, and the sleeps (idle.h) */
		put(o, "],\"max_gap_ns\":%llu,\"slept_ns\":%llu,\"sleeps\":%llu}",
		    (unsigned long long)((double)worker_gap_tsc(w) * lr.ns_per_tsc),
		    (unsigned long long)((double)w->slept_tsc * lr.ns_per_tsc), (unsigned long long)w->sleeps);
	}
	put(o, "]}");
	return 0;
}
