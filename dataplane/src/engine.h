/* The engine's shared state: ports, streams and the trial, and who may write what.
 *
 * Threads: the main lcore runs the control socket (control*.c); each worker lcore runs the fast path
 * (worker.c) for the queue pairs it owns. A port has one queue pair or several (lr_port.nq); queue pair q of
 * a port is owned by one worker, which alone receives on its RX queue (analysis, ARP/ND answers) and sends
 * on its TX queue. A stream's TX state is kept per lane (struct lr_txq: lane k is sent by TX queue k of its
 * TX port) and its RX state per RX queue and lane (struct lr_rxq), each written by its queue's worker on
 * cache lines of its own; control merges them when it reports. Queue 0's worker is the port's owner: it
 * sends the control frames (ARP/ND requests) control queues for the port. Worker 0 leads: the control thread writes port
 * addressing, stream definitions and the trial set-up only while no trial runs; it starts a trial by
 * publishing state WARMUP (release) and the leader alone moves it on to RUNNING, DRAINING and
 * DONE/ABORTED. Counters are written by their worker only and read by the control thread (aligned 64-bit
 * loads do not tear on the CPUs DPDK supports). No locks.
 *
 * Exact analysis across RX queues. RSS (or af_packet's fanout by flow hash) puts every frame of one flow
 * on one queue: the hash is of the headers, and a stream's frames of one flow have the same. So:
 *  - a duplicate carries its original's headers and lands on its original's queue: that queue's window
 *    finds it exactly, and the sum over queues of unique frames is the stream's (loss = sent - that sum);
 *  - late, corrupted, bytes, size classes and latency are per frame: their sums (and the histograms'
 *    merge) are the stream's whatever the spread;
 *  - reordering is counted within each queue's arrival order (and each sender lane's: see lanes below). The order of two frames on two queues is not
 *    observable (the NIC keeps no order between its queues, nor do two sockets of a fanout), so a frame is
 *    reordered when it arrives after a later-sent frame of its own queue: the definition holds per queue,
 *    and one worker serving both queues counts exactly what two workers do;
 *  - early (a gap before a frame) is per queue too, and a queue's gaps include the frames of the flows
 *    hashed to the other queues: with frames on several queues (RESULT's rx_queues > 1) it says little.
 * Except when a receiving queue falls behind: af_packet's fanout rolls frames over to another socket when
 * its own ring is nearly full (PACKET_FANOUT_FLAG_ROLLOVER, before any drop), and a duplicate rolled over
 * is then counted as new; the port reports those rollovers (kernel_drops.c) and the runner holds such a
 * trial invalid.
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
#include "kernel_rx_time.h"
#include "seqwin.h"

#define LR_VERSION "linerate-engine 0.1"
#define LR_MAX_PORTS 8
#define LR_MAX_STREAMS 256
#define LR_MAX_CYCLE 4096
#define LR_MAX_CLASSES 32
#define LR_MAX_TRIAL_STREAMS 16
#define LR_BURST 32
#define LR_MAX_QUEUES 8 /* queue pairs per port */
#define LR_FRAG_SLOTS 256 /* first fragments remembered per RX queue (a power of two) */
/* a bit per 8 B of the largest datagram: where its fragments that came start (a copy starts where another did) */
#define LR_FRAG_WORDS ((LR_MAX_FRAME / 8 + 63) / 64)
#define LR_MAX_WORKERS 16
/* mbufs each lcore's mempool cache keeps (and up to half again before it flushes) */
#define LR_POOL_CACHE 256
#define LR_POOL_CACHE_HELD (LR_POOL_CACHE * 3 / 2)

/* One queue pair of a port: its worker and what that worker counted, on cache lines of their own.
 * tx_full: test-frame bursts the PMD took only in part (its TX queue was full); rx_bad_cksum: frames the
 * port found with a bad IPv4 header or UDP checksum. */
