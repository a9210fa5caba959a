"""A bump-in-the-wire DUT whose latency is known: every frame that arrives on IN leaves on OUT DELAY_US
after the kernel received it, and every EVERY-th frame EXTRA_US later still. The engine tests use it as
latency truth (netem is not in this kernel).

Run in the DUT's namespace: python3 delayline.py IN OUT DELAY_US EXTRA_US EVERY
Prints "ready" once both sockets are open; runs until killed. A line "stats" on stdin is answered with
"late_max_ns=N frames=M overtaken=K": how much later than due the line sent its latest frame since the last
"stats" (a Python process is scheduled by the OS too: the truth it delivers is the delay plus that
lateness), how many frames it sent, and how many of them it sent after a frame that arrived later than
they did (the reordering it caused, counted as a receiver counts it: below the highest already seen).
"""
import heapq
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35


def main():
    inp, out = sys.argv[1], sys.argv[2]
    delay, extra, every = int(sys.argv[3]) / 1e6, int(sys.argv[4]) / 1e6, int(sys.argv[5])
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.bind((inp, 0))
    # the kernel's arrival time (CLOCK_REALTIME), not the time this process got round to reading it
    rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((out, 0))
    print("ready", flush=True)
    due, n, late_max, sent = [], 0, 0.0, 0
    highest_sent, overtaken = -1, 0
    watched = [rx, sys.stdin]
    while True:
        timeout = max(0.0, due[0][0] - time.time()) if due else 1.0
        ready = select.select(watched, [], [], timeout)[0]
        if sys.stdin in ready:
            line = sys.stdin.readline()
            if not line:
                watched = [rx]  # nobody will ask again
            elif line.strip() == "stats":
                print("late_max_ns=%d frames=%d overtaken=%d" % (late_max * 1e9, sent, overtaken), flush=True)
                late_max, sent, overtaken = 0.0, 0, 0
        if rx in ready:
            data, anc, _, addr = rx.recvmsg(65536, 64)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            arrived = time.time()
            for level, kind, val in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", val[:16])
                    arrived = sec + nsec / 1e9
            heapq.heappush(due, (arrived + delay + (extra if n % every == every - 1 else 0.0), n, data))
            n += 1
        # the last stretch before a frame is due is spun, not slept: select wakes up late by its slack
        while due and due[0][0] - time.time() < 0.0002:
            while time.time() < due[0][0]:
                pass
            when, k, data = heapq.heappop(due)
            tx.send(data)
            if k < highest_sent:
                overtaken += 1
            highest_sent = max(highest_sent, k)
            late_max, sent = max(late_max, time.time() - when), sent + 1


if __name__ == "__main__":
    main()
