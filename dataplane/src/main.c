/* linerate-engine: EAL and port set-up, then the worker on one lcore and the control socket on the main
 * lcore. Everything (mempool, queues, per-stream memory) is allocated once, so thousands of trials
 * do not grow the process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>

#include "engine.h"

#define RX_DESC 1024
#define TX_DESC 1024
/* the pools are sized from RX_DESC for both directions' rings (main), with room for this many more */
_Static_assert(RX_DESC >= TX_DESC, "size the TX pool from TX_DESC");
#define MBUFS_IN_FLIGHT 4096

static void usage(void)
{
	fprintf(stderr,
		"usage: linerate-engine <EAL args> -- --control PATH|tcp:HOST:PORT [--window-bits N]\n"
		"       [--clock local|realtime] [--mbufs N] [--max-frame N] [--idle-sleep-us N] [--queues N]\n"
		"  --window-bits N  sequence window of 2^N frames per received stream, 10..40 (default 34)\n"
		"  --queues N       queue pairs per port (default: enough for every worker lcore; a vdev whose\n"
		"                   queues are set by its own arguments keeps them)\n"
		"  --mbufs N        mbufs in each of the RX and TX pools (default: 16383, or twice what the\n"
		"                   queues' rings hold when that is more)\n");
}

/* The first line of a small kernel file, "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = 0;
	fclose(f);
}

/* A number at the start of s, or -1 when there is none (or it is negative). */
static double leading_number(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	return end == s || v < 0 ? -1 : v;
}

/* This process's cgroup directory under the controller's mount, from /proc/self/cgroup: "0::/path" on
 * cgroup v2, "N:cpu,cpuacct:/path" on v1. A container with its own cgroup namespace sees "/" there; a
 * process on a host (or in a test's cgroup) sees its real path, and its quota is in that directory. */
static bool own_cgroup(bool v2, char *dir, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (f == NULL)
		return false;
	char line[512];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *ctrl = strchr(line, ':');
		char *path = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (path == NULL)
			continue;
		*path++ = 0;
		ctrl++;
		if (v2 && !strcmp(line, "0") && !ctrl[0])
			found = snprintf(dir, len, "/sys/fs/cgroup%s", path) < (int)len;
		/* the v1 cpu controller, alone or joined with cpuacct: the list holds "cpu" as a whole word */
		for (char *w = ctrl; !v2 && !found && w && *w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL)
			if (!strncmp(w, "cpu", 3) && (w[3] == ',' || w[3] == 0))
				found = snprintf(dir, len, "/sys/fs/cgroup/cpu%s", path) < (int)len;
	}
	fclose(f);
	return found;
}

/* CPUs the cgroup directory dir allows (quota / period), 0 when unlimited or unreadable. */
static double quota_at(bool v2, const char *dir)
{
	char file[448], line[64] = "";
	if (v2) {
		snprintf(file, sizeof(file), "%s/cpu.max", dir); /* "QUOTA PERIOD" or "max PERIOD" */
		read_line(file, line, sizeof(line));
		char *gap = strchr(line, ' ');
		double quota = leading_number(line), period = gap ? leading_number(gap + 1) : -1;
		return quota > 0 && period > 0 ? quota / period : 0;
	}
	snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir); /* -1 = unlimited */
	read_line(file, line, sizeof(line));
	double q = leading_number(line);
	snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
	read_line(file, line, sizeof(line));
	double p = leading_number(line);
	return q > 0 && p > 0 ? q / p : 0;
}

/* CPUs the cgroups let this process use, 0 when unlimited or unknown: the smallest quota from its own
 * cgroup up to the controller's mount (a pod's quota may sit on the pod's cgroup, above the container's).
 * A container on cgroup v1 sees its host path in /proc/self/cgroup but has its own cgroup mounted at the
 * root: a path that does not exist under the mount means the mount root is ours. */
static double cgroup_cpus(void)
{
	char dir[400];
	bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
	const char *root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu";
	if (!own_cgroup(v2, dir, sizeof(dir)) || access(dir, F_OK) != 0)
		snprintf(dir, sizeof(dir), "%s", root);
	double cpus = 0;
	for (;;) {
		double q = quota_at(v2, dir);
		if (q > 0 && (cpus == 0 || q < cpus))
			cpus = q;
		char *slash = strrchr(dir, '/');
		if (strlen(dir) <= strlen(root) || slash == NULL)
			break;
		*slash = 0;
	}
	return cpus;
}

/* An option's unsigned value, refused (with the option named) unless it is a whole number in [min, max]. */
static int parse_uint(const char *opt, const char *arg, unsigned long min, unsigned long max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "linerate-engine: --%s %s: want a whole number from %lu to %lu\n", opt, arg, min, max);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

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

/* Configures and starts a port with its queue pairs at an MTU (0: the PMD's default). With several, RSS
 * spreads received flows over them by the PMD's default key: no key of ours, because a VF cannot set one
 * (an 82599 VF's key and redirection table are its PF's), so flows must spread under the hash the port
 * already has; IP and UDP fields, what the PMD offers of them. */
