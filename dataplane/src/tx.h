/* The transmit path (tx.c): paced lanes, back-to-back bursts, control frames. Called by the worker that owns
 * the TX queue (engine.h); the leader frees what is left pending when a trial ends. */
#ifndef LR_TX_H
#define LR_TX_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

/* Whether lane k of stream s is sent by worker w (it owns TX queue k of the stream's TX port). */
static inline bool lr_sends(const struct lr_stream *s, unsigned k, unsigned w)
{
	return s->tx_port >= 0 && k < s->lanes && lr.ports[s->tx_port].q[k].owner == w;
}

/* Sends what is due of lane k of stream s at now in state st (WARMUP or RUNNING); returns how many frames
 * it handed to the PMD. */
unsigned lr_tx_stream(struct lr_stream *s, unsigned k, int st, uint64_t now);
/* ARP/ND requests control queued for the port (ctl_tx): its queue 0's worker sends them. */
void lr_send_control_frames(struct lr_port *p);
/* Sends what worker w's lanes had due before the end of the measurement (DRAINING), then says it drained. */
void lr_catch_up(struct lr_trial *t, unsigned w, uint64_t now);
/* Frees the frames a lane still holds (its TX ring was full). */
void lr_free_pending(struct lr_txq *x);
/* A back-to-back trial: whether every burst worker w sends is with the PMD, whole. */
bool lr_bursts_sent(unsigned w);
/* When worker w next has a frame due in state st (TSC): now when it has one waiting, UINT64_MAX when none
 * is left in this trial. */
uint64_t lr_tx_next_due(unsigned w, int st, uint64_t now);

#endif
