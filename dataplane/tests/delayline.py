"""A bump-in-the-wire DUT whose latency is known: every frame that arrives on IN leaves on OUT DELAY_US
after the kernel received it, and every EVERY-th frame EXTRA_US later still. The engine tests use it as
latency truth (netem is not in this kernel).

Run in the DUT's namespace: python3 delayline.py IN OUT DELAY_US EXTRA_US EVERY [--in-flow] [--dup-every K]
Prints "ready" once both sockets are open; runs until killed. A line "stats" on stdin is answered with
"late_max_ns=N frames=M overtaken=K overtaken_in_flow=J dups=D hold_p50_ns=H": how much later than due the
line sent its latest frame since the last "stats" (a Python process is scheduled by the OS too: the truth
it delivers is the delay plus that lateness), how many frames it sent (duplicates not included), how many
of them it sent after a frame that arrived later than they did (the reordering it caused, counted as a
receiver counts it: below the highest already seen), how many it sent after a later-arrived frame of their
own flow, how many duplicates it sent, and the median of how long it held the frames it sent: from the
kernel's receipt (SO_TIMESTAMPNS) to just before its send (during which the receiver downstream has the
frame, on a veth), both on CLOCK_REALTIME: the line's own measure of the delay it gave.

A flow is a UDP source port (frames are Ethernet/IPv4/UDP, untagged): every frame of a flow lands on one
RX queue of a receiver that spreads flows by hash, so a frame sent after a later frame of its own flow is
counted reordered by its queue whatever queue the hash chose, and one overtaken only by other flows' frames
may or may not be (it is if one of them shares its queue).

--dup-every K: every K-th frame is sent twice (identical bytes, the copy right after the original).

--in-flow: no frame is held EXTRA_US. Instead every EVERY-th frame of a flow waits for the next frame of
its flow and leaves right after it: each such frame is overtaken by its own flow's next frame, and by the
frames of other flows that arrived between the two, and the line reorders nothing else. A frame whose flow
sends no next frame within EXTRA_US (the end of a stream) leaves in its place, overtaken by none: the frames
behind it wait for it, never pass it. So every frame the line reorders is overtaken by its own flow
(overtaken equals overtaken_in_flow), and a receiver that counts reordering per RX queue counts exactly
overtaken_in_flow whatever its hash. Frames still leave no sooner than DELAY_US after they arrived.
"""
import argparse
import heapq
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
SPIN = 0.0002  # the last stretch before a frame is due is spun, not slept: select wakes up late by its slack


def flow_of(data):
    """The UDP source port of an untagged Ethernet/IPv4/UDP frame, else None."""
    if len(data) < 34 or data[12:14] != b"\x08\x00" or data[23] != 17:
        return None
    ihl = (data[14] & 0x0F) * 4
    if len(data) < 14 + ihl + 8:
        return None
    return struct.unpack_from("!H", data, 14 + ihl)[0]


