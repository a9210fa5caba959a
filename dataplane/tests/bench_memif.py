"""Benchmark of receiving over memif between two processes: dpdk-testpmd rxonly (the reference) and the
engine's receiver with full analysis (split stream), on the same lcores.

Each receiver has its own generator: the engine as memif client in zero-copy mode on hugepages, which
hands its mbufs to the peer instead of copying them, so it outruns both receivers and the figures are the
receivers' own limits; 'ring full' shows it (the share of the generator's bursts the receiver's ring could
not take whole). Each receiver is a memif server and copies every frame out of the shared memory, as a NIC
driver takes frames from its ring. The two pairs run at once and take short turns (see Turns). testpmd
txonly into testpmd rxonly is shown too.

Prints figures; asserts nothing. The generators' workers run on lcore 1, the receivers' on lcore 0. Needs
root (it reserves 2 MiB hugepages and mounts hugetlbfs for the generators, and gives both back).
Run: python3 tests/bench_memif.py   (BENCH_ROUNDS=20, BENCH_TURN_MS=400, BENCH_SIZES=64,1518 by default)
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_figures import record  # noqa: E402
from lrtest import interrupt  # noqa: E402
from test_more import RawEngine  # noqa: E402

SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))  # the testpmd pair
# the machine's own noise between two runs is larger than the differences measured: short turns, medians
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "20"))
TURN_MS = int(os.environ.get("BENCH_TURN_MS", "400"))
SIZES = [int(v) for v in os.environ.get("BENCH_SIZES", "64,1518").split(",")]
EAL = ["--no-pci", "--no-huge", "-m", "512", "--no-shconf", "--log-level", "lib.eal:error"]
HUGEPAGES = 320  # two generators' -m 300 and their mbuf pools, in 2 MiB pages
NR_HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"


def testpmd_pair(sock, size):
    """Mpps received by testpmd rxonly (client) from testpmd txonly (server) over one memif."""
    common = EAL + ["--file-prefix"]
    srv = subprocess.Popen(["dpdk-testpmd", "-l", "0,1"] + common + ["lrbms", "--vdev",
                           "net_memif0,role=server,socket=%s" % sock, "--", "--forward-mode=txonly",
                           "--txpkts=%d" % (size - 4), "--auto-start", "--total-num-mbufs=16384"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, text=True)
    # testpmd without -i quits when stdin ends: keep a pipe open. memif's socket is abstract by default
    # (no file to wait for): give the server time to listen.
    time.sleep(3)
    cli = subprocess.Popen(["dpdk-testpmd", "-l", "1,0", "--main-lcore", "1"] + common + ["lrbmc", "--vdev",
                           "net_memif0,role=client,socket=%s" % sock, "--", "--forward-mode=rxonly",
                           "--auto-start", "--stats-period", "1", "--total-num-mbufs=16384"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(SECONDS + 2)
    out = ""
    for p in (cli, srv):
        o = interrupt(p)
        if p is cli:
            out = o
    vals = [int(v) for v in re.findall(r"Rx-pps:\s+(\d+)", out) if int(v) > 0]
    return sorted(vals)[len(vals) // 2] / 1e6 if vals else float("nan")


def testpmd_rx(sock, prefix):
    """dpdk-testpmd rxonly as the memif server, worker on lcore 0: it frees what it receives, reads nothing."""
    return subprocess.Popen(["dpdk-testpmd", "-l", "1,0", "--main-lcore", "1"] + EAL + ["--file-prefix", prefix,
                            "--vdev", "net_memif0,role=server,socket=%s" % sock, "--", "--forward-mode=rxonly",
                            "--auto-start", "--total-num-mbufs=16384"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, text=True)


def stop(p):
    p.send_signal(2)
    try:
        p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()


class Turns:
    """Both receivers at once, each fed by its own zero-copy generator (generator on lcore 1, receiver on
    lcore 0); the two pairs take turns of TURN_MS, the pair whose turn it is not being stopped (SIGSTOP, so
    that it takes no CPU). This machine's speed changes by up to 2-5x from one second to the next: a
    receiver compared with the other in the turn next to it is compared on the same machine."""

    def __init__(self, d, hdir, size):
        self.size, self.trial = size, 0
        self.tpmd = self.eng = None
        self.gens = []
        socks = [os.path.join(d, "%s%d.sock" % (k, size)) for k in ("testpmd", "engine")]
        try:
            self.tpmd = testpmd_rx(socks[0], "lrbmr")
            time.sleep(3)  # testpmd has no ready signal; its server socket must exist before the client starts
            self.eng = RawEngine("br", ["--no-shconf", "--vdev", "net_memif0,role=server,socket=%s,id=0" % socks[1]],
                                 [], lcores=("-l", "0,1", "--main-lcore", "1"))
            for i, sock in enumerate(socks):
                self.gens.append(RawEngine("bg%d" % i, ["--single-file-segments", "--huge-dir", hdir, "--vdev",
                                           "net_memif0,role=client,socket=%s,id=0,zero-copy=yes" % sock], [],
                                           mem=("-m", "300")))
            deadline = time.time() + 15
            while True:
                up = [g.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=02:00:00:00:00:02")["link_up"] for g in self.gens]
                up.append(self.eng.cmd("PORT id=0 ip4=198.19.1.2/24 peer_mac=02:00:00:00:00:01")["link_up"])
                if all(up) or time.time() > deadline:
                    break
                time.sleep(0.2)
            spec = "src=198.18.1.2 dst=198.19.1.2 sizes=%d" % size
            for g in self.gens:
                g.cmd("STREAM id=0 tx=0 rx=none " + spec)
            self.eng.cmd("STREAM id=0 tx=none rx=0 " + spec)
            for pid in self.pids():
                os.kill(pid, signal.SIGSTOP)
        except BaseException:
            self.close()
            raise

    def pids(self):
        return [p.pid for p in [self.tpmd] + [e.proc for e in [self.eng] + self.gens if e] if p]

    def turn(self, receiver):
        """One turn of receiver 0 (testpmd) or 1 (the engine): (Mpps the receiver took, share of the
        generator's bursts the memif ring took only in part, frames sent but not counted by the engine)."""
        rcv = self.tpmd.pid if receiver == 0 else self.eng.proc.pid
        gen = self.gens[receiver]
        for pid in (rcv, gen.proc.pid):
            os.kill(pid, signal.SIGCONT)
        try:
            self.trial += 1
            trial = "duration_ms=%d drain_ms=300 id=%d" % (TURN_MS, self.trial)
            if receiver == 1:
                self.eng.cmd("TRIAL streams=0 rates=0 unit=fps " + trial)
            gen.cmd("TRIAL streams=0 rates=100000000 unit=fps " + trial)
            gen.cmd("WAIT timeout_ms=60000")
            res = gen.cmd("RESULT")
            gs, full = res["streams"][0], res["ports"][0]["tx_full"]
            not_counted = 0
            if receiver == 1:
                self.eng.cmd("WAIT timeout_ms=60000")
                not_counted = gs["tx_frames"] - self.eng.cmd("RESULT")["streams"][0]["rx_frames"]
        finally:
            for pid in (rcv, gen.proc.pid):
                os.kill(pid, signal.SIGSTOP)
        # the same measure for both receivers: what the generator got into the ring during the trial
        return gs["achieved_fps"] / 1e6, full / max(gs["tx_frames"] / 32.0, 1), not_counted

    def close(self):
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        for e in self.gens + [self.eng]:
            if e:
                e.close()
        if self.tpmd:
            stop(self.tpmd)


def hugepages(d):
    """Reserves and mounts the generator's hugepages; returns the mount and how to give them back."""
    with open(NR_HUGEPAGES) as f:
        before = int(f.read())
    with open(NR_HUGEPAGES, "w") as f:
        f.write(str(before + HUGEPAGES))
    hdir = os.path.join(d, "huge")
    os.mkdir(hdir)
    subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", hdir], check=True)

    def give_back():
        subprocess.run(["umount", hdir])
        with open(NR_HUGEPAGES, "w") as f:
            f.write(str(before))
    return hdir, give_back


def fastest(values, refs):
    """The values of the rounds in which testpmd was at or above its median rate."""
    m = median(refs)
    return [v for v, r in zip(values, refs) if r >= m]


def main():
    d = tempfile.mkdtemp(prefix="lrt-bmemif-")
    give_back = None
    try:
        hdir, give_back = hugepages(d)
        print("memif between two processes; workers: generator lcore 1, receiver lcore 0; %d rounds of a %d ms"
              " turn per receiver, medians (ratio: the median of the rounds' ratios)" % (ROUNDS, TURN_MS))
        print("RX: a zero-copy generator into testpmd rxonly (reference) and into the engine with full analysis"
              " (both memif servers, --no-huge); 'ring full': share of the generator's bursts the receiver"
              " could not take whole")
        print("%-8s %13s %10s %13s %10s %10s %7s %13s" % ("frame", "testpmd rx", "ring full", "engine rx+an",
                                                          "ring full", "not count", "ratio", "testpmd pair"))
        for size in SIZES:
            refs, rxs, ratios, full_ratios, rfull, efull, lost = [], [], [], [], [], [], 0
            turns = Turns(d, hdir, size)
            try:
                for r in range(ROUNDS):
                    order = (0, 1) if r % 2 == 0 else (1, 0)
                    got = {k: turns.turn(k) for k in order}
                    (ref, rf, _), (rx, ef, n) = got[0], got[1]
                    refs.append(ref)
                    rxs.append(rx)
                    rfull.append(rf)
                    efull.append(ef)
                    lost += n
                    ratios.append(rx / ref)
                    if min(rf, ef) >= 0.5:
                        full_ratios.append(rx / ref)
            finally:
                turns.close()
            pair = testpmd_pair(os.path.join(d, "t%d.sock" % size), size)
            print("%-8s %8.2f Mpps %9.0f%% %8.2f Mpps %9.0f%% %10d %7.2f %8.2f Mpps" % (
                "%d B" % size, median(refs), 100 * median(rfull), median(rxs), 100 * median(efull), lost,
                median(ratios), pair))
            record("memif_rx_%dB_engine_over_testpmd_rxonly" % size, median(ratios), "higher")
            print("%-8s per round (testpmd/engine): %s" % (
                "", " ".join("%.1f/%.1f" % (a, b) for a, b in zip(refs, rxs))))
            if full_ratios:
                print("%-8s rounds where both rings were full at least half the time (both receivers the limit):"
                      " %d, median ratio %.2f" % ("", len(full_ratios), median(full_ratios)))
            # the ratio in time per frame: what the engine's work costs beside the PMD's copy, and what 95 %
            # of testpmd's rate would leave for it (the same work is a larger share when the machine is fast)
            extra = [1e3 / b - 1e3 / a for a, b in zip(refs, rxs)]
            budget = [1e3 / (0.95 * a) - 1e3 / a for a in refs]
            print("%-8s engine's time per frame beyond testpmd's: median %.1f ns; 95 %% of testpmd's rate leaves"
                  " %.1f ns (in the fastest half of the rounds: %.1f ns, leaves %.1f ns)" % (
                      "", median(extra), median(budget), median(fastest(extra, refs)), median(fastest(budget, refs))))
            if min(median(rfull), median(efull)) < 0.05:
                print("%-8s a receiver's ring was rarely full: the generator, not that receiver, was the limit" % "")
    finally:
        if give_back:
            give_back()
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
