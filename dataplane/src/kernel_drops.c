/* Frames the kernel dropped before an af_packet port saw them.
 *
 * The af_packet PMD of DPDK 22.11 reports no imissed: when its receive ring is full (the worker was
 * preempted, or is slower than the traffic), the kernel drops the frame and counts it on the socket
 * (PACKET_STATISTICS), where nobody reads it. Those frames would count as frames the DUT lost. The sockets
 * are this process's own: each is found by the interface it is bound to, and read here. Reading the
 * statistics resets them, so each call returns the drops since the previous one. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/if_packet.h>

#include "engine.h"

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

uint64_t lr_kernel_rx_drops(int ifindex)
{
	if (ifindex <= 0)
		return 0;
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return 0;
	uint64_t drops = 0;
	const struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || fd < 0 || fd == dirfd(d) || !packet_socket_of((int)fd, ifindex))
			continue;
		/* the v3 layout is the larger one: the kernel fills what the socket's version has */
		struct tpacket_stats_v3 st;
		socklen_t len = sizeof(st);
		memset(&st, 0, sizeof(st));
		if (getsockopt((int)fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
			drops += st.tp_drops;
	}
	closedir(d);
	return drops;
}
