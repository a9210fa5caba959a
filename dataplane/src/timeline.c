/* See timeline.h. The collector looks every LR_TL_TICK_MS: first at the tester's health (its lanes' lags,
 * its workers' gaps, its ports' drops), which marks time intervals as spoiled, then at the positions that
 * have had settle_ms to arrive, which it judges in order, closing bins (flagged by the intervals they
 * overlap) and runs of losses (outages) as it goes. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "kernel_drops.h"
#include "timeline.h"
#include "trial.h"

#define LR_TL_BINS 8192
#define LR_TL_OUTAGES 1024
#define LR_TL_SPOILS 4096
#define LR_TL_TICK_MS 10
/* how much later than settle_ms the collector may read a position before its window has reused the bit:
 * a collector the host holds up for longer flags what it could not read (LR_TL_WINDOW) */
#define LR_TL_MARGIN_MS 1000

struct lr_tl_bin {
	uint64_t index, sent, received;
	unsigned flags;
};

struct lr_tl_outage {
	uint64_t n, first, last, frames;
	bool open, tester;
};

struct lr_tl_stream {
	struct lr_stream *s;
	double fps, per_bin; /* frames/s, and positions per bin */
	unsigned lanes, nq;
	uint64_t positions;	/* what the trial schedules */
	uint64_t scan;		/* the next position to judge */
	uint64_t bin, bin_end;	/* the open bin, and the first position of the next */
	uint64_t bin_sent, bin_received;
	unsigned bin_flags;
	uint64_t received, lost, scattered, unsent, late_after_settle;
	uint64_t run_first, run_len; /* the open run of losses */
	uint64_t outages_found, outage_frames;
	struct lr_tl_bin bins[LR_TL_BINS]; /* bin i at i % LR_TL_BINS; bins 0 .. bin - 1 are done */
	struct lr_tl_outage outages[LR_TL_OUTAGES];
};

/* a time interval (TSC) the tester spoiled, and how */
struct lr_tl_spoil {
	uint64_t from, to;
	unsigned flags;
};

