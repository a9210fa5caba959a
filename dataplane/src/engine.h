/* The engine's shared state: ports, streams and the trial, and who may write what.
 *
 * Threads: the main lcore runs the control socket (control*.c); each worker lcore runs the fast path
 * (worker.c) for the ports it owns: it alone receives on them (analysis, ARP/ND answers) and sends on
 * them, so a stream's TX state is written by the worker of its TX port and its RX state by the worker of
 * its RX port, each on cache lines of their own. Worker 0 leads: the control thread writes port
 * addressing, stream definitions and the trial set-up only while no trial runs; it starts a trial by
 * publishing state WARMUP (release) and the leader alone moves it on to RUNNING, DRAINING and
 * DONE/ABORTED. Counters are written by their worker only and read by the control thread (aligned 64-bit
 * loads do not tear on the CPUs DPDK supports). No locks.
 */
#ifndef LR_ENGINE_H
#define LR_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_reciprocal.h>
#include <rte_ring.h>

#include "frame.h"
#include "hist.h"
#include "seqwin.h"

#define LR_VERSION "linerate-engine 0.1"
#define LR_MAX_PORTS 8
#define LR_MAX_STREAMS 256
#define LR_MAX_CYCLE 4096
#define LR_MAX_CLASSES 32
#define LR_MAX_TRIAL_STREAMS 16
#define LR_BURST 32
#define LR_MAX_WORKERS LR_MAX_PORTS /* a worker owns one port or more */

struct lr_port {
	/* read-mostly: set up before the first trial, addressed by control between trials */
	uint16_t id;
	uint8_t mac[6];
	char driver[32];
	char device[64];  /* the PCI address of a PCI port, the vdev name of a virtual one */
	int numa;	  /* the NUMA node of the device, -1 unknown (virtual devices) */
	uint16_t rx_queues, tx_queues;
	uint32_t max_frame;
	uint32_t speed_mbps;
	/* addressing, written by the control thread between trials */
	bool has_ip4, has_gw4, has_ip6, has_gw6;
	uint8_t ip4[4], gw4[4];
	unsigned ip4_len;
	struct lr_ip ip6, gw6;
	unsigned ip6_len;
	uint16_t vlan;
	bool static_peer;
	/* next hop MAC: written by the worker when ARP/ND answers (or by control for a static peer) */
	uint8_t peer_mac[6];
	atomic_bool peer_known;
	/* the worker that owns the port's queues (an index into lr.workers) */
	unsigned owner;
	/* control frames (ARP/ND requests) the control thread hands to the owner, which owns the TX queue */
	struct rte_ring *ctl_tx;
	/* the checksums the port verifies on receipt (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, _UDP_CKSUM), 0: none */
	uint64_t rx_cksum;
	/* the owner's counters, on cache lines of their own; tx_full: test-frame bursts the PMD took only in
	 * part (its TX queue was full); rx_bad_cksum: frames the port found with a bad IPv4 header or UDP
	 * checksum */
	_Alignas(RTE_CACHE_LINE_SIZE) uint64_t rx_foreign, rx_arp, tx_arp, rx_stale, rx_warmup, rx_total, tx_alloc_fail,
		tx_full, rx_bad_cksum;
	/* the kernel interface of an af_packet port (0: none), and the frames the kernel dropped in this
	 * trial because the port's ring was full (kernel_drops.c; control thread only) */
	int kernel_ifindex;
	uint64_t rx_kernel_drops;
} __rte_cache_aligned;

/* a mod d with a precomputed reciprocal of d (a 64-bit division costs tens of cycles per frame) */
static inline uint64_t lr_mod(uint64_t a, uint64_t d, const struct rte_reciprocal_u64 *r)
{
	if (d == 1)
		return 0;
	return a - rte_reciprocal_divide_u64(a, r) * d;
}

struct lr_stream {
	bool defined;
	bool in_trial; /* set by control before a trial starts, read by the worker */
	int id;
	int tx_port, rx_port; /* -1: this engine does not send (or receive) it */
	int l3;
	struct lr_ip src, dst;
	uint16_t sport, dport;
	uint32_t flows;
	unsigned vary;
	uint8_t dscp;
	enum lr_payload payload;
	uint32_t cycle_len;
	/* RX finds a frame's flow and cycle position from its sequence number: multiply, not divide */
	struct rte_reciprocal_u64 flows_div, cycle_div;
	uint16_t cycle[LR_MAX_CYCLE];
	uint8_t cycle_class[LR_MAX_CYCLE];
	unsigned nclasses;
	uint16_t class_size[LR_MAX_CLASSES];
	double mean_frame;
	/* built at trial start, once the next hop is known */
	struct lr_hdr_cfg hdr;
	struct lr_tmpl tmpl[LR_MAX_CLASSES];
	uint8_t *tmpl_mem;
	uint8_t random_bytes[256];

