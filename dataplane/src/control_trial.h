/* The verbs that run a trial (control_trial.c): TRIAL, POLL, WAIT, ABORT, QUIET. */
#ifndef LR_CONTROL_TRIAL_H
#define LR_CONTROL_TRIAL_H

#include "control_proto.h"

int do_trial(struct args *a, struct out *o);
int do_poll(struct args *a, struct out *o);
int do_wait(struct args *a, struct out *o);
int do_abort(struct args *a, struct out *o);
int do_quiet(struct args *a, struct out *o);

#endif