static int start_port(uint16_t pid, struct lr_port *p, uint16_t mtu)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.offloads = p->rx_cksum;
	conf.rxmode.mtu = mtu;
	if (p->rss_hf) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = NULL;
		conf.rx_adv_conf.rss_conf.rss_hf = p->rss_hf;
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

static int setup_port(uint16_t pid, uint16_t idx, unsigned max_frame)
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
	p->rss_hf = 0;
	if (p->nq > 1)
		p->rss_hf = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	/* Checksums a NIC verifies on receipt cost the receiver nothing per frame (a flag in the mbuf it reads
	 * anyway): a frame the DUT corrupted is then counted as corrupted, not as received. What the driver
	 * offers is taken; a driver that never flags a frame BAD (some virtual ones) tells nothing apart. */
	p->rx_cksum = info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	uint16_t mtu = wanted_mtu(&info, max_frame);
	int rc = start_port(pid, p, mtu);
	if ((rc == -EINVAL || rc == -ENOTSUP) && p->rss_hf) {
		/* a PMD that refuses RSS (or these hash fields) still has the queue pairs: every frame then arrives
		 * on queue 0, its worker analyses it all, and the other workers send on their TX queues */
		fprintf(stderr, "linerate-engine: port %u (%s): RSS over %u queues refused (%s); received on queue 0 only\n",
			pid, p->driver, p->nq, rte_strerror(-rc));
		p->rss_hf = 0;
		rc = start_port(pid, p, mtu);
	}
	if (rc != 0 && mtu) {
		/* a VF cannot go above its PF's MTU: it carries what it carries, and preflight says so */
		fprintf(stderr, "linerate-engine: port %u (%s): MTU %u refused (%s); at the default MTU\n", pid, p->driver, mtu,
			rte_strerror(-rc));
		rc = start_port(pid, p, 0);
	}
	if (rc != 0) {
		fprintf(stderr, "linerate-engine: port %u (%s): set-up failed: %s\n", pid, p->driver, rte_strerror(-rc));
		return -1;
	}
	p->max_frame = max_frame;
	if (info.max_rx_pktlen && (uint64_t)info.max_rx_pktlen + LR_FCS_LEN < p->max_frame)
		p->max_frame = info.max_rx_pktlen + LR_FCS_LEN;
	if (rte_eth_dev_get_mtu(pid, &mtu) == 0 && (unsigned)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN < p->max_frame)
		p->max_frame = (unsigned)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN; /* Ethernet header + FCS around the MTU */
	/* foreign frames are counted, so the port must see them */
	rte_eth_promiscuous_enable(pid);
	struct rte_ether_addr mac;
	rte_eth_macaddr_get(pid, &mac);
	memcpy(p->mac, mac.addr_bytes, 6);
	p->if_index = (int)info.if_index;
	p->kernel_first_rx_queue = kernel_first_rx_queue(p, info.device);
	p->af_packet = !strcmp(p->driver, "net_af_packet");
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
static unsigned lr_total_queues(void)
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
	unsigned want = queues_fixed(info.driver_name) ? max : forced ? forced : (W + P - 1) / P;
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
static int assign_workers(unsigned forced)
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
	lr.nworkers = W < pairs ? W : pairs;
	if (n > lr.nworkers)
		printf("linerate-engine: %u worker lcores for %u queue pairs of %u ports: %u stay idle\n", n, pairs,
		       lr.nports, n - lr.nworkers);
	for (unsigned w = 0; w < lr.nworkers; w++)
		lr.workers[w].lcore = lcores[w];
	unsigned k = 0;
	for (unsigned i = 0; i < lr.nports; i++)
		for (unsigned q = 0; q < lr.ports[i].nq; q++, k++) {
			unsigned o = k % lr.nworkers;
			struct lr_worker *w = &lr.workers[o];
			lr.ports[i].q[q].owner = o;
			w->queues[w->nqueues].port = (uint16_t)i;
			w->queues[w->nqueues++].queue = (uint16_t)q;
			if (w->nports == 0 || w->ports[w->nports - 1] != i)
				w->ports[w->nports++] = (uint16_t)i;
		}
	return 0;
}

