"""The engine's timeline (protocol 8) against DUTs whose truth is known, in network namespaces these tests create.

The DUT is test_engine's router namespace (t0 <-> r0 [ip_forward] r1 <-> t1). The test makes the outages
itself, while one timeline trial runs: an nft rule that drops everything toward the receiving side, added
and deleted (its named counter says exactly how many frames the DUT dropped), forwarding switched off and
on, a drop of 1 in N by numgen. The engine's clock (TIME) is read just before and just after each command
that starts or ends an outage, so the outage the timeline reports is placed against what the test measured
on the very clock the timeline uses. A bump in the wire (delayline.py) that holds every frame longer than
settle_ms makes every frame lost in the timeline and received in RESULT. The tester's own troubles (the
engine stopped by SIGSTOP) must be flagged as the tester's, never reported as the DUT's outage. And the
engine's memory stays flat over a long trial on windows far shorter than it; refusals name their key.

Run as root: python3 tests/test_timeline.py -v
"""
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lrtest import ENGINE, Engine, missing, sh, skip_for_load, skip_if_sent_short  # noqa: E402
import test_engine  # noqa: E402

BIN_MS = 100
SETTLE_MS = 200
# A worker pause or a sending lag below this spoils no count at the rates of the DUT tests (at 2000 frames/s
# 20 ms is 40 frames, against an RX ring of 512 and a kernel backlog of 1000); the engine's default (1 ms)
# would flag the hiccups of this 2-vCPU VM's host, whose threads wake up to 40 ms late. A lag that large does
# move which frames meet a hold, so the bounds on an outage's place allow for the lag the trial had.
TESTER_MS = 20
# Only measured frames are the DUT's truth: the tag's warm-up flag (UDP payload byte 2, bit 0) is clear.
MEASURED = "@th,87,1 0"
TOWARD_RECEIVER = "ip daddr 198.19.1.0/24 " + MEASURED
# bin flags (PROTOCOL.md, "The timeline")
LAG, PAUSE, RX_DROP, WINDOW = 1, 2, 4, 8


def flag_names(flags):
    return "+".join(n for b, n in ((LAG, "lag"), (PAUSE, "pause"), (RX_DROP, "rx-drop"), (WINDOW, "window"))
                    if flags & b) or "none"


