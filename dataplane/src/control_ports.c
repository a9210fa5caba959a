/* The verbs about the engine and its ports: HELLO (what the engine is and where it runs), TIME (its
 * clock), PORT (a port's addressing) and RESOLVE (a port's next hop, asked for through the worker). */
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "control_ports.h"
#include "engine.h"
#include "idle.h"
#include "trial.h"

static int ethtool(int fd, const char *name, void *cmd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* The queues RSS spreads received frames over: the highest queue of the indirection table, plus one. 0
 * when the driver has no table (veth, af_packet's view of most virtual devices). */
static unsigned rss_queues(int fd, const char *name)
{
	struct ethtool_rxfh_indir head = {.cmd = ETHTOOL_GRXFHINDIR, .size = 0};
	if (ethtool(fd, name, &head) != 0 || head.size == 0 || head.size > 65536)
		return 0;
	struct ethtool_rxfh_indir *t = calloc(1, sizeof(*t) + head.size * sizeof(t->ring_index[0]));
	if (t == NULL)
		return 0;
	t->cmd = ETHTOOL_GRXFHINDIR;
	t->size = head.size;
	unsigned top = 0;
	if (ethtool(fd, name, t) == 0)
		for (unsigned i = 0; i < t->size; i++)
			top = t->ring_index[i] + 1 > top ? t->ring_index[i] + 1 : top;
	free(t);
	return top;
}

/* The receive queues of the kernel interface behind a port, in this process's network namespace: those
 * its RSS table spreads frames over, else its channels (ethtool -l: combined and RX-only, what an af_xdp
 * socket binds), else its sysfs queues/rx-N entries (the kernel's real_num_rx_queues, which some drivers
 * size beyond their channels); 0 when it has none or none can be read. */
static unsigned kernel_rx_queues(int if_index)
{
	char name[IF_NAMESIZE], path[64 + IF_NAMESIZE];
	if (if_index <= 0 || if_indextoname((unsigned)if_index, name) == NULL)
		return 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		unsigned n = rss_queues(fd, name);
		struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
		if (n == 0 && ethtool(fd, name, &ch) == 0)
			n = ch.combined_count + ch.rx_count;
		close(fd);
		if (n > 0)
			return n;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", name);
	DIR *d = opendir(path);
	if (d == NULL)
		return 0;
	unsigned n = 0;
	const struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, "rx-", 3) == 0;
	closedir(d);
	return n;
}


int do_hello(struct args *a, struct out *o)
{
	if (check_unused(a, o, "HELLO"))
		return -1;
	/* how the workers wait (idle.h): never sleeping, or leaving a queue the kernel cannot wake them for at
	 * most rx_sleep_us in a trial */
	unsigned rt = 0;
	for (unsigned w = 0; w < lr.nworkers; w++)
		rt += atomic_load_explicit(&lr.workers[w].rt_allowed, memory_order_relaxed);
	put(o, "{\"ok\":true,\"proto\":11,\"engine\":\"%s\",\"ports\":%u,\"tsc_hz\":%llu,\"lcores\":%u,\"spin\":%s,"
	       "\"rx_sleep_us\":%u,\"realtime_workers\":%u,\"workers\":%u",
	    LR_VERSION, lr.nports, (unsigned long long)lr.tsc_hz, rte_lcore_count(), lr.spin ? "true" : "false",
	    lr.rx_sleep_us, rt, lr.nworkers);
	/* where the engine runs and keeps its frames: the runner checks them against the ports' nodes */
	const char *sep = "";
	unsigned lc;
	put(o, ",\"lcore_cpus\":[");
	RTE_LCORE_FOREACH(lc) {
		put(o, "%s%d", sep, rte_lcore_to_cpu_id((int)lc));
		sep = ",";
	}
	put(o, "],\"lcore_numa\":[");
	sep = "";
	RTE_LCORE_FOREACH(lc) {
		put(o, "%s%u", sep, rte_lcore_to_socket_id(lc));
		sep = ",";
	}
	put(o, "],\"memory_numa\":[");
	sep = "";
	for (unsigned i = 0; i < rte_socket_count(); i++) {
		int node = rte_socket_id_by_idx(i);
		struct rte_malloc_socket_stats st;
		if (node >= 0 && rte_malloc_get_socket_stats(node, &st) == 0 && st.heap_totalsz_bytes > 0) {
			put(o, "%s%d", sep, node);
			sep = ",";
		}
	}
	put(o, "]}");
	return 0;
}

/* TIME reads the clock the engine stamps frames with, now: the runner of a two-node testbed asks both
 * engines in turn and bounds their offset from the round trips (the clock is CLOCK_REALTIME-based only
 * with --clock realtime; otherwise it counts from the engine's start and says so). */
int do_time(struct args *a, struct out *o)
{
	if (check_unused(a, o, "TIME"))
		return -1;
	put(o, "{\"ok\":true,\"clock\":\"%s\",\"ns\":%llu}", lr.realtime ? "realtime" : "local",
	    (unsigned long long)lr_tsc_to_ns(rte_rdtsc()));
	return 0;
}

int do_port(struct args *a, struct out *o)
{
	int id = -1;
	if (port_arg(a, o, "id", &id, false))
		return -1;
	if (lr_trial_active())
		return fail(o, "busy", "PORT: a trial is running");
	struct lr_port *p = &lr.ports[id];
	const char *ip4 = arg(a, "ip4"), *gw4 = arg(a, "gw4"), *ip6 = arg(a, "ip6"), *gw6 = arg(a, "gw6");
	const char *peer = arg(a, "peer_mac");
	uint64_t vlan;
	if (get_u64(a, o, "vlan", 0, 4094, 0, &vlan) || check_unused(a, o, "PORT"))
		return -1;
	struct lr_port n = *p; /* validate everything before changing anything */
	n.has_ip4 = n.has_gw4 = n.has_ip6 = n.has_gw6 = n.static_peer = false;
	int len;
	if (ip4) {
		if (parse_ip(ip4, 4, n.ip4, &len) || len < 0)
			return fail(o, "bad-value", "ip4=%s: want A.B.C.D/len", ip4);
		n.has_ip4 = true;
		n.ip4_len = (unsigned)len;
	}
	if (gw4) {
		if (parse_ip(gw4, 4, n.gw4, &len) || len >= 0)
			return fail(o, "bad-value", "gw4=%s: want A.B.C.D", gw4);
		n.has_gw4 = true;
	}
	if (ip6) {
		if (parse_ip(ip6, 6, n.ip6.b, &len) || len < 0)
			return fail(o, "bad-value", "ip6=%s: want X::Y/len", ip6);
		n.has_ip6 = true;
		n.ip6_len = (unsigned)len;
	}
	if (gw6) {
		if (parse_ip(gw6, 6, n.gw6.b, &len) || len >= 0)
			return fail(o, "bad-value", "gw6=%s: want X::Y", gw6);
		n.has_gw6 = true;
	}
	if (peer) {
		if (parse_mac(peer, n.peer_mac))
			return fail(o, "bad-value", "peer_mac=%s: want aa:bb:cc:dd:ee:ff", peer);
		n.static_peer = true;
	}
	if (p->vlan_filter && vlan != p->vlan) {
		/* a VF receives only the VLANs it asked its PF for (engine.h): the test's VLAN is asked for, the
		 * old one given back */
		int rc = vlan ? rte_eth_dev_vlan_filter(p->id, (uint16_t)vlan, 1) : 0;
		if (rc != 0)
			return fail(o, "vlan-refused",
				    "vlan=%llu: port %d (%s) refused a filter for the VLAN (%s): its frames would never reach it. Leave "
				    "vlan unset and let the network tag them (an SR-IOV network's vlan: tags on the wire, untagged in the pod)",
				    (unsigned long long)vlan, id, p->driver, rte_strerror(-rc));
		if (p->vlan)
			(void)rte_eth_dev_vlan_filter(p->id, p->vlan, 0);
	}
	if (p->vlan_strip && (vlan == 0) != (p->vlan == 0)) {
		/* the strip is for a PF's port VLAN (ports.c); the test's own tag reaches the parser as sent, and
		 * the frame's bytes with it */
		int mask = rte_eth_dev_get_vlan_offload(p->id);
		int rc = mask < 0 ? mask
				  : rte_eth_dev_set_vlan_offload(p->id, vlan ? (mask & ~RTE_ETH_VLAN_STRIP_OFFLOAD)
									    : (mask | RTE_ETH_VLAN_STRIP_OFFLOAD));
		if (rc != 0)
			return fail(o, "vlan-refused", "vlan=%llu: port %d (%s) would not %s stripping VLAN tags (%s)",
				    (unsigned long long)vlan, id, p->driver, vlan ? "stop" : "resume", rte_strerror(-rc));
	}
	p->vlan = (uint16_t)vlan;
	p->has_ip4 = n.has_ip4;
	p->has_gw4 = n.has_gw4;
	p->has_ip6 = n.has_ip6;
	p->has_gw6 = n.has_gw6;
	memcpy(p->ip4, n.ip4, 4);
	memcpy(p->gw4, n.gw4, 4);
	p->ip4_len = n.ip4_len;
	p->ip6 = n.ip6;
	p->gw6 = n.gw6;
	p->ip6_len = n.ip6_len;
	p->static_peer = n.static_peer;
	memcpy(p->peer_mac, n.peer_mac, 6);
	atomic_store(&p->peer_known, n.static_peer);
	struct rte_eth_link link;
	memset(&link, 0, sizeof(link));
	rte_eth_link_get_nowait(p->id, &link);
	char m[32];
	bool ck4 = p->rx_cksum & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, cku = p->rx_cksum & RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	/* what times a received frame: the kernel's receive time (every queue's ring mapped), or the poll */
	bool kernel_times = p->nq > 0, kernel_wakes = p->nq > 0;
	for (unsigned q = 0; q < p->nq; q++) {
		kernel_times &= p->q[q].kring.map != NULL;
		kernel_wakes &= p->q[q].kring.fd >= 0;
	}
	put(o,
	    "{\"ok\":true,\"id\":%d,\"mac\":\"%s\",\"driver\":\"%s\",\"device\":\"%s\",\"numa\":%d,\"rx_queues\":%u,"
	    "\"tx_queues\":%u,\"link_up\":%s,\"speed_mbps\":%u,\"max_frame\":%u,\"rx_checksums\":\"%s%s%s\","
	    "\"kernel_rx_queues\":%u,\"kernel_first_rx_queue\":%u,\"rx_timestamps\":\"%s\",\"rx_wake\":\"%s\","
	    "\"promiscuous\":%s,\"rx_misses_counted\":%s,\"rx_ring\":%u,\"vlan_filter\":%s}",
	    id, mac_str(p->mac, m), p->driver, p->device, p->numa, p->rx_queues, p->tx_queues, link.link_status ? "true" : "false",
	    link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0u : link.link_speed, p->max_frame, ck4 ? "ipv4" : "", ck4 && cku ? "," : "",
	    cku ? "udp" : "", kernel_rx_queues(p->if_index), p->kernel_first_rx_queue, kernel_times ? "kernel" : "poll",
	    lr.spin ? "spin" : kernel_wakes ? "kernel" : "poll", p->promiscuous ? "true" : "false",
	    p->rx_misses_counted ? "true" : "false", p->rx_ring, p->vlan_filter ? "true" : "false");
	return 0;
}

static void queue_control_frame(struct lr_port *p, const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(lr.pool);
	if (m == NULL)
		return;
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame, len);
	m->data_len = m->pkt_len = (uint32_t)len;
	if (rte_ring_sp_enqueue(p->ctl_tx, m) != 0)
		rte_pktmbuf_free(m);
	else
		lr_wake(&lr.workers[p->q[0].owner]); /* it sends them (ctl_tx) */
}

