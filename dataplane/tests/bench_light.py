"""make bench: how light the engine is when the traffic is light, and how it keeps its schedule beside a CPU
hog. Prints figures, asserts nothing.

One stream over a veth loop (af_packet, port 0 sends, port 1 receives), 64 B, at 1, 10 and 100 thousand
frames/s, 4 s trials: the CPU time the engine's process used (its utime + stime over the trial, in % of one
CPU), the largest lag of the sender behind its schedule, the longest a frame waited in the ring for the
receiver (kernel receive times), and the median latency. Each rate twice: the engine as it runs by default
(its workers sleep when nothing is due) and with --spin (they never sleep: the engine before it slept), on a
quiet machine and beside two busy loops (one per CPU of this machine, nice 0), which is what a tester meets
on a shared Kubernetes node.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_figures import record  # noqa: E402
from lrtest import Engine, Netns  # noqa: E402

RATES = (1000, 10000, 100000)
SECONDS = float(os.environ.get("BENCH_SECONDS", "4"))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hog(n):
    """n busy loops at nice 0, one process each; killed by the caller."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def measure(e, rate):
    e.cmd("STREAM id=0 tx=0 rx=1 src=198.18.1.2 dst=198.19.1.2 sizes=64")
    e.trial([0], [rate], duration_ms=300, drain_ms=50)  # warm: ring, caches, the sleep margin learned
    pid = e.proc.pid
    c0, t0 = cpu_seconds(pid), time.monotonic()
    r = e.trial([0], [rate], duration_ms=int(SECONDS * 1000), drain_ms=100)
    c1, t1 = cpu_seconds(pid), time.monotonic()
    s = r["streams"][0]
    lat = s.get("latency") or {}
    return {"cpu": 100 * (c1 - c0) / (t1 - t0), "lag_us": s["tx_max_lag_ns"] / 1e3,
            "wait_us": max(p.get("rx_wait_max_ns", 0) for p in r["ports"]) / 1e3,
            "gap_us": max(w["max_gap_ns"] for w in r["workers"]) / 1e3,
            "p50_us": lat.get("p50_ns", 0) / 1e3, "lost": s["tx_frames"] - (s["rx_frames"] - s["duplicates"])}


def main():
    if os.geteuid() != 0:
        sys.exit("needs root for network namespaces")
    net = Netns("bl")
    try:
        tns = net.ns("t")
        net.veth("t0", tns, "t1", tns)
        print("Light engine: one 64 B stream over a veth loop (af_packet), %.0f s trials; CPU = the engine's process"
              " (control + worker) in %% of one CPU" % SECONDS)
        print("%-10s %-8s %-6s %8s %10s %10s %10s %8s %6s" % ("load", "mode", "kfps", "CPU %", "TX lag us",
                                                             "RX wait us", "gap us", "p50 us", "lost"))
        for load in ("quiet", "2 hogs"):
            hogs = hog(2) if load != "quiet" else []
            try:
                for mode, extra in (("sleeps", ()), ("--spin", ("--spin",))):
                    e = Engine(tns, ["t0", "t1"], tag="bl", extra=extra)
                    try:
                        e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=%s" % net.mac("t1", tns))
                        e.cmd("PORT id=1 ip4=198.19.1.2/24 peer_mac=%s" % net.mac("t0", tns))
                        for rate in RATES:
                            m = measure(e, rate)
                            if mode == "sleeps" and load == "quiet":
                                # beside busy loops the engine's share says how much the hogs took, not
                                # how light it is: only the quiet figures are kept for the regression check
                                record("light_cpu_percent_%dk_fps_quiet" % (rate // 1000), m["cpu"], "lower", "%")
                            print("%-10s %-8s %-6g %8.1f %10.0f %10.0f %10.0f %8.1f %6d" % (
                                load, mode, rate / 1000, m["cpu"], m["lag_us"], m["wait_us"], m["gap_us"],
                                m["p50_us"], m["lost"]))
                    finally:
                        e.close()
            finally:
                for h in hogs:
                    h.kill()
                    h.wait()
    finally:
        net.close()


if __name__ == "__main__":
    main()
