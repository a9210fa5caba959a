/* RESULT: the counts of a finished trial, per stream (frames, bytes, sequence, latency, size classes), per
 * port (what the engine and the port dropped or could not place) and per worker (its longest stall). */
#include <string.h>

#include <rte_ethdev.h>

#include "control.h"
#include "engine.h"

static uint64_t class_tx(const struct lr_stream *s, unsigned c, uint64_t n)
{
	uint64_t per_cycle = 0, partial = 0, rem = n % s->cycle_len;
	for (uint32_t i = 0; i < s->cycle_len; i++)
		if (s->cycle_class[i] == c) {
			per_cycle++;
			if (i < rem)
				partial++;
		}
	return n / s->cycle_len * per_cycle + partial;
}

static void put_latency(struct out *o, const struct lr_stream *s)
{
	const struct lr_hist *h = &s->lat;
	bool local = s->tx_port >= 0 && s->rx_port >= 0;
	const char *clock = local ? "local" : lr.realtime ? "realtime" : "unsynchronised";
	if (!local && !lr.realtime) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":%llu}", clock,
		    (unsigned long long)h->count);
		return;
	}
	if (s->lat_negative > 0) {
		put(o, "\"latency\":{\"valid\":false,\"clock\":\"%s\",\"count\":%llu,\"negative\":%llu}", clock,
		    (unsigned long long)h->count, (unsigned long long)s->lat_negative);
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
	    "\"pdv_ns\":%llu,\"jitter_ns\":%llu,\"hist\":[",
	    clock, (unsigned long long)h->count, (unsigned long long)h->min, (unsigned long long)(h->sum / h->count),
	    (unsigned long long)h->max, (unsigned long long)lr_hist_quantile(h, 0.5),
	    (unsigned long long)lr_hist_quantile(h, 0.9), (unsigned long long)lr_hist_quantile(h, 0.99),
	    (unsigned long long)p999, (unsigned long long)lr_hist_quantile(h, 0.9999),
	    (unsigned long long)(p999 - h->min), (unsigned long long)(h->j16 / 16));
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
		return fail(o, "busy", "RESULT: trial %u is still %s", t->id, state_name(st));
	uint64_t meas_end = t->meas_end_tsc ? t->meas_end_tsc : t->end_tsc;
	uint64_t meas = t->meas_start_tsc && meas_end > t->meas_start_tsc ? meas_end - t->meas_start_tsc : 0;
	put(o, "{\"ok\":true,\"trial\":%u,\"state\":\"%s\",\"reason\":\"%s\",\"duration_ns\":%llu,\"streams\":[", t->id,
	    state_name(st), t->reason, (unsigned long long)((double)meas * lr.ns_per_tsc));
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct lr_stream *s = lr.streams[t->streams[i]];
		/* Offered is judged by frames: a trial of d s at r frames/s must send ceil(d·r) frames. A late
		 * look at the clock (the OS preempting the worker) stretches the measured interval but does
		 * not make the tester the bottleneck; frames it could not send do. */
		double secs = (double)t->duration_tsc / (double)lr.tsc_hz;
		if (t->burst)
			secs = s->tx_last_tsc > s->tx_first_tsc ? (double)(s->tx_last_tsc - s->tx_first_tsc) / (double)lr.tsc_hz : 0;
		double achieved = secs > 0 ? (double)s->tx_frames / secs : 0;
		uint64_t expected = t->burst ? 0 : (uint64_t)((double)(t->duration_tsc - 1) * s->fps / (double)lr.tsc_hz) + 1;
		bool saturated = s->tx_port >= 0 && !t->burst && st == LR_DONE && (double)s->tx_frames < (double)expected * 0.995;
		/* Loss is the runner's to compute from these counts (PROTOCOL.md): with a stream's two halves
		 * on two engines, only it has both. */
		uint64_t rx = s->win.rx, dup = s->win.dup;
		put(o,
		    "%s{\"id\":%d,\"target_fps\":%.3f,\"achieved_fps\":%.3f,\"saturated\":%s,\"tx_frames\":%llu,"
		    "\"tx_bytes\":%llu,\"rx_frames\":%llu,\"rx_bytes\":%llu,\"duplicates\":%llu,"
		    "\"reordered\":%llu,\"early\":%llu,\"late\":%llu,\"beyond_window\":%llu,\"max_late\":%llu,"
		    "\"max_early\":%llu,"
		    "\"bad_flow\":%llu,\"corrupted\":%llu,\"tx_max_lag_ns\":%llu,\"scheduled_frames\":%llu,"
		    "\"tx_peak_fps\":%llu,",
		    i ? "," : "", s->id, t->burst ? 0.0 : s->fps, achieved, saturated ? "true" : "false",
		    (unsigned long long)s->tx_frames, (unsigned long long)s->tx_bytes, (unsigned long long)rx,
		    (unsigned long long)s->rx_bytes, (unsigned long long)dup,
		    (unsigned long long)s->win.reordered, (unsigned long long)s->win.early, (unsigned long long)s->late,
		    (unsigned long long)s->win.beyond, (unsigned long long)s->win.max_late,
		    (unsigned long long)s->win.max_early,
		    (unsigned long long)s->bad_flow, (unsigned long long)s->corrupted,
		    (unsigned long long)(s->fps > 0 && s->max_backlog > 1 ? (double)(s->max_backlog - 1) * 1e9 / s->fps : 0),
		    (unsigned long long)(s->tx_port < 0 ? 0 : t->burst ? t->burst : expected),
		    (unsigned long long)(s->peak_win_frames > s->win_frames ? s->peak_win_frames : s->win_frames) * 1000ULL);
		put_latency(o, s);
		put(o, ",\"classes\":[");
		for (unsigned c = 0; c < s->nclasses; c++) {
			uint64_t ctx = s->tx_port >= 0 ? class_tx(s, c, s->tx_frames) : 0;
			put(o, "%s{\"size\":%u,\"tx_frames\":%llu,\"rx_frames\":%llu}", c ? "," : "",
			    s->class_size[c], (unsigned long long)ctx, (unsigned long long)s->class_rx[c]);
		}
		put(o, "]}");
	}
	put(o, "],\"ports\":[");
	for (unsigned i = 0; i < lr.nports; i++) {
		struct lr_port *p = &lr.ports[i];
		struct rte_eth_stats es;
		memset(&es, 0, sizeof(es));
		rte_eth_stats_get(p->id, &es);
		p->rx_kernel_drops += lr_kernel_rx_drops(p->kernel_ifindex); /* stable across repeated RESULTs */
		put(o,
		    "%s{\"id\":%u,\"rx_foreign\":%llu,\"rx_arp\":%llu,\"tx_arp\":%llu,\"rx_stale\":%llu,"
		    "\"rx_warmup\":%llu,\"imissed\":%llu,\"ierrors\":%llu,\"oerrors\":%llu,\"rx_nombuf\":%llu,"
		    "\"tx_alloc_fail\":%llu,\"tx_full\":%llu,\"rx_bad_checksum\":%llu,\"rx_kernel_drops\":%llu}",
		    i ? "," : "", i, (unsigned long long)p->rx_foreign, (unsigned long long)p->rx_arp,
		    (unsigned long long)p->tx_arp, (unsigned long long)p->rx_stale, (unsigned long long)p->rx_warmup,
		    (unsigned long long)es.imissed, (unsigned long long)es.ierrors, (unsigned long long)es.oerrors,
		    (unsigned long long)es.rx_nombuf, (unsigned long long)p->tx_alloc_fail,
		    (unsigned long long)p->tx_full, (unsigned long long)p->rx_bad_cksum,
		    (unsigned long long)p->rx_kernel_drops);
	}
	put(o, "],\"workers\":[");
	for (unsigned i = 0; i < lr.nworkers; i++) {
		const struct lr_worker *w = &lr.workers[i];
		put(o, "%s{\"lcore\":%u,\"role\":\"txrx\",\"ports\":[", i ? "," : "", w->lcore);
		for (unsigned k = 0; k < w->nports; k++)
			put(o, "%s%u", k ? "," : "", w->ports[k]);
		put(o, "],\"max_gap_ns\":%llu}", (unsigned long long)((double)w->max_gap_tsc * lr.ns_per_tsc));
	}
	put(o, "]}");
	return 0;
}
