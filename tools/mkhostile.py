#!/usr/bin/python3
"""mkhostile.py - write a pcap corpus of hostile frames for rocelab-switch and
rocelab-gen, built with scapy (independent of rocelab's parser and builders).

Every frame is written as raw bytes: nothing is fixed up after the damage.
The corpus holds, in this order:

  trunc     real frames (RoCEv2 SEND/WRITE_FIRST(RETH)/ACK(AETH) over IPv4,
            IPv6, one and two VLAN tags; PFC) cut at every header boundary
            (Ethernet, VLAN, IPv4, IPv6, UDP, BTH, RETH, AETH, ICRC), one byte
            before it and one byte after it
  lies      length fields that lie: IPv4 total length (0, < header, frame-1,
            frame+1, 0xFFFF) and IHL (0..15); IPv6 payload length (0, short by
            1, long by 1, 0xFFFF); UDP length (0, 7, 8, short by 1, long by 1,
            0xFFFF)
  vlan      3, 4 and 8 stacked tags (0x8100 and 0x88a8) before IPv4/IPv6 RoCE,
            and a stack that ends at the end of the frame
  v6ext     IPv6 extension headers before UDP 4791: hop-by-hop, routing,
            fragment (first and non-first), destination options, a chain of
            all four, one cut in the middle, one whose length runs past the
            frame
  runt      frames of 0..13 bytes and minimum-size frames of zeros / ones
  big       frames of 1519, 9216, 9217, 9300 and 16000 bytes
  macctl    802.3x PAUSE and 802.1Qbb PFC with quanta 0, 1, 0xFFFF, the class
            enable vector's reserved high byte set, no priority enabled,
            unknown MAC Control opcodes (0x0000, 0x0002, 0x0102, 0xFFFF), a
            PAUSE with a VLAN tag, a PFC to a unicast MAC, short bodies
  fuzz      seeded random mutations of real RoCEv2 frames: byte flips,
            overwritten length/version/opcode bytes, random cuts, inserted and
            deleted bytes

Examples:
  tools/mkhostile.py out.pcap
  tools/mkhostile.py out.pcap --seed 7 --fuzz 3000 --dst-mac 02:00:00:00:01:00 --dst-ip 10.1.0.2
  tools/mkhostile.py out.pcap --summary      # print frames per category on stdout
  tools/mkhostile.py out.pcap --only vlan,v6ext,macctl

Needs Debian's python3-scapy (run with /usr/bin/python3).
"""
import argparse
import logging
import random
import struct
import zlib

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)  # BTH over IPv6: ICRC computed below

from scapy.all import Ether, IP, IPv6, UDP, Raw, Dot1Q, Dot1AD, PcapWriter
from scapy.layers.inet6 import (IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, IPv6ExtHdrFragment,
                                IPv6ExtHdrDestOpt)
from scapy.contrib.roce import BTH, AETH

ROCE_PORT = 4791
PFC_DST = "01:80:c2:00:00:01"


def icrc_v6_fix(raw, l3):
    """Write the ICRC of a RoCEv2/IPv6 frame whose IPv6 header starts at l3
    (scapy's BTH computes it for IPv4 only). IBTA rules (ROCE_REFERENCE 1.5):
    8 x 0xFF, then the IPv6 header with traffic class, flow label and hop
    limit set to ones, UDP checksum ones, BTH byte 4 ones, up to the ICRC."""
    ip = bytearray(raw[l3:-4])
    ip[0:4] = b"\x6f\xff\xff\xff"
    ip[7] = 0xFF
    ip[40 + 6:40 + 8] = b"\xff\xff"
    ip[48 + 4] = 0xFF
    return raw[:-4] + (zlib.crc32(b"\xff" * 8 + bytes(ip)) & 0xFFFFFFFF).to_bytes(4, "little")


def reth(va=0x1000, rkey=0x1234, dmalen=4096):
    return Raw(struct.pack(">QII", va, rkey, dmalen))


