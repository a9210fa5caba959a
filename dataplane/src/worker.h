/* A worker lcore's loop (worker.c): main.c launches it on each worker lcore. */
#ifndef LR_WORKER_H
#define LR_WORKER_H

int lr_worker_main(void *arg); /* arg: (void *)(uintptr_t) the worker's index in lr.workers */

#endif
