/* The ports: each DPDK device configured and started with its queue pairs (and its MTU, RSS, checksum and
 * VLAN offloads where the driver has them), what it can and cannot see recorded (engine.h), and the queue
 * pairs shared out over the worker lcores. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>

#include "engine.h"
#include "kernel_drops.h"
#include "ports.h"

/* The MTU a PCI port is asked for, 0 to leave it at its PMD's default (1500, 1518 B frames): a test of
 * larger frames (IPsec overhead, jumbo) needs more, which DPDK sets when the port is configured, as testpmd's
 * --max-pkt-len does. A received frame must fit one mbuf of max_frame bytes with room for two VLAN tags
 * (ixgbevf, i40e and iavf refuse an MTU whose frame does not), and the PMD's own maximum. A virtual port's
 * MTU is its kernel interface's, which the engine does not own and leaves as it is. */
static uint16_t wanted_mtu(const struct rte_eth_dev_info *info, unsigned max_frame)
{
	const struct rte_bus *bus = info->device ? rte_dev_bus(info->device) : NULL;
	if (bus == NULL || strcmp(rte_bus_name(bus), "pci") != 0)
		return 0;
	unsigned want = max_frame - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN - 2 * RTE_VLAN_HLEN;
	if (info->max_mtu && want > info->max_mtu)
		want = info->max_mtu;
	return want > RTE_ETHER_MTU ? (uint16_t)want : 0;
}

/* What a port is started with: its MTU (0: the PMD's default), the hash functions RSS spreads received
 * flows by (0: none) and its receive offloads. */
struct port_conf {
	uint16_t mtu;
	uint64_t rss_hf, rx_offloads;
};

/* Configures and starts a port with its queue pairs. With several, RSS spreads received flows over them by
 * the PMD's default key: no key of ours, because a VF cannot set one (an 82599 VF's key and redirection
 * table are its PF's), so flows must spread under the hash the port already has; IP and UDP fields, what
 * the PMD offers of them. */
