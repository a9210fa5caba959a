/* What the kernel did to an af_packet port's frames before the port saw them (kernel_drops.c): dropped
 * them, or rolled them over to another of its queues; read from the port's own sockets. */
#ifndef LR_KERNEL_DROPS_H
#define LR_KERNEL_DROPS_H

#include <stdint.h>

/* Reads an af_packet port's nq sockets on interface ifindex: into *drops the frames the kernel dropped
 * since the last read (reading resets them), into *rollovers those it has moved from one of the sockets to
 * another (fanout rollover) since they opened. Returns how many of the nq sockets it could not read
 * (missing, refusing PACKET_STATISTICS, or all nq when /proc/self/fd cannot be read): their drops are
 * not in *drops. */
unsigned lr_kernel_read(int ifindex, unsigned nq, uint64_t *drops, uint64_t *rollovers);
/* how many packet sockets of this process are bound to interface ifindex (-1: /proc/self/fd unreadable),
 * which lr_kernel_read finds and adds up, and into *unread how many of them refuse PACKET_STATISTICS */
int lr_kernel_sockets(int ifindex, int *unread);
/* this process's packet sockets bound to interface ifindex, in ascending order of their descriptors (the
 * order a PMD that opens one per queue opened them), at most max of them: how many (-1: /proc/self/fd
 * unreadable) */
int lr_kernel_socket_fds(int ifindex, int *fds, int max);

#endif
