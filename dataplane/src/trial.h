/* The trial's state machine (trial.c), which only the leader (worker 0) moves. */
#ifndef LR_TRIAL_H
#define LR_TRIAL_H

#include <stdbool.h>
#include <stdint.h>

/* Moves the trial on at *nowp (moved up to the trial's start if read before it); returns the state the rest
 * of this pass works in. */
int lr_trial_advance(uint64_t *nowp);
/* When the leader next has something to do for the trial in state st (TSC): a phase to end, a stall to
 * look for; now in a back-to-back trial (it watches every worker's bursts), UINT64_MAX outside a trial. */
uint64_t lr_trial_next_deadline(int st, uint64_t now);
/* Whether a trial is under way (WARMUP to DRAINING); any thread. */
bool lr_trial_active(void);
/* A state's name, as the protocol says it. */
const char *lr_state_name(int st);

#endif
