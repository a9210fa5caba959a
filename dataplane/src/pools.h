/* The engine's two mbuf pools (pools.c): created once at start (main.c), tx_pool zeroed again by control
 * before a trial that needs it. */
#ifndef LR_POOLS_H
#define LR_POOLS_H

/* lr.pool and lr.tx_pool (0, or -1 when they cannot be created, said on stderr) */
int lr_create_pools(unsigned mbufs, unsigned max_frame);
void lr_zero_tx_pool(void);

#endif