class Corpus:
    def __init__(self, a):
        self.a = a
        self.frames = []  # (category, raw bytes)

    def add(self, cat, raw):
        self.frames.append((cat, bytes(raw)))

    # --- base frames -------------------------------------------------------
    def l2(self, tags=()):
        e = Ether(dst=self.a.dst_mac, src=self.a.src_mac)
        for tpid, vid in tags:
            e = e / (Dot1AD(vlan=vid) if tpid == 0x88a8 else Dot1Q(vlan=vid, prio=3))
        return e

    def ip4(self):
        return IP(src=self.a.src_ip, dst=self.a.dst_ip, tos=(26 << 2) | 2, flags="DF")

    def ip6(self):
        return IPv6(src=self.a.src_ip6, dst=self.a.dst_ip6, tc=(26 << 2) | 2)

    def udp(self):
        return UDP(sport=49152, dport=ROCE_PORT, chksum=0)

    def send_only(self, psn=1, n=64):
        return BTH(opcode=0x04, dqpn=self.a.qpn, psn=psn, ackreq=1) / Raw(bytes(range(n)))

    def write_first(self):
        return BTH(opcode=0x06, dqpn=self.a.qpn, psn=2) / reth() / Raw(b"\xab" * 256)

    def ack(self):
        return BTH(opcode=0x11, dqpn=self.a.qpn, psn=3) / AETH(syndrome=0x1f, msn=1)

    def bases(self):
        """(name, raw, [header boundary offsets]) for the truncation sweep."""
        out = []
        for tname, tags in (("", ()), ("vlan1/", ((0x8100, 10),)), ("vlan2/", ((0x88a8, 20), (0x8100, 10)))):
            l2len = 14 + 4 * len(tags)
            for ipname, ipf, iplen in (("v4", self.ip4, 20), ("v6", self.ip6, 40)):
                for bname, bth, ext in (("send", self.send_only, 0), ("write_first", self.write_first, 16),
                                        ("ack", self.ack, 4)):
                    p = self.l2(tags) / ipf() / self.udp() / bth()
                    # ICRC: scapy's BTH computes it over the whole RoCEv2 packet.
                    raw = bytes(p)
                    if ipname == "v6":
                        raw = icrc_v6_fix(raw, l2len)
                    b = [14 + 4 * k for k in range(len(tags) + 1)]  # Ethernet, then each tag
                    b += [l2len + iplen, l2len + iplen + 8, l2len + iplen + 8 + 12]
                    if ext:
                        b.append(l2len + iplen + 8 + 12 + ext)
                    b.append(len(raw) - 4)  # ICRC
                    out.append((f"{tname}{ipname}/{bname}", raw, b))
        return out

    # --- categories -------------------------------------------------------------
    def trunc(self):
        for _, raw, bounds in self.bases():
            cuts = set()
            for x in bounds:
                cuts.update((x - 1, x, x + 1))
            for c in sorted(cuts):
                if 0 <= c < len(raw):
                    self.add("trunc", raw[:c])
        pfc = bytes(Ether(dst=PFC_DST, src=self.a.src_mac, type=0x8808) /
                    Raw(struct.pack(">HH8H", 0x0101, 0x08, 0, 0, 0, 0xFFFF, 0, 0, 0, 0) + bytes(26)))
        for c in (13, 14, 15, 16, 17, 18, 19, 25, 33, 34):
            self.add("trunc", pfc[:c])

    def lies(self):
        v4 = bytearray(bytes(self.l2() / self.ip4() / self.udp() / self.send_only()))
        ip_len = len(v4) - 14
        for tl in (0, 19, 20, 27, ip_len - 1, ip_len + 1, 0xFFFF):
            b = bytearray(v4)
            b[16:18] = tl.to_bytes(2, "big")
            self.add("lies", b)
        for ihl in range(16):
            b = bytearray(v4)
            b[14] = 0x40 | ihl
            self.add("lies", b)
        b = bytearray(v4[:14 + 20 + 4])  # IHL 15 (60 B) on a 24-byte IP header
        b[14] = 0x4f
        self.add("lies", b)
        v6 = bytearray(bytes(self.l2() / self.ip6() / self.udp() / self.send_only()))
        pl = len(v6) - 54
        for p in (0, 7, pl - 1, pl + 1, 0xFFFF):
            b = bytearray(v6)
            b[18:20] = p.to_bytes(2, "big")
            self.add("lies", b)
        for base, off in ((v4, 14 + 20), (v6, 14 + 40)):
            ul = len(base) - off
            for u in (0, 7, 8, 12, ul - 1, ul + 1, 0xFFFF):
                b = bytearray(base)
                b[off + 4:off + 6] = u.to_bytes(2, "big")
                self.add("lies", b)

    def vlan(self):
        for n in (3, 4, 8):
            for tpid in (0x8100, 0x88a8):
                tags = [(tpid, 100 + k) for k in range(n)]
                self.add("vlan", self.l2(tags) / self.ip4() / self.udp() / self.send_only())
                self.add("vlan", self.l2(tags) / self.ip6() / self.udp() / self.send_only())
        # Tags up to the end of the frame: 0x8100 TPID, 0x8100 as the inner "VID+type".
        self.add("vlan", bytes(Ether(dst=self.a.dst_mac, src=self.a.src_mac, type=0x8100)) + b"\x81\x00" * 24)

    def v6ext(self):
        base = lambda: self.l2() / self.ip6()
        tail = lambda: self.udp() / self.send_only()
        exts = [IPv6ExtHdrHopByHop(), IPv6ExtHdrRouting(type=0, addresses=[]),
                IPv6ExtHdrFragment(m=0, offset=0, id=7), IPv6ExtHdrFragment(m=1, offset=0, id=8),
                IPv6ExtHdrFragment(m=0, offset=100, id=9), IPv6ExtHdrDestOpt()]
        for e in exts:
            self.add("v6ext", base() / e / tail())
        chain = base() / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting(addresses=[]) / IPv6ExtHdrFragment(id=5) / \
            IPv6ExtHdrDestOpt() / tail()
        raw = bytes(chain)
        self.add("v6ext", raw)
        self.add("v6ext", raw[:14 + 40 + 12])  # cut inside the chain
        b = bytearray(bytes(base() / IPv6ExtHdrDestOpt() / tail()))
        b[14 + 40 + 1] = 0xFF  # Hdr Ext Len 255: (255+1)*8 bytes, past the frame
        self.add("v6ext", b)

    def runt(self):
        rnd = random.Random(self.a.seed)
        for n in range(0, 14):
            self.add("runt", bytes(rnd.randrange(256) for _ in range(n)))
        self.add("runt", bytes(60))
        self.add("runt", b"\xff" * 60)
        self.add("runt", bytes(Ether(dst=self.a.dst_mac, src=self.a.src_mac, type=0x0800)))  # 14 B, no IP
        self.add("runt", bytes(Ether(dst=self.a.dst_mac, src=self.a.src_mac, type=0x86dd)))
        self.add("runt", bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=self.a.src_mac, type=0x0806)) + bytes(10))

    def big(self):
        for n in (1519, 9216, 9217, 9300, 16000):
            hdr = self.l2() / self.ip4() / self.udp() / BTH(opcode=0x04, dqpn=self.a.qpn, psn=4)
            pay = n - len(hdr) - 4
            self.add("big", bytes(hdr / Raw(b"\x5a" * pay))[:n])

    def macctl(self):
        def mac(m):
            return bytes(int(x, 16) for x in m.split(":"))

        def mc(body, dst=PFC_DST, tags=()):
            raw = mac(dst) + mac(self.a.src_mac)
            for tpid, vid in tags:
                raw += struct.pack(">HH", tpid, vid)
            raw += b"\x88\x08" + body
            return raw + bytes(max(0, 60 - len(raw)))
        for q in (0, 1, 0xFFFF):
            self.add("macctl", mc(struct.pack(">HH", 0x0001, q)))
            self.add("macctl", mc(struct.pack(">HH8H", 0x0101, 0x08, 0, 0, 0, q, 0, 0, 0, 0)))
            self.add("macctl", mc(struct.pack(">HH8H", 0x0101, 0xFF, *([q] * 8))))
        self.add("macctl", mc(struct.pack(">HH8H", 0x0101, 0xFF08, 0, 0, 0, 100, 0, 0, 0, 0)))  # reserved bits
        self.add("macctl", mc(struct.pack(">HH8H", 0x0101, 0xFF00, *([0xFFFF] * 8))))  # only reserved bits
        self.add("macctl", mc(struct.pack(">HH8H", 0x0101, 0x00, *([0xFFFF] * 8))))  # no priority enabled
        self.add("macctl", mc(struct.pack(">HH8H", 0x0101, 0x01, 0xFFFF, *([0] * 7))))  # prio 0 (PFC off)
        for op in (0x0000, 0x0002, 0x0102, 0xFFFF):
            self.add("macctl", mc(struct.pack(">HH", op, 0xFFFF)))
        self.add("macctl", mc(struct.pack(">HH", 0x0001, 0xFFFF), tags=((0x8100, 5),)))  # tagged PAUSE
        self.add("macctl", mc(struct.pack(">HH", 0x0001, 100), dst=self.a.dst_mac))  # PAUSE to a unicast MAC
        self.add("macctl", bytes(Ether(dst=PFC_DST, src=self.a.src_mac, type=0x8808)) + b"\x01")  # 1-byte body
        self.add("macctl", bytes(Ether(dst=PFC_DST, src=self.a.src_mac, type=0x8808)) + b"\x01\x01\x00\x08")

    def fuzz(self):
        rnd = random.Random(self.a.seed)
        seeds = [raw for _, raw, _ in self.bases()]
        seeds.append(bytes(self.l2() / self.ip6() / IPv6ExtHdrFragment(id=3) / self.udp() / self.send_only()))
        seeds.append(bytes(self.l2() / self.ip4() / self.udp() /
                           BTH(opcode=0x81, dqpn=self.a.qpn, becn=1) / Raw(bytes(16))))  # CNP
        # Bytes worth aiming at: EtherType/TPID, IP version/IHL/lengths, UDP
        # ports and length, BTH opcode/TVer/PadCnt.
        for _ in range(self.a.fuzz):
            b = bytearray(rnd.choice(seeds))
            for _ in range(rnd.randint(1, 4)):
                op = rnd.randrange(6)
                if not b:
                    break
                i = rnd.randrange(len(b))
                if op == 0:
                    b[i] ^= 1 << rnd.randrange(8)
                elif op == 1:
                    b[i] = rnd.choice((0x00, 0xFF, 0x7F, 0x80, 0x81, 0x86, 0x88, 0x08, 0x40, 0x45, 0x60, 0x12,
                                       0xb7, 0x11, 0x06, 0x2c, 0x3b))
                elif op == 2:
                    j = rnd.choice((12, 13, 14, 16, 17, 18, 19, 20, 23, 38, 39, 40, 41, 42, 43))
                    if j < len(b):
                        b[j] = rnd.randrange(256)
                elif op == 3:
                    del b[rnd.randrange(len(b)):]
                elif op == 4:
                    b[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
                else:
                    del b[i:i + rnd.randint(1, 8)]
            self.add("fuzz", b)

    CATEGORIES = ("trunc", "lies", "vlan", "v6ext", "runt", "big", "macctl", "fuzz")

    def build(self, only=None):
        for cat in self.CATEGORIES:
            if only is None or cat in only:
                getattr(self, cat)()
        return self.frames


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fuzz", type=int, default=2000, help="number of mutated frames (default 2000)")
    ap.add_argument("--src-mac", default="02:00:00:00:09:09")
    ap.add_argument("--dst-mac", default="02:00:00:00:00:01")
    ap.add_argument("--src-ip", default="10.9.0.1")
    ap.add_argument("--dst-ip", default="10.0.0.1")
    ap.add_argument("--src-ip6", default="fc00::99")
    ap.add_argument("--dst-ip6", default="fc00::a")
    ap.add_argument("--qpn", type=lambda s: int(s, 0), default=0x777)
    ap.add_argument("--summary", action="store_true", help="print frames per category")
    ap.add_argument("--only", help="comma list of categories (default: all): " + ",".join(Corpus.CATEGORIES))
    a = ap.parse_args()
    only = None if a.only is None else set(a.only.split(","))
    if only is not None and not only <= set(Corpus.CATEGORIES):
        ap.error(f"--only: unknown category in {a.only}")
    frames = Corpus(a).build(only)
    w = PcapWriter(a.out, linktype=1, sync=False)
    for _, raw in frames:
        w.write(raw)  # raw bytes: nothing is rebuilt or fixed up by scapy
    w.close()
    if a.summary:
        cats = {}
        for c, _ in frames:
            cats[c] = cats.get(c, 0) + 1
        print(" ".join(f"{k}={v}" for k, v in cats.items()), f"total={len(frames)}")


if __name__ == "__main__":
    main()
