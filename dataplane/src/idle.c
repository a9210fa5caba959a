/* See idle.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "cgroup.h"
#include "engine.h"
#include "idle.h"
#include "trial.h"
#include "tx.h"

static int done_fd = -1;

int lr_idle_setup(void)
{
	done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (done_fd < 0) {
		fprintf(stderr, "linerate-engine: eventfd: %s\n", strerror(errno));
		return -1;
	}
	for (unsigned w = 0; w < lr.nworkers; w++) {
		struct lr_worker *me = &lr.workers[w];
		me->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (me->wake_fd < 0) {
			fprintf(stderr, "linerate-engine: eventfd: %s\n", strerror(errno));
			return -1;
		}
		me->npoll = 0;
		me->poll_fds[0] = me->wake_fd;
		for (unsigned i = 0; i < me->nqueues; i++) {
			const struct lr_portq *pq = &lr.ports[me->queues[i].port].q[me->queues[i].queue];
			if (pq->kring.fd >= 0)
				me->poll_fds[1 + me->npoll++] = pq->kring.fd;
		}
		/* a wake-up is first assumed this late: learned from the sleeps (idle) */
		me->margin_tsc = lr.tsc_hz / 100000; /* 10 us */
	}
	lr.min_sleep_tsc = lr.tsc_hz / 200000; /* 5 us past the margin: less is spun */
	return 0;
}

/* Real time. A worker that sleeps most of the time runs as SCHED_FIFO (priority 1): woken, it runs at once,
 * where an ordinary thread waits behind every busy thread of its CPU (on a loaded 2-CPU host, wake-ups of an
 * ordinary thread every millisecond came up to 220 ms late, a SCHED_FIFO one's 40-90 us late on average).
 * Judged over windows of RT_WINDOW_MS: a worker that slept less than a third of a window (a rate that needs
 * it spinning) is an ordinary thread from then on, so that it never starves its CPU's other threads (a
 * DUT's on a shared host); one that slept half of a window is real time again. A worker catching up after
 * a preemption works flat out for a moment and stays real time: that is when it must not wait again.
 * Needs CAP_SYS_NICE (or RLIMIT_RTPRIO), and on a cgroup v1 host with RT group scheduling a real-time budget
 * for its cgroup; without them it stays ordinary (HELLO says how many workers are real time). */
#define RT_WINDOW_MS 10

/* A worker is real time only where its cgroups leave real-time threads RT_MIN_SHARE of a CPU at least: a
 * smaller budget (cgroup v1 with RT group scheduling, a node that granted the pod some) stops a worker that
 * uses more for the rest of each period, which a worker at half a CPU did for 200-270 ms at a time. */
#define RT_MIN_SHARE 0.9

static bool set_fifo(bool on)
{
	if (on && lr_cgroup_rt_share() < RT_MIN_SHARE)
		return false;
	struct sched_param sp = {.sched_priority = on ? 1 : 0};
	return pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &sp) == 0;
}

void lr_idle_thread_init(struct lr_worker *me)
{
	/* a sleep ends when asked, not up to the default 50 us later */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	me->rt_on = !lr.spin && lr.realtime_wanted && set_fifo(true);
	atomic_store_explicit(&me->rt_allowed, me->rt_on, memory_order_relaxed);
	me->rt_window_start = rte_rdtsc();
	atomic_fetch_add_explicit(&lr.workers_started, 1, memory_order_release);
}

void lr_idle_busy(struct lr_worker *me, uint64_t now)
{
	if (lr.spin || !lr.realtime_wanted ||
	    (int64_t)(now - me->rt_window_start) < (int64_t)(RT_WINDOW_MS * lr.tsc_per_ms))
		return;
	uint64_t window = now - me->rt_window_start;
	bool light = 2 * me->rt_window_slept >= window;
	if (me->rt_on && 3 * me->rt_window_slept < window) {
		me->rt_on = !set_fifo(false);
	} else if (!me->rt_on && light && now - me->rt_tried_tsc >= lr.tsc_hz) {
		/* at most once a second (the cgroup files are read for it): a worker refused at start may be
		 * granted a budget later (a node that sets the pod's cgroup once its containers started) */
		me->rt_tried_tsc = now;
		me->rt_on = set_fifo(true);
		if (me->rt_on)
			atomic_store_explicit(&me->rt_allowed, true, memory_order_relaxed);
	}
	me->rt_window_start = now;
	me->rt_window_slept = 0;
}

