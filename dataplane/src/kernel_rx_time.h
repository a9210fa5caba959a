/* When the kernel received the frames an af_packet port reads: its RX ring's timestamps.
 *
 * The af_packet PMD of DPDK 22.11 copies each frame out of its socket's RX ring into an mbuf and hands the
 * slot back; the slot's header (struct tpacket2_hdr) keeps tp_sec/tp_nsec, the CLOCK_REALTIME at which the
 * kernel put the frame there, until the kernel fills that slot again one whole ring later. The engine maps
 * each of the port's rings a second time, read-only, follows the slots in the order the PMD reads them,
 * and takes a frame's arrival from its slot: a worker that was asleep, or that the OS ran late, then adds
 * nothing to the latency, and how long each frame waited for the worker is known.
 *
 * Nothing is assumed that is not checked frame by frame: a slot counts only if its header is stable over
 * the read and its bytes are the frame's; any other frame is timed when the worker polled, and counted as
 * such (struct lr_rx_times), so the latency says which clock it rests on. */
#ifndef LR_KERNEL_RX_TIME_H
#define LR_KERNEL_RX_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

/* One RX queue's ring, mapped a second time (PROT_READ) through the PMD's own socket. */
struct lr_kring {
	int fd;		    /* the queue's packet socket (also what the worker sleeps on), -1: none */
	const uint8_t *map; /* NULL: not mapped (not af_packet, or the geometry did not match) */
	size_t map_len;
	uint32_t frame_size; /* a slot's bytes: the PMD's framesz */
	uint32_t frames;     /* slots in the RX ring: the PMD's framecnt */
	uint32_t next;	     /* the slot the PMD reads next, as far as the frames have shown */
};

/* What the frames of a measured trial showed about their timing, per RX queue; its worker writes it. */
struct lr_rx_times {
	uint64_t kernel;      /* frames timed by the kernel's receive time */
	uint64_t polled;      /* frames timed when the worker polled (no matching slot) */
	uint64_t wait_max_ns; /* the longest a kernel-timed frame waited in the ring for its worker */
};

/* Maps the rings of an af_packet port's nq queues, found as its sockets on interface ifindex (in the order
 * the PMD opened them, which is the queues' order), for the ring geometry in devargs (the vdev's
 * arguments, as the PMD reads them). rings[q].fd is set for every socket found, .map where the mapping
 * worked. Returns the queues mapped; what failed is said on stderr. */
unsigned lr_kring_open(int ifindex, const char *devargs, unsigned nq, struct lr_kring *rings);

/* The frames an af_packet port's RX ring holds, for its devargs. */
unsigned lr_kring_frames(const char *devargs);

/* The arrival of each of the n frames the PMD just read from ring k (pkts, in order), in the engine's clock
 * (ns modulo 2^32): the kernel's receive time where the frame's slot matches it, else polled_ns32 (when the
 * worker read the burst). times: where the counts go (NULL: not counted). */
void lr_kring_arrivals(struct lr_kring *k, struct rte_mbuf *const *pkts, unsigned n, uint32_t polled_ns32,
		       uint32_t *arrival, struct lr_rx_times *times);

#endif
