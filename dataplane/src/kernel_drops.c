/* What the kernel did to frames before an af_packet port saw them: dropped them, or moved them to another
 * of the port's queues.
 *
 * The af_packet PMD of DPDK 22.11 reports no imissed: when its receive ring is full (the worker was
 * preempted, or is slower than the traffic), the kernel drops the frame and counts it on the socket
 * (PACKET_STATISTICS), where nobody reads it. Those frames would count as frames the DUT lost. With several
 * queue pairs the PMD's sockets share a fanout group with rollover: a socket whose ring is nearly full has
 * frames of its flows handed to another socket (PACKET_ROLLOVER_STATS), before any drop. A flow then
 * arrives on two queues, whose windows count its duplicates and its order apart: the counts are no longer
 * exact. The sockets are this process's own: each is found by the interface it is bound to, and read
 * here. Reading PACKET_STATISTICS resets them, so each call returns the drops since the previous one;
 * the rollover counts are the socket's whole life's. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/if_packet.h>

#include "kernel_drops.h"

static bool packet_socket_of(int fd, int ifindex)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return false;
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll);
	memset(&sll, 0, sizeof(sll));
	if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 || len < sizeof(sll.sll_family))
		return false;
	return sll.sll_family == AF_PACKET && sll.sll_ifindex == ifindex;
}

/* What one pass over this process's packet sockets bound to ifindex found. */
struct socket_scan {
	int sockets;         /* how many (-1: /proc/self/fd cannot be read) */
	int refused;         /* how many of them refused PACKET_STATISTICS */
	uint64_t drops;      /* PACKET_STATISTICS' drops, added up (reading them resets them) */
	uint64_t rollovers;  /* PACKET_ROLLOVER_STATS' frames moved away, added up (for the sockets' life) */
};

static struct socket_scan scan_sockets(int ifindex)
{
	struct socket_scan sc = {0};
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL) {
		sc.sockets = -1;
		return sc;
	}
	const struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || fd < 0 || fd == dirfd(d) || !packet_socket_of((int)fd, ifindex))
			continue;
		sc.sockets++;
		/* the v3 layout is the larger one: the kernel fills what the socket's version has */
		struct tpacket_stats_v3 st;
		socklen_t len = sizeof(st);
		memset(&st, 0, sizeof(st));
		if (getsockopt((int)fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
			sc.drops += st.tp_drops;
		else
			sc.refused++;
		/* EINVAL on a socket without rollover: nothing moved (DPDK 22.11 joins even one queue's socket to
		 * a fanout group with rollover; alone in it, it never rolls a frame over) */
		struct tpacket_rollover_stats rs;
		len = sizeof(rs);
		memset(&rs, 0, sizeof(rs));
		if (getsockopt((int)fd, SOL_PACKET, PACKET_ROLLOVER_STATS, &rs, &len) == 0)
			sc.rollovers += rs.tp_all;
	}
	closedir(d);
	return sc;
}

int lr_kernel_sockets(int ifindex, int *unread)
{
	/* reading PACKET_STATISTICS resets it: harmless before the first trial, which resets it again */
	struct socket_scan sc = scan_sockets(ifindex);
	*unread = sc.refused;
	return sc.sockets;
}

unsigned lr_kernel_read(int ifindex, unsigned nq, uint64_t *drops, uint64_t *rollovers)
{
	struct socket_scan sc = scan_sockets(ifindex);
	*drops = sc.drops;
	*rollovers = sc.rollovers;
	if (sc.sockets < 0)
		return nq;
	/* a socket gone since start-up (or one that no longer answers) hides its drops as surely as an
	 * unreadable one */
	unsigned missing = (unsigned)sc.sockets < nq ? nq - (unsigned)sc.sockets : 0;
	return missing + (unsigned)sc.refused;
}

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int lr_kernel_socket_fds(int ifindex, int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return -1;
	int all[64], n = 0;
	const struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 64) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || fd < 0 || fd == dirfd(d) || !packet_socket_of((int)fd, ifindex))
			continue;
		all[n++] = (int)fd;
	}
	closedir(d);
	qsort(all, (size_t)n, sizeof(all[0]), by_value);
	if (n > max)
		n = max;
	memcpy(fds, all, (size_t)n * sizeof(fds[0]));
	return n;
}