static int start_port(uint16_t pid, const struct lr_port *p, const struct port_conf *c)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.offloads = c->rx_offloads;
	conf.rxmode.mtu = c->mtu;
	if (c->rss_hf) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = NULL;
		conf.rx_adv_conf.rss_conf.rss_hf = c->rss_hf;
	}
	int rc = rte_eth_dev_configure(pid, p->rx_queues, p->tx_queues, &conf);
	for (uint16_t q = 0; rc == 0 && q < p->nq; q++) {
		rc = rte_eth_rx_queue_setup(pid, q, RX_DESC, rte_eth_dev_socket_id(pid), NULL, lr.pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(pid, q, TX_DESC, rte_eth_dev_socket_id(pid), NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(pid);
	return rc;
}

static void say_rss_refused(uint16_t pid, const struct lr_port *p, int rc, uint16_t mtu)
{
	/* a PMD that refuses RSS (or these hash fields) still has the queue pairs: every frame then arrives on
	 * queue 0, its worker analyses it all, and the other workers send on their TX queues */
	fprintf(stderr, "linerate-engine: port %u (%s): RSS over %u queues refused (%s); received on queue 0 only, at MTU %u\n",
		pid, p->driver, p->nq, rte_strerror(-rc), mtu ? mtu : RTE_ETHER_MTU);
}

static void say_mtu_refused(uint16_t pid, const struct lr_port *p, int rc, uint16_t mtu)
{
	/* a VF cannot go above its PF's MTU (raise it with the SR-IOV policy's mtu:): it carries what it
	 * carries, and preflight says so */
	fprintf(stderr, "linerate-engine: port %u (%s): MTU %u refused (%s): frames above %u B cannot be received (an SR-IOV "
			"VF's PF must have the MTU first: the policy's mtu:); at the default MTU\n",
		pid, p->driver, mtu, rte_strerror(-rc), RTE_ETHER_MTU + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN);
}

/* Starts a port as *want asks, or with as little of it left out as its PMD takes, and says on stderr what
 * was refused; *want becomes what it started with. A refusal does not say what it refused (ixgbevf answers
 * EINVAL alike to an MTU above its PF's and to RSS it cannot do), so the losses are tried one at a time,
 * the cheaper first: RSS alone (every frame on queue 0 costs cores, not frames), then the MTU alone (frames
 * above 1518 B are lost, and preflight refuses a plan that has them), then both. Dropping the MTU with RSS
 * would leave a port that refused only RSS without its jumbo frames, and preflight blaming the MTU. */
static int start_port_or_less(uint16_t pid, const struct lr_port *p, struct port_conf *want)
{
	int refused = start_port(pid, p, want);
	if (refused == 0)
		return 0;
	/* RSS is refused as a configuration is, never as a device that failed */
	bool rss_may_be_refused = want->rss_hf && (refused == -EINVAL || refused == -ENOTSUP);
	struct port_conf no_rss = *want, no_mtu = *want, neither = *want;
	no_rss.rss_hf = neither.rss_hf = 0;
	no_mtu.mtu = neither.mtu = 0;
	const struct port_conf *tries[3];
	size_t n = 0;
	if (rss_may_be_refused)
		tries[n++] = &no_rss;
	if (want->mtu)
		tries[n++] = &no_mtu;
	if (rss_may_be_refused && want->mtu)
		tries[n++] = &neither;
	int rc = refused;
	for (size_t i = 0; i < n; i++) {
		rc = start_port(pid, p, tries[i]);
		if (rc != 0)
			continue;
		if (tries[i]->mtu != want->mtu)
			say_mtu_refused(pid, p, refused, want->mtu);
		if (tries[i]->rss_hf != want->rss_hf)
			say_rss_refused(pid, p, refused, tries[i]->mtu);
		*want = *tries[i];
		return 0;
	}
	return rc;
}

/* The first of its kernel interface's receive queues a port binds: an af_xdp port's start_queue= (its
 * sockets take that queue and the ones after it; the queues before it go to the kernel), 0 for the others
 * (af_packet reads the interface whole). */
static int start_queue_arg(const char *key, const char *value, void *opaque)
{
	(void)key;
	/* as the af_xdp PMD reads it (base 10, the last one given wins); it refused the port otherwise */
	*(unsigned *)opaque = (unsigned)strtol(value ? value : "0", NULL, 10);
	return 0;
}

static unsigned kernel_first_rx_queue(const struct lr_port *p, const struct rte_device *dev)
{
	const struct rte_devargs *da = dev ? rte_dev_devargs(dev) : NULL;
	if (strcmp(p->driver, "net_af_xdp") != 0 || da == NULL || da->args == NULL)
		return 0;
	unsigned first = 0;
	struct rte_kvargs *kv = rte_kvargs_parse(da->args, NULL);
	if (kv != NULL)
		(void)rte_kvargs_process(kv, "start_queue", start_queue_arg, &first);
	rte_kvargs_free(kv);
	return first;
}

/* Whether a port's drops on receipt (its RX ring full) are counted: by the PMD's imissed, by the engine
 * (af_packet: the kernel's drops on its sockets), or cannot happen unseen (net_ring, memif, net_null: a full
 * ring refuses the sender, who counts it). DPDK gives no flag for it, so drivers are named: an 82599 VF
 * (net_ixgbe_vf) counts none, and a driver not named here is taken not to (the runner then judges the
 * trial by how long the receiver could have left the ring, PROTOCOL.md). */
static bool rx_misses_counted(const char *driver)
{
	static const char *const counted[] = {"net_af_packet", "net_af_xdp", "net_memif", "net_ring", "net_null",
					      "net_ixgbe",     "net_i40e",   "net_ice",   "net_iavf", "mlx5_pci",
					      "net_e1000_igb", "net_e1000_em"};
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		if (!strcmp(driver, counted[i]))
			return true;
	return false;
}

/* Whether a driver's "yes" to promiscuous mode may stand for less. An SR-IOV VF asks its PF, and Linux's
 * PF drivers answer yes to an untrusted VF without granting it: ixgbe grants it multicast instead and says
 * so in a field DPDK's ixgbevf never reads (ixgbe_update_vf_xcast_mode), i40e and ice "lie to the VF on
 * purpose" (their virtchnl promiscuous handlers; DPDK's iavf). A trusted VF's yes is as unreadable. */
static bool promiscuous_unconfirmed(const char *driver)
{
	return !strcmp(driver, "net_ixgbe_vf") || !strcmp(driver, "net_iavf");
}

int lr_setup_port(uint16_t pid, uint16_t idx, unsigned max_frame)
{
	struct lr_port *p = &lr.ports[idx];
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(pid, &info) != 0)
		return -1;
	p->id = pid;
	snprintf(p->driver, sizeof(p->driver), "%s", info.driver_name);
	snprintf(p->device, sizeof(p->device), "%s", info.device ? rte_dev_name(info.device) : "");
	p->numa = rte_eth_dev_socket_id(pid); /* SOCKET_ID_ANY (-1) when the device has no node */
	p->rx_queues = p->tx_queues = (uint16_t)p->nq;
	struct port_conf want = {.mtu = wanted_mtu(&info, max_frame)};
	if (p->nq > 1)
		want.rss_hf = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	/* Checksums a NIC verifies on receipt cost the receiver nothing per frame (a flag in the mbuf it reads
	 * anyway): a frame the DUT corrupted is then counted as corrupted, not as received. What the driver
	 * offers is taken; a driver that never flags a frame BAD (some virtual ones) tells nothing apart. */
	p->rx_cksum = info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	/* a PCI port that filters VLANs (an SR-IOV VF: its PF passes it only the VLANs it asked for, ixgbe) is
	 * configured to filter, so that PORT vlan= can ask for the test's VLAN (control_ports.c) */
	const struct rte_bus *bus = info.device ? rte_dev_bus(info.device) : NULL;
	bool pci = bus != NULL && !strcmp(rte_bus_name(bus), "pci");
	p->vlan_filter = pci && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_FILTER);
	want.rx_offloads = p->rx_cksum | (p->vlan_filter ? RTE_ETH_RX_OFFLOAD_VLAN_FILTER : 0);
	/* A VF under a port VLAN (ip link set <PF> vf N vlan V) gets its frames tagged V unless it strips the
	 * tag itself: an 82599 PF does not hide it (ixgbe hides it from X550 on), so without the strip the
	 * test's frames would arrive tagged and 4 B longer than sent, not untagged as docs/testbed.md promises.
	 * PORT vlan= turns it off while the test has a VLAN of its own (control_ports.c), whose tag must reach
	 * the parser as sent. Not af_packet's: it offers the strip too, and its frames arrive as the kernel's
	 * interface has them. */
	if (pci && p->vlan == 0 && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP))
		want.rx_offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
	int rc = start_port_or_less(pid, p, &want);
	if (rc != 0) {
		fprintf(stderr, "linerate-engine: port %u (%s): set-up failed: %s\n", pid, p->driver, rte_strerror(-rc));
		return -1;
	}
	p->rss_hf = want.rss_hf;
	p->vlan_strip = (want.rx_offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP) != 0;
	p->max_frame = max_frame;
	uint16_t mtu;
	if (info.max_rx_pktlen && (uint64_t)info.max_rx_pktlen + LR_FCS_LEN < p->max_frame)
		p->max_frame = info.max_rx_pktlen + LR_FCS_LEN;
	if (rte_eth_dev_get_mtu(pid, &mtu) == 0 && (unsigned)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN < p->max_frame)
		p->max_frame = (unsigned)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN; /* Ethernet header + FCS around the MTU */
	/* foreign frames are counted, so the port must see them; a port that refuses (an 82599 VF with trust
	 * on: its PF refuses promiscuous VFs) sees only its own MAC, broadcast and multicast, and PORT says so.
	 * PORT says so too of a VF that cannot know what its PF granted: "promiscuous" there would be a claim
	 * nobody checked, and the frames for other MACs it never receives would go uncounted under it. */
	p->promiscuous = rte_eth_promiscuous_enable(pid) == 0 && rte_eth_promiscuous_get(pid) == 1;
	if (p->promiscuous && promiscuous_unconfirmed(p->driver)) {
		p->promiscuous = false;
		fprintf(stderr, "linerate-engine: port %u (%s): promiscuous mode asked and answered yes, but a VF cannot tell "
				"what its PF granted (Linux's PF drivers say yes to an untrusted VF and grant it less): reported not promiscuous\n",
			pid, p->driver);
	}
	p->rx_ring = RX_DESC;
	p->rx_misses_counted = rx_misses_counted(p->driver);
	struct rte_ether_addr mac;
	rte_eth_macaddr_get(pid, &mac);
	memcpy(p->mac, mac.addr_bytes, 6);
	p->if_index = (int)info.if_index;
	p->kernel_first_rx_queue = kernel_first_rx_queue(p, info.device);
	p->af_packet = !strcmp(p->driver, "net_af_packet");
	for (unsigned q = 0; q < LR_MAX_QUEUES; q++)
		p->q[q].kring.fd = -1;
	if (p->af_packet) {
		/* its drops and rollovers are read from its sockets (kernel_drops.c), found by their interface:
		 * one missing, or one that cannot be read, would read as nothing dropped, and the frames the kernel
		 * dropped as lost by the DUT */
		int unread, n = lr_kernel_sockets(p->if_index, &unread);
		char ifname[IF_NAMESIZE] = "?";
		if (p->if_index > 0)
			(void)if_indextoname((unsigned)p->if_index, ifname);
		const char *why = NULL;
		char what[160];
		if (n < 0)
			why = "/proc/self/fd, through which the engine finds its sockets, cannot be read";
		else if (n < (int)p->nq || unread > 0) {
			if (n < (int)p->nq)
				snprintf(what, sizeof(what), "%d of its %u packet sockets were found on interface %s", n, p->nq, ifname);
			else
				snprintf(what, sizeof(what), "%d of its packet sockets refuse PACKET_STATISTICS", unread);
			why = what;
		}
		if (why != NULL) {
			fprintf(stderr, "linerate-engine: port %u (%s): %s: the frames the kernel drops before the port sees "
					"them could not be counted\n", pid, p->driver, why);
			return -1;
		}
		if (n > (int)p->nq) {
			/* sockets this port does not poll take their share of the interface's frames (one fanout group) */
			fprintf(stderr, "linerate-engine: port %u (%s): %d packet sockets on interface %s, %u of them polled: "
					"another af_packet port on the same interface, or qpairs above the engine's %d queue pairs\n",
				pid, p->driver, n, ifname, p->nq, LR_MAX_QUEUES);
			return -1;
		}
		/* the kernel's receive time of every frame, and a socket to sleep on per queue */
		struct lr_kring rings[LR_MAX_QUEUES];
		const struct rte_devargs *da = info.device ? rte_dev_devargs(info.device) : NULL;
		lr_kring_open(p->if_index, da ? da->args : NULL, p->nq, rings);
		for (unsigned q = 0; q < p->nq; q++)
			p->q[q].kring = rings[q];
		p->rx_ring = lr_kring_frames(da ? da->args : NULL);
		if (lr.mask_rx_misses)
			p->rx_misses_counted = false; /* tests: a port that cannot count its own drops (kernel_drops.c) */
	}
	char name[32];
	snprintf(name, sizeof(name), "lr_ctl_tx_%u", idx);
	p->ctl_tx = rte_ring_create(name, 64, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	return p->ctl_tx ? 0 : -1;
}