class Counts:
    """What the line sent since the last "stats"."""

    def __init__(self, tx):
        self.tx = tx
        self.highest = -1
        self.highest_in_flow = {}
        self.reset()

    def reset(self):
        self.late_max, self.sent, self.overtaken, self.overtaken_in_flow, self.dups = 0.0, 0, 0, 0, 0
        self.holds = []

    def send(self, n, flow, data, dup, due, arrived):
        """Sends frame n (and its copy if dup) and counts it; due is when it was to leave, arrived when the
        kernel received it."""
        self.holds.append(time.time_ns() - int(arrived * 1e9))
        self.tx.send(data)
        if dup:
            self.tx.send(data)
            self.dups += 1
        if n < self.highest:
            self.overtaken += 1
        self.highest = max(self.highest, n)
        if flow is not None:
            if n < self.highest_in_flow.get(flow, -1):
                self.overtaken_in_flow += 1
            self.highest_in_flow[flow] = max(self.highest_in_flow.get(flow, -1), n)
        self.late_max, self.sent = max(self.late_max, time.time() - due), self.sent + 1

    def line(self):
        holds = sorted(self.holds)
        s = "late_max_ns=%d frames=%d overtaken=%d overtaken_in_flow=%d dups=%d hold_p50_ns=%d" % (
            self.late_max * 1e9, self.sent, self.overtaken, self.overtaken_in_flow, self.dups,
            holds[(len(holds) - 1) // 2] if holds else 0)
        self.reset()
        return s


class Timed:
    """Every frame leaves delay after it arrived, every every-th one extra later still."""

    def __init__(self, counts, delay, extra, every):
        self.counts, self.delay, self.extra, self.every = counts, delay, extra, every
        self.due = []

    def arrive(self, n, flow, data, dup, arrived):
        held = self.extra if n % self.every == self.every - 1 else 0.0
        heapq.heappush(self.due, (arrived + self.delay + held, n, flow, data, dup, arrived))

    def next_event(self):
        return self.due[0][0] if self.due else None

    def send_due(self):
        while self.due and self.due[0][0] - time.time() < SPIN:
            while time.time() < self.due[0][0]:
                pass
            when, n, flow, data, dup, arrived = heapq.heappop(self.due)
            self.counts.send(n, flow, data, dup, when, arrived)


class Group:
    """Frames that leave together, in this order: the first in its place, then those that waited for it."""

    def __init__(self, due, waits, deadline, frame):
        self.due, self.waits, self.deadline, self.frames = due, waits, deadline, [frame]


class InFlow:
    """Every every-th frame of a flow leaves right after its flow's next frame (waiting at most extra)."""

    def __init__(self, counts, delay, extra, every):
        self.counts, self.delay, self.extra, self.every = counts, delay, extra, every
        self.order = []     # groups in the order they leave
        self.waiting = {}   # flow: its group that waits for the flow's next frame
        self.unblocked = 0.0  # when the first group last stopped waiting (the groups behind it were due then)

    def arrive(self, n, flow, data, dup, arrived):
        waits = flow is not None and n % self.every == self.every - 1
        g = Group(arrived + self.delay, waits, arrived + self.extra, (n, flow, data, dup, arrived))
        w = self.waiting.pop(flow, None) if flow is not None else None
        if w is not None:
            # the frame it waited for has come: it (and what waited for it) leaves right after
            if self.order[0] is w:
                self.unblocked = max(self.unblocked, arrived)
            self.order.remove(w)
            g.frames += w.frames
        if waits:
            self.waiting[flow] = g
        self.order.append(g)

    def expire(self, now):
        for flow, g in list(self.waiting.items()):
            if g.deadline <= now:
                # its flow sent no next frame in time: it leaves in its place
                del self.waiting[flow]
                g.waits = False
                if self.order[0] is g:
                    self.unblocked = max(self.unblocked, g.deadline)

    def next_event(self):
        times = [g.deadline for g in self.waiting.values()]
        if self.order and not self.order[0].waits:
            times.append(self.order[0].due)
        return min(times) if times else None

    def send_due(self):
        self.expire(time.time())
        while self.order and not self.order[0].waits and self.order[0].due - time.time() < SPIN:
            g = self.order.pop(0)
            while time.time() < g.due:
                pass
            for n, flow, data, dup, arrived in g.frames:
                self.counts.send(n, flow, data, dup, max(g.due, self.unblocked), arrived)
            self.expire(time.time())


def main():
    p = argparse.ArgumentParser(description="a bump in the wire of known delay")
    p.add_argument("inp")
    p.add_argument("out")
    p.add_argument("delay_us", type=int)
    p.add_argument("extra_us", type=int)
    p.add_argument("every", type=int)
    p.add_argument("--in-flow", action="store_true",
                   help="every EVERY-th frame leaves right after its flow's next frame (waiting at most EXTRA_US)")
    p.add_argument("--dup-every", type=int, default=0, metavar="K", help="send every K-th frame twice")
    a = p.parse_args()
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.bind((a.inp, 0))
    # the kernel's arrival time (CLOCK_REALTIME), not the time this process got round to reading it
    rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((a.out, 0))
    counts = Counts(tx)
    line = (InFlow if a.in_flow else Timed)(counts, a.delay_us / 1e6, a.extra_us / 1e6, a.every)
    print("ready", flush=True)
    n = 0
    watched = [rx, sys.stdin]
    while True:
        when = line.next_event()
        timeout = max(0.0, when - time.time()) if when is not None else 1.0
        ready = select.select(watched, [], [], timeout)[0]
        if sys.stdin in ready:
            req = sys.stdin.readline()
            if not req:
                watched = [rx]  # nobody will ask again
            elif req.strip() == "stats":
                print(counts.line(), flush=True)
        if rx in ready:
            data, anc, _, addr = rx.recvmsg(65536, 64)
            if addr[2] != socket.PACKET_OUTGOING:
                arrived = time.time()
                for level, kind, val in anc:
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("qq", val[:16])
                        arrived = sec + nsec / 1e9
                dup = a.dup_every > 0 and n % a.dup_every == a.dup_every - 1
                line.arrive(n, flow_of(data), data, dup, arrived)
                n += 1
        line.send_due()


if __name__ == "__main__":
    main()
