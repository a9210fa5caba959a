/* A worker lcore's loop: it owns some queue pairs of some ports (engine.h), receives on their RX queues
 * (rx.c), sends its lanes of the trial's streams on their TX queues (tx.c), and, as worker 0, moves the
 * trial through its phases (trial.c). When a pass finds nothing to do it sleeps until something is due
 * (idle.c). */
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "worker.h"
#include "engine.h"
#include "idle.h"
#include "rx.h"
#include "timeline.h"
#include "trial.h"
#include "tx.h"

/* The time since this worker's previous pass, kept while a trial measures or drains: its longest gap is
 * how long frames could wait for it (struct lr_worker). A sleep it chose counts from where it asked to be
 * woken, or from its wake-up if earlier (idle.c): the sleep is no gap, a late wake-up is, and so is a
 * hold-up between an early wake-up and the pass. */
static inline void note_pass(struct lr_worker *h, int st, uint64_t now)
{
	uint64_t from = h->last_tsc > h->sleep_until ? h->last_tsc : h->sleep_until;
	/* this pass, not 0: until it publishes polled_tsc, the collector would see a stale pass and no sleep */
	lr_publish_u64(&h->sleep_until, now);
	/* outside measurement and drain nothing is booked (control resets the health between trials); a gap
	 * still going on when the trial ended is RESULT's to add (control_report.c) */
	if (st != LR_RUNNING && st != LR_DRAINING) {
		h->last_tsc = 0;
		return;
	}
	if (h->last_tsc && now > from) {
		uint64_t gap = now - from;
		if (gap > h->max_gap_tsc)
			h->max_gap_tsc = gap;
		if (unlikely(lr.trial.gap_mark_tsc && gap > lr.trial.gap_mark_tsc))
			lr_timeline_event(&h->gap_events, &h->gap_ack, &h->gap_from_tsc, from);
	}
	h->last_tsc = now;
}

int lr_worker_main(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	struct lr_worker *me = &lr.workers[w];
	bool leader = w == 0;
	struct rte_mempool_cache *cache = rte_mempool_default_cache(lr.pool, rte_lcore_id());
	lr_idle_thread_init(me);
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
		int st = leader ? lr_trial_advance(&now) : atomic_load_explicit(&lr.trial.state, memory_order_acquire);
		/* stopped, nothing is counted or sent; before the leader's warm-up starts (or when it skips it),
		 * nothing is due */
		if (!counting || (!leader && st == LR_WARMUP && (lr.trial.warmup_tsc == 0 || now < lr.trial.start_tsc)))
			st = LR_IDLE;
		note_pass(me, st, now);
		if (st == LR_DRAINING && !atomic_load_explicit(&me->drained, memory_order_relaxed))
			lr_catch_up(&lr.trial, w, now);
		unsigned work = 0, sent = 0;
		for (unsigned i = 0; i < me->nqueues; i++) {
			struct lr_port *p = &lr.ports[me->queues[i].port];
			unsigned q = me->queues[i].queue;
			work += lr_rx_queue(p, q, counting, cache);
			if (q == 0)
				lr_send_control_frames(p);
		}
		/* only now that its rings are read: a worker held up between its clock read and its reads (the
		 * host ran it late) has not polled */
		lr_publish_u64(&me->polled_tsc, st == LR_RUNNING || st == LR_DRAINING ? now : 0);
		__atomic_store_n(&me->looked_tsc, now, __ATOMIC_RELEASE);
		if (st == LR_WARMUP || st == LR_RUNNING) {
			/* receiving took time: the clock read at the top is stale for pacing; read again only if
			 * something sends (a clock read costs as much as parsing a few frames) */
			bool fresh = work == 0;
			for (unsigned i = 0; i < lr.trial.nstreams; i++) {
				struct lr_stream *s = lr.streams[lr.trial.streams[i]];
				for (unsigned k = 0; k < s->lanes; k++) {
					if (!lr_sends(s, k, w))
						continue;
					if (!fresh) {
						now = rte_rdtsc();
						fresh = true;
					}
					sent += lr_tx_stream(s, k, st, now);
				}
			}
			if (st == LR_RUNNING && lr.trial.burst && lr_bursts_sent(w))
				atomic_store_explicit(&me->burst_sent, true, memory_order_release);
		}
		if (work == 0 && sent == 0)
			lr_idle(me, w, st);
		lr_idle_busy(me, now);
	}
	return 0;
}
