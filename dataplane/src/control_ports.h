/* The verbs of the engine and its ports (control_ports.c): HELLO, TIME, PORT, RESOLVE. */
#ifndef LR_CONTROL_PORTS_H
#define LR_CONTROL_PORTS_H

#include "control_proto.h"

int do_hello(struct args *a, struct out *o);
int do_time(struct args *a, struct out *o);
int do_port(struct args *a, struct out *o);
int do_resolve(struct args *a, struct out *o);

#endif
