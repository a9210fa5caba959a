/* A worker with nothing to do sleeps (idle.c): until its next frame is due, the leader's next phase, a
 * frame arriving on a queue the kernel can wake it for (an af_packet socket), or another thread's wake-up
 * (its eventfd: control starting or aborting a trial, queuing an ARP request; the leader parking or
 * releasing it). So a tester at thousands of frames per second uses a few percent of a CPU and the kernel
 * runs it on time, where a spinning one is the first the kernel preempts. It spins where the rate needs
 * it (the next frame closer than a wake-up costs), with --spin, and in a trial on any RX queue the kernel
 * cannot wake it for unless told how long it may leave that queue (--rx-sleep-us: the latency of its
 * frames may then include that much, and the engine says so). */
#ifndef LR_IDLE_H
#define LR_IDLE_H

#include <stdint.h>

#include "engine.h"

/* The eventfds and each worker's poll set (its af_packet sockets), once the ports are up; -1 and stderr
 * when an eventfd cannot be made. */
int lr_idle_setup(void);
/* In the worker's own thread, before its loop: the timer slack of its sleeps at its least, real time
 * (idle.c) where allowed. */
void lr_idle_thread_init(struct lr_worker *me);
/* Every pass, at now: whether the worker is light enough to be real time (idle.c). */
void lr_idle_busy(struct lr_worker *me, uint64_t now);
/* Before a stretch of spinning that waits for other threads or catches up (the end of a trial): ordinary. */
void lr_idle_ordinary(struct lr_worker *me);
/* Wakes worker w if it sleeps (and makes its next sleep return at once if it is about to). Any thread. */
void lr_wake(struct lr_worker *w);
void lr_wake_all(void);
/* The leader says a trial ended; control's WAIT sleeps until then (or timeout_ms). */
void lr_signal_done(void);
void lr_wait_done(unsigned timeout_ms);
/* Worker w found nothing to do in its pass at state st: sleeps if nothing is due soon enough to spin for. */
void lr_idle(struct lr_worker *me, unsigned w, int st);

#endif