static struct {
	bool on;      /* the current (or last) trial keeps a timeline */
	bool running; /* the collector thread exists: not joined yet */
	pthread_t thread;
	pthread_mutex_t lock; /* what the collector writes, against TIMELINE's reads */
	struct lr_tl_params p;
	uint64_t bin_tsc, settle_tsc, lag_tsc, gap_tsc;
	unsigned nstreams;
	struct lr_tl_stream *st[LR_MAX_TRIAL_STREAMS];
	struct lr_tl_spoil spoil[LR_TL_SPOILS];
	unsigned nspoil;
	/* what the collector saw at its last look */
	uint64_t last_look;
	uint64_t port_drops[LR_MAX_PORTS], port_rollovers[LR_MAX_PORTS];
	uint64_t port_ethdev_drops[LR_MAX_PORTS], stats_due[LR_MAX_PORTS];
	uint64_t worker_gaps[LR_MAX_WORKERS];
	uint64_t lane_lags[LR_MAX_TRIAL_STREAMS][LR_MAX_QUEUES];
} tl = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* the positions a trial of duration_tsc schedules at fps (as RESULT's scheduled_frames) */
static uint64_t scheduled(double fps)
{
	return (uint64_t)((double)(lr.trial.duration_tsc - 1) * fps / (double)lr.tsc_hz) + 1;
}

static uint64_t due_tsc(const struct lr_tl_stream *ts, uint64_t meas_start, uint64_t pos)
{
	return meas_start + (uint64_t)((double)pos * (double)lr.tsc_hz / ts->fps);
}

/* the first position of bin b: frame P is due at P / fps, in bin floor(P / per_bin) */
static uint64_t bin_first(const struct lr_tl_stream *ts, uint64_t b)
{
	return (uint64_t)ceil((double)b * ts->per_bin);
}

static uint64_t bin_of_time(uint64_t meas_start, uint64_t tsc)
{
	return tsc > meas_start ? (tsc - meas_start) / tl.bin_tsc : 0;
}

static void spoil(uint64_t from, uint64_t to, unsigned flags)
{
	if (to < from)
		to = from;
	struct lr_tl_spoil *last = tl.nspoil ? &tl.spoil[tl.nspoil - 1] : NULL;
	/* one that touches the last (within a bin: the flags land on the same bins) or a full list: merged */
	if (last && ((last->flags == flags && from <= last->to + tl.bin_tsc && to + tl.bin_tsc >= last->from) ||
		     tl.nspoil == LR_TL_SPOILS)) {
		last->from = from < last->from ? from : last->from;
		last->to = to > last->to ? to : last->to;
		last->flags |= flags;
		return;
	}
	tl.spoil[tl.nspoil++] = (struct lr_tl_spoil){from, to, flags};
}

/* the flags of the spoiled intervals that overlap [from, to) */
static unsigned spoiled(uint64_t from, uint64_t to)
{
	unsigned f = 0;
	for (unsigned i = 0; i < tl.nspoil; i++)
		if (tl.spoil[i].from < to && tl.spoil[i].to >= from)
			f |= tl.spoil[i].flags;
	return f;
}

/* the flags of bins first .. last (inclusive), by time */
static unsigned bins_spoiled(uint64_t meas_start, uint64_t first, uint64_t last)
{
	return spoiled(meas_start + first * tl.bin_tsc, meas_start + (last + 1) * tl.bin_tsc);
}

/* A gap in a worker's passes matters whatever the port: frames that waited in a ring for a receiver held
 * up past settle_ms are judged lost before it reads them (and on a port that cannot count its drops they
 * may be gone unseen); a sender's gap shows as its lanes' lag too. Any gap beyond the limit spoils. */
static void look_at_health(uint64_t now, uint64_t meas_start, bool final, uint64_t sent[][LR_MAX_QUEUES])
{
	uint64_t prev = tl.last_look ? tl.last_look : meas_start;
	uint64_t back = prev > tl.settle_tsc ? prev - tl.settle_tsc : 0;
	for (unsigned i = 0; i < lr.nports; i++) {
		struct lr_port *p = &lr.ports[i];
		/* read at every look: a drop must be seen before the bins it spoils close (a VF's read is a
		 * mailbox round trip to its PF, a hundred a second) */
		if (final || now >= tl.stats_due[i]) {
			struct rte_eth_stats es;
			memset(&es, 0, sizeof(es));
			rte_eth_stats_get(p->id, &es);
			tl.port_ethdev_drops[i] = es.imissed + es.rx_nombuf;
			tl.stats_due[i] = now;
		}
		uint64_t drops = tl.port_ethdev_drops[i], rollovers = tl.port_rollovers[i];
		if (p->af_packet && !lr.mask_rx_misses) {
			/* reading resets the kernel's count: kept where RESULT adds its own reads (it joins us first) */
			uint64_t kd;
			unsigned unread = lr_kernel_read(p->if_index, p->nq, &kd, &rollovers);
			p->rx_kernel_drops += kd;
			if (unread > p->rx_kernel_unread)
				p->rx_kernel_unread = unread;
			drops += p->rx_kernel_drops + p->rx_kernel_unread;
		}
		if (drops != tl.port_drops[i] || rollovers != tl.port_rollovers[i])
			spoil(back, now, LR_TL_RX_DROP);
		tl.port_drops[i] = drops;
		tl.port_rollovers[i] = rollovers;
	}
	for (unsigned w = 0; w < lr.nworkers; w++) {
		struct lr_worker *wk = &lr.workers[w];
		uint64_t ev = __atomic_load_n(&wk->gap_events, __ATOMIC_ACQUIRE);
		if (ev != tl.worker_gaps[w]) {
			uint64_t from = lr_peek_u64(&wk->gap_from_tsc);
			spoil(from > tl.settle_tsc ? from - tl.settle_tsc : 0, now, LR_TL_PAUSE);
			tl.worker_gaps[w] = ev;
			lr_publish_u64(&wk->gap_ack, ev);
		}
		/* a gap still going on: the worker will say so only when it runs again */
		uint64_t last = lr_peek_u64(&wk->polled_tsc), until = lr_peek_u64(&wk->sleep_until);
		uint64_t since = last > until ? last : until;
		if (!final && last && now > since + tl.gap_tsc)
			spoil(last > tl.settle_tsc ? last - tl.settle_tsc : 0, now, LR_TL_PAUSE);
	}
	for (unsigned i = 0; i < tl.nstreams; i++) {
		struct lr_tl_stream *ts = tl.st[i];
		struct lr_stream *s = ts->s;
		uint64_t due_all = 0;
		if (!final && now > meas_start)
			due_all = (uint64_t)((double)(now - meas_start) * ts->fps / (double)lr.tsc_hz) + 1;
		if (due_all > ts->positions)
			due_all = ts->positions;
		for (unsigned k = 0; k < ts->lanes; k++) {
			struct lr_txq *x = &s->txq[k];
			uint64_t ev = __atomic_load_n(&x->lag_events, __ATOMIC_ACQUIRE);
			if (ev != tl.lane_lags[i][k]) {
				spoil(lr_peek_u64(&x->lag_from_tsc), now, LR_TL_LAG);
				tl.lane_lags[i][k] = ev;
				lr_publish_u64(&x->lag_ack, ev);
			}
			/* a lag still going on: the lane will say so only when it sends again */
			uint64_t behind = lr_lane_share(due_all, k, ts->lanes);
			behind = behind > sent[i][k] ? behind - sent[i][k] : 0;
			uint64_t oldest = due_tsc(ts, meas_start, k + sent[i][k] * ts->lanes);
			if (behind >= 2 && now > oldest + tl.lag_tsc)
				spoil(oldest, now, LR_TL_LAG);
		}
	}
}

/* Each window's next, read once per look (acquire: the receiver publishes it after the bits below it):
 * the line it sits on is the receiver's, written for every frame. */
static uint64_t next_of[LR_MAX_QUEUES][LR_MAX_QUEUES];

static void read_nexts(const struct lr_tl_stream *ts)
{
	for (unsigned q = 0; q < ts->nq; q++)
		for (unsigned k = 0; k < ts->lanes; k++) {
			const struct lr_rxq *r = ts->s->rxq[q][k];
			next_of[q][k] = r ? __atomic_load_n(&r->win.next, __ATOMIC_ACQUIRE) : 0;
		}
}

/* Whether the frame numbered n of lane k arrived on any RX queue; *unknown when a window had already
 * reused its bit (the collector came too late to read it). */
static bool received(const struct lr_tl_stream *ts, unsigned k, uint64_t n, bool *unknown)
{
	for (unsigned q = 0; q < ts->nq; q++) {
		const struct lr_rxq *r = ts->s->rxq[q][k];
		if (r == NULL)
			continue;
		uint64_t next = next_of[q][k], nbits = r->win.nbits;
		if (n >= next)
			continue;
		/* the receiver clears ahead of next (a gap): keep an eighth of the window clear of it */
		if (next - n > nbits - nbits / 8) {
			*unknown = true;
			continue;
		}
		uint64_t i = n & (nbits - 1);
		if (lr_peek_u64(&r->win.bits[i >> 6]) >> (i & 63) & 1)
			return true;
	}
	return false;
}

static void close_bin(struct lr_tl_stream *ts, uint64_t meas_start)
{
	struct lr_tl_bin *b = &ts->bins[ts->bin % LR_TL_BINS];
	b->index = ts->bin;
	b->sent = ts->bin_sent;
	b->received = ts->bin_received;
	b->flags = ts->bin_flags | bins_spoiled(meas_start, ts->bin, ts->bin);
	/* A worker's pause harms a bin only through frames it held up past settle_ms or made its port drop,
	 * and those are lost in the bin: one whose every frame arrived in time was judged whatever the pause
	 * (a sender's pause is its lanes' lag, which stays). On a shared host pauses of tens of ms are common,
	 * and flagging every bin they touch made a clean run the tester's. */
	if (b->received == b->sent)
		b->flags &= ~(unsigned)LR_TL_PAUSE;
	ts->bin++;
	ts->bin_end = bin_first(ts, ts->bin + 1);
	ts->bin_sent = ts->bin_received = 0;
	ts->bin_flags = 0;
}

/* a trial aborted early keeps the bins it never reached unclosed: only a trial that sent all it had */
static bool final_bins_closable(const struct lr_tl_stream *ts)
{
	return ts->unsent == 0;
}

static void close_run(struct lr_tl_stream *ts, uint64_t meas_start, bool open)
{
	if (ts->run_len == 0)
		return;
	if (ts->run_len < tl.p.outage_frames) {
		ts->scattered += ts->run_len;
	} else {
		struct lr_tl_outage *o = &ts->outages[ts->outages_found % LR_TL_OUTAGES];
		uint64_t last = ts->run_first + ts->run_len - 1;
		o->n = ts->outages_found++;
		o->first = ts->run_first;
		o->last = last;
		o->frames = ts->run_len;
		o->open = open;
		/* the bins it lies in, by when its frames were due; a bin flagged for a window the collector read
		 * too late is flagged in the interval list too (judge) */
		o->tester = bins_spoiled(meas_start, bin_of_time(meas_start, due_tsc(ts, meas_start, ts->run_first)),
					 bin_of_time(meas_start, due_tsc(ts, meas_start, last))) != 0;
		ts->outage_frames += ts->run_len;
	}
	ts->run_len = 0;
}

/* Judges the positions that have had settle_ms to arrive and were sent (all of them in the final look,
 * where the positions never sent, if any, are counted apart). sent: each lane's frames sent, read before
 * the health look, so that every lag behind them was seen. */
static void judge(struct lr_tl_stream *ts, uint64_t now, uint64_t meas_start, bool final, const uint64_t *sent)
{
	uint64_t frontier = ts->positions;
	if (final) {
		/* past every lane's last frame sent (an aborted trial) nothing is judged: counted, not walked */
		uint64_t sent_end = 0;
		for (unsigned k = 0; k < ts->lanes; k++)
			if (k + sent[k] * ts->lanes > sent_end)
				sent_end = k + sent[k] * ts->lanes;
		if (sent_end < frontier) {
			ts->unsent += frontier - (sent_end > ts->scan ? sent_end : ts->scan);
			ts->bin_flags |= LR_TL_UNSENT;
			frontier = sent_end;
		}
	} else {
		if (now <= meas_start + tl.settle_tsc)
			return;
		uint64_t settled = (uint64_t)((double)(now - meas_start - tl.settle_tsc) * ts->fps / (double)lr.tsc_hz) + 1;
		if (settled < frontier)
			frontier = settled;
		for (unsigned k = 0; k < ts->lanes; k++) {
			uint64_t first_unsent = k + sent[k] * ts->lanes;
			if (first_unsent < frontier)
				frontier = first_unsent;
		}
	}
	if (ts->lanes == 0) /* a stream sent here has one lane at least */
		return;
	read_nexts(ts);
	uint64_t first_judged = ts->scan, bin_at_start = ts->bin, outages_at_start = ts->outages_found;
	for (uint64_t pos = ts->scan; pos < frontier; pos++) {
		while (pos >= ts->bin_end)
			close_bin(ts, meas_start);
		unsigned k = (unsigned)(pos % ts->lanes);
		uint64_t n = pos / ts->lanes;
		if (n >= sent[k]) { /* final only: the lane never sent it (the trial ended first) */
			ts->unsent++;
			ts->bin_flags |= LR_TL_UNSENT;
			continue;
		}
		bool unknown = false;
		bool got = received(ts, k, n, &unknown);
		if (unknown) {
			ts->bin_flags |= LR_TL_WINDOW;
			uint64_t at = due_tsc(ts, meas_start, pos);
			spoil(at, at, LR_TL_WINDOW);
		}
		ts->bin_sent++;
		if (got) {
			ts->bin_received++;
			ts->received++;
			close_run(ts, meas_start, false);
		} else {
			ts->lost++;
			if (ts->run_len++ == 0)
				ts->run_first = pos;
		}
	}
	/* a receiver that moved its window past what was just read while the collector read it (the collector
	 * held up): those reads may be of reused bits, so the tester's */
	if (frontier > first_judged) {
		uint64_t lowest = first_judged / ts->lanes;
		for (unsigned q = 0; q < ts->nq; q++)
			for (unsigned k = 0; k < ts->lanes; k++) {
				const struct lr_rxq *r = ts->s->rxq[q][k];
				uint64_t now_next = r ? __atomic_load_n(&r->win.next, __ATOMIC_ACQUIRE) : 0;
				if (r && now_next > lowest && now_next - lowest > r->win.nbits - r->win.nbits / 8) {
					/* the bins and outages this look closed too, not only the open bin */
					ts->bin_flags |= LR_TL_WINDOW;
					spoil(due_tsc(ts, meas_start, first_judged), due_tsc(ts, meas_start, frontier), LR_TL_WINDOW);
					for (uint64_t b = bin_at_start; b < ts->bin; b++)
						if (ts->bin - b <= LR_TL_BINS)
							ts->bins[b % LR_TL_BINS].flags |= LR_TL_WINDOW;
					for (uint64_t o = outages_at_start; o < ts->outages_found; o++)
						if (ts->outages_found - o <= LR_TL_OUTAGES)
							ts->outages[o % LR_TL_OUTAGES].tester = true;
				}
			}
	}
	if (frontier > ts->scan)
		ts->scan = frontier;
	if (!final)
		return;
	close_run(ts, meas_start, true);
	if (ts->bin_sent || ts->bin_flags)
		close_bin(ts, meas_start);
	/* bins after the last frame (a rate below one frame a bin) are bins of the trial too */
	uint64_t all = (tl.p.duration_ms + tl.p.bin_ms - 1) / tl.p.bin_ms;
	while (ts->bin < all && final_bins_closable(ts))
		close_bin(ts, meas_start);
	/* a frame judged lost that still arrived before the end is received in RESULT: the difference */
	uint64_t unique = 0, tx = 0;
	for (unsigned q = 0; q < ts->nq; q++)
		for (unsigned k = 0; k < ts->lanes; k++) {
			const struct lr_rxq *r = ts->s->rxq[q][k];
			if (r)
				unique += r->win.rx - r->win.dup;
		}
	for (unsigned k = 0; k < ts->lanes; k++)
		tx += sent[k];
	uint64_t missing = tx > unique ? tx - unique : 0;
	ts->late_after_settle = ts->lost > missing ? ts->lost - missing : 0;
}

/* Forgets the intervals that end before anything still open (a bin, a run of losses) began. */
static void prune(uint64_t meas_start)
{
	uint64_t keep = UINT64_MAX;
	for (unsigned i = 0; i < tl.nstreams; i++) {
		const struct lr_tl_stream *ts = tl.st[i];
		uint64_t from = meas_start + ts->bin * tl.bin_tsc;
		if (ts->run_len) {
			uint64_t r = meas_start + bin_of_time(meas_start, due_tsc(ts, meas_start, ts->run_first)) * tl.bin_tsc;
			if (r < from)
				from = r;
		}
		if (from < keep)
			keep = from;
	}
	unsigned j = 0;
	for (unsigned i = 0; i < tl.nspoil; i++)
		if (tl.spoil[i].to >= keep)
			tl.spoil[j++] = tl.spoil[i];
	tl.nspoil = j;
}

static void look(uint64_t now, uint64_t meas_start, bool final)
{
	static uint64_t sent[LR_MAX_TRIAL_STREAMS][LR_MAX_QUEUES];
	for (unsigned i = 0; i < tl.nstreams; i++)
		for (unsigned k = 0; k < tl.st[i]->lanes; k++)
			sent[i][k] = __atomic_load_n(&tl.st[i]->s->txq[k].tx_frames, __ATOMIC_ACQUIRE);
	look_at_health(now, meas_start, final, sent);
	for (unsigned i = 0; i < tl.nstreams; i++)
		judge(tl.st[i], now, meas_start, final, sent[i]);
	prune(meas_start);
	tl.last_look = now;
}

static void *collect(void *arg)
{
	(void)arg;
	for (;;) {
		int st = atomic_load_explicit(&lr.trial.state, memory_order_acquire);
		uint64_t now = rte_rdtsc();
		bool final = st >= LR_DONE || st == LR_IDLE;
		uint64_t meas_start = lr.trial.meas_start_tsc;
		if (st != LR_WARMUP && meas_start) {
			pthread_mutex_lock(&tl.lock);
			look(now, meas_start, final);
			pthread_mutex_unlock(&tl.lock);
		}
		if (final)
			return NULL;
		struct timespec ts = {0, LR_TL_TICK_MS * 1000000L};
		nanosleep(&ts, NULL);
	}
}

int lr_timeline_check(const struct lr_tl_params *p, const int *streams, const double *fps, unsigned n,
		      uint64_t burst, struct out *o)
{
	if (burst)
		return fail(o, "bad-value", "bin_ms: a timeline needs a paced trial, not burst=");
	uint64_t nbits = 1ull << lr.window_bits, holds = nbits - nbits / 8;
	for (unsigned i = 0; i < n; i++) {
		const struct lr_stream *s = lr.streams[streams[i]];
		if (s->tx_port < 0 || s->rx_port < 0)
			return fail(o, "bad-value",
				    "bin_ms: stream %d is not both sent and received by this engine (a split stream keeps no timeline)",
				    s->id);
		double lane_fps = fps[i] / lr.ports[s->tx_port].nq;
		/* a lane numbers its frames in LR_LANE_SHIFT bits: past them its numbers would read as the next
		 * lane's, and the rest of the trial as lost */
		if (lane_fps * (double)p->duration_ms / 1000.0 >= (double)(1ull << LR_LANE_SHIFT))
			return fail(o, "bad-value", "duration_ms: stream %d's lanes would number more than 2^%d frames at %.0f frames/s each: shorten the trial",
				    s->id, LR_LANE_SHIFT, lane_fps);
		double need = lane_fps * (double)(p->settle_ms + LR_TL_MARGIN_MS) / 1000.0;
		if (need > (double)holds) {
			unsigned bits = lr.window_bits;
			while (bits < 40 && (double)(1ull << bits) * 7.0 / 8.0 < need)
				bits++;
			return fail(o, "window-too-small",
				    "bin_ms: stream %d's windows hold %llu frames of a lane, its timeline needs %.0f "
				    "(settle_ms + %u ms at %.0f frames/s per lane): start the engine with --window-bits %u",
				    s->id, (unsigned long long)holds, need, LR_TL_MARGIN_MS, lane_fps, bits);
		}
	}
	return 0;
}

int lr_timeline_start(const struct lr_tl_params *p, struct out *o)
{
	lr_timeline_join();
	struct lr_trial *t = &lr.trial;
	tl.p = *p;
	tl.bin_tsc = p->bin_ms * lr.tsc_hz / 1000;
	tl.settle_tsc = p->settle_ms * lr.tsc_hz / 1000;
	tl.lag_tsc = p->lag_ms * lr.tsc_hz / 1000;
	tl.gap_tsc = p->gap_ms * lr.tsc_hz / 1000;
	tl.nstreams = t->nstreams;
	for (unsigned i = 0; i < t->nstreams; i++) {
		if (tl.st[i] == NULL && (tl.st[i] = malloc(sizeof(*tl.st[i]))) == NULL) {
			lr_timeline_off();
			return fail(o, "no-memory", "bin_ms: no memory for the timeline");
		}
		struct lr_tl_stream *ts = tl.st[i];
		struct lr_stream *s = lr.streams[t->streams[i]];
		memset(ts, 0, sizeof(*ts));
		ts->s = s;
		ts->fps = s->fps;
		ts->per_bin = s->fps * (double)p->bin_ms / 1000.0;
		ts->lanes = s->lanes;
		ts->nq = lr.ports[s->rx_port].nq;
		ts->positions = scheduled(s->fps);
		ts->bin_end = bin_first(ts, 1);
		double lane_fps = s->fps / s->lanes;
		for (unsigned k = 0; k < s->lanes; k++) {
			double mark = lane_fps * (double)p->lag_ms / 1000.0;
			s->txq[k].lag_mark = mark < 2 ? 2 : (uint64_t)mark;
			tl.lane_lags[i][k] = 0;
		}
	}
	tl.nspoil = 0;
	tl.last_look = 0;
	for (unsigned i = 0; i < lr.nports; i++) {
		tl.port_drops[i] = tl.port_ethdev_drops[i] = tl.stats_due[i] = 0;
		tl.port_rollovers[i] = lr.ports[i].rx_kernel_rollovers_base;
	}
	for (unsigned w = 0; w < lr.nworkers; w++)
		tl.worker_gaps[w] = lr_peek_u64(&lr.workers[w].gap_events);
	t->gap_mark_tsc = tl.gap_tsc ? tl.gap_tsc : 1;
	/* (a gap mark at settle or above leaves half of settle: a worker never spins a whole trial) */
	t->sleep_cap_tsc = tl.settle_tsc > 2 * t->gap_mark_tsc ? tl.settle_tsc - t->gap_mark_tsc : tl.settle_tsc / 2 + 1;
	tl.on = true;
	return 0;
}

int lr_timeline_run(struct out *o)
{
	if (pthread_create(&tl.thread, NULL, collect, NULL) != 0)
		return fail(o, "no-thread", "bin_ms: the timeline's collector thread could not start");
	tl.running = true;
	return 0;
}

void lr_timeline_off(void)
{
	tl.on = false;
	lr.trial.gap_mark_tsc = 0;
	lr.trial.sleep_cap_tsc = 0;
	for (unsigned i = 0; i < lr.trial.nstreams; i++) {
		struct lr_stream *s = lr.streams[lr.trial.streams[i]];
		for (unsigned k = 0; k < LR_MAX_QUEUES; k++)
			s->txq[k].lag_mark = UINT64_MAX;
	}
}

void lr_timeline_join(void)
{
	if (!tl.running)
		return;
	pthread_join(tl.thread, NULL);
	tl.running = false;
}

int lr_timeline_put(struct args *a, struct out *o)
{
	uint64_t from_bin, from_outage, max_bins;
	if (get_u64(a, o, "from_bin", 0, UINT64_MAX, 0, &from_bin) ||
	    get_u64(a, o, "from_outage", 0, UINT64_MAX, 0, &from_outage) ||
	    get_u64(a, o, "max_bins", 1, LR_TL_BINS, 1000, &max_bins) || check_unused(a, o, "TIMELINE"))
		return -1;
	if (!tl.on)
		return fail(o, "no-timeline", "TIMELINE: trial %u keeps no timeline (TRIAL bin_ms=N keeps one)", lr.trial.id);
	struct lr_trial *t = &lr.trial;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	if (st >= LR_DONE)
		lr_timeline_join(); /* its last look, over everything, is then in */
	pthread_mutex_lock(&tl.lock);
	uint64_t meas_start = t->meas_start_tsc;
	put(o, "{\"ok\":true,\"trial\":%u,\"state\":\"%s\",\"bin_ms\":%llu,\"settle_ms\":%llu,\"start_ns\":%llu,\"streams\":[",
	    t->id, lr_state_name(st), (unsigned long long)tl.p.bin_ms, (unsigned long long)tl.p.settle_ms,
	    (unsigned long long)(meas_start ? lr_tsc_to_ns(meas_start) : 0));
	for (unsigned i = 0; i < tl.nstreams; i++) {
		const struct lr_tl_stream *ts = tl.st[i];
		uint64_t judged = ts->received + ts->lost;
		uint64_t first_bin = ts->bin > LR_TL_BINS ? ts->bin - LR_TL_BINS : 0;
		uint64_t first_outage = ts->outages_found > LR_TL_OUTAGES ? ts->outages_found - LR_TL_OUTAGES : 0;
		put(o,
		    "%s{\"id\":%d,\"rate_fps\":%.3f,\"positions\":%llu,\"judged\":%llu,\"received\":%llu,\"lost\":%llu,"
		    "\"unsent\":%llu,\"scattered\":%llu,\"late_after_settle\":%llu,\"bins_done\":%llu,\"first_bin\":%llu,"
		    "\"bins\":[",
		    i ? "," : "", ts->s->id, ts->fps, (unsigned long long)ts->positions,
		    (unsigned long long)judged, (unsigned long long)ts->received,
		    (unsigned long long)ts->lost, (unsigned long long)ts->unsent, (unsigned long long)ts->scattered,
		    (unsigned long long)ts->late_after_settle, (unsigned long long)ts->bin,
		    (unsigned long long)first_bin);
		uint64_t b = from_bin > first_bin ? from_bin : first_bin;
		for (uint64_t n = 0; b < ts->bin && n < max_bins; b++, n++) {
			const struct lr_tl_bin *x = &ts->bins[b % LR_TL_BINS];
			put(o, "%s[%llu,%llu,%llu,%llu,%u]", n ? "," : "", (unsigned long long)x->index,
			    (unsigned long long)x->sent, (unsigned long long)x->received,
			    (unsigned long long)(x->sent - x->received), x->flags);
		}
		put(o, "],\"outages_found\":%llu,\"outage_frames\":%llu,\"first_outage\":%llu,\"outages\":[",
		    (unsigned long long)ts->outages_found, (unsigned long long)ts->outage_frames,
		    (unsigned long long)first_outage);
		uint64_t k = from_outage > first_outage ? from_outage : first_outage;
		for (bool first = true; k < ts->outages_found; k++, first = false) {
			const struct lr_tl_outage *x = &ts->outages[k % LR_TL_OUTAGES];
			uint64_t frames = x->frames;
			put(o,
			    "%s{\"n\":%llu,\"first\":%llu,\"last\":%llu,\"frames\":%llu,\"start_ns\":%llu,\"length_ns\":%llu,"
			    "\"open\":%s,\"tester\":%s}",
			    first ? "" : ",", (unsigned long long)x->n, (unsigned long long)x->first,
			    (unsigned long long)x->last, (unsigned long long)frames,
			    (unsigned long long)lr_tsc_to_ns(due_tsc(ts, meas_start, x->first)),
			    (unsigned long long)((double)frames * 1e9 / ts->fps), x->open ? "true" : "false",
			    x->tester ? "true" : "false");
		}
		put(o, "]}");
	}
	put(o, "]}");
	pthread_mutex_unlock(&tl.lock);
	return 0;
}
