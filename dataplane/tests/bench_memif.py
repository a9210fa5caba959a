"""Benchmark of receiving over memif between two processes: one generator feeds dpdk-testpmd rxonly (the
reference) and the engine's receiver with full analysis (split stream), on the same lcores.

The generator is the engine as memif client in zero-copy mode on hugepages: it hands its mbufs to the
peer instead of copying them, so it outruns both receivers and the figures are the receivers' own
limits; 'ring full' shows it (the share of the generator's bursts the receiver's ring could not take
whole). Each receiver is a memif server and copies every frame out of the shared memory, as a NIC
driver takes frames from its ring. testpmd txonly into testpmd rxonly is shown too.

Prints figures; asserts nothing. The generator's worker runs on lcore 1, the receiver's on lcore 0. Needs
root (it reserves 2 MiB hugepages and mounts hugetlbfs for the generator, and gives both back).
Run: python3 tests/bench_memif.py   (BENCH_SECONDS=3, BENCH_ROUNDS=5 by default)
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_more import RawEngine  # noqa: E402

SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
# the machine's own noise between two runs is larger than the differences measured: alternate and take medians
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
EAL = ["--no-pci", "--no-huge", "-m", "512", "--no-shconf", "--log-level", "lib.eal:error"]
HUGEPAGES = 160  # the generator's -m 300 and its mbuf pools, in 2 MiB pages
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
        p.send_signal(2)
        try:
            o, _ = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            o, _ = p.communicate()
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


def engine_to(d, hdir, size, receiver):
    """The zero-copy generator (worker on lcore 1, unpaced) into a receiver on lcore 0: testpmd rxonly
    ("testpmd") or the engine with full analysis ("engine"). Returns (Mpps the receiver took, share of the
    generator's bursts the memif ring took only in part, frames sent but not counted by the engine)."""
    sock = os.path.join(d, "%s%d.sock" % (receiver, size))
    rcv = tpmd = gen = None
    try:
        if receiver == "engine":
            rcv = RawEngine("br", ["--no-shconf", "--vdev", "net_memif0,role=server,socket=%s,id=0" % sock], [],
                            lcores=("-l", "0,1", "--main-lcore", "1"))
        else:
            tpmd = testpmd_rx(sock, "lrbmr")
            time.sleep(3)  # testpmd has no ready signal; its server socket must exist before the client starts
        gen = RawEngine("bg", ["--single-file-segments", "--huge-dir", hdir, "--vdev",
                               "net_memif0,role=client,socket=%s,id=0,zero-copy=yes" % sock], [], mem=("-m", "300"))
        deadline = time.time() + 10
        while True:
            up = gen.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=02:00:00:00:00:02")["link_up"]
            if rcv:
                up = rcv.cmd("PORT id=0 ip4=198.19.1.2/24 peer_mac=02:00:00:00:00:01")["link_up"] and up
            if up or time.time() > deadline:
                break
            time.sleep(0.2)
        spec = "src=198.18.1.2 dst=198.19.1.2 sizes=%d" % size
        gen.cmd("STREAM id=0 tx=0 rx=none " + spec)
        ms = int(SECONDS * 1000)
        if rcv:
            rcv.cmd("STREAM id=0 tx=none rx=0 " + spec)
            rcv.cmd("TRIAL streams=0 rates=0 unit=fps duration_ms=%d drain_ms=500 id=1" % ms)
        gen.cmd("TRIAL streams=0 rates=100000000 unit=fps duration_ms=%d drain_ms=500 id=1" % ms)
        gen.cmd("WAIT timeout_ms=60000")
        res = gen.cmd("RESULT")
        gs, full = res["streams"][0], res["ports"][0]["tx_full"]
        not_counted = 0
        if rcv:
            rcv.cmd("WAIT timeout_ms=60000")
            not_counted = gs["tx_frames"] - rcv.cmd("RESULT")["streams"][0]["rx_frames"]
        # the same measure for both receivers: what the generator got into the ring during the trial
        return gs["achieved_fps"] / 1e6, full / max(gs["tx_frames"] / 32.0, 1), not_counted
    finally:
        for e in (gen, rcv):
            if e:
                e.close()
        if tpmd:
            stop(tpmd)


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


def main():
    d = tempfile.mkdtemp(prefix="lrt-bmemif-")
    give_back = None
    try:
        hdir, give_back = hugepages(d)
        print("memif between two processes, %.0f s per figure; workers: generator lcore 1, receiver lcore 0;"
              " %d rounds alternating, medians" % (SECONDS, ROUNDS))
        print("RX: a zero-copy generator into testpmd rxonly (reference) and into the engine with full analysis"
              " (both memif servers, --no-huge); 'ring full': share of the generator's bursts the receiver"
              " could not take whole")
        print("%-8s %13s %10s %13s %10s %10s %7s %13s" % ("frame", "testpmd rx", "ring full", "engine rx+an",
                                                          "ring full", "not count", "ratio", "testpmd pair"))
        for size in (64, 1518):
            refs, rxs, pairs, rfull, efull, lost = [], [], [], [], [], 0
            for r in range(ROUNDS):
                ref, f, _ = engine_to(d, hdir, size, "testpmd")
                refs.append(ref)
                rfull.append(f)
                rx, f, n = engine_to(d, hdir, size, "engine")
                rxs.append(rx)
                efull.append(f)
                lost += n
                pairs.append(testpmd_pair(os.path.join(d, "t%d-%d.sock" % (size, r)), size))
            ref, rx = median(refs), median(rxs)
            print("%-8s %8.2f Mpps %9.0f%% %8.2f Mpps %9.0f%% %10d %7.2f %8.2f Mpps" % (
                "%d B" % size, ref, 100 * median(rfull), rx, 100 * median(efull), lost, rx / ref, median(pairs)))
            print("%-8s testpmd rx %s, engine rx %s, testpmd pair %s" % (
                "", " ".join("%.2f" % v for v in refs), " ".join("%.2f" % v for v in rxs),
                " ".join("%.2f" % v for v in pairs)))
            # the fastest round of each is the one the machine disturbed least
            print("%-8s best rounds: testpmd rx %.2f, engine rx %.2f Mpps, ratio %.2f" % (
                "", max(refs), max(rxs), max(rxs) / max(refs)))
            if min(median(rfull), median(efull)) < 0.05:
                print("%-8s a receiver's ring was rarely full: the generator, not that receiver, was the limit" % "")
    finally:
        if give_back:
            give_back()
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