void lr_idle_ordinary(struct lr_worker *me)
{
	if (me->rt_on)
		me->rt_on = !set_fifo(false);
}

static void post(int fd)
{
	uint64_t one = 1;
	if (fd >= 0)
		(void)!write(fd, &one, sizeof(one));
}

static void drain(int fd)
{
	uint64_t n;
	(void)!read(fd, &n, sizeof(n));
}

void lr_wake(struct lr_worker *w)
{
	post(w->wake_fd);
}

void lr_wake_all(void)
{
	for (unsigned w = 0; w < lr.nworkers; w++)
		lr_wake(&lr.workers[w]);
}

void lr_signal_done(void)
{
	post(done_fd);
}

void lr_wait_done(unsigned timeout_ms)
{
	struct pollfd pfd = {.fd = done_fd, .events = POLLIN};
	if (poll(&pfd, 1, (int)timeout_ms) > 0)
		drain(done_fd);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void lr_idle(struct lr_worker *me, unsigned w, int st)
{
	if (lr.spin)
		return;
	bool in_trial = st >= LR_WARMUP && st <= LR_DRAINING;
	/* every RX queue it owns can wake it (a socket), or frames wait for it in a ring nobody watches */
	bool kernel_wakes = me->npoll == me->nqueues;
	uint64_t cap;
	if (kernel_wakes)
		cap = in_trial ? lr.tsc_hz / 10 : lr.tsc_hz;
	else if (in_trial)
		cap = lr.rx_sleep_tsc;
	else
		cap = lr.tsc_per_ms; /* between trials only ARP/ND waits, a millisecond at most */
	if (cap == 0)
		return;
	/* the leader looks for a stall in its receivers' passes: they pass four times per stall limit at least */
	if (in_trial && lr.trial.stall_tsc && cap > lr.trial.stall_tsc / 4)
		cap = lr.trial.stall_tsc / 4;
	if (in_trial && lr.trial.sleep_cap_tsc && cap > lr.trial.sleep_cap_tsc)
		cap = lr.trial.sleep_cap_tsc;
	uint64_t now = rte_rdtsc();
	uint64_t due = lr_tx_next_due(w, st, now);
	if (w == 0)
		due = min64(due, lr_trial_next_deadline(st, now));
	uint64_t until = due == UINT64_MAX ? UINT64_MAX : due > me->margin_tsc ? due - me->margin_tsc : 0;
	until = min64(until, now + cap);
	if (until <= now + lr.min_sleep_tsc)
		return; /* too close to sleep for: spin */
	uint64_t ns = (uint64_t)((double)(until - now) * lr.ns_per_tsc);
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
	struct pollfd pfds[1 + LR_MAX_PORTS * LR_MAX_QUEUES];
	for (unsigned i = 0; i <= me->npoll; i++)
		pfds[i] = (struct pollfd){.fd = me->poll_fds[i], .events = POLLIN};
	/* published before it sleeps: the timeline's collector, seeing no pass for a while, must know the
	 * worker chose to wait (a sleep taken for a pause made the DUT's loss in a trial's last settle_ms,
	 * when nothing is left to send or receive, the tester's) */
	lr_publish_u64(&me->sleep_until, until);
	int rc = ppoll(pfds, kernel_wakes ? me->npoll + 1 : 1, &ts, NULL);
	uint64_t woke = rte_rdtsc();
	/* woken early (a frame came): a hold-up from now on is a gap, seen as one at once; woken late: the
	 * lateness is */
	lr_publish_u64(&me->sleep_until, woke < until ? woke : until);
	me->rt_window_slept += woke - now;
	if (in_trial) {
		me->slept_tsc += woke - now;
		me->sleeps++;
	}
	if (rc > 0 && (pfds[0].revents & POLLIN))
		drain(me->wake_fd);
	if (rc == 0) {
		/* how late the kernel woke it: the next sleeps end that much earlier (at most 50 us: later than
		 * that is a host that ran it late, not the timer), a microsecond at least */
		uint64_t late = woke > until ? min64(woke - until, lr.tsc_hz / 20000) : 0;
		me->margin_tsc = (7 * me->margin_tsc + late) / 8;
		if (me->margin_tsc < lr.tsc_hz / 1000000)
			me->margin_tsc = lr.tsc_hz / 1000000;
	}
}
