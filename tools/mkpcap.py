#!/usr/bin/python3
"""mkpcap.py - write pcap files of real RoCEv2 frames with scapy (an
implementation independent of rocelab's own builders), for tests, demos and
benchmarks.

Examples:
  tools/mkpcap.py roce out.pcap --count 4096 --qps 64 --dscp 26,0,8,48 --payload 1024
  tools/mkpcap.py roce out.pcap --count 1000 --vary-sport --dst-ip 10.1.0.5
  tools/mkpcap.py malformed out.pcap

Needs Debian's python3-scapy (run with /usr/bin/python3).
"""
import argparse
import random
import sys

from scapy.all import Ether, IP, IPv6, UDP, Raw, Dot1Q, wrpcap, PcapWriter
from scapy.contrib.roce import BTH, AETH

ROCE_PORT = 4791


def roce_frame(i, a):
    """Frame i of a RoCEv2 stream described by args a."""
    qp = i % a.qps
    dscps = [int(x) for x in a.dscp.split(",")]
    dscp = dscps[i % len(dscps)]
    sport = (0xC000 + (i if a.vary_sport else qp * 7919)) & 0xFFFF | 0xC000
    cnp = dscp == 48 and a.cnp_for_dscp48
    l2 = Ether(dst=a.dst_mac, src=a.src_mac)
    if a.vlan is not None:
        l2 = l2 / Dot1Q(vlan=a.vlan, prio=a.pcp if a.pcp is not None else (dscp >> 3) & 7)
    if a.ipv6:
        l3 = IPv6(src=a.src_ip6, dst=a.dst_ip6, tc=(dscp << 2) | a.ecn, hlim=a.ttl)
    else:
        dst = a.dst_ip
        if a.dst_ip_count > 1:
            base = [int(x) for x in a.dst_ip.split(".")]
            n = (base[3] + i % a.dst_ip_count)
            dst = "%d.%d.%d.%d" % (base[0], base[1], base[2] + n // 256, n % 256)
        l3 = IP(src=a.src_ip, dst=dst, tos=(dscp << 2) | a.ecn, ttl=a.ttl, id=i & 0xFFFF, flags="DF")
    l4 = UDP(sport=sport, dport=ROCE_PORT, chksum=0)
    if cnp:
        bth = BTH(opcode=0x81, pkey=0xFFFF, becn=1, dqpn=0x100 + qp, psn=0) / Raw(b"\x00" * 16)
    else:
        payload = bytes(((i + k) & 0xFF) for k in range(a.payload))
        bth = BTH(opcode=0x04, pkey=0xFFFF, dqpn=0x100 + qp, ackreq=1, psn=(i // a.qps) & 0xFFFFFF) / Raw(payload)
    return l2 / l3 / l4 / bth


def cmd_roce(a):
    w = PcapWriter(a.out, sync=False)
    for i in range(a.count):
        w.write(roce_frame(i, a))
    w.close()


def cmd_malformed(a):
    """One frame per malformed case the switch must count (and some good ones)."""
    good = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6a) / \
        UDP(sport=49152, dport=ROCE_PORT, chksum=0) / BTH(opcode=0x04, dqpn=0x11, psn=1) / Raw(b"x" * 16)
    gb = bytes(good)
    frames = []
    frames.append(gb[:10])                                    # truncated Ethernet
    frames.append(bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01", type=0x8100)) + b"\x00")  # truncated VLAN
    frames.append(gb[:14 + 10])                               # truncated IPv4
    b = bytearray(gb); b[14] = 0x65; frames.append(bytes(b))  # bad IPv4 version
    b = bytearray(gb); b[14] = 0x43; frames.append(bytes(b))  # bad IHL (3)
    b = bytearray(gb); b[16:18] = (0xFFF0).to_bytes(2, "big"); frames.append(bytes(b))  # total length > frame
    frames.append(gb[:14 + 20 + 4])                           # truncated UDP
    b = bytearray(gb); b[14 + 20 + 4:14 + 20 + 6] = (4).to_bytes(2, "big"); frames.append(bytes(b))  # bad UDP length
    frames.append(gb[:14 + 20 + 8 + 6])                       # truncated BTH (IP/UDP lengths say more)
    b = bytearray(gb); b[14 + 20 + 8] = 0x1F; frames.append(bytes(b))  # unknown RC opcode 0x1f
    v6 = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / IPv6(src="fc00::1", dst="fc00::2") / UDP(sport=49152, dport=ROCE_PORT)
    frames.append(bytes(v6)[:14 + 30])                        # truncated IPv6
    frames.append(bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:01", type=0x8808)) + b"\x01\x01")  # truncated PFC
    w = PcapWriter(a.out, linktype=1, sync=False)
    for f in frames + [gb] * a.good:
        w.write(f)  # raw bytes: nothing is rebuilt or fixed up by scapy
    w.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("roce", help="RoCEv2 SEND_ONLY frames (and CNPs on DSCP 48)")
    r.add_argument("out")
    r.add_argument("--count", type=int, default=1024)
    r.add_argument("--qps", type=int, default=32)
    r.add_argument("--dscp", default="26", help="comma list, cycled per frame (default 26)")
    r.add_argument("--ecn", type=int, default=2, help="ECN bits (default 2 = ECT(0))")
    r.add_argument("--payload", type=int, default=1024, help="payload bytes per frame (default 1024)")
    r.add_argument("--ttl", type=int, default=64)
    r.add_argument("--vlan", type=int)
    r.add_argument("--pcp", type=int)
    r.add_argument("--ipv6", action="store_true")
    r.add_argument("--vary-sport", action="store_true", help="a distinct UDP source port per frame")
    r.add_argument("--cnp-for-dscp48", action="store_true", help="frames with DSCP 48 are CNPs")
    r.add_argument("--src-mac", default="02:00:00:00:00:01")
    r.add_argument("--dst-mac", default="02:00:00:00:00:02")
    r.add_argument("--src-ip", default="10.0.0.1")
    r.add_argument("--dst-ip", default="10.0.0.2")
    r.add_argument("--dst-ip-count", type=int, default=1)
    r.add_argument("--src-ip6", default="fc00::1")
    r.add_argument("--dst-ip6", default="fc00::2")
    m = sub.add_parser("malformed", help="a corpus of malformed frames plus good ones")
    m.add_argument("out")
    m.add_argument("--good", type=int, default=10)
    a = ap.parse_args()
    {"roce": cmd_roce, "malformed": cmd_malformed}[a.cmd](a)


if __name__ == "__main__":
    main()