def scheduled_in_bin(index, rate, bin_ms, positions):
    """Positions of the schedule due in bin index: frame P is due at P / rate, bin i holds [i, i+1) x bin_ms."""
    def first_at_or_after(ms):  # the first P with P / rate >= ms / 1000
        v = Fraction(ms) * Fraction(rate) / 1000
        return min(positions, -(-v.numerator // v.denominator))
    return first_at_or_after((index + 1) * bin_ms) - first_at_or_after(index * bin_ms)


def engine_pid(proc):
    """The engine's PID: `ip netns exec` execs it, so it is normally the Popen's own; else its child."""
    want = os.path.realpath(ENGINE)
    with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
        children = [int(c) for c in f.read().split()]
    for pid in [proc.pid] + children:
        if os.path.realpath("/proc/%d/exe" % pid) == want:
            return pid
    raise AssertionError("no linerate-engine process under PID %d" % proc.pid)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for PID %d" % pid)


def rss_while_running(e, pid, t0):
    """(seconds since t0, VmRSS KiB) every second while the engine's trial runs or drains."""
    samples = []
    while e.cmd("POLL")["state"] in ("running", "draining"):
        samples.append((time.monotonic() - t0, rss_kib(pid)))
        time.sleep(1)
    return samples


class Hold:
    """One outage the test made: the engine's clock just before the command that started it (t1), just after
    it (t2), just before the command that ended it (t3), and just after that (t4). The DUT dropped from some
    moment in [t1, t2] to some moment in [t3, t4]."""

    def __init__(self, e, start, end, seconds):
        self.t1 = now(e)
        start()
        self.t2 = now(e)
        time.sleep(seconds)
        self.t3 = now(e)
        end()
        self.t4 = now(e)

    def __repr__(self):
        return "hold(t1=%d t2=%d t3=%d t4=%d: inner %.1f ms, outer %.1f ms)" % (
            self.t1, self.t2, self.t3, self.t4, (self.t3 - self.t2) / 1e6, (self.t4 - self.t1) / 1e6)


def now(e):
    return e.cmd("TIME")["ns"]


def sleep_until(t):
    time.sleep(max(0.0, t - time.monotonic()))


class TimelineBase(test_engine.Base):
    """The router of test_engine, trials with a timeline, and what every timeline must satisfy."""

    def stream(self, e):
        e.cmd("STREAM id=0 tx=0 rx=1 src=198.18.1.2 dst=198.19.1.2 sizes=64")

    def start(self, e, rate, duration_ms, **kw):
        """Starts a timeline trial of stream 0; returns when it measures (time.monotonic() then)."""
        keys = dict(bin_ms=BIN_MS, settle_ms=SETTLE_MS, drain_ms=300)
        keys.update(kw)
        self.gap_ms = int(keys.get("tester_gap_ms", 1))
        e.cmd("TRIAL streams=0 rates=%s unit=fps duration_ms=%d " % (rate, duration_ms) +
              " ".join("%s=%s" % kv for kv in keys.items()))
        deadline = time.monotonic() + 5
        while e.cmd("POLL")["state"] not in ("running", "draining", "done", "aborted"):
            self.assertLess(time.monotonic(), deadline, "the trial never started measuring")
            time.sleep(0.005)
        return time.monotonic()

    def finish(self, e):
        """RESULT and the whole timeline (every bin and outage, paged) of the trial, once it is done."""
        w = e.cmd("WAIT timeout_ms=600000")
        self.assertEqual(w["state"], "done", w)
        r = e.cmd("RESULT")
        tl, bins, outages = self.whole_timeline(e)
        return r, tl, bins, outages

    def whole_timeline(self, e):
        bins, outages = [], []
        while True:
            tl = e.cmd("TIMELINE from_bin=%d from_outage=%d max_bins=1000" % (len(bins), len(outages)))
            self.assertEqual(tl["state"], "done", "TIMELINE after WAIT answers for the finished trial")
            st = tl["streams"][0]
            self.assertEqual((st["first_bin"], st["first_outage"]), (0, 0), "nothing of a short trial is dropped")
            bins += st["bins"]
            outages += st["outages"]
            if not st["bins"] and not st["outages"]:
                break
        return tl, bins, outages

    def books(self, r, tl, bins, outages, rate, duration_ms):
        """What holds of every finished timeline whatever happened in the trial: every position of the
        schedule judged once, in the bin it was due in, and the timeline's loss that of RESULT's counts."""
        s, st = r["streams"][0], tl["streams"][0]
        positions = -(-duration_ms * rate // 1000)
        self.assertEqual((tl["bin_ms"], tl["settle_ms"], st["id"], st["rate_fps"]), (BIN_MS, SETTLE_MS, 0, rate))
        self.assertEqual((st["positions"], s["scheduled_frames"]), (positions, positions))
        skip_if_sent_short(self, s)  # (a busy host kept the sender off its CPU at the end: it said so)
        self.assertEqual(s["tx_frames"], positions, "a paced trial sends every position (else it is saturated)")
        self.assertEqual(st["judged"], positions, "once the trial is done, every position has been judged")
        self.assertEqual(st["received"] + st["lost"], st["judged"], st)
        nbins = -(-duration_ms // BIN_MS)
        self.assertEqual(st["bins_done"], nbins)
        self.assertEqual([b[0] for b in bins], list(range(nbins)), "every bin once, in order")
        for index, sent, received, lost, flags in bins:
            self.assertEqual(sent, scheduled_in_bin(index, rate, BIN_MS, positions),
                             "bin %d holds the positions due in it" % index)
            self.assertEqual(received + lost, sent, "bin %d" % index)
        self.assertEqual(sum(b[1] for b in bins), s["tx_frames"])
        self.assertEqual(sum(b[2] for b in bins), st["received"])
        self.assertEqual(sum(b[3] for b in bins), st["lost"])
        # a frame later than settle_ms is the timeline's loss and RESULT's receipt
        self.assertEqual(st["lost"], missing(s) + st["late_after_settle"], (s, st))
        self.assertEqual(st["outages_found"], len(outages))
        self.assertEqual([o["n"] for o in outages], list(range(len(outages))))
        self.assertEqual(st["outage_frames"], sum(o["frames"] for o in outages))
        self.assertEqual(st["lost"], st["scattered"] + st["outage_frames"],
                         "a lost position is in an outage or scattered")
        # a pause is a worker's gap beyond any sleep it chose, which RESULT measures too: a sleep the worker
        # chose (nothing to receive or send at the end of a trial) is none
        gap_ns = max(w["max_gap_ns"] for w in r["workers"])
        paused = [b for b in bins if b[4] & PAUSE]
        if paused:
            self.assertGreater(gap_ns, self.gap_ms * 1_000_000,
                               "bins %s flagged pause, but no worker went more than tester_gap_ms (%d ms) between "
                               "two passes beyond the sleeps it chose (max_gap_ns %d)" % (paused, self.gap_ms, gap_ns))
        interval_ns = 1e9 / rate
        for o in outages:
            self.assertEqual(o["frames"], o["last"] - o["first"] + 1, o)
            self.assertGreaterEqual(o["frames"], 2, "outage_frames is 2 by default: %s" % o)
            self.assertAlmostEqual(o["length_ns"], o["frames"] * interval_ns, delta=1, msg=o)
            self.assertAlmostEqual(o["start_ns"], tl["start_ns"] + o["first"] * interval_ns, delta=1000,
                                   msg="an outage starts when its first frame was due: %s" % o)
            its_bins = self.bins_of(tl, bins, o)
            self.assertGreaterEqual(sum(b[3] for b in its_bins), o["frames"],
                                    "an outage's frames are lost in its bins: %s" % o)
            self.assertEqual(o["tester"], any(b[4] for b in its_bins),
                             "an outage is the tester's exactly when one of its bins is flagged: %s in %s" %
                             (o, its_bins))

    def bin_of(self, tl, t_ns):
        return int((t_ns - tl["start_ns"]) // (tl["bin_ms"] * 1_000_000))

    def outage_during(self, tl, outages, hold, rate):
        """The outage a hold made: the one with frames due in [t1 - settle_ms, t4]. A frame the DUT dropped in
        the hold was due by t4, and sent after t1; one sent more than settle_ms after it was due is late
        after settle, which the test takes as the tester's spoil before it looks here."""
        lo = hold.t1 - SETTLE_MS * 1_000_000
        found = [o for o in outages if o["start_ns"] <= hold.t4 and o["start_ns"] + o["length_ns"] >= lo]
        self.assertEqual(len(found), 1, "one outage for %s, found %s" % (hold, outages))
        return found[0]

    def spoiled_by_tester(self, r, st, bins):
        """Why the tester's own part spoiled counts the DUT's truth needs (frames it dropped on receipt, or
        sent later than the timeline waits for), checking the engine flagged it; None if it did not."""
        s = r["streams"][0]
        drops = {k: sum(p[k] for p in r["ports"]) for k in ("rx_kernel_drops", "rx_kernel_rollovers",
                                                           "rx_kernel_unread", "imissed", "rx_nombuf", "ierrors")}
        why = []
        if any(drops.values()):
            self.assertTrue(any(b[4] & RX_DROP for b in bins),
                            "the ports counted drops %s: bins must say rx-drop" % drops)
            why.append("the tester's ports dropped frames %s" % drops)
        if st["late_after_settle"]:
            self.assertTrue(any(b[4] & (LAG | PAUSE) for b in bins),
                            "%d frames came after settle_ms with no lag or pause flagged" % st["late_after_settle"])
            why.append("%d frames arrived after settle_ms (lag %d ns)" % (st["late_after_settle"], s["tx_max_lag_ns"]))
        if s["saturated"]:
            why.append("the engine could not offer the rate")
        return "; ".join(why) or None

    def check_hold(self, tl, o, hold, rate, lag_ns):
        """An outage the DUT made, placed against the hold the test measured on the engine's clock. A frame is
        never sent before it is due, and at most lag_ns after it: the first frame due after t2 was dropped, the
        first dropped was due no earlier than t1 - lag; the last dropped was due no later than t4, and the
        last frame due before t3 - lag was dropped. Two frame intervals of slack on each side."""
        interval = 1e9 / rate
        slack = lag_ns + 2 * interval
        first_due, last_due = o["start_ns"], o["start_ns"] + (o["frames"] - 1) * interval
        msg = "%s against %s (lag allowed %d ns)" % (o, hold, lag_ns)
        self.assertFalse(o["open"], msg)
        self.assertGreaterEqual(first_due, hold.t1 - slack, msg)
        self.assertLessEqual(first_due, hold.t2 + 2 * interval, msg)
        self.assertGreaterEqual(last_due, hold.t3 - slack, msg)
        self.assertLessEqual(last_due, hold.t4 + 2 * interval, msg)
        self.assertLessEqual(o["length_ns"], hold.t4 - hold.t1 + slack, msg)
        self.assertGreaterEqual(o["length_ns"], hold.t3 - hold.t2 - slack, msg)

    def lag_allowed(self, r, rate):
        """How late a frame near an outage the tester did not flag may have left: the trial's largest lag, and
        never more than what the lag flag lets pass (tester_lag_ms and two frames)."""
        return min(r["streams"][0]["tx_max_lag_ns"], TESTER_MS * 1e6 + 2 * 1e9 / rate)

    def bins_of(self, tl, bins, o):
        """The bins an outage's frames were due in."""
        last_due = o["start_ns"] + (o["frames"] - 1) * 1e9 / tl["streams"][0]["rate_fps"]
        return [b for b in bins if self.bin_of(tl, o["start_ns"]) <= b[0] <= self.bin_of(tl, last_due)]

    def spoiled_outage(self, tl, bins, o):
        return "outage %s in bins flagged %s" % (o, [flag_names(b[4]) for b in self.bins_of(tl, bins, o)])


class DutOutages(TimelineBase):
    RATE = 2000

    def drop_table(self, rule=""):
        """The router's table of the drop tests: a counter "dropped" and a forward chain holding rule."""
        self.nft("""table inet lrt
delete table inet lrt
table inet lrt {
  counter dropped {}
  chain lrfwd { type filter hook forward priority 0; policy accept;
    %s
  }
}""" % rule)

    def test_two_holds_are_two_outages_of_exactly_the_frames_dropped(self):
        """An nft rule drops everything toward the receiver twice, ~200 ms and ~2 s, in one 8 s trial: the
        timeline reports exactly two outages of the DUT, each of exactly the frames its rule's counter
        dropped, placed where the holds were; all the loss of the trial is theirs."""
        e = self.router()
        self.stream(e)
        rate, duration_ms = self.RATE, 8000
        rns = self.rns

        def drop(counter):
            return lambda: sh("nft", "add", "rule", "inet", "lrt", "lrfwd", *TOWARD_RECEIVER.split(),
                              "counter", "name", counter, "drop", ns=rns)

        def forward():
            sh("nft", "flush", "chain", "inet", "lrt", "lrfwd", ns=rns)

        for attempt in range(2):
            self.nft("""table inet lrt
delete table inet lrt
table inet lrt {
  counter hold1 {}
  counter hold2 {}
  chain lrfwd { type filter hook forward priority 0; policy accept; }
}""")
            t0 = self.start(e, rate, duration_ms, tester_lag_ms=TESTER_MS, tester_gap_ms=TESTER_MS)
            sleep_until(t0 + 1.5)
            holds = [Hold(e, drop("hold1"), forward, 0.2)]
            sleep_until(t0 + 3.5)
            holds.append(Hold(e, drop("hold2"), forward, 2.0))
            self.assertLess(time.monotonic() - t0, duration_ms / 1000 - 1, "the holds ended well inside the trial")
            r, tl, bins, outages = self.finish(e)
            truth = [self.nft_counter("hold1"), self.nft_counter("hold2")]
            s, st = r["streams"][0], tl["streams"][0]
            self.books(r, tl, bins, outages, rate, duration_ms)
            self.assertGreater(min(truth), 100, "the DUT dropped in both holds: %s" % truth)
            spoiled = self.spoiled_by_tester(r, st, bins)
            if spoiled:
                continue
            self.assertEqual(missing(s), sum(truth), "RESULT's loss is what the DUT dropped")
            self.assertEqual(st["lost"], sum(truth), "the timeline's loss is what the DUT dropped")
            mine = [self.outage_during(tl, outages, h, rate) for h in holds]
            self.assertEqual([o["frames"] for o in mine], truth, "each outage is exactly its hold's drops")
            self.assertEqual(st["scattered"], 0)
            spoiled = "; ".join(self.spoiled_outage(tl, bins, o) for o in mine if o["tester"])
            if spoiled:
                continue
            self.assertEqual([o for o in outages if not o["tester"]], mine, "the DUT's outages are the two holds")
            for o, h in zip(mine, holds):
                self.check_hold(tl, o, h, rate, self.lag_allowed(r, rate))
            return
        skip_for_load(self, "the tester spoiled both trials, and said so: " + spoiled)

    def test_one_in_n_dropped_is_scattered_loss_and_no_outage(self):
        """numgen drops 1 in 37: never two in a row, so no outage; the scattered loss is exactly the frames the
        rule dropped, every 37th position in every bin."""
        e = self.router()
        self.stream(e)
        rate, duration_ms, n = self.RATE, 3000, 37
        for attempt in range(2):
            self.drop_table('%s numgen inc mod %d == 0 counter name "dropped" drop' % (TOWARD_RECEIVER, n))
            self.start(e, rate, duration_ms, tester_lag_ms=TESTER_MS, tester_gap_ms=TESTER_MS)
            r, tl, bins, outages = self.finish(e)
            dropped = self.nft_counter("dropped")
            s, st = r["streams"][0], tl["streams"][0]
            self.books(r, tl, bins, outages, rate, duration_ms)
            spoiled = self.spoiled_by_tester(r, st, bins)
            if spoiled:
                continue
            positions = st["positions"]
            self.assertIn(dropped, (positions // n, -(-positions // n)), "numgen dropped 1 in %d" % n)
            self.assertEqual((st["lost"], st["scattered"], missing(s)), (dropped, dropped, dropped))
            self.assertEqual((outages, st["outages_found"], st["outage_frames"]), ([], 0, 0))
            # the DUT dropped positions phase, phase + n, ..: each bin's loss is the count of those in it
            per_bin = [b[3] for b in bins]
            phases = [p for p in range(n) if per_bin == [
                sum(1 for q in range(b * rate * BIN_MS // 1000, (b + 1) * rate * BIN_MS // 1000) if q % n == p)
                for b in range(len(bins))]]
            self.assertTrue(phases, "the bins' loss %s is no 1-in-%d drop" % (per_bin, n))
            return
        skip_for_load(self, "the tester spoiled both trials, and said so: " + spoiled)

    def test_forwarding_off_is_one_outage(self):
        """The DUT stops forwarding (ip_forward=0) for ~500 ms: one outage of exactly the frames the router
        received and did not forward, where the sysctl writes put it, and no other."""
        e = self.router()
        self.stream(e)
        rate, duration_ms = self.RATE, 4000
        rns = self.rns

        def forwarding(on):
            return lambda: sh("sysctl", "-qw", "net.ipv4.ip_forward=%d" % on, ns=rns)

        for attempt in range(2):
            # what reached the router for the receiver, and what it sent there
            self.nft("""table inet lrt
delete table inet lrt
table inet lrt {
  counter seen {}
  counter forwarded {}
  chain pre { type filter hook prerouting priority 0; policy accept;
    %s counter name "seen"
  }
  chain post { type filter hook postrouting priority 0; policy accept;
    oifname "r1" %s counter name "forwarded"
  }
}""" % (TOWARD_RECEIVER, TOWARD_RECEIVER))
            t0 = self.start(e, rate, duration_ms, tester_lag_ms=TESTER_MS, tester_gap_ms=TESTER_MS)
            sleep_until(t0 + 1.5)
            hold = Hold(e, forwarding(0), forwarding(1), 0.5)
            r, tl, bins, outages = self.finish(e)
            dropped = self.nft_counter("seen") - self.nft_counter("forwarded")
            s, st = r["streams"][0], tl["streams"][0]
            self.books(r, tl, bins, outages, rate, duration_ms)
            self.assertEqual(self.nft_counter("seen"), st["positions"], "every frame reached the router")
            self.assertGreater(dropped, 100, "the router dropped while it did not forward")
            spoiled = self.spoiled_by_tester(r, st, bins)
            if spoiled:
                continue
            self.assertEqual((missing(s), st["lost"]), (dropped, dropped))
            o = self.outage_during(tl, outages, hold, rate)
            self.assertEqual((o["frames"], st["scattered"]), (dropped, 0))
            if o["tester"]:
                spoiled = self.spoiled_outage(tl, bins, o)
                continue
            self.assertEqual([x for x in outages if not x["tester"]], [o], "one outage of the DUT")
            self.check_hold(tl, o, hold, rate, self.lag_allowed(r, rate))
            return
        skip_for_load(self, "the tester spoiled both trials, and said so: " + spoiled)


    def test_loss_in_the_last_bins_is_the_duts(self):
        """numgen drops 1 in 23 in the trial's last ~300 ms only: the loss is scattered, exactly the rule's
        drops, in the last bins, and those bins are the DUT's. After its last frame the tester has nothing to
        send and, once the last frames are in, nothing to receive: it sleeps, by choice, which is no pause
        (a chosen sleep taken for one made every DUT loss in the trial's last settle_ms the tester's)."""
        e = self.router()
        self.stream(e)
        rate, duration_ms, n = self.RATE, 2000, 23
        for attempt in range(2):
            self.drop_table()
            t0 = self.start(e, rate, duration_ms, tester_lag_ms=TESTER_MS, tester_gap_ms=TESTER_MS)
            sleep_until(t0 + duration_ms / 1000 - 0.3)
            sh("nft", "add", "rule", "inet", "lrt", "lrfwd", *TOWARD_RECEIVER.split(), "numgen", "inc", "mod", str(n),
               "==", "0", "counter", "name", "dropped", "drop", ns=self.rns)
            r, tl, bins, outages = self.finish(e)
            dropped = self.nft_counter("dropped")
            s, st = r["streams"][0], tl["streams"][0]
            self.books(r, tl, bins, outages, rate, duration_ms)
            spoiled = self.spoiled_by_tester(r, st, bins)
            if spoiled:
                continue
            self.assertGreater(dropped, 3, "the rule dropped in the last bins")
            self.assertEqual((st["lost"], st["scattered"], missing(s)), (dropped, dropped, dropped))
            lossy = [b for b in bins if b[3]]
            self.assertGreaterEqual(min(b[0] for b in lossy), len(bins) - 5, "the loss is in the last bins: %s" % lossy)
            flagged = [b for b in lossy if b[4]]
            gap_ns = max(w["max_gap_ns"] for w in r["workers"])
            if flagged and gap_ns > TESTER_MS * 1_000_000:
                spoiled = "a worker paused %d ms: %s" % (gap_ns // 1_000_000, flagged)
                continue
            self.assertEqual(flagged, [], "the DUT's loss in the last bins is the DUT's (max_gap_ns %d)" % gap_ns)
            return
        skip_for_load(self, "the tester spoiled both trials, and said so: " + spoiled)


class DutDelay(TimelineBase):
    """A DUT that delays every frame by a known time (tests/delayline.py, a bump in the wire: netem is not in
    this kernel): under settle_ms nothing is lost; over it, every frame is lost in the timeline and counted
    late_after_settle, while RESULT, whose drain waits for them, still receives every one."""

    RATE = 500  # 150 frames held in the line at 300 ms: a Python process keeps up

    def setUp(self):
        super().setUp()
        self.line = None

    def tearDown(self):
        try:
            self.stop_line()
        finally:
            super().tearDown()

    def stop_line(self):
        if self.line:
            self.line.kill()
            self.line.wait()
            self.line.stdin.close()
            self.line.stdout.close()
            self.line = None

    def start_line(self, delay_ms):
        self.stop_line()
        self.line = subprocess.Popen(["ip", "netns", "exec", self.dns, sys.executable,
                                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "delayline.py"),
                                      "d0", "d1", str(delay_ms * 1000), "0", "1"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.assertEqual(self.line.stdout.readline().strip(), "ready")

    def line_stats(self):
        self.line.stdin.write("stats\n")
        self.line.stdin.flush()
        return {k: int(v) for k, v in (kv.split("=") for kv in self.line.stdout.readline().split())}

    def test_a_frame_later_than_settle_is_lost_in_its_bin_and_received_in_result(self):
        self.tns, self.dns = self.net.ns("t"), self.net.ns("d")
        self.net.veth("t0", self.tns, "d0", self.dns)
        self.net.veth("t1", self.tns, "d1", self.dns)
        self.engine = e = Engine(self.tns, ["t0", "t1"], tag="dly")
        # transparent DUT: port 0 addresses port 1 directly
        e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=%s" % self.net.mac("t1", self.tns))
        e.cmd("PORT id=1 ip4=198.19.1.2/24 peer_mac=%s" % self.net.mac("t0", self.tns))
        self.stream(e)
        rate, duration_ms = self.RATE, 1000
        for delay_ms in (50, 300):
            self.start_line(delay_ms)
            self.start(e, rate, duration_ms, drain_ms=delay_ms + 300, tester_lag_ms=TESTER_MS,
                       tester_gap_ms=TESTER_MS)
            r, tl, bins, outages = self.finish(e)
            line = self.line_stats()
            s, st = r["streams"][0], tl["streams"][0]
            self.books(r, tl, bins, outages, rate, duration_ms)
            drops = sum(p["rx_kernel_drops"] + p["rx_kernel_rollovers"] for p in r["ports"])
            if drops:
                skip_for_load(self, "the tester's ports dropped %d frames (it said so)" % drops)
            positions = st["positions"]
            self.assertEqual((line["frames"], missing(s)), (positions, 0),
                             "the line delays every frame and drops none (delay %d ms)" % delay_ms)
            if delay_ms < SETTLE_MS:
                # a frame arrives the delay, the line's lateness and the tester's lag after it was due
                self.assertLess(delay_ms * 1e6 + line["late_max_ns"] + s["tx_max_lag_ns"], SETTLE_MS * 1e6, line)
                self.assertEqual((st["lost"], st["late_after_settle"], outages), (0, 0, []), st)
            else:
                # a frame leaves no sooner than it is due and the line holds it longer than settle_ms
                self.assertEqual((st["lost"], st["late_after_settle"], st["received"]), (positions, positions, 0), st)
                self.assertEqual([(o["first"], o["last"], o["frames"]) for o in outages],
                                 [(0, positions - 1, positions)], "one outage of every position")


class TesterStopped(TimelineBase):
    def test_a_stopped_tester_is_never_the_duts_outage(self):
        """The whole engine stopped (SIGSTOP) for ~300 ms in a trial through a DUT that drops nothing: its
        frames due then leave late, and any loss that makes is the tester's. The bins of the stop are flagged
        lag or pause, every lost frame is in a flagged bin, and no outage is the DUT's."""
        e = self.router()
        self.stream(e)
        pid = engine_pid(self.engine.proc)
        rate, duration_ms = 1000, 4000
        t0 = self.start(e, rate, duration_ms, tester_lag_ms=TESTER_MS, tester_gap_ms=TESTER_MS)
        sleep_until(t0 + 1.5)
        m0 = time.monotonic_ns()
        t_engine = now(e)
        m1 = time.monotonic_ns()
        os.kill(pid, signal.SIGSTOP)
        try:
            stopped = time.monotonic_ns()
            time.sleep(0.3)
            resumed = time.monotonic_ns()
        finally:
            os.kill(pid, signal.SIGCONT)
        r, tl, bins, outages = self.finish(e)
        s, st = r["streams"][0], tl["streams"][0]
        self.books(r, tl, bins, outages, rate, duration_ms)
        # the engine was certainly stopped over [a, b] on its own clock (read at a moment in [m0, m1];
        # a millisecond for the signal to reach every thread)
        a, b = t_engine + (stopped - m0) + 1_000_000, t_engine + (resumed - m1)
        self.assertGreater(b - a, 250_000_000)
        stop_bins = [x for x in bins if self.bin_of(tl, a) <= x[0] <= self.bin_of(tl, b)]
        self.assertTrue(stop_bins)
        self.assertEqual([x for x in stop_bins if not x[4] & (LAG | PAUSE)], [],
                         "every bin due while the tester was stopped is flagged lag or pause")
        self.assertEqual([x for x in bins if x[3] and not x[4]], [], "every lost frame is in a bin of the tester's")
        self.assertEqual([o for o in outages if not o["tester"]], [], "no outage is the DUT's")
        if not any(p["rx_kernel_drops"] for p in r["ports"]):
            self.assertEqual(missing(s), 0, "the DUT dropped nothing")


class Memory(TimelineBase):
    def test_memory_stays_flat_over_a_long_trial(self):
        """A 40 s trial at 50k frames/s on sequence windows that hold 2^18 numbers (5.2 s at that rate; the
        timeline needs only settle_ms and a second): the collector reads the windows behind the workers, and
        the engine's resident memory grows by less than 2 MiB once the windows have wrapped."""
        self.tns = self.net.ns("t")
        self.net.veth("t0", self.tns, "t1", self.tns)
        self.engine = e = Engine(self.tns, ["t0", "t1"], tag="mem", extra=("--window-bits", "18"))
        e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=%s" % self.net.mac("t1", self.tns))
        e.cmd("PORT id=1 ip4=198.19.1.2/24 peer_mac=%s" % self.net.mac("t0", self.tns))
        self.stream(e)
        pid = engine_pid(e.proc)
        rate, duration_ms = 50000, 40000
        t0 = self.start(e, rate, duration_ms)
        samples = rss_while_running(e, pid, t0)
        r, tl, bins, outages = self.finish(e)
        s, st = r["streams"][0], tl["streams"][0]
        if s["saturated"]:
            skip_for_load(self, "the engine could not offer %d frames/s here (it said so)" % rate)
        self.books(r, tl, bins, outages, rate, duration_ms)
        # a loop drops nothing: any loss is the tester's, in bins it flagged
        self.assertEqual([x for x in bins if x[3] and not x[4]], [], "loss in a loop is the tester's")
        wrapped = [kib for t, kib in samples if t >= duration_ms / 1000 / 4]
        self.assertGreater(len(wrapped), 20, samples)
        self.assertLess(max(wrapped) - wrapped[0], 2048, "VmRSS (KiB, by second) grew: %s" % samples)

    def test_memory_stays_flat_at_the_highest_rate_a_ring_sustains(self):
        """The long run at the highest rate this machine sustains: a net_ring looped on itself (no kernel,
        no copy), measured first without a timeline (what one worker sends, receives and analyses here), then
        held at half of that (the collector judges every frame on the other CPU of a 2-CPU machine) for 30 s,
        on windows sized as plan.SeqWindow sizes them, for settle_ms and the collector's second at that rate.
        Every position is judged, the books balance, and once the windows have filled and wrapped twice the
        resident memory grows by less than 2 MiB."""
        self.tns = self.net.ns("t")
        probe = Engine(self.tns, [], tag="ringp", vdevs=["net_ring0"])
        try:
            probe.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=02:00:00:00:00:01")
            probe.cmd("STREAM id=0 tx=0 rx=0 src=198.18.1.2 dst=198.19.1.2 sizes=64")
            top = probe.trial([0], rates=[100000000], duration_ms=2000, drain_ms=50)["streams"][0]["rx_frames"] / 2.0
        finally:
            probe.close()
        rate = int(top / 2 / 1000) * 1000
        if rate < 100000:
            skip_for_load(self, "one worker received only %.0f frames/s on a ring here" % top)
        # the window the engine needs (an eighth kept clear of the receiver), with a tenth to spare
        bits = max(18, math.ceil(math.log2(rate * (SETTLE_MS / 1000 + 1) * 8 / 7 * 1.1)))
        wrap_s = 2 ** bits / rate
        self.engine = e = Engine(self.tns, [], tag="ring", vdevs=["net_ring0"], extra=("--window-bits", str(bits)))
        e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=02:00:00:00:00:01")
        e.cmd("STREAM id=0 tx=0 rx=0 src=198.18.1.2 dst=198.19.1.2 sizes=64")
        pid = engine_pid(e.proc)
        duration_ms = 30000
        t0 = self.start(e, rate, duration_ms)
        samples = rss_while_running(e, pid, t0)
        r, tl, bins, outages = self.finish(e)
        s, st = r["streams"][0], tl["streams"][0]
        # the memory first: it holds whatever the sender managed
        wrapped = [kib for t, kib in samples if t >= 2 * wrap_s + 1]
        self.assertGreater(len(wrapped), 12, "windows of 2^%d wrap every %.1f s: %s" % (bits, wrap_s, samples))
        self.assertLess(max(wrapped) - wrapped[0], 2048, "VmRSS (KiB, by second) grew at %d frames/s: %s" %
                        (rate, samples))
        # a ring drops nothing: any loss is the tester's, in bins it flagged
        self.assertEqual([x for x in bins if x[3] and not x[4]], [], "loss on a ring is the tester's")
        positions = -(-duration_ms * rate // 1000)
        if s["saturated"] or s["tx_frames"] < positions:
            # the sender, held up by the host, ended the trial behind its schedule: the positions it never
            # sent are the timeline's unsent, in bins flagged so, never lost
            self.assertEqual(st["unsent"], positions - s["tx_frames"], (s, st))
            self.assertEqual(st["judged"] + st["unsent"], positions, st)
            self.assertTrue(any(b[4] & 16 for b in bins), "no bin flagged unsent")
            skip_for_load(self, "memory flat (VmRSS %d..%d KiB), but the engine sent %d of the %d frames due at %d frames/s "
                          "(the unsent are the tester's): the books of a full schedule were not shown" % (
                              min(wrapped), max(wrapped), s["tx_frames"], positions, rate))
        self.books(r, tl, bins, outages, rate, duration_ms)
        print("\n    ring: %d frames/s for %d s (windows of 2^%d), %d frames judged, VmRSS %d..%d KiB after two wraps" % (
            rate, duration_ms // 1000, bits, tl["streams"][0]["judged"], min(wrapped), max(wrapped)), file=sys.stderr)


class Refusals(TimelineBase):
    def loop_engine(self, extra=()):
        if self.engine:
            self.engine.close()
            self.engine = None
        else:
            self.tns = self.net.ns("t")
            self.net.veth("t0", self.tns, "t1", self.tns)
        self.engine = e = Engine(self.tns, ["t0", "t1"], tag="ref", extra=extra)
        e.cmd("PORT id=0 ip4=198.18.1.2/24 peer_mac=%s" % self.net.mac("t1", self.tns))
        e.cmd("PORT id=1 ip4=198.19.1.2/24 peer_mac=%s" % self.net.mac("t0", self.tns))
        self.stream(e)
        return e

    def refused(self, e, line, code, *keys):
        r = e.raw(line)
        self.assertFalse(r["ok"], line)
        self.assertEqual(r["error"], code, "%s: %s" % (line, r))
        self.assertTrue(any(k in r["message"] for k in keys), "%s: the message names %s: %s" % (line, keys, r))
        return r

    def test_refusals_name_the_key(self):
        e = self.loop_engine()
        # received only: another engine sends it, so no schedule here to judge
        e.cmd("STREAM id=1 tx=none rx=1 src=198.18.1.2 dst=198.19.1.2 sizes=64")
        paced = "TRIAL streams=0 rates=1000 unit=fps duration_ms=300 "
        burst = "TRIAL streams=0 burst=100 "
        for line, keys in ((burst + "bin_ms=100", ("bin_ms", "burst")),
                           (paced + "bin_ms=5", ("bin_ms",)),
                           (paced + "bin_ms=10001", ("bin_ms",)),
                           (paced + "bin_ms=100 settle_ms=5", ("settle_ms",)),
                           (paced + "bin_ms=100 settle_ms=60001", ("settle_ms",)),
                           (paced + "bin_ms=100 outage_frames=1", ("outage_frames",)),
                           (paced.replace("streams=0", "streams=1") + "bin_ms=100", ("bin_ms", "stream 1"))):
            self.refused(e, line, "bad-value", *keys)
            self.assertNotIn(e.cmd("POLL")["state"], ("warmup", "running", "draining"),
                             "a refused TRIAL starts nothing")
        # the smallest bins are a timeline; a later trial without one has none (not its predecessor's)
        e.cmd(paced + "bin_ms=10")
        e.cmd("WAIT timeout_ms=10000")
        st = e.cmd("TIMELINE")["streams"][0]
        self.assertEqual((st["positions"], st["judged"], st["bins_done"]), (300, 300, 30))
        e.cmd(paced.strip())
        e.cmd("WAIT timeout_ms=10000")
        self.refused(e, "TIMELINE", "no-timeline", "TIMELINE", "bin_ms", "timeline")
        # a window that cannot hold settle_ms and a second at the lane's rate: 2^16 numbers against 1.2 M
        e = self.loop_engine(extra=("--window-bits", "16"))
        r = self.refused(e, "TRIAL streams=0 rates=1000000 unit=fps duration_ms=1000 bin_ms=100 settle_ms=200",
                         "window-too-small", "--window-bits")
        named = re.findall(r"--window-bits[ =]?(\d+)", r["message"])
        self.assertIn("21", named, "2^21 numbers hold 1.2 s at 1e6 frames/s, 2^20 do not: %s" % r["message"])
        self.assertNotIn(e.cmd("POLL")["state"], ("warmup", "running", "draining"))
        # and one it holds (1.2 s at 40k frames/s is 48000 numbers) is a trial
        e.cmd("TRIAL streams=0 rates=40000 unit=fps duration_ms=200 bin_ms=100 settle_ms=200")
        self.assertEqual(e.cmd("WAIT timeout_ms=10000")["state"], "done")


class Incremental(TimelineBase):
    def test_polled_timeline_gives_every_bin_and_outage_once(self):
        """TIMELINE asked while the trial runs, each time from the next bin and outage not yet fetched, a
        couple of bins at a time: bins_done grows, every bin comes once and as the finished timeline has it,
        and so does every outage (two nft holds of ~100 ms make them)."""
        e = self.router()
        self.stream(e)
        rns = self.rns
        self.nft("""table inet lrt {
  counter hold {}
  chain lrfwd { type filter hook forward priority 0; policy accept; }
}""")
        rate, duration_ms = 2000, 4000
        hold_errors = []

        def holds():
            try:
                for at in (1.0, 2.5):
                    sleep_until(t0 + at)
                    sh("nft", "add", "rule", "inet", "lrt", "lrfwd", *TOWARD_RECEIVER.split(), "counter", "name",
                       "hold", "drop", ns=rns)
                    time.sleep(0.1)
                    sh("nft", "flush", "chain", "inet", "lrt", "lrfwd", ns=rns)
            except Exception as err:  # noqa: BLE001 -- said by the test's own thread, below
                hold_errors.append(err)

        t0 = self.start(e, rate, duration_ms, tester_lag_ms=TESTER_MS, tester_gap_ms=TESTER_MS)
        maker = threading.Thread(target=holds)
        maker.start()
        try:
            bins, outages, done_seen, open_seen = [], {}, [], set()
            while True:
                tl = e.cmd("TIMELINE from_bin=%d from_outage=%d max_bins=2" % (len(bins), len(outages)))
                st = tl["streams"][0]
                self.assertEqual((st["first_bin"], st["first_outage"]), (0, 0))
                if tl["state"] == "running":
                    done_seen.append(st["bins_done"])
                got = [b[0] for b in st["bins"]]
                self.assertEqual(got, list(range(len(bins), len(bins) + len(got))), "bins from from_bin on, in order")
                self.assertEqual(len(got), min(2, st["bins_done"] - len(bins)), "max_bins=2 of those finished")
                bins += st["bins"]
                for o in st["outages"]:
                    self.assertEqual(o["n"], len(outages), "outages from from_outage on, in order")
                    outages[o["n"]] = o
                    if o["open"]:
                        open_seen.add(o["n"])
                if tl["state"] == "done" and len(bins) == st["bins_done"] and len(outages) == st["outages_found"]:
                    break
                self.assertIn(tl["state"], ("running", "draining", "done"))
                if tl["state"] != "done":
                    time.sleep(0.1)
        finally:
            maker.join()
        self.assertEqual(hold_errors, [], "the DUT's holds were made")
        self.assertEqual(done_seen, sorted(done_seen), "bins_done never goes back")
        self.assertGreaterEqual(len(set(done_seen)), 10, "bins_done grew while the trial ran: %s" % done_seen)
        self.assertLess(done_seen[0], 10, "the first polls came early in the trial: %s" % done_seen)
        r = e.cmd("RESULT")
        final, final_bins, final_outages = self.whole_timeline(e)
        self.books(r, final, final_bins, final_outages, rate, duration_ms)
        self.assertEqual(bins, final_bins, "a finished bin never changes")
        self.assertEqual(sorted(outages), list(range(len(final_outages))))
        for o in final_outages:
            if o["n"] not in open_seen:
                self.assertEqual(outages[o["n"]], o, "an outage fetched once it ended never changes")
        # the outages are the two holds, exactly, unless the tester's own part spoiled the trial (it said so)
        st = final["streams"][0]
        if not self.spoiled_by_tester(r, st, final_bins):
            self.assertEqual((st["lost"], st["outage_frames"]), (self.nft_counter("hold"),) * 2)
            self.assertEqual(len(final_outages), 2, final_outages)

if __name__ == "__main__":
    unittest.main()
