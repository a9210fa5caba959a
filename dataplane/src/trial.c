/* The trial's phases, moved by the leader (worker 0): WARMUP (published by control) -> RUNNING ->
 * DRAINING -> DONE, or ABORTED (asked by control, or a stream the DUT stopped forwarding). Ending a trial
 * parks the other workers first (engine.h: their counters become control's to read). */
#include <stdio.h>

#include <rte_cycles.h>

#include "engine.h"
#include "idle.h"
#include "trial.h"
#include "tx.h"

/* The other workers must be done with this trial's counters and sending before the leader publishes the
 * end, because the control thread reads the counters (RESULT) and resets them (next TRIAL) from then on. */
static void quiesce_others(void)
{
	atomic_store_explicit(&lr.stop, true, memory_order_release);
	for (unsigned w = 1; w < lr.nworkers; w++) {
		lr_wake(&lr.workers[w]); /* one asleep sees the request now, not when its sleep ends */
		while (!atomic_load_explicit(&lr.workers[w].stopped, memory_order_acquire) &&
		       !atomic_load_explicit(&lr.quit, memory_order_relaxed))
			rte_pause();
	}
}

static void resume_others(void)
{
	atomic_store_explicit(&lr.stop, false, memory_order_release);
	/* wait for the acknowledgements, so that the next quiesce cannot take a stale one */
	for (unsigned w = 1; w < lr.nworkers; w++) {
		lr_wake(&lr.workers[w]);
		while (atomic_load_explicit(&lr.workers[w].stopped, memory_order_acquire) &&
		       !atomic_load_explicit(&lr.quit, memory_order_relaxed))
			rte_pause();
	}
}

static void finish(struct lr_trial *t, int state, const char *reason, uint64_t now)
{
	/* it waits for the others, which may share its CPU: as an ordinary thread */
	lr_idle_ordinary(&lr.workers[0]);
	quiesce_others();
	/* every other worker is parked: their lanes' pending frames are the leader's to free */
	for (unsigned i = 0; i < t->nstreams; i++)
		for (unsigned k = 0; k < LR_MAX_QUEUES; k++)
			lr_free_pending(&lr.streams[t->streams[i]]->txq[k]);
	if (reason)
		snprintf(t->reason, sizeof(t->reason), "%s", reason);
	if (!t->meas_end_tsc)
		t->meas_end_tsc = now;
	t->end_tsc = now;
	atomic_store_explicit(&t->state, state, memory_order_release);
	resume_others();
	lr_signal_done();
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

/* What the leader has seen of one stream of the trial while it watches for a stall: its last receipt, the
 * frames its senders had sent by the check that first saw that receipt, and the first check that saw more
 * sent after it (0: none yet). */
static struct {
	uint64_t last_rx, tx_at_last_rx, sent_after;
} watch[LR_MAX_TRIAL_STREAMS];

/* Frames the lanes of a stream this engine sends have handed to the PMD so far (their workers' counts). */
static uint64_t sent_so_far(const struct lr_stream *s)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < s->lanes; k++)
		n += lr_peek_u64(&s->txq[k].tx_frames);
	return n;
}

/* Whether stream i of the trial has stalled: the DUT stopped forwarding it, and nothing else explains
 * the silence. Nothing of the stream has arrived for longer than the stall limit (nor of an earlier trial
 * of it: a DUT that queues deeply may still be forwarding an earlier trial while this one's frames wait
 * behind them, which is latency and loss, not a stall), and the tester did its part all that
 * time: frames left its sender after the last receipt (the sender was not held up itself, which would
 * leave nothing to arrive), and every worker of the stream's RX queues has polled more than the limit
 * after they left (a receiver that paused has the frames waiting in its ring). A stream another engine
 * sends shows nothing of its sender here: its last receipt stands for its sending. Checks happen at
 * most every stall limit / 16, so a frame sent is seen sent that much late at most: never early. */