struct lr_portq {
	uint64_t rx_foreign, rx_arp, tx_arp, rx_stale, rx_warmup, rx_total, tx_alloc_fail, tx_full, rx_bad_cksum;
	/* ICMP errors that a hop refused one of our frames as too big for its MTU (frame.h LR_KIND_TOO_BIG),
	 * and the smallest MTU they named (0: none named one) */
	uint64_t rx_too_big;
	uint32_t too_big_mtu;
	/* fragments of UDP datagrams whose first fragment never came to their slot on this queue (lost, on
	 * another queue, or after another datagram took the slot), counted when another datagram takes it */
	uint64_t rx_frag_unmatched;
	unsigned owner; /* the worker that owns the queue pair (an index into lr.workers) */
	/* an af_packet queue's socket and ring (kernel_rx_time.h; fd -1 and map NULL elsewhere), and how its
	 * measured frames were timed in this trial */
	struct lr_kring kring;
	struct lr_rx_times rx_times;
	/* the most frames it received in any 1 ms window while the trial measured or drained (windows as a
	 * lane's TX windows): how fast its ring can fill */
	uint64_t rx_win_start_tsc, rx_win_frames, rx_peak_win;
	/* when a frame of the tester's that no trial measures last arrived on the queue (an earlier trial's, a
	 * warm-up frame, a corrupted one): the DUT still forwards onto the port. QUIET waits for it (control_trial.c). */
	uint64_t last_unmeasured_tsc;
	/* the datagrams whose fragments arrived last, one slot per hash of source, destination and IP ID
	 * (direct-mapped: a datagram whose slot another takes before all its fragments came loses the rest).
	 * A hop sends a datagram's fragments back to back, in whatever order, so a small table finds them
	 * (rx.c). Written by the queue's worker only; a slot of an earlier trial counts as free. */
	struct lr_frag_slot {
		uint32_t src, dst;
		uint16_t id;
		uint64_t seq;	      /* the first fragment's tag: its frame's number (lane in the top bits) */
		uint8_t stream;	      /* and stream */
		uint32_t trial;	      /* the trial it was taken in (lr.trial.id) */
		bool used, first;     /* first: its first fragment came (the rest may come before it) */
		bool measured;	      /* the first's frame is measured (lr_measured): its stream counts the rest */
		bool whole;	      /* counted as whole already */
		uint16_t early;	      /* fragments that came before the first, counted when it comes */
		uint32_t bytes, end;  /* datagram bytes arrived; where it ends, once its last fragment came (else 0) */
		/* where the later fragments that came start, a bit per 8 B (fragments start on 8 B): a copy of one
		 * adds no bytes */
		uint64_t starts[LR_FRAG_WORDS];
	} frag[LR_FRAG_SLOTS];
} __rte_cache_aligned;

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
	/* what it can see (main.c): promiscuous (foreign frames counted), its drops on receipt counted (imissed,
	 * or the kernel's for af_packet), the frames its RX ring holds, and whether it filters VLANs (a VF);
	 * vlan_strip: it was set up stripping a PF's port VLAN (ports.c), turned off while the test has its own */
	bool promiscuous, rx_misses_counted, vlan_filter, vlan_strip;
	unsigned rx_ring;
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
	/* queue pairs (rx_queues = tx_queues = nq), the worker of each, and its counters */
	unsigned nq;
	struct lr_portq q[LR_MAX_QUEUES];
	/* control frames (ARP/ND requests) the control thread hands to queue 0's worker */
	struct rte_ring *ctl_tx;
	/* the checksums the port verifies on receipt (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, _UDP_CKSUM), 0: none */
	uint64_t rx_cksum;
	/* RSS hash functions in use (rte_eth_rss_conf.rss_hf), 0: none (one queue, or the PMD spreads itself) */
	uint64_t rss_hf;
	/* the kernel interface of any port that has one (af_packet, af_xdp; 0: none): its receive queues are
	 * reported with the port, since a PMD that binds fewer of them than the NIC spreads frames over never
	 * sees the frames of the others; and an af_packet port's sockets bound to it are read for the frames
	 * the kernel dropped or rolled over (kernel_drops.c; an af_packet port whose sockets cannot be found
	 * or read is refused at start, main.c, and a trial whose reads miss one is invalid,
	 * rx_kernel_unread; other drivers have none) */
	int if_index;
	bool af_packet; /* its drops and rollovers are read from its sockets (kernel_drops.c) */
	unsigned kernel_first_rx_queue; /* the first of the interface's receive queues the port binds (af_xdp) */
	/* the frames the kernel dropped in this trial because the port's ring was full, its rollovers when
	 * the trial started (they count for life), and the most of its sockets a read of this trial could not
	 * read (their drops are unknown); control thread only */
	uint64_t rx_kernel_drops;
	uint64_t rx_kernel_rollovers_base;
	unsigned rx_kernel_unread;
} __rte_cache_aligned;

