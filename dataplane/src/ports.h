/* The ports and their queue pairs (ports.c), set up once before the workers start. */
#ifndef LR_PORTS_H
#define LR_PORTS_H

#include <stdint.h>

/* descriptors of every RX and TX queue */
#define RX_DESC 1024
#define TX_DESC 1024

/* The worker lcores (every lcore but the main one) and the queue pairs each owns, for forced queue pairs per
 * port (--queues, 0: as many as the workers want); -1 and stderr when there is no worker lcore. */
int lr_assign_workers(unsigned forced);
/* All ports' queue pairs. */
unsigned lr_total_queues(void);
/* Configures and starts DPDK port pid as lr.ports[idx], frames up to max_frame; -1 and stderr when it cannot. */
int lr_setup_port(uint16_t pid, uint16_t idx, unsigned max_frame);

#endif
