/* RESULT (control_report.c): the counts of the finished trial. */
#ifndef LR_CONTROL_REPORT_H
#define LR_CONTROL_REPORT_H

#include "control_proto.h"

int do_result(struct args *a, struct out *o);

#endif
