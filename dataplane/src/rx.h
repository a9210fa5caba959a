/* The receive path (rx.c): one RX queue's burst, analysed (analysis.h), ARP/ND answered. Called by the
 * worker that owns the queue (engine.h). */
#ifndef LR_RX_H
#define LR_RX_H

#include <stdbool.h>

#include <rte_mempool.h>

#include "engine.h"

/* Receives and counts a burst of RX queue q of port p; returns the frames received. counting: false while
 * the leader has stopped this worker (ARP/ND is still answered, nothing counted). cache: this lcore's
 * cache of lr.pool. */
unsigned lr_rx_queue(struct lr_port *p, unsigned q, bool counting, struct rte_mempool_cache *cache);

#endif