static bool stalled(unsigned i, uint64_t now)
{
	const struct lr_trial *t = &lr.trial;
	const struct lr_stream *s = lr.streams[t->streams[i]];
	if (s->rx_port < 0)
		return false;
	/* a stream's last receipt is its RX workers' to write, by a clock read after this one perhaps:
	 * signed; before any receipt, the start counts */
	const struct lr_port *rp = &lr.ports[s->rx_port];
	uint64_t last = t->meas_start_tsc, polled = UINT64_MAX;
	for (unsigned q = 0; q < rp->nq; q++) {
		uint64_t pw = lr_peek_u64(&lr.workers[rp->q[q].owner].polled_tsc);
		for (unsigned k = 0; k < LR_MAX_QUEUES; k++) {
			if (s->rxq[q][k] == NULL)
				continue;
			uint64_t l = lr_peek_u64(&s->rxq[q][k]->last_rx_tsc);
			uint64_t other = lr_peek_u64(&s->rxq[q][k]->last_unmeasured_tsc);
			if ((int64_t)(l - last) > 0)
				last = l;
			if ((int64_t)(other - last) > 0)
				last = other;
		}
		if (polled == UINT64_MAX || (int64_t)(pw - polled) < 0)
			polled = pw;
	}
	uint64_t sent_after = last;
	if (s->tx_port >= 0) {
		uint64_t sent = sent_so_far(s);
		if (last != watch[i].last_rx) {
			watch[i].last_rx = last;
			watch[i].tx_at_last_rx = sent;
			watch[i].sent_after = 0;
		} else if (watch[i].sent_after == 0 && sent > watch[i].tx_at_last_rx) {
			watch[i].sent_after = now;
		}
		if (watch[i].sent_after == 0)
			return false; /* nothing left the sender since: the silence is the tester's */
		sent_after = watch[i].sent_after;
	}
	return (int64_t)(now - last) > (int64_t)t->stall_tsc && (int64_t)(polled - sent_after) > (int64_t)t->stall_tsc;
}

int lr_trial_advance(uint64_t *nowp)
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
			for (unsigned i = 0; i < t->nstreams; i++)
				watch[i].last_rx = watch[i].tx_at_last_rx = watch[i].sent_after = 0;
			stall_check_tsc = now;
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
			/* read from the workers' lines now and then, not every pass */
			uint64_t every = t->stall_tsc / 16 > lr.tsc_per_ms ? t->stall_tsc / 16 : lr.tsc_per_ms;
			stall_check_tsc = now + every;
			for (unsigned i = 0; i < t->nstreams; i++)
				if (stalled(i, now)) {
					t->stalled_stream = t->streams[i];
					finish(t, LR_ABORTED, "dut-stalled", now);
					return LR_ABORTED;
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

uint64_t lr_trial_next_deadline(int st, uint64_t now)
{
	const struct lr_trial *t = &lr.trial;
	switch (st) {
	case LR_WARMUP:
		return t->start_tsc + t->warmup_tsc;
	case LR_RUNNING: {
		if (t->burst)
			return now; /* every worker's bursts are looked at, pass by pass */
		uint64_t end = t->meas_start_tsc + t->duration_tsc;
		return t->stall_tsc && stall_check_tsc < end ? stall_check_tsc : end;
	}
	case LR_DRAINING: {
		uint64_t give_up = t->meas_end_tsc + t->drain_tsc + lr.tsc_hz;
		if (!drained_tsc) /* the last worker to drain wakes the leader; a millisecond at most */
			return now + lr.tsc_per_ms < give_up ? now + lr.tsc_per_ms : give_up;
		return drained_tsc + t->drain_tsc < give_up ? drained_tsc + t->drain_tsc : give_up;
	}
	default:
		return UINT64_MAX;
	}
}

bool lr_trial_active(void)
{
	int st = atomic_load_explicit(&lr.trial.state, memory_order_acquire);
	return st >= LR_WARMUP && st <= LR_DRAINING;
}

const char *lr_state_name(int st)
{
	static const char *names[] = {"idle", "warmup", "running", "draining", "done", "aborted"};
	return st >= 0 && st <= LR_ABORTED ? names[st] : "unknown";
}
