"""Ports with several queue pairs: the analysis of a stream whose frames arrive on two RX queues (and two
workers) is exact, and one worker serving both queues counts what two workers do.

The ports are af_packet with qpairs=2: the kernel fans an interface's frames out over two sockets by its flow
hash (PACKET_FANOUT_HASH), as RSS spreads them over a NIC's queues, so a stream of many flows lands on both.
Run as root: python3 tests/test_queues.py -v
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lrtest import Engine, missing, sh, skip_for_load, skip_if_sent_short  # noqa: E402
import test_engine  # noqa: E402
import test_more  # noqa: E402

RATE = 10000
FLOWS = 64
ONE, TWO = "0,1", "0@0,1@1,2@0"  # one worker lcore; two (control shares CPU 0 with the second)


def queues(r):
    """Per worker, the (port, queue) pairs it served."""
    return [[(q["port"], q["queue"]) for q in w["queues"]] for w in r["workers"]]


def per_queue(r, port, field):
    """A counter of each queue pair of port in the trial (rx_frames, tx_frames), by queue."""
    got = {}
    for w in r["workers"]:
        for q in w["queues"]:
            if q["port"] == port:
                got[q["queue"]] = q[field]
    return [got[k] for k in sorted(got)]


def rx_per_queue(r, port):
    """Frames each RX queue of port received in the trial, by queue."""
    return per_queue(r, port, "rx_frames")


class QueuesBase(test_engine.Base):
    """A routed engine on af_packet ports of a given number of queue pairs, and trials through nft RULES."""

    RULES = ""
    EXTRA = ("--rx-sleep-us", "50")  # more workers than this machine's two CPUs: an idle one sleeps

    def exact(self, e, streams, rates, **kw):
        """As Base.exact, with the rules loaded anew before every trial: numgen counts from zero again, so
        every trial the test keeps saw the same truth (a repeated trial would start at another phase)."""
        for _ in range(3):
            self.nft(self.RULES)
            r = e.trial(streams, rates, **kw)
            if not any(s["saturated"] or s["tx_max_lag_ns"] > test_engine.MAX_LAG_NS or s["tx_frames"] < s["scheduled_frames"]
                       for s in r["streams"]):
                return r
        # more workers than CPUs here: a sender the OS kept off its core falls behind or short (saturated)
        skip_for_load(self, "the OS kept preempting the engine's worker (lag %s ns, saturated %s): this machine is "
                            "too loaded to pace traffic" % ([s["tx_max_lag_ns"] for s in r["streams"]],
                                                            [s["saturated"] for s in r["streams"]]))

    def two_nodes(self):
        """The generator's namespace (t0) and the receiver's (t1), as on two nodes, each linked to the router
        (r0 198.18.1.1, r1 198.19.1.1). Two namespaces also keep the engines' af_packet fanout groups apart:
        the PMD numbers a group from its PID and ifindex, and two engines' numbers can meet in one."""
        gns, xns, self.rns = self.net.ns("g"), self.net.ns("x"), self.net.ns("r")
        self.net.veth("t0", gns, "r0", self.rns)
        self.net.veth("t1", xns, "r1", self.rns)
        sh("ip", "addr", "add", "198.18.1.1/24", "dev", "r0", ns=self.rns)
        sh("ip", "addr", "add", "198.19.1.1/24", "dev", "r1", ns=self.rns)
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=self.rns)
        for k in ("all", "default", "r0", "r1"):
            sh("sysctl", "-qw", "net.ipv4.conf.%s.rp_filter=0" % k, ns=self.rns)
        return gns, xns

    def queued_engine(self, lcores, qpairs=(1, 2)):
        self.engine = Engine(self.tns, ["t0", "t1"], tag=self._testMethodName[5:9], lcores=lcores, qpairs=qpairs)
        e = self.engine
        for i, n in enumerate(qpairs):
            p = e.cmd("PORT id=%d ip4=198.%d.1.2/24 gw4=198.%d.1.1" % (i, 18 + i, 18 + i))
            self.assertEqual((p["rx_queues"], p["tx_queues"]), (n, n), p)
        e.cmd("RESOLVE id=0 timeout_ms=3000")
        e.cmd("RESOLVE id=1 timeout_ms=3000")
        return e


