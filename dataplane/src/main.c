/* linerate-engine: its options and EAL, the ports set up (ports.c), then the workers on their lcores and
 * the control socket on the main lcore. Everything (mempool, queues, per-stream memory) is allocated once,
 * so thousands of trials do not grow the process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "cgroup.h"
#include "control.h"
#include "engine.h"
#include "idle.h"
#include "pools.h"
#include "ports.h"
#include "worker.h"

/* the pools are sized from RX_DESC for both directions' rings (ports.h), with room for this many more */
_Static_assert(RX_DESC >= TX_DESC, "size the TX pool from TX_DESC");
#define MBUFS_IN_FLIGHT 4096

static void usage(void)
{
	fprintf(stderr,
		"usage: linerate-engine <EAL args> -- --control PATH|tcp:HOST:PORT [--window-bits N]\n"
		"       [--clock local|realtime] [--mbufs N] [--max-frame N] [--spin] [--no-realtime]\n"
		"       [--rx-sleep-us N] [--queues N]\n"
		"  --window-bits N  sequence window of 2^N frames per received stream, 10..40 (default 34)\n"
		"  --queues N       queue pairs per port (default: enough for every worker lcore; a vdev whose\n"
		"                   queues are set by its own arguments keeps them)\n"
		"  --mbufs N        mbufs in each of the RX and TX pools (default: 16383, or twice what the\n"
		"                   queues' rings hold when that is more)\n"
		"  --spin           the workers never sleep (dedicated cores: the least latency, a core each)\n"
		"  --no-realtime    sleeping workers stay ordinary threads (by default they run SCHED_FIFO while\n"
		"                   light, where allowed: woken on time on a busy host)\n"
		"  --mask-rx-misses (tests) af_packet ports count no drops on receipt, as an 82599 VF\n"
		"  --rx-sleep-us N  in a trial, a worker may leave an RX queue the kernel cannot wake it for (all\n"
		"                   but af_packet) this long; 0 spins there (default: 0, or 20 under a cgroup\n"
		"                   CPU quota below one CPU per lcore)\n");
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
		{"max-frame", required_argument, NULL, 'f'}, {"rx-sleep-us", required_argument, NULL, 'i'},
		{"queues", required_argument, NULL, 'q'},    {"spin", no_argument, NULL, 's'},
		{"no-realtime", no_argument, NULL, 'r'},     {"mask-rx-misses", no_argument, NULL, 'M'},
		{NULL, 0, NULL, 0}};
	lr.realtime_wanted = true;
	unsigned queues = 0;
	unsigned rx_sleep = 0;
	bool rx_sleep_set = false;
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
			if (parse_uint("rx-sleep-us", optarg, 0, 1000000, &rx_sleep))
				return 2;
			rx_sleep_set = true;
			break;
		case 's':
			lr.spin = true;
			break;
		case 'r':
			lr.realtime_wanted = false;
			break;
		case 'M':
			lr.mask_rx_misses = true;
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
	if (lr_assign_workers(queues) != 0)
		return 1;
	/* a CPU quota below one CPU per lcore: a worker spinning on a queue nothing can wake it for burns the
	 * quota, and the kernel then stops every thread of the tester for the rest of the period (pacing turns
	 * into bursts); there it may leave such a queue 20 us, and the latency of its frames says so */
	double cpus = lr_cgroup_cpus();
	lr.rx_sleep_us = rx_sleep_set ? rx_sleep : (cpus > 0 && cpus < lr.nworkers + 1 ? 20 : 0);
	if (lr.spin)
		printf("linerate-engine: the workers spin (--spin)\n");
	else if (lr.rx_sleep_us)
		printf("linerate-engine: in a trial a worker leaves an RX queue the kernel cannot wake it for %u us at most "
		       "(cgroup CPU quota %.2f, %u workers)\n", lr.rx_sleep_us, cpus, lr.nworkers);
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
		if (lr_setup_port(pid, idx++, max_frame) != 0)
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
	lr.rx_sleep_tsc = (uint64_t)lr.rx_sleep_us * lr.tsc_hz / 1000000;
	if (lr_idle_setup() != 0)
		return 1;
	for (unsigned w = 0; w < lr.nworkers; w++)
		if (rte_eal_remote_launch(lr_worker_main, (void *)(uintptr_t)w, lr.workers[w].lcore) != 0) {
			/* the leader would wait for it at every trial's end */
			fprintf(stderr, "linerate-engine: cannot launch worker %u on lcore %u\n", w, lr.workers[w].lcore);
			atomic_store(&lr.quit, true);
			lr_wake_all();
			rte_eal_mp_wait_lcore();
			return 1;
		}
	/* each worker says in HELLO whether it runs real time: served once they all have tried */
	while (atomic_load_explicit(&lr.workers_started, memory_order_acquire) < lr.nworkers)
		usleep(1000);
	lr_control_serve(control);
	atomic_store(&lr.quit, true);
	lr_wake_all();
	rte_eal_mp_wait_lcore();
	for (unsigned i = 0; i < lr.nports; i++) {
		rte_eth_dev_stop(lr.ports[i].id);
		rte_eth_dev_close(lr.ports[i].id);
	}
	rte_eal_cleanup();
	return 0;
}
