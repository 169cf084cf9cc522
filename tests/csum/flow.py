#!/usr/bin/env python3
"""Traffic for the checksum tests: a sender and a receiver of one flow.

  flow.py recv --family 4|6 --proto tcp|udp --port P --count N --out FILE
  flow.py send --family 4|6 --proto tcp|udp --addr A --port P --count N
               [--ip-options] [--dst-opts]
  flow.py badudp --ifname IF --dst-mac MAC --src A --dst B --port P

A flow is N chunks of 1000 bytes whose content depends on their index; the
receiver writes "<chunks> <bytes> <sha256>" of what it got, so a flow that
arrives intact is checked exactly.
"""
import argparse
import hashlib
import socket
import struct
import sys
import time

CHUNK = 1000


def chunk(i):
    return bytes((i * 7 + j) & 0xFF for j in range(CHUNK))


def expected(count):
    h = hashlib.sha256()
    for i in range(count):
        h.update(chunk(i))
    return h.hexdigest()


def family(args):
    return socket.AF_INET if args.family == 4 else socket.AF_INET6


def recv(args):
    fam = family(args)
    any_addr = "0.0.0.0" if args.family == 4 else "::"
    h = hashlib.sha256()
    got = chunks = 0
    if args.proto == "tcp":
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((any_addr, args.port))
        s.listen(1)
        s.settimeout(args.timeout)
        open(args.out + ".ready", "w").close()
        c, _ = s.accept()
        c.settimeout(args.timeout)
        want = args.count * CHUNK
        while got < want:
            data = c.recv(65536)
            if not data:
                break
            h.update(data)
            got += len(data)
        chunks = got // CHUNK
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((any_addr, args.port))
        s.settimeout(args.timeout)
        open(args.out + ".ready", "w").close()
        seen = {}
        try:
            while len(seen) < args.count:
                data, _ = s.recvfrom(65536)
                idx = struct.unpack("!I", data[:4])[0]
                seen[idx] = data[4:]
        except socket.timeout:
            pass
        for i in sorted(seen):
            h.update(seen[i])
            got += len(seen[i])
        chunks = len(seen)
    with open(args.out, "w") as f:
        f.write(f"{chunks} {got} {h.hexdigest()}\n")


def send(args):
    fam = family(args)
    sotype = socket.SOCK_STREAM if args.proto == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(fam, sotype)
    if args.ip_options:
        # NOP, NOP, NOP, EOL: a 24-byte IPv4 header on every packet
        s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, b"\x01\x01\x01\x00")
    if args.dst_opts:
        # destination options header with one PadN option: 8 bytes
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS,
                     b"\x00\x00\x01\x04\x00\x00\x00\x00")
    s.settimeout(args.timeout)
    if args.proto == "tcp":
        s.connect((args.addr, args.port))
        for i in range(args.count):
            s.sendall(chunk(i))
        s.shutdown(socket.SHUT_WR)
        s.recv(1)
    else:
        for i in range(args.count):
            s.sendto(struct.pack("!I", i) + chunk(i), (args.addr, args.port))
            time.sleep(0.002)
    s.close()


def csum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def badudp(args):
    """One IPv4/UDP frame whose UDP checksum is off by one, sent raw."""
    src, dst = socket.inet_aton(args.src), socket.inet_aton(args.dst)
    payload = b"negative control"
    udp_len = 8 + len(payload)
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", 40000, args.port, udp_len, 0) + payload
    good = csum16(pseudo + udp)
    bad = (good + 1) & 0xFFFF or 1
    udp = struct.pack("!HHHH", 40000, args.port, udp_len, bad) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 1, 0x4000, 64, 17,
                     0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum16(ip)) + ip[12:]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((args.ifname, 0))
    mac = bytes.fromhex(args.dst_mac.replace(":", ""))
    s.send(mac + s.getsockname()[4] + b"\x08\x00" + ip + udp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["recv", "send", "badudp", "expect"])
    ap.add_argument("--family", type=int, default=4)
    ap.add_argument("--proto", default="tcp")
    ap.add_argument("--addr")
    ap.add_argument("--port", type=int, default=5001)
    ap.add_argument("--count", type=int, default=64)
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--ip-options", action="store_true")
    ap.add_argument("--dst-opts", action="store_true")
    ap.add_argument("--ifname")
    ap.add_argument("--dst-mac")
    ap.add_argument("--src")
    ap.add_argument("--dst")
    args = ap.parse_args()
    if args.mode == "expect":
        print(f"{args.count} {args.count * CHUNK} {expected(args.count)}")
        return 0
    {"recv": recv, "send": send, "badudp": badudp}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
