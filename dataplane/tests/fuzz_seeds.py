"""Writes seed frames for the RX-parser fuzzer into DIR: every kind of frame the engine recognises (tagged
IPv4/IPv6 UDP with and without VLAN, ARP request/reply, neighbour solicitation/advertisement with their
link-layer options), so libFuzzer starts from deep inside the parser instead of having to find the magic
numbers itself.  Usage: python3 tests/fuzz_seeds.py DIR
"""
import os
import struct
import sys

DST, SRC = bytes.fromhex("020000000002"), bytes.fromhex("020000000001")


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def eth(etype, vlan):
    return DST + SRC + (struct.pack("!HH", 0x8100, vlan) if vlan else b"") + struct.pack("!H", etype)


def tag(seq, stream=0, flags=2):
    return struct.pack("!HBBQIH", 0x4C52, flags, stream, seq, 123456, seq % 4)


def udp4(payload, src=b"\xc6\x12\x01\x02", dst=b"\xc6\x13\x01\x02"):
    u = struct.pack("!HHHH", 1024, 1025, 8 + len(payload), 0) + payload
    u = u[:6] + struct.pack("!H", csum(src + dst + struct.pack("!BBH", 0, 17, len(u)) + u) or 0xFFFF) + u[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(u), 0, 0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + u


def ip6(nh, body, src=b"\x20\x01\x0d\xb8" + bytes(11) + b"\x02", dst=b"\x20\x01\x0d\xb8" + bytes(11) + b"\x03"):
    return struct.pack("!IHBB", 6 << 28, len(body), nh, 255) + src + dst + body


def icmp6(typ, target, opt_type):
    body = struct.pack("!BBHI", typ, 0, 0, 0x60000000 if typ == 136 else 0) + target
    return body + struct.pack("!BB", opt_type, 1) + SRC


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t6 = b"\x20\x01\x0d\xb8" + bytes(11) + b"\x03"
    seeds = {}
    for vlan in (0, 100):
        seeds["tag4_v%d" % vlan] = eth(0x0800, vlan) + udp4(tag(7) + bytes(26))
        u = struct.pack("!HHHH", 1024, 1025, 8 + 18 + 26, 0) + tag(9) + bytes(26)
        seeds["tag6_v%d" % vlan] = eth(0x86DD, vlan) + ip6(17, u)
        for op in (1, 2):
            arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, SRC, b"\xc6\x12\x01\x01", bytes(6),
                              b"\xc6\x12\x01\x02")
            seeds["arp%d_v%d" % (op, vlan)] = eth(0x0806, vlan) + arp + bytes(18)
        seeds["ns_v%d" % vlan] = eth(0x86DD, vlan) + ip6(58, icmp6(135, t6, 1))
        seeds["na_v%d" % vlan] = eth(0x86DD, vlan) + ip6(58, icmp6(136, t6, 2))
    for name, frame in seeds.items():
        with open(os.path.join(out, "seed_" + name), "wb") as f:
            f.write(frame)


if __name__ == "__main__":
    main()