int main(int argc, char **argv)
{
	/* a line at a time, as stderr: the runner reads the engine's output through a pipe, and a refusal
	 * written to stderr must come after the lines written before it, not before them at exit */
	setvbuf(stdout, NULL, _IOLBF, 0);
	int ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "linerate-engine: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	const char *control = NULL, *clock = "local";
	unsigned mbufs = 16383, max_frame = 2048;
	bool mbufs_set = false;
	/* 2^34 sequence numbers: 600 s at 10 GbE line rate (14.88 Mpps at 64 B) in a 2 GiB mapping per
	 * stream, of which only the pages of frames that arrive become resident (seqwin.h) */
	lr.window_bits = 34;
	static const struct option opts[] = {
		{"control", required_argument, NULL, 'c'}, {"window-bits", required_argument, NULL, 'w'},
		{"clock", required_argument, NULL, 'k'},   {"mbufs", required_argument, NULL, 'm'},
		{"max-frame", required_argument, NULL, 'f'}, {"idle-sleep-us", required_argument, NULL, 'i'},
		{"queues", required_argument, NULL, 'q'},    {NULL, 0, NULL, 0}};
	unsigned queues = 0;
	unsigned idle_sleep = 0;
	bool idle_sleep_set = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			control = optarg;
			break;
		case 'w':
			if (parse_uint("window-bits", optarg, 10, 40, &lr.window_bits))
				return 2;
			break;
		case 'k':
			clock = optarg;
			break;
		case 'm':
			if (parse_uint("mbufs", optarg, 512, UINT32_MAX, &mbufs))
				return 2;
			mbufs_set = true;
			break;
		case 'f':
			if (parse_uint("max-frame", optarg, 64, LR_MAX_FRAME, &max_frame))
				return 2;
			break;
		case 'i':
			if (parse_uint("idle-sleep-us", optarg, 0, 1000000, &idle_sleep))
				return 2;
			idle_sleep_set = true;
			break;
		case 'q':
			if (parse_uint("queues", optarg, 1, LR_MAX_QUEUES, &queues))
				return 2;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (control == NULL || (strcmp(clock, "local") != 0 && strcmp(clock, "realtime") != 0)) {
		usage();
		return 2;
	}
	lr.nports = rte_eth_dev_count_avail();
	if (lr.nports == 0 || lr.nports > LR_MAX_PORTS) {
		fprintf(stderr, "linerate-engine: DPDK opened %u ports: give 1 to %d devices (--vdev or PCI devices; DPDK's lines above say why it refused any)\n",
			lr.nports, LR_MAX_PORTS);
		return 1;
	}
	if (assign_workers(queues) != 0)
		return 1;
	/* a CPU quota below one CPU per spinning lcore (the workers, and control now and then) */
	double cpus = cgroup_cpus();
	lr.idle_sleep_us = idle_sleep_set ? idle_sleep : (cpus > 0 && cpus < lr.nworkers + 1 ? 20 : 0);
	if (lr.idle_sleep_us)
		printf("linerate-engine: the workers sleep %u us when idle (cgroup CPU quota %.2f, %u workers)\n",
		       lr.idle_sleep_us, cpus, lr.nworkers);
	/* a NIC's RX queue holds RX_DESC of the RX pool's mbufs while it waits, and a TX queue TX_DESC of the
	 * TX pool's until the NIC has sent them (both pools have `mbufs`): more queues need larger pools, or
	 * the rings would leave too few for the frames in flight (the workers' bursts) and the lcores' caches.
	 * Unless told, each pool holds what its rings and caches can and MBUFS_IN_FLIGHT more (a power of two
	 * less one, as the mempool wants). */
	unsigned need = MBUFS_IN_FLIGHT + (lr.nworkers + 1) * LR_POOL_CACHE_HELD;
	for (unsigned i = 0; i < lr.nports; i++)
		need += lr.ports[i].nq * RX_DESC;
	if (!mbufs_set)
		while (mbufs < need && mbufs < UINT32_MAX / 2)
			mbufs = 2 * mbufs + 1;
	else if (need > mbufs)
		fprintf(stderr, "linerate-engine: %u queue pairs' rings hold up to %u of the %u mbufs: give --mbufs %u or more\n",
			lr_total_queues(), lr_total_queues() * RX_DESC, mbufs, need);
	printf("linerate-engine: mbuf pools of %u each (RX and TX), %u queue pairs\n", mbufs, lr_total_queues());
	if (lr_create_pools(mbufs, max_frame) != 0)
		return 1;
	uint16_t pid, idx = 0;
	RTE_ETH_FOREACH_DEV(pid)
	{
		if (setup_port(pid, idx++, max_frame) != 0)
			return 1;
	}
	lr.tsc_hz = rte_get_tsc_hz();
	lr.ns_per_tsc = 1e9 / (double)lr.tsc_hz;
	lr.tsc_per_ms = lr.tsc_hz / 1000;
	lr.tsc0 = rte_rdtsc();
	if (!strcmp(clock, "realtime")) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		lr.clock_base_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		lr.realtime = true;
	}
	for (unsigned w = 0; w < lr.nworkers; w++)
		if (rte_eal_remote_launch(lr_worker_main, (void *)(uintptr_t)w, lr.workers[w].lcore) != 0) {
			/* the leader would wait for it at every trial's end */
			fprintf(stderr, "linerate-engine: cannot launch worker %u on lcore %u\n", w, lr.workers[w].lcore);
			atomic_store(&lr.quit, true);
			rte_eal_mp_wait_lcore();
			return 1;
		}
	lr_control_serve(control);
	atomic_store(&lr.quit, true);
	rte_eal_mp_wait_lcore();
	for (unsigned i = 0; i < lr.nports; i++) {
		rte_eth_dev_stop(lr.ports[i].id);
		rte_eth_dev_close(lr.ports[i].id);
	}
	rte_eal_cleanup();
	return 0;
}