/* A counter one worker writes while another lcore reads it during the trial (a receipt time, a worker's
 * last pass, which the leader reads for stall detection): relaxed atomic accesses, a plain mov on x86-64,
 * so the reader never sees a torn or compiler-cached value and the writer pays nothing. */
static inline void lr_publish_u64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t lr_peek_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* a mod d with a precomputed reciprocal of d (a 64-bit division costs tens of cycles per frame) */
static inline uint64_t lr_mod(uint64_t a, uint64_t d, const struct rte_reciprocal_u64 *r)
{
	if (d == 1)
		return 0;
	return a - rte_reciprocal_divide_u64(a, r) * d;
}

/* What one RX queue's worker counted of one stream in the current trial: its frames' sequence window,
 * frames and bytes, late and corrupted ones, size classes and latency. Only that worker writes it; control
 * resets it before a trial and merges the queues' (rxq.c) when it reports. */
struct lr_rxq {
	struct lr_seqwin win;
	uint64_t rx_bytes, late, bad_flow;
	uint64_t corrupted; /* measured frames with a bad checksum: not counted as received */
	/* measured frames that arrived in fragments (counted by their first, which carries the tag, as received),
	 * those of them whose every fragment arrived, and the fragments of them that arrived, first ones
	 * included (rx.c) */
	uint64_t fragmented, fragmented_whole, fragments;
	/* measured frames of a sender lane the stream keeps no state for (counted on lane 0's entry): the
	 * tester's configuration (STREAM lanes= short of the sender's lanes), never the DUT's */
	uint64_t unknown_lane;
	uint64_t class_rx[LR_MAX_CLASSES];
	uint64_t last_rx_tsc;
	/* when a frame of the stream of an earlier trial (or a warm-up frame) last arrived here: the DUT still
	 * forwards the stream, which the stall rule reads (trial.c) */
	uint64_t last_unmeasured_tsc;
	uint32_t lat_ts; /* TX timestamp of the last frame in lat: a frame with another one is a jitter sample */
	/* with --clock realtime: frames received "before" their stamp (the receiver's clock behind the
	 * sender's by more than the latency); kept out of lat, whose values they would wrap */
	uint64_t lat_negative;
	struct lr_hist lat;
} __rte_cache_aligned;

/* Lanes. A stream whose TX port has several queues is sent by the worker of each, at rate / lanes: lane k
 * sends the frames the stream's schedule has at positions k, k + L, k + 2L, .. (L lanes), so the lanes
 * together offer the paced rate exactly, and numbers them k << LR_LANE_SHIFT | 0, 1, 2, ..: each lane's
 * numbers are a sequence of their own, and the receiver keys its windows by lane (the top bits): its own
 * TX port's queues, or for a stream another engine sends, the lanes STREAM lanes= names (that engine's). Two lanes leave by two TX queues whose
 * frames interleave as the NIC takes them: their relative order is the tester's, not the DUT's, and is
 * never counted as reordering. Flows stay seq % flows: every lane sends every flow. */
#define LR_LANE_SHIFT 44
#define LR_SEQ_MASK ((1ull << LR_LANE_SHIFT) - 1)

/* frames lane k of L has due when the stream's schedule has n due in all: positions k, k + L, .. below n */
static inline uint64_t lr_lane_share(uint64_t n, unsigned k, unsigned L)
{
	return n > k ? (n - k + L - 1) / L : 0;
}