int do_resolve(struct args *a, struct out *o)
{
	int id = -1;
	uint64_t timeout;
	if (port_arg(a, o, "id", &id, false) || get_u64(a, o, "timeout_ms", 1, 600000, 3000, &timeout) ||
	    check_unused(a, o, "RESOLVE"))
		return -1;
	struct lr_port *p = &lr.ports[id];
	char m[32];
	if (!p->static_peer) {
		if (!p->has_gw4 && !p->has_gw6)
			return fail(o, "bad-request", "RESOLVE: port %d has neither gw4 nor gw6 nor peer_mac", id);
		atomic_store(&p->peer_known, false);
		uint64_t end = rte_rdtsc() + timeout * lr.tsc_hz / 1000, next = 0;
		while (!atomic_load_explicit(&p->peer_known, memory_order_acquire)) {
			uint64_t now = rte_rdtsc();
			if (now > end) {
				char gw[64];
				if (p->has_gw4)
					inet_ntop(AF_INET, p->gw4, gw, sizeof(gw));
				else
					inet_ntop(AF_INET6, p->gw6.b, gw, sizeof(gw));
				return fail(o, "unresolved", "port %d: gateway %s did not answer %s within %llu ms", id,
					    gw, p->has_gw4 ? "ARP" : "neighbour solicitation",
					    (unsigned long long)timeout);
			}
			if (now >= next) {
				uint8_t buf[128];
				size_t n;
				if (p->has_gw4)
					n = lr_build_arp(buf, p->vlan, 1, p->mac, p->ip4, NULL, p->gw4, NULL);
				else
					n = lr_build_ns(buf, p->vlan, p->mac, &p->ip6, &p->gw6);
				queue_control_frame(p, buf, n);
				next = now + lr.tsc_hz / 4;
			}
			usleep(1000);
		}
	}
	put(o, "{\"ok\":true,\"id\":%d,\"peer_mac\":\"%s\"}", id, mac_str(p->peer_mac, m));
	return 0;
}