/* Drivers whose queue pairs are made by their vdev arguments and all carry frames, configured or not:
 * af_packet's qpairs sockets join one fanout group (the kernel hashes flows over them), af_xdp's sockets
 * bind queue_count queues of the NIC and its RSS fills them. Every one must be polled, so the engine takes
 * them all, however many workers there are. (net_ring's rings carry what their sender puts on them, and
 * memif's queues what the peer sends on them: configured as any other.) */
static bool queues_fixed(const char *driver)
{
	return !strcmp(driver, "net_af_packet") || !strcmp(driver, "net_af_xdp");
}

/* All ports' queue pairs. */
unsigned lr_total_queues(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < lr.nports; i++)
		n += lr.ports[i].nq;
	return n;
}

/* The queue pairs of port pid for W worker lcores over P ports: the vdev's own where it fixes them, else
 * `forced` (--queues, 0: none) or enough for every worker to have one (ceil(W / P), rounded down to a
 * power of two), within what the PMD has of both RX and TX queues. */
static unsigned port_queues(uint16_t pid, unsigned W, unsigned P, unsigned forced)
{
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(pid, &info) != 0)
		return 1;
	unsigned max = info.max_rx_queues < info.max_tx_queues ? info.max_rx_queues : info.max_tx_queues;
	if (max > LR_MAX_QUEUES)
		max = LR_MAX_QUEUES;
	unsigned want = queues_fixed(info.driver_name) ? max : forced ? forced : (W + P - 1) / (P ? P : 1);
	if (want > max)
		want = max;
	/* unless told: a power of two (an 82599 VF takes 1, 2 or 4 RSS queues and refuses others) */
	while (!forced && !queues_fixed(info.driver_name) && (want & (want - 1)) != 0)
		want &= want - 1;
	return want ? want : 1;
}