class RouterQueues(QueuesBase):
    """Through a router that drops exactly 1 in 50 frames and duplicates 1 in 7 of half the flows: the
    DUT's own counters are the truth, on one worker serving both queues of each port and on two."""

    RULES = """table ip lrt
delete table ip lrt
table ip lrt {
  counter dropped {}
  counter duped {}
  chain lrfwd { type filter hook forward priority 0; policy accept;
    ip daddr 198.19.1.0/24 numgen inc mod 50 == 0 counter name "dropped" drop
    ip daddr 198.19.1.0/24 udp sport 1024-1055 numgen inc mod 7 == 0 counter name "duped" dup to 198.19.1.2 device "r1"
  }
}"""

    def test_one_and_two_workers_on_two_queues_count_the_same_truth(self):
        self.router()
        self.engine.close()
        seen = {}
        # the sending port has one queue, so the DUT sees the frames in the same order with one worker and two
        # and its truth is the same; the receiving port has two, one per worker with two
        for lcores, layout in ((ONE, [[(0, 0), (1, 0), (1, 1)]]), (TWO, [[(0, 0), (1, 1)], [(1, 0)]])):
            e = self.queued_engine(lcores)
            e.cmd("STREAM id=0 tx=0 rx=1 src=198.18.1.2 dst=198.19.1.2 flows=%d vary=sport sizes=64" % FLOWS)
            r = self.exact(e, [0], [RATE], duration_ms=1000, drain_ms=500)
            s = r["streams"][0]
            self.assertEqual(queues(r), layout, r["workers"])
            self.assertEqual([w["ports"] for w in r["workers"]], [sorted({p for p, _ in q}) for q in layout])
            per_queue = rx_per_queue(r, 1)
            # the proof needs a stream whose frames arrive on both queues
            self.assertTrue(len(per_queue) == 2 and min(per_queue) > RATE // 10, per_queue)
            self.assertEqual(s["rx_queues"], 2, s)
            dropped, duped = self.nft_counter("dropped", "ip"), self.nft_counter("duped", "ip")
            self.assertEqual(s["tx_frames"], RATE)
            # the DUT's counters may hold the stream's one warm-up frame, which the engine does not measure
            self.assertIn(dropped - missing(s), (0, 1), s)
            self.assertIn(duped - s["duplicates"], (0, 1), s)
            self.assertGreater(s["duplicates"], 0)
            self.assertEqual(s["rx_frames"] - s["duplicates"] + missing(s), RATE)
            self.assertEqual(s["latency"]["count"], s["rx_frames"] - s["duplicates"])
            print("\n%s: rx per queue %s, counts %s" % (lcores, per_queue, (missing(s), s["duplicates"], s["reordered"])), file=sys.stderr)
            # not late: whether the last frames in flight arrive before the measurement ends is timing, not
            # analysis
            seen[lcores] = (missing(s), s["duplicates"], s["reordered"], s["beyond_window"], s["rx_frames"])
            e.close()
            self.engine = None
        self.assertEqual(len(set(seen.values())), 1, "one worker and two counted differently: %s" % seen)


def tx_per_queue(r, port):
    """Test frames each TX queue of port sent in the trial, by queue."""
    return per_queue(r, port, "tx_frames")


class SplitSender(QueuesBase):
    """A stream whose TX port has two queues is sent by both (two lanes, half the rate each), by one worker
    or two. The DUT drops exactly 1 in 50 and duplicates 1 in 10 of the rest whatever the order the two
    lanes interleave in, so its counters are the truth of both; the receiver keys its windows by lane, so
    the interleaving of the two senders is no reordering."""

    RULES = """table ip lrt
delete table ip lrt
table ip lrt {
  counter dropped {}
  counter duped {}
  chain lrfwd { type filter hook forward priority 0; policy accept;
    ip daddr 198.19.1.0/24 numgen inc mod 50 == 0 counter name "dropped" drop
    ip daddr 198.19.1.0/24 numgen inc mod 10 == 0 counter name "duped" dup to 198.19.1.2 device "r1"
  }
}"""

    def test_two_lanes_one_and_two_workers_count_the_same_truth(self):
        self.router()
        self.engine.close()
        seen = {}
        for lcores, layout in ((ONE, [[(0, 0), (0, 1), (1, 0), (1, 1)]]), (TWO, [[(0, 0), (1, 0)], [(0, 1), (1, 1)]])):
            e = self.queued_engine(lcores, qpairs=(2, 2))
            e.cmd("STREAM id=0 tx=0 rx=1 src=198.18.1.2 dst=198.19.1.2 flows=%d vary=sport sizes=64,1518,570" % FLOWS)
            r = self.exact(e, [0], [RATE], duration_ms=1000, drain_ms=500)
            s = r["streams"][0]
            self.assertEqual(queues(r), layout, r["workers"])
            per_tx, per_rx = tx_per_queue(r, 0), rx_per_queue(r, 1)
            print("\n%s: tx per queue %s, rx per queue %s" % (lcores, per_tx, per_rx), file=sys.stderr)
            self.assertEqual(per_tx, [RATE // 2, RATE // 2], "each lane sends half the schedule")
            self.assertTrue(min(per_rx) > RATE // 10, per_rx)
            dropped, duped = self.nft_counter("dropped", "ip"), self.nft_counter("duped", "ip")
            self.assertEqual((s["tx_frames"], missing(s), s["duplicates"]), (RATE, RATE // 50, (RATE - RATE // 50) // 10), s)
            self.assertEqual((dropped, duped), (missing(s), s["duplicates"]))
            self.assertEqual((s["reordered"], s["beyond_window"], s["bad_flow"]), (0, 0, 0), s)
            self.assertEqual(sum(c["tx_frames"] for c in s["classes"]), RATE)
            for c in s["classes"]:
                self.assertLessEqual(c["rx_frames"], c["tx_frames"], c)
            seen[lcores] = (missing(s), s["duplicates"], s["reordered"], s["rx_frames"])
            e.close()
            self.engine = None
        self.assertEqual(len(set(seen.values())), 1, "one worker and two counted differently: %s" % seen)


class SplitEnginesQueues(QueuesBase):
    """A test split over two engine processes (two nodes), each with two workers and a port of two queue
    pairs: the sender's stream leaves by both TX queues (two lanes), the receiver spreads it over both RX
    queues and, told the sender's lanes (STREAM lanes=2), keys its windows by lane as the sender's own
    engine would. Through the router of SplitSender (drops exactly 1 in 50, duplicates 1 in 10 of the rest):
    the receiver's counts are the router's, both RX queues carry, and no frame is a number it cannot carry.
    The control: a receiver not told the lanes keeps state for lane 0 only, and lane 1's half is counted
    apart (unknown_lane, which the runner holds as the tester's fault), never as received."""

    RULES = SplitSender.RULES

    def split_trial(self, gen, rcv, stream, trial):
        """One trial of the stream split over the two engines (the receiver's first, longer, same id, as
        internal/engine's Pair runs them), with the router's rules loaded anew; repeated (up to three times)
        when the tester spoiled it: the sender fell behind, or either side dropped frames itself (four
        polling workers and the router share this machine's two CPUs)."""
        defects = []
        for attempt in range(3):
            self.nft(self.RULES)
            tid = trial + attempt
            rcv.cmd("TRIAL streams=%d rates=0 unit=fps duration_ms=2000 drain_ms=500 id=%d" % (stream, tid))
            g = gen.trial([stream], [RATE], duration_ms=1000, drain_ms=500, id=tid)
            rcv.cmd("WAIT timeout_ms=30000")
            r = rcv.cmd("RESULT")
            gs = g["streams"][0]
            # rings that overflowed are load; a pool that ran dry or a send error is not, and is said below
            # if no try came clean
            defects += [p for p in g["ports"] + r["ports"] if p["rx_nombuf"] or p["oerrors"]]
            drops = sum(p["imissed"] + p["rx_kernel_drops"] + p["rx_nombuf"] + p["oerrors"] for p in g["ports"] + r["ports"])
            if not (gs["saturated"] or gs["tx_max_lag_ns"] > test_engine.MAX_LAG_NS or drops):
                return g, r
        self.assertEqual(defects, [], "no try came clean, and some had no buffer or send errors, which no load explains")
        skip_for_load(self, "the OS kept preempting the engines' workers (sender lag %d ns, saturated %s, frames the "
                            "tester's own rings dropped %d): this machine is too loaded for an exact count" %
                            (gs["tx_max_lag_ns"], gs["saturated"], drops))

    def test_receiver_told_the_senders_lanes_counts_the_truth_on_two_queues(self):
        gns, xns = self.two_nodes()
        gen = Engine(gns, ["t0"], tag="sg", lcores=TWO, qpairs=2, extra=self.EXTRA)
        self.addCleanup(gen.close)
        rcv = Engine(xns, ["t1"], tag="sr", lcores=TWO, qpairs=2, extra=self.EXTRA)
        self.addCleanup(rcv.close)
        for e, net in ((gen, 18), (rcv, 19)):
            p = e.cmd("PORT id=0 ip4=198.%d.1.2/24 gw4=198.%d.1.1" % (net, net))
            self.assertEqual((p["rx_queues"], p["tx_queues"]), (2, 2), p)
            e.cmd("RESOLVE id=0 timeout_ms=3000")
        spec = "src=198.18.1.2 dst=198.19.1.2 flows=%d vary=sport sizes=64,1518,570" % FLOWS
        # the sender says its lanes; lanes= is for a stream another engine sends, 1 to 8
        self.assertEqual(gen.cmd("STREAM id=0 tx=0 rx=none " + spec)["lanes"], 2)
        self.assertEqual(gen.raw("STREAM id=0 tx=0 rx=none lanes=2 " + spec)["error"], "bad-value")
        self.assertEqual(rcv.raw("STREAM id=0 tx=none rx=0 lanes=9 " + spec)["error"], "bad-value")
        self.assertEqual(rcv.cmd("STREAM id=0 tx=none rx=0 lanes=2 " + spec)["lanes"], 2)
        g, r = self.split_trial(gen, rcv, 0, 10)
        gs, rs = g["streams"][0], r["streams"][0]
        per_tx, per_rx = tx_per_queue(g, 0), rx_per_queue(r, 0)
        print("\nsplit: tx per queue %s, rx per queue %s, rx %d duplicates %d reordered %d bad_flow %d" % (
            per_tx, per_rx, rs["rx_frames"], rs["duplicates"], rs["reordered"], rs["bad_flow"]), file=sys.stderr)
        self.assertEqual(per_tx, [RATE // 2, RATE // 2], "each lane sends half the schedule")
        self.assertTrue(len(per_rx) == 2 and min(per_rx) > RATE // 10, per_rx)
        self.assertEqual([len(w["queues"]) for w in r["workers"]], [1, 1], r["workers"])
        dropped, duped = self.nft_counter("dropped", "ip"), self.nft_counter("duped", "ip")
        lost = gs["tx_frames"] - (rs["rx_frames"] - rs["duplicates"])
        self.assertEqual((gs["tx_frames"], lost, rs["duplicates"]), (RATE, RATE // 50, (RATE - RATE // 50) // 10), rs)
        self.assertEqual((dropped, duped), (lost, rs["duplicates"]))
        self.assertEqual((rs["reordered"], rs["beyond_window"], rs["bad_flow"], rs["unknown_lane"], rs["rx_queues"]),
                         (0, 0, 0, 0, 2), rs)
        # the size classes too: a lane starts the size cycle where its first number falls
        self.assertEqual(sum(c["rx_frames"] for c in rs["classes"]), rs["rx_frames"] - rs["duplicates"], rs["classes"])
        for gc, rc in zip(gs["classes"], rs["classes"]):
            self.assertLessEqual(rc["rx_frames"], gc["tx_frames"], (gc, rc))

        # The control: a receiver not told the lanes keeps state for lane 0 only. Lane 1's frames (half of
        # what the router forwards) are counted apart as the tester's, never as received and never silently.
        gen.cmd("STREAM id=1 tx=0 rx=none " + spec)
        self.assertEqual(rcv.cmd("STREAM id=1 tx=none rx=0 " + spec)["lanes"], 1)
        g, r = self.split_trial(gen, rcv, 1, 20)
        rs = r["streams"][0]
        arrived = RATE - self.nft_counter("dropped", "ip") + self.nft_counter("duped", "ip")
        print("control: rx %d unknown_lane %d of %d arrived" % (rs["rx_frames"], rs["unknown_lane"], arrived), file=sys.stderr)
        self.assertEqual(rs["rx_frames"] + rs["unknown_lane"], arrived, rs)
        self.assertTrue(0.4 * arrived < rs["unknown_lane"] < 0.6 * arrived, rs)
        self.assertEqual(rs["bad_flow"], 0, rs)


class FanoutRollover(QueuesBase):
    """af_packet's queues are sockets of one fanout group with rollover: when a socket's ring is nearly full
    (its worker is behind), the kernel hands frames of its flows to another socket before it drops any.
    The flow then arrives on two queues, whose windows count its duplicates and its order apart, so the
    trial's counts are no longer exact: the engine must say so (rx_kernel_rollovers), for the runner to
    hold the trial invalid. A receiver stopped for PAUSE_MS while one flow arrives at RATE fills its ring
    (512 frames); a clean trial reports none."""

    PAUSE_MS = 40

    def test_frames_the_kernel_rolled_over_to_another_queue_are_reported(self):
        gns, xns = self.two_nodes()
        gen = Engine(gns, ["t0"], tag="rg", extra=self.EXTRA)
        self.addCleanup(gen.close)
        rcv = Engine(xns, ["t1"], tag="rr", lcores=TWO, qpairs=2, extra=self.EXTRA)
        self.addCleanup(rcv.close)
        for e, net in ((gen, 18), (rcv, 19)):
            e.cmd("PORT id=0 ip4=198.%d.1.2/24 gw4=198.%d.1.1" % (net, net))
            e.cmd("RESOLVE id=0 timeout_ms=3000")
        spec = "src=198.18.1.2 dst=198.19.1.2 sizes=64"  # one flow: one queue, until it rolls over
        gen.cmd("STREAM id=0 tx=0 rx=none " + spec)
        rcv.cmd("STREAM id=0 tx=none rx=0 " + spec)

        def trial(tid, pause):
            rcv.cmd("TRIAL streams=0 rates=0 unit=fps duration_ms=2000 drain_ms=500 id=%d" % tid)
            gen.cmd("TRIAL streams=0 rates=%d unit=fps duration_ms=1000 drain_ms=500 id=%d" % (2 * RATE, tid))
            if pause:
                time.sleep(0.4)
                os.kill(rcv.proc.pid, signal.SIGSTOP)
                time.sleep(self.PAUSE_MS / 1000)
                os.kill(rcv.proc.pid, signal.SIGCONT)
            gen.cmd("WAIT timeout_ms=30000")
            rcv.cmd("WAIT timeout_ms=30000")
            return gen.cmd("RESULT"), rcv.cmd("RESULT")

        g, r = trial(30, False)
        port = r["ports"][0]
        print("\nclean: rx %d, rollovers %d, kernel drops %d" % (r["streams"][0]["rx_frames"], port["rx_kernel_rollovers"],
                                                               port["rx_kernel_drops"]), file=sys.stderr)
        # a receiver that kept up rolls nothing over. The kernel moves a flow once less than a quarter of its ring
        # is free: a worker the OS stopped on a loaded host for 3/4 of the time the ring takes to fill (512 frames
        # at 2 * RATE: 19.2 of 25.6 ms) may see it, and says it paused as long (max_gap_ns), or its frames say
        # they waited as long (rx_wait_max_ns). The ring fills faster when the generator, held up on a loaded
        # host, sends what it owes in a burst (rx_peak_fps): measured in CI, 675 kframes/s fill it in 0.76 ms.
        gap = max([w["max_gap_ns"] for w in r["workers"] if any(q["rx_frames"] for q in w["queues"])] or [0])
        gap = max(gap, port["rx_wait_max_ns"])
        fill_ns = 512 * 1e9 / max(2 * RATE, port["rx_peak_fps"])
        clean_shown = port["rx_kernel_drops"] == 0 and gap < 0.75 * fill_ns
        if clean_shown:
            self.assertEqual(port["rx_kernel_rollovers"], 0, "a receiver that kept up (longest pause %d ns) had frames rolled over: %s" % (gap, port))
        g, r = trial(31, True)
        port, rs = r["ports"][0], r["streams"][0]
        print("paused %d ms: rx %d of %d, rollovers %d, kernel drops %d, rx per queue %s" % (
            self.PAUSE_MS, rs["rx_frames"], g["streams"][0]["tx_frames"], port["rx_kernel_rollovers"],
            port["rx_kernel_drops"], rx_per_queue(r, 0)), file=sys.stderr)
        self.assertGreater(port["rx_kernel_rollovers"], 0, "the kernel moved frames of the paused queue to the other: %s" % port)
        # the frames it moved arrived on the other queue: the one flow is on both
        self.assertTrue(min(rx_per_queue(r, 0)) > 0, rx_per_queue(r, 0))
        if not clean_shown:
            skip_for_load(self, "all else shown; the clean trial's receiver paused %d ns or its kernel ring dropped on "
                                "this loaded host, so that it rolls nothing over was not" % gap)


class ReorderingLineQueues(test_more.Line):
    """A line that holds every fourth frame 14 ms longer than the others, frames 10 ms apart: each held frame
    is overtaken by the next (4 ms sooner out of the line) and by no other (6 ms later still), of other flows. Reordering is counted within each RX queue's arrival order
    (the order between two queues is not observable): the held frames whose successor landed on the same
    queue. One worker serving both queues counts what two do: which frames the line holds is the same in
    every trial (each sends a multiple of four frames), and the flows and so the queues of the frames too."""

    FPS = 100

    def test_one_and_two_workers_on_two_queues_count_the_same_reordering(self):
        self.start_line(2000, 14000, 4)
        counts = {}
        for lcores in (ONE, TWO):
            e = Engine(self.tns, ["t0", "t1"], tag="dq", lcores=lcores, extra=("--rx-sleep-us", "50"), qpairs=(1, 2))
            self.engines.append(e)
            e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=%s" % self.net.mac("t1", self.tns))
            e.cmd("PORT id=1 ip4=198.19.1.2/24 peer_mac=%s" % self.net.mac("t0", self.tns))
            e.cmd("STREAM id=0 tx=0 rx=1 src=198.18.1.2 dst=198.19.1.2 flows=%d vary=sport sizes=128" % FLOWS)
            r, _, _ = self.clean_trial(e, 2000000, max_gap_ns=None)
            s = r["streams"][0]
            self.assertEqual(len(r["workers"]), 1 if lcores == ONE else 2)
            self.assertTrue(min(rx_per_queue(r, 1)) > 0, rx_per_queue(r, 1))
            self.assertEqual((s["tx_frames"], s["rx_frames"], missing(s), s["duplicates"]), (2 * self.FPS, 2 * self.FPS, 0, 0), s)
            # some held frames were overtaken on their own queue, none but held ones
            self.assertTrue(0 < s["reordered"] <= 2 * self.FPS // 4 + 1, s)
            print("\n%s: rx per queue %s, reordered %d" % (lcores, rx_per_queue(r, 1), s["reordered"]), file=sys.stderr)
            counts[lcores] = (s["reordered"], s["max_late"])
            e.close()
            self.engines.remove(e)
        self.assertEqual(len(set(counts.values())), 1, "one worker and two counted differently: %s" % counts)


class InFlowReorderingLineQueues(test_more.Line):
    """Loss, duplicates and reordering against the DUT's own truth when one stream's flows arrive on two RX
    queues, with one worker serving both and with one worker each. The line (delayline.py --in-flow) sends
    every EVERY-th frame right after the next frame of its own flow (a flow is a UDP source port: the stream
    varies sport), so that frame is overtaken by its flow's next frame and by the frames of other flows that
    arrived between the two, and nothing else is reordered; a frame whose flow has no next frame (the end of
    the trial) leaves in its place after EXTRA_US, the frames behind it waiting, so it is overtaken by none.
    Every frame of a flow lands on one RX queue (the kernel's flow hash, seeded at random), so each frame the
    line reordered is counted reordered by its own queue's worker whatever queue the hash chose, and no
    other frame is: the engine's `reordered` must equal the line's overtaken_in_flow exactly. (A line that
    let a frame be overtaken only by other flows' frames would make the truth depend on the hash: the line
    says so, overtaken above overtaken_in_flow, and the test requires it not to.) The line also sends every
    DUP-th frame twice, the copy identical and right after it: the copy lands on its original's queue, and
    the engine's `duplicates` must equal the line's dups and its rx_frames the frames sent plus them, with
    nothing missing.

    EVERY is prime to FLOWS, so a frame's flow's next frame (FLOWS later) is never held itself, and DUP too,
    so the copies are of every flow's frames (on both queues), some of them of held frames (a copy of a
    reordered frame is a duplicate, not reordered again); a trial's frames are a multiple of both, so the
    line does the same in every trial. Frames are 1000 / FPS ms apart, a flow's next frame FLOWS times that
    (67 ms), well within EXTRA_US. 16 flows put all on one of two queues with a chance of 2 in 2^16; the test
    requires both to receive."""

    FPS = 240
    FLOWS, EVERY, DUP = 16, 5, 3
    EXTRA_US = 200000

    def test_one_and_two_workers_count_the_lines_truth_on_two_queues(self):
        self.start_line(2000, self.EXTRA_US, self.EVERY, ("--in-flow", "--dup-every", str(self.DUP)))
        sent = 2 * self.FPS
        # held frames whose flow has a next frame in the trial: all but those of the last FLOWS frames
        held = len([n for n in range(sent - self.FLOWS) if n % self.EVERY == self.EVERY - 1])
        counts, truths = {}, {}
        for lcores, layout in ((ONE, [[(0, 0), (1, 0), (1, 1)]]), (TWO, [[(0, 0), (1, 1)], [(1, 0)]])):
            e = Engine(self.tns, ["t0", "t1"], tag="if", lcores=lcores, extra=("--rx-sleep-us", "50"), qpairs=(1, 2))
            self.engines.append(e)
            e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=%s" % self.net.mac("t1", self.tns))
            e.cmd("PORT id=1 ip4=198.19.1.2/24 peer_mac=%s" % self.net.mac("t0", self.tns))
            e.cmd("STREAM id=0 tx=0 rx=1 src=198.18.1.2 dst=198.19.1.2 flows=%d vary=sport sizes=128" % self.FLOWS)
            self.line_stats()
            # the frames a flow's frame waits for leave at most EXTRA_US later, well within the drain
            r = e.trial([0], [self.FPS], duration_ms=2000, drain_ms=1000)
            line = {k: int(v) for k, v in self.line_stats().items()}
            s = r["streams"][0]
            per_queue = rx_per_queue(r, 1)
            print("\n%s: line %s; engine tx %d rx %d missing %d duplicates %d reordered %d max_late %d, rx per queue %s"
                  % (lcores, line, s["tx_frames"], s["rx_frames"], missing(s), s["duplicates"], s["reordered"],
                     s["max_late"], per_queue), file=sys.stderr)
            self.assertEqual(queues(r), layout, r["workers"])
            self.assertEqual(s["rx_queues"], 2, s)
            self.assertTrue(len(per_queue) == 2 and min(per_queue) > 0, per_queue)
            # the line forwarded the trial's frames and nothing else, and reordered within flows only
            self.assertEqual(line["frames"], sent, line)
            self.assertEqual(line["overtaken"], line["overtaken_in_flow"], line)
            # not vacuous: nearly every held frame was overtaken (its flow's next frame came in time), and
            # every DUP-th frame was sent twice
            self.assertGreaterEqual(line["overtaken_in_flow"], held * 9 // 10, line)
            self.assertGreaterEqual(line["dups"], sent // self.DUP * 9 // 10, line)
            self.assertEqual((s["tx_frames"], s["rx_frames"], missing(s), s["duplicates"], s["reordered"]),
                             (sent, sent + line["dups"], 0, line["dups"], line["overtaken_in_flow"]), (lcores, line, s))
            self.assertEqual((s["beyond_window"], s["bad_flow"], s["corrupted"]), (0, 0, 0), s)
            counts[lcores] = (s["rx_frames"], s["duplicates"], s["reordered"], s["max_late"])
            truths[lcores] = line["overtaken_in_flow"], line["dups"]
            e.close()
            self.engines.remove(e)
        # the line did the same in both trials (unless the OS delayed a flow's next frame by EXTRA_US), and
        # then one worker and two counted the same
        if len(set(truths.values())) == 1:
            self.assertEqual(len(set(counts.values())), 1, "one worker and two counted differently: %s" % counts)


def read(path):
    with open(path) as f:
        return f.read()


class PoolsGrowWithQueues(unittest.TestCase):
    """Each queue pair's rings hold 1024 mbufs of the RX and of the TX pool while they wait: 16 pairs (two
    net_ring ports of 8) hold all 16383 of the default pools. Unless told --mbufs, the engine makes its pools
    hold what the rings and the lcores' caches do and 4096 more (32767 here, as it says), and a trial on every
    queue counts exactly; told too few, it says so."""

    def start(self, extra):
        tag = "pg%d" % len(extra)
        sock = "/tmp/lrt-%d-%s.sock" % (os.getpid(), tag)
        log = "/tmp/lrt-%d-%s.log" % (os.getpid(), tag)
        self.addCleanup(lambda: [os.path.exists(f) and os.unlink(f) for f in (sock, log)])
        args = [test_more.ENGINE, "--no-pci", "--no-huge", "-m", "512", "--no-shconf", "--file-prefix",
                "lrt%d%s" % (os.getpid(), tag), "--lcores", TWO, "--log-level", "lib.eal:error",
                "--vdev", "net_ring0", "--vdev", "net_ring1", "--", "--control", sock, "--queues", "8"] + extra
        with open(log, "w") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        deadline = time.time() + 30
        while not os.path.exists(sock):
            self.assertIsNone(proc.poll(), read(log))
            self.assertLess(time.time(), deadline, "engine did not start")
            time.sleep(0.05)
        conn = socket.socket(socket.AF_UNIX)
        conn.connect(sock)
        self.addCleanup(conn.close)
        rfile = conn.makefile("r")

        def cmd(line):
            conn.sendall((line + "\n").encode())
            r = json.loads(rfile.readline())
            self.assertTrue(r["ok"], r)
            return r
        return cmd, log

    def test_default_pools_hold_sixteen_queue_pairs(self):
        cmd, log = self.start([])
        for port in (0, 1):
            cmd("PORT id=%d ip4=198.18.%d.2/24 peer_mac=02:00:00:00:00:0%d" % (port, port + 1, port + 1))
            # net_ring: TX queue k lands on RX queue k, so each worker's lane comes back to its own queue
            cmd("STREAM id=%d tx=%d rx=%d src=198.18.%d.2 dst=198.19.1.2 sizes=64 flows=16" % (port, port, port, port + 1))
        cmd("TRIAL streams=0,1 rates=100000,100000 unit=fps duration_ms=500 drain_ms=100")
        cmd("WAIT timeout_ms=60000")
        r = cmd("RESULT")
        for s in r["streams"]:
            skip_if_sent_short(self, s)
            self.assertEqual((s["tx_frames"], s["rx_frames"], missing(s), s["duplicates"], s["rx_queues"]),
                             (50000, 50000, 0, 0, 8), s)
        for p in r["ports"]:
            self.assertEqual(p["rx_nombuf"], 0, p)
        self.assertEqual(sum(len(w["queues"]) for w in r["workers"]), 16, r["workers"])
        self.assertNotIn("give --mbufs", read(log))
        self.assertIn("mbuf pools of 32767 each (RX and TX), 16 queue pairs", read(log))
        cmd("QUIT")

    def test_too_few_mbufs_given_are_said(self):
        cmd, log = self.start(["--mbufs", "8191"])
        self.assertIn("16 queue pairs' rings hold up to 16384 of the 8191 mbufs: give --mbufs 21632 or more", read(log))
        cmd("QUIT")


if __name__ == "__main__":
    unittest.main()
