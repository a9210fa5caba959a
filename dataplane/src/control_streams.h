/* STREAM (control_streams.c): defines a stream's frames, flows and ports. */
#ifndef LR_CONTROL_STREAMS_H
#define LR_CONTROL_STREAMS_H

#include "control_proto.h"

int do_stream(struct args *a, struct out *o);

#endif
