/* The engine's two mbuf pools, created once at start: lr.pool for received and control frames, lr.tx_pool
 * for test frames only, whose data areas are kept zero so that a zero-payload frame needs only its headers
 * and tag written (build() in worker.c). The control thread zeroes tx_pool again before a trial when an
 * earlier one wrote other payloads into it. */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pools.h"
#include "engine.h"

static void zero_data(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	(void)mp, (void)arg, (void)idx;
	struct rte_mbuf *m = obj;
	memset((uint8_t *)m->buf_addr, 0, m->buf_len);
}

void lr_zero_tx_pool(void)
{
	rte_mempool_obj_iter(lr.tx_pool, zero_data, NULL);
}

int lr_create_pools(unsigned mbufs, unsigned max_frame)
{
	/* a frame of max_frame must fit one mbuf: the fast path writes frames contiguously */
	lr.pool = rte_pktmbuf_pool_create("lr_pool", mbufs, LR_POOL_CACHE, 0, (uint16_t)(RTE_PKTMBUF_HEADROOM + max_frame),
					  (int)rte_socket_id());
	/* zero-filled here; see build() in worker.c. Room for LR_MAX_HDR_TAG bytes even with a smaller
	 * --max-frame: a zero-payload frame's head is copied as that many bytes. */
	unsigned tx_room = max_frame > LR_MAX_HDR_TAG ? max_frame : LR_MAX_HDR_TAG;
	lr.tx_pool = lr.pool ? rte_pktmbuf_pool_create("lr_tx_pool", mbufs, LR_POOL_CACHE, 0,
						     (uint16_t)(RTE_PKTMBUF_HEADROOM + tx_room), (int)rte_socket_id())
			     : NULL;
	if (lr.tx_pool)
		lr_zero_tx_pool();
	if (lr.pool == NULL || lr.tx_pool == NULL) {
		fprintf(stderr, "linerate-engine: cannot create the mbuf pool (%u mbufs): %s\n", mbufs,
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}