/* One lane's TX state (its TX queue's worker writes it), on cache lines of its own. */
struct lr_txq {
	uint64_t seq;	/* the next number it sends: lane << LR_LANE_SHIFT | frames built */
	uint64_t built; /* frames built in the measurement (sent or pending) */
	uint64_t tx_frames, tx_bytes, max_backlog;
	uint32_t pos, flow; /* seq % cycle_len and seq % flows, kept incrementally: no division per frame */
	uint64_t burst_left;
	struct rte_mbuf *pending[LR_BURST];
	unsigned n_pending, pending_off;
	uint64_t tx_first_tsc, tx_last_tsc;
	/* burstiness: the most frames sent in any 1 ms window of the measurement (windows start where the
	 * previous one ended, so a burst is never split over more than two) */
	uint64_t win_start_tsc, win_frames, peak_win_frames;
	/* the stamp (tx.c): how long a build takes, per frame of a short burst and for a full one (learned; kept
	 * over trials), and the bursts of this trial stamped again because a build missed it */
	uint64_t build_tsc[2];
	uint64_t restamped;
	/* the timeline (timeline.h): a pass that found more than lag_mark frames due (UINT64_MAX: no timeline)
	 * counts a lag event, and the first since the collector's acknowledgement says from when the oldest
	 * of them was due; rare, so the collector's writes to lag_ack cost the lane nothing in the common case */
	uint64_t lag_mark;
	uint64_t lag_events, lag_ack, lag_from_tsc;
	/* ICMP errors refusing the stream's frames as too big (frame.h LR_KIND_TOO_BIG) that arrived on the RX
	 * queue of this lane's queue pair, whose worker is this lane's (the errors come back to the port the
	 * frames left by), and the smallest MTU they named (0: none) */
	uint64_t rx_too_big;
	uint32_t too_big_mtu;
} __rte_cache_aligned;

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
	bool fragmentable; /* STREAM df=0 (frame.h lr_hdr_cfg) */
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

	/* TX: set by control before a trial, read by the senders */
	double fps;
	unsigned lanes;			   /* the TX port's queues: the stream's senders */
	uint16_t copy_len[LR_MAX_CLASSES]; /* template bytes to copy per frame */
	/* warm-up frames sent (lane 0's worker alone sends them) */
	uint64_t warm_sent;
	struct lr_txq txq[LR_MAX_QUEUES];

	/* RX state of the current trial, per RX queue of the RX port and lane of the sender (NULL where the
	 * stream has none; control allocates them when the stream is defined) */
	struct lr_rxq *rxq[LR_MAX_QUEUES][LR_MAX_QUEUES];
};

/* The RX state of stream s on RX queue q for a frame numbered seq (its lane's), NULL if it has none. */
static inline struct lr_rxq *lr_rxq_of(const struct lr_stream *s, unsigned q, uint64_t seq)
{
	uint64_t lane = seq >> LR_LANE_SHIFT;
	return lane < LR_MAX_QUEUES ? s->rxq[q][lane] : NULL;
}

/* One worker lcore: the queue pairs it owns, and what it reports about itself (the longest time between two
 * passes of its loop while a trial measured or drained, beyond any sleep it chose: the OS took its CPU, or
 * an interrupt ran, or a sleep ended late; frames waited that long in its rings, and in the latency of a
 * port that has no kernel receive times). Written by its worker only, on cache lines of its own; control
 * reads it between trials. */
