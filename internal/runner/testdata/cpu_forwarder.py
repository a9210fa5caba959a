"""A userspace forwarder whose every frame costs CPU time: the DUT of the DUT-cost tests. Each frame that
arrives on IN (sent to it, not by it) is hashed (SHA-256, ROUNDS times: the per-frame work) and leaves on OUT
unchanged, a bump in the wire. Run inside a cgroup with a CPU quota, its forwarding rate is bound by that
quota, and at its highest loss-free rate it uses the whole of it.

Run in the DUT's namespace: python3 cpu_forwarder.py IN OUT ROUNDS
Prints "ready" once both sockets are open; runs until killed. A line "stats" on stdin is answered with
"frames=N cpu_ns=C": the frames it forwarded and the CPU time it used (user and system), since it started.
"""
import hashlib
import os
import select
import socket
import sys

ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33
PACKET_OUTGOING = 4


def main():
    inp_name, out_name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    inp = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    # a throttled process sleeps until its next quota period: the frames of that time wait in the socket
    inp.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    inp.bind((inp_name, 0))
    out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    out.bind((out_name, 0))
    inp.setblocking(False)
    print("ready", flush=True)
    frames = 0
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([inp, stdin], [], [])
        if stdin in ready:
            line = os.read(stdin, 4096)
            if not line:
                return
            t = os.times()
            print("frames=%d cpu_ns=%d" % (frames, int((t.user + t.system) * 1e9)), flush=True)
        if inp not in ready:
            continue
        while True:
            try:
                data, addr = inp.recvfrom(65536)
            except BlockingIOError:
                break
            if addr[2] == PACKET_OUTGOING:
                continue
            digest = data
            for _ in range(rounds):
                digest = hashlib.sha256(digest).digest()
            out.send(data)
            frames += 1


if __name__ == "__main__":
    main()