/* The worker lcores (every lcore but the main one, which serves control) and the queue pairs each owns.
 * Ports get queue pairs (port_queues); the k-th pair over all ports (port by port, queue by queue) goes to
 * worker k mod W, W = min(worker lcores, pairs). With no more workers than ports, each port has one pair
 * and port i goes to worker i mod W: the two directions of a bidirectional test run on two cores with
 * nothing shared between them. With more, a port's queues are shared out, so one port (a 100 GbE one)
 * is not held to one core. Queue 0's worker is the port's owner (control frames). */
int lr_assign_workers(unsigned forced)
{
	unsigned lcore, n = 0;
	unsigned lcores[LR_MAX_WORKERS];
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (n < LR_MAX_WORKERS)
			lcores[n] = lcore;
		n++;
	}
	if (n == 0) {
		fprintf(stderr, "linerate-engine: need a worker lcore besides the main one (e.g. -l 0,1)\n");
		return -1;
	}
	unsigned W = n < LR_MAX_WORKERS ? n : LR_MAX_WORKERS, pairs = 0, P = 0;
	uint16_t pid;
	RTE_ETH_FOREACH_DEV(pid)
	{
		lr.ports[P].nq = port_queues(pid, W, lr.nports, forced);
		pairs += lr.ports[P++].nq;
	}
	if (pairs == 0)
		return -1;
	unsigned used = W < pairs ? W : pairs;
	lr.nworkers = used;
	if (n > lr.nworkers)
		printf("linerate-engine: %u worker lcores for %u queue pairs of %u ports: %u stay idle\n", n, pairs,
		       lr.nports, n - lr.nworkers);
	for (unsigned w = 0; w < lr.nworkers; w++)
		lr.workers[w].lcore = lcores[w];
	unsigned k = 0;
	for (unsigned i = 0; i < lr.nports; i++)
		for (unsigned q = 0; q < lr.ports[i].nq; q++, k++) {
			unsigned o = k % used; /* NOLINT(clang-analyzer-core.DivideZero): W and pairs are above 0 (returned above) */
			struct lr_worker *w = &lr.workers[o];
			lr.ports[i].q[q].owner = o;
			w->queues[w->nqueues].port = (uint16_t)i;
			w->queues[w->nqueues++].queue = (uint16_t)q;
			if (w->nports == 0 || w->ports[w->nports - 1] != i)
				w->ports[w->nports++] = (uint16_t)i;
		}
	return 0;
}