struct lr_worker {
	uint64_t last_tsc;    /* the previous pass, 0 outside measurement and drain */
	/* published after a pass read its RX queues: every frame that was in them at this time (the pass's
	 * start) is counted; 0 outside measurement and drain. The leader's stall rule reads it (trial.c). */
	uint64_t polled_tsc;
	/* the same in any state, released after the pass's frames were booked: QUIET takes a port for quiet only
	 * once every worker has read its queues after the quiet time (a worker the host held up has frames
	 * waiting in its rings) */
	uint64_t looked_tsc;
	uint64_t max_gap_tsc; /* reset by control before a trial starts */
	/* its sleeps (idle.c): the wake-up the one it is in asked for, published before it sleeps (for the
	 * timeline's collector); after it, the earlier of that and the wake-up; a pass sets it to its own start
	 * (a gap counts from the latest of these and the previous pass), how late wake-ups come (learned), and in
	 * this trial how long it slept, how often */
	uint64_t sleep_until, margin_tsc, slept_tsc, sleeps;
	/* real time (idle.c): allowed (its first try worked), on now; the window it is judged over, and how long
	 * it slept in it */
	atomic_bool rt_allowed; /* control reads it for HELLO */
	bool rt_on;
	uint64_t rt_window_start, rt_window_slept, rt_tried_tsc;
	int wake_fd;	/* an eventfd: other threads wake it */
	unsigned npoll; /* its RX queues the kernel can wake it for: their sockets follow wake_fd in poll_fds */
	int poll_fds[1 + LR_MAX_PORTS * LR_MAX_QUEUES];
	unsigned lcore;
	unsigned nports; /* the ports it serves a queue pair of, each once */
	uint16_t ports[LR_MAX_PORTS];
	unsigned nqueues;
	struct {
		uint16_t port, queue;
	} queues[LR_MAX_PORTS * LR_MAX_QUEUES];
	/* it finished its sending of this trial (catch_up in worker.c), once; the leader ends the drain only
	 * after every worker has (control clears it per trial) */
	atomic_bool drained;
	/* a back-to-back trial: every burst of its streams is handed to the PMD whole (control clears it) */
	atomic_bool burst_sent;
	/* acknowledges the leader's lr.stop: it counts nothing and sends no test frame until released */
	atomic_bool stopped;
	/* the timeline (timeline.h): gaps longer than the trial's gap_mark_tsc, counted, and where the first
	 * since the collector's acknowledgement began */
	uint64_t gap_events, gap_ack, gap_from_tsc;
} __rte_cache_aligned;

enum lr_state { LR_IDLE = 0, LR_WARMUP, LR_RUNNING, LR_DRAINING, LR_DONE, LR_ABORTED };

struct lr_trial {
	uint32_t id;
	unsigned nstreams;
	int streams[LR_MAX_TRIAL_STREAMS];
	uint64_t burst;
	uint64_t warmup_tsc, duration_tsc, drain_tsc, stall_tsc;
	/* a worker gap longer than this is a timeline event (worker.c; 0: no timeline) */
	uint64_t gap_mark_tsc;
	/* a timeline trial's longest sleep (idle.c; 0: none): settle less the gap mark, so that a worker the host
	 * holds up between an early wake-up and its publishing it, which the collector sees only once the sleep
	 * it asked for is over by the gap mark, holds a frame past settle unseen by a pass's work at most */
	uint64_t sleep_cap_tsc;
	/* set by control at start */
	uint64_t start_tsc;
	/* set by the worker at each transition */
	uint64_t meas_start_tsc, meas_end_tsc, end_tsc;
	atomic_int state;
	atomic_bool abort_req;
	char reason[32];
	int stalled_stream; /* the stream whose stall ended it (dut-stalled), -1: none */
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
	/* idle.h: never sleep (--spin); how long a worker in a trial may leave an RX queue the kernel cannot
	 * wake it for (0: it spins there); the least sleep worth a wake-up */
	bool spin, realtime_wanted;
	bool mask_rx_misses; /* --mask-rx-misses (tests) */
	unsigned rx_sleep_us;
	uint64_t rx_sleep_tsc, min_sleep_tsc;
	/* the leader asks the other workers to stop counting before it publishes the end of a trial */
	atomic_bool stop;
	atomic_bool quit;
	atomic_uint workers_started; /* each worker's thread, set up (idle.c): control serves after all */
};

extern struct lr_engine lr; /* engine.c */

static inline uint64_t lr_tsc_to_ns(uint64_t tsc)
{
	return lr.clock_base_ns + (uint64_t)((double)(tsc - lr.tsc0) * lr.ns_per_tsc);
}

#endif
