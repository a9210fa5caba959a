"""A bump-in-the-wire DUT whose latency is known: every frame that arrives on IN leaves on OUT DELAY_US
after the kernel received it, and every EVERY-th frame EXTRA_US later still. The engine tests use it as
latency truth (netem is not in this kernel).

Run in the DUT's namespace: python3 delayline.py IN OUT DELAY_US EXTRA_US EVERY
Prints "ready" once both sockets are open; runs until killed.
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
    due, n = [], 0
    while True:
        timeout = max(0.0, due[0][0] - time.time()) if due else 1.0
        if select.select([rx], [], [], timeout)[0]:
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
            tx.send(heapq.heappop(due)[2])


if __name__ == "__main__":
    main()
