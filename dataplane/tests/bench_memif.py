"""Benchmark over memif between two processes: engine generator -> engine receiver (split stream, full
analysis on the receiver) against dpdk-testpmd txonly -> dpdk-testpmd rxonly on the same lcores.

Prints figures; asserts nothing. The generator's worker runs on lcore 1, the receiver's on lcore 0.
Run: python3 tests/bench_memif.py   (BENCH_SECONDS=3 by default)
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_more import memif_engine  # noqa: E402

SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
# the machine's own noise between two runs is larger than the differences measured: alternate and take medians
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
EAL = ["--no-pci", "--no-huge", "-m", "512", "--no-shconf", "--log-level", "lib.eal:error"]


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


def engine_pair(d, size):
    sock = os.path.join(d, "e%d.sock" % size)
    gen = memif_engine("bg", sock, "server", [])  # worker on lcore 1
    rcv = None
    try:
        rcv = memif_engine("br", sock, "client", [], lcores=("-l", "0,1", "--main-lcore", "1"))
        deadline = time.time() + 10
        while True:
            g = gen.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=02:00:00:00:00:02")
            r = rcv.cmd("PORT id=0 ip4=198.19.1.2/24 peer_mac=02:00:00:00:00:01")
            if (g["link_up"] and r["link_up"]) or time.time() > deadline:
                break
            time.sleep(0.2)
        spec = "src=198.18.1.2 dst=198.19.1.2 sizes=%d" % size
        gen.cmd("STREAM id=0 tx=0 rx=none " + spec)
        rcv.cmd("STREAM id=0 tx=none rx=0 " + spec)
        ms = int(SECONDS * 1000)
        rcv.cmd("TRIAL streams=0 rates=0 unit=fps duration_ms=%d drain_ms=500 id=1" % ms)
        gen.cmd("TRIAL streams=0 rates=100000000 unit=fps duration_ms=%d drain_ms=500 id=1" % ms)
        gen.cmd("WAIT timeout_ms=60000")
        rcv.cmd("WAIT timeout_ms=60000")
        gs, rs = gen.cmd("RESULT")["streams"][0], rcv.cmd("RESULT")["streams"][0]
        return gs["achieved_fps"] / 1e6, rs["rx_frames"] / SECONDS / 1e6, gs["tx_frames"] - rs["rx_frames"]
    finally:
        for e in (rcv, gen):
            if e:
                e.close()


def main():
    d = tempfile.mkdtemp(prefix="lrt-bmemif-")
    try:
        print("memif between two processes, %.0f s per figure, --no-huge (workers: generator lcore 1,"
              " receiver lcore 0); %d rounds alternating testpmd and engine, medians" % (SECONDS, ROUNDS))
        print("%-8s %14s %14s %14s %10s %8s" % ("frame", "testpmd rx", "engine tx", "engine rx+an", "not recv",
                                             "ratio"))
        for size in (64, 1518):
            refs, txs, rxs, lost = [], [], [], 0
            for r in range(ROUNDS):
                refs.append(testpmd_pair(os.path.join(d, "t%d-%d.sock" % (size, r)), size))
                tx, rx, n = engine_pair(d, size)
                txs.append(tx)
                rxs.append(rx)
                lost += n
            ref, tx, rx = median(refs), median(txs), median(rxs)
            print("%-8s %11.2f Mpps %9.2f Mpps %9.2f Mpps %10d %8.2f" % ("%d B" % size, ref, tx, rx, lost, rx / ref))
            print("%-8s testpmd %s, engine rx %s" % ("", " ".join("%.2f" % v for v in refs),
                                                     " ".join("%.2f" % v for v in rxs)))
    finally:
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