	/* TX state of the current trial (the TX port's worker), on cache lines of its own */
	_Alignas(RTE_CACHE_LINE_SIZE) double fps;
	uint64_t seq, tx_frames, tx_bytes, warm_sent, max_backlog;
	uint32_t pos, flow; /* seq % cycle_len and seq % flows, kept incrementally: no division per frame */
	uint16_t copy_len[LR_MAX_CLASSES]; /* template bytes to copy per frame */
	uint64_t burst_left;
	struct rte_mbuf *pending[LR_BURST];
	unsigned n_pending, pending_off;
	uint64_t tx_first_tsc, tx_last_tsc;
	/* burstiness: the most frames sent in any 1 ms window of the measurement (windows start where the
	 * previous one ended, so a burst is never split over more than two) */
	uint64_t win_start_tsc, win_frames, peak_win_frames;

	/* RX state of the current trial (the RX port's worker), on cache lines of its own */
	_Alignas(RTE_CACHE_LINE_SIZE) struct lr_seqwin win;
	uint64_t *win_bits;
	uint64_t rx_bytes, late, bad_flow;
	uint64_t corrupted; /* measured frames with a bad checksum: not counted as received */
	uint64_t class_rx[LR_MAX_CLASSES];
	uint64_t last_rx_tsc;
	struct lr_hist lat;
	uint32_t lat_ts; /* TX timestamp of the last frame in lat: a frame with another one is a jitter sample */
	/* with --clock realtime: frames received "before" their stamp (the receiver's clock behind the
	 * sender's by more than the latency); kept out of lat, whose values they would wrap */
	uint64_t lat_negative;
};

/* One worker lcore: the ports it owns, and what it reports about itself (the longest time between two
 * passes of its loop while a trial measured or drained: the OS took its CPU, or an interrupt ran; frames
 * waited that long in its ports' rings, and in the latency). Written by its worker only, on cache lines of
 * its own; control reads it between trials. */
struct lr_worker {
	uint64_t last_tsc;    /* the previous pass, 0 outside measurement and drain */
	uint64_t max_gap_tsc; /* reset by control before a trial starts */
	unsigned lcore;
	unsigned nports;
	uint16_t ports[LR_MAX_PORTS];
	/* it finished its sending of this trial (catch_up in worker.c), once; the leader ends the drain only
	 * after every worker has (control clears it per trial) */
	atomic_bool drained;
	/* a back-to-back trial: every burst of its streams is handed to the PMD whole (control clears it) */
	atomic_bool burst_sent;
	/* acknowledges the leader's lr.stop: it counts nothing and sends no test frame until released */
	atomic_bool stopped;
} __rte_cache_aligned;

enum lr_state { LR_IDLE = 0, LR_WARMUP, LR_RUNNING, LR_DRAINING, LR_DONE, LR_ABORTED };

struct lr_trial {
	uint32_t id;
	unsigned nstreams;
	int streams[LR_MAX_TRIAL_STREAMS];
	uint64_t burst;
	uint64_t warmup_tsc, duration_tsc, drain_tsc, stall_tsc;
	/* set by control at start */
	uint64_t start_tsc;
	/* set by the worker at each transition */
	uint64_t meas_start_tsc, meas_end_tsc, end_tsc;
	atomic_int state;
	atomic_bool abort_req;
	char reason[32];
};

struct lr_engine {
	/* [0] leads the trial. First, so the cache-aligned array does not pad the fields around it. */
	struct lr_worker workers[LR_MAX_WORKERS];
	unsigned nworkers;
	unsigned nports;
	struct lr_port ports[LR_MAX_PORTS];
	struct lr_stream *streams[LR_MAX_STREAMS];
	struct lr_trial trial;
	struct rte_mempool *pool;    /* RX and control frames */
	struct rte_mempool *tx_pool; /* test frames only: zero payload areas (see worker.c) */
	/* a trial with a non-zero payload wrote whole frames into tx_pool: the next zero-payload-only trial
	 * zeroes it again first; a trial with both kinds copies every frame whole (control thread only) */
	bool tx_pool_dirty, tx_copy_whole;
	uint64_t tsc_hz;
	double ns_per_tsc;
	uint64_t tsc0;
	uint64_t tsc_per_ms;
	uint64_t clock_base_ns; /* ns at tsc0: 0 for the local clock, CLOCK_REALTIME with --clock realtime */
	bool realtime;
	unsigned window_bits;
	/* >0: a worker sleeps this long when a loop found nothing to do (a tester sharing its CPU) */
	unsigned idle_sleep_us;
	/* the leader asks the other workers to stop counting before it publishes the end of a trial */
	atomic_bool stop;
	atomic_bool quit;
};

extern struct lr_engine lr; /* engine.c */

static inline uint64_t lr_tsc_to_ns(uint64_t tsc)
{
	return lr.clock_base_ns + (uint64_t)((double)(tsc - lr.tsc0) * lr.ns_per_tsc);
}

int lr_worker_main(void *arg); /* arg: (void *)(uintptr_t) the worker's index in lr.workers */
/* pools.c: lr.pool and lr.tx_pool (0, or -1 when they cannot be created, said on stderr) */
int lr_create_pools(unsigned mbufs, unsigned max_frame);
void lr_zero_tx_pool(void);
void lr_control_serve(const char *addr); /* control.c */
/* frames the kernel dropped on the af_packet socket(s) of interface ifindex since the last call */
uint64_t lr_kernel_rx_drops(int ifindex);

#endif
