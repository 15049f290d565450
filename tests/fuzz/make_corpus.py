#!/usr/bin/env python3
"""make_corpus.py - write the seed corpora of tests/fuzz/corpus/<target>/.

Frames are built here with struct (no scapy needed) or taken from the
reference vectors (tests/unit/proto/test_vectors.hpp, reference sec. 1.6 and
2.1); the ICRC is computed as in lib/proto/icrc.hpp and checked against the
reference vectors first. YAML seeds are the files of conf/ and conf/gen/.
fuzz_gen_rx's seeds are captured from the generator itself:
    FUZZ_GEN_SEEDS=tests/fuzz/corpus/fuzz_gen_rx build-fuzz/tests/fuzz/fuzz_gen_rx
Usage: python3 tests/fuzz/make_corpus.py   (from the repository root; rewrites
the corpora of every target but fuzz_gen_rx)
"""
import json
import os
import re
import shutil
import struct
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def ref_vectors():
    text = open(os.path.join(ROOT, "tests", "unit", "proto", "test_vectors.hpp")).read()
    out = {}
    for m in re.finditer(r'ref_vector \w+\{\s*"(\w+)",\s*((?:"[0-9a-f]*"\s*)+),', text):
        out[m.group(1)] = bytes.fromhex("".join(re.findall(r'"([0-9a-f]*)"', m.group(2))))
    return out


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def mac(s):
    return bytes.fromhex(s.replace(":", ""))


def eth(dst, src, etype, vlans=()):
    h = mac(dst) + mac(src)
    for tpid, tci in vlans:
        h += struct.pack("!HH", tpid, tci)
    return h + struct.pack("!H", etype)


def ipv4(src, dst, proto, payload, dscp=26, ttl=64, frag=0x4000, ident=1):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2 | 2, 20 + len(payload), ident, frag, ttl, proto, 0,
                    bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def ip6addr(s):
    import ipaddress
    return ipaddress.IPv6Address(s).packed


def ipv6(src, dst, nxt, payload, dscp=26, hlim=64):
    return struct.pack("!IHBB", 6 << 28 | dscp << 22 | 2 << 20, len(payload), nxt, hlim) + ip6addr(src) + \
        ip6addr(dst) + payload


def icrc_fix(frame, l3_off, v6):
    """Stores the ICRC over frame[l3_off:-4] in the last 4 bytes."""
    l3 = bytearray(frame[l3_off:-4])
    if v6:
        l3[0:4] = b"\x6f\xff\xff\xff"
        l3[7] = 0xFF
        udp = 40
    else:
        l3[1] = 0xFF
        l3[8] = 0xFF
        l3[10:12] = b"\xff\xff"
        udp = (l3[0] & 15) * 4
    l3[udp + 6:udp + 8] = b"\xff\xff"
    l3[udp + 8 + 4] = 0xFF
    return frame[:-4] + struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(l3)))


def bth(opcode, qpn, psn, ack=False, pad=0):
    return struct.pack("!BBHII", opcode, pad << 4, 0xFFFF, qpn & 0xFFFFFF, (0x80000000 if ack else 0) | psn)


def roce4(dst_mac, src_mac, sip, dip, opcode, qpn, psn, ext=b"", payload=b"", vlans=(), dscp=26, sport=0xC000):
    udp_payload = bth(opcode, qpn, psn, ack=True) + ext + payload + b"\0\0\0\0"
    udp = struct.pack("!HHHH", sport, 4791, 8 + len(udp_payload), 0) + udp_payload
    l2 = eth(dst_mac, src_mac, 0x0800, vlans)
    f = l2 + ipv4(sip, dip, 17, udp, dscp=dscp)
    return icrc_fix(f, len(l2), False)


def roce6(dst_mac, src_mac, sip, dip, opcode, qpn, psn, ext=b"", payload=b"", dscp=26):
    udp_payload = bth(opcode, qpn, psn, ack=True) + ext + payload + b"\0\0\0\0"
    udp = struct.pack("!HHHH", 0xC001, 4791, 8 + len(udp_payload), 0) + udp_payload
    f = eth(dst_mac, src_mac, 0x86DD) + ipv6(sip, dip, 17, udp, dscp=dscp)
    return icrc_fix(f, 14, True)


def arp_request(src_mac, sip, tip, vlans=()):
    body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac(src_mac), bytes(map(int, sip.split("."))),
                       b"\0" * 6, bytes(map(int, tip.split("."))))
    return (eth("ff:ff:ff:ff:ff:ff", src_mac, 0x0806, vlans) + body).ljust(60, b"\0")


def arp_reply(src_mac, sip, dst_mac, tip):
    body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, mac(src_mac), bytes(map(int, sip.split("."))),
                       mac(dst_mac), bytes(map(int, tip.split("."))))
    return (eth(dst_mac, src_mac, 0x0806) + body).ljust(60, b"\0")


def icmp6(src, dst, body, hlim=255):
    pseudo = ip6addr(src) + ip6addr(dst) + struct.pack("!IxxxB", len(body), 58)
    c = csum(pseudo + body)
    return ipv6(src, dst, 58, body[:2] + struct.pack("!H", c) + body[4:], dscp=0, hlim=hlim)


def neighbor_solicitation(src_mac, src, target):
    t = ip6addr(target)
    dst = "ff02::1:ff" + t.hex()[26:28] + ":" + t.hex()[28:32]
    body = struct.pack("!BBHI", 135, 0, 0, 0) + t + struct.pack("!BB", 1, 1) + mac(src_mac)
    return eth("33:33:ff:" + ":".join(t.hex()[26 + 2 * i:28 + 2 * i] for i in range(3)), src_mac, 0x86DD) + \
        icmp6(src, dst, body)


def neighbor_advert(src_mac, dst_mac, src, dst):
    """Solicited NA for src (the target) with a target link-layer option."""
    body = struct.pack("!BBHI", 136, 0, 0, 0x60000000) + ip6addr(src) + struct.pack("!BB", 2, 1) + mac(src_mac)
    return eth(dst_mac, src_mac, 0x86DD) + icmp6(src, dst, body)


def echo4(dst_mac, src_mac, sip, dip):
    body = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + b"ping" * 4
    body = body[:2] + struct.pack("!H", csum(body)) + body[4:]
    return eth(dst_mac, src_mac, 0x0800) + ipv4(sip, dip, 1, body, dscp=0)


def echo6(dst_mac, src_mac, sip, dip):
    body = struct.pack("!BBHHH", 128, 0, 0, 7, 1) + b"ping" * 4
    return eth(dst_mac, src_mac, 0x86DD) + icmp6(sip, dip, body, hlim=64)


def pfc(src_mac, cev, quanta):
    q = [quanta if cev >> i & 1 else 0 for i in range(8)]
    return (eth("01:80:c2:00:00:01", src_mac, 0x8808) + struct.pack("!HH8H", 0x0101, cev, *q)).ljust(60, b"\0")


def pause(src_mac, quanta):
    return (eth("01:80:c2:00:00:01", src_mac, 0x8808) + struct.pack("!HH", 1, quanta)).ljust(60, b"\0")


def frames_for_parser(vec):
    f = dict(vec)
    a = vec["A_rc_send_only_ipv4"]
    f["vlan_roce"] = roce4("02:00:00:00:00:02", "02:00:00:00:00:01", "10.0.0.2", "10.0.0.1", 0x04, 0x11, 5,
                           payload=bytes(range(32)), vlans=((0x8100, 3 << 13 | 100),))
    f["qinq_roce"] = roce4("02:00:00:00:00:02", "02:00:00:00:00:01", "10.0.0.2", "10.0.0.1", 0x0A, 0x11, 6,
                           ext=struct.pack("!QII", 0x1000, 0x1234, 64), payload=bytes(64),
                           vlans=((0x88A8, 200), (0x8100, 3 << 13 | 100)))
    f["roce6_write_first"] = roce6("02:00:00:00:00:02", "02:00:00:00:00:01", "fc00::2", "fc00::1", 0x06, 0x12, 0,
                                   ext=struct.pack("!QII", 0x2000, 0x99, 4096), payload=bytes(256))
    # IPv6 with a hop-by-hop extension header before UDP (not walked by the parser).
    udp = struct.pack("!HHHH", 0xC000, 4791, 8 + 16, 0) + bth(0x04, 0x11, 1) + b"\0" * 4
    hbh = struct.pack("!BB", 17, 0) + b"\x01\x04\0\0\0\0"
    f["ipv6_ext_hbh"] = eth("02:00:00:00:00:02", "02:00:00:00:00:01", 0x86DD) + \
        ipv6("fc00::2", "fc00::1", 0, hbh + udp)
    f["ipv4_fragment"] = eth("02:00:00:00:00:02", "02:00:00:00:00:01", 0x0800) + \
        ipv4("10.0.0.2", "10.0.0.1", 17, bytes(40), frag=0x2000)
    f["ipv4_options"] = a[:14] + bytes([0x46]) + a[15:24] + b"\0\0" + a[26:34] + b"\x01\x01\x01\x00" + a[34:]
    f["arp_request"] = arp_request("02:00:00:00:00:10", "10.0.0.0", "10.0.0.1")
    f["arp_request_vlan"] = arp_request("02:00:00:00:00:10", "10.0.0.0", "10.0.0.1", vlans=((0x8100, 100),))
    f["nd_solicit"] = neighbor_solicitation("02:00:00:00:00:10", "fc00::2", "fc00::1")
    f["echo4"] = echo4("02:00:00:00:01:00", "02:00:00:00:00:10", "10.0.0.0", "10.0.0.1")
    f["echo6"] = echo6("02:00:00:00:01:00", "02:00:00:00:00:10", "fc00::2", "fc00::1")
    f["truncated_roce"] = a[:50]
    f["truncated_eth"] = a[:13]
    f["three_vlan_tags"] = a[:12] + b"\x81\x00\x00\x01" * 3 + a[12:]
    return f


def wrap(head, frames, step=1):
    """Switch/gen harness input: head byte, then (ctl, len16 LE, frame) per frame."""
    out = bytes([head])
    for port, f in frames:
        out += bytes([step << 5 | port]) + struct.pack("<H", len(f)) + f
    return out


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(data)


def shrink_config_db(d, keep):
    """A config_db.json with only its first `keep` PORT entries (and the
    special ports, names without a number); every key naming another port
    (alone, in a comma list, or host|asic|port|...) is dropped or trimmed."""
    ports = list(d.get("PORT", {}))
    kept = set([p for p in ports if re.search(r"\d$", p)][:keep] + [p for p in ports if not re.search(r"\d$", p)])
    is_port = re.compile(r"^Ethernet[-\w]*$")

    def fix_key(k):
        parts = k.split("|")
        for i, part in enumerate(parts):
            names = part.split(",")
            if all(is_port.match(n) for n in names):
                names = [n for n in names if n in kept]
                if not names:
                    return None
                parts[i] = ",".join(names)
        return "|".join(parts)

    def fix_table(t):
        out = {}
        for k, v in t.items():
            nk = fix_key(k)
            if nk is not None:
                out[nk] = v
        return out

    out = {}
    for name, t in d.items():
        if name in ("CABLE_LENGTH",):
            out[name] = {k: fix_table(v) for k, v in t.items()}
        elif isinstance(t, dict) and name not in ("DEVICE_METADATA",):
            out[name] = fix_table(t)
        else:
            out[name] = t
    return out


def main():
    vec = ref_vectors()
    # The ICRC code above must reproduce the reference vectors.
    for k in ("A_rc_send_only_ipv4", "B_rc_write_only_reth", "C_ack", "E_cnp"):
        assert icrc_fix(vec[k], 14, False) == vec[k], k
    for t in ("fuzz_parse_frame", "fuzz_switch_path", "fuzz_switch_config", "fuzz_gen_config", "fuzz_units"):
        # Regenerate the seeds written here, but keep what fuzzing added
        # (FUZZ_MERGE=1 tools/fuzz.sh: libFuzzer names its inputs by their
        # SHA-1) and kept crash inputs (crash-*): the corpus only grows.
        d = os.path.join(OUT, t)
        for name in os.listdir(d) if os.path.isdir(d) else []:
            if not re.fullmatch(r"[0-9a-f]{40}|crash-.*", name):
                os.unlink(os.path.join(d, name))

    for name, f in frames_for_parser(vec).items():
        write("fuzz_parse_frame", name, f)

    # fuzz_switch_path: bed 0 (L2, 3 ports, port 1 tagged VLAN 100) and bed 1 (L3 leaf, 4 ports).
    h = ["02:00:00:00:00:%02x" % (0x10 + i) for i in range(4)]
    ro = lambda s, d, dscp=26, vl=(): roce4(d, s, "10.9.0.1", "10.9.0.2", 0x04, 0x11, 0, payload=bytes(512),
                                           vlans=vl, dscp=dscp)
    tagged = lambda s, d: roce4(d, s, "10.9.0.1", "10.9.0.2", 0x04, 0x11, 0, payload=bytes(512),
                                vlans=((0x8100, 3 << 13 | 100),))
    write("fuzz_switch_path", "l2_learn_and_forward", wrap(0, [(0, ro(h[0], h[2])), (2, ro(h[2], h[0])),
                                                              (0, ro(h[0], h[2]))]))
    write("fuzz_switch_path", "l2_tagged_port", wrap(0, [(1, tagged(h[1], h[0])), (0, ro(h[0], h[1]))]))
    write("fuzz_switch_path", "l2_arp_flood", wrap(0, [(0, arp_request(h[0], "10.9.0.1", "10.9.0.2"))]))
    write("fuzz_switch_path", "l2_pfc_pause", wrap(0, [(2, pfc(h[2], 0x08, 0xFFFF)), (0, ro(h[0], h[2])),
                                                      (2, pfc(h[2], 0x08, 0)), (2, pause(h[2], 100))]))
    # 60 lossless 1.5KB frames from port 0 to port 2 at time step 0: PG 3 of port 0 fills, XOFF goes out.
    big = roce4(h[2], h[0], "10.9.0.1", "10.9.0.2", 0x04, 0x11, 0, payload=bytes(1400))
    burst = [(0, big)] * 60
    write("fuzz_switch_path", "l2_lossless_incast", wrap(0, [(2, ro(h[2], h[0])), (2, ro(h[2], h[1]))] + burst,
                                                         step=0))
    write("fuzz_switch_path", "l2_cnp_and_lossy", wrap(0, [(0, ro(h[0], h[2], dscp=48)),
                                                          (0, ro(h[0], h[2], dscp=0))]))
    rmac = "02:00:00:00:01:00"
    r4 = lambda dip, sport: roce4(rmac, "02:00:00:00:00:20", "10.2.0.5", dip, 0x04, 0x11, 0, payload=bytes(256),
                                  sport=sport)
    r6 = roce6(rmac, "02:00:00:00:00:10", "fc00:1::2", "fc00:2::9", 0x04, 0x12, 0, payload=bytes(256))
    write("fuzz_switch_path", "l3_route_v4", wrap(1, [(2, r4("10.1.0.0", 0xC000)), (0, r4("10.2.3.4", 0xC001)),
                                                     (0, r4("10.2.3.4", 0xC002))]))
    write("fuzz_switch_path", "l3_route_v6_ecmp", wrap(1, [(0, r6)]))
    write("fuzz_switch_path", "l3_arp_nd_echo", wrap(1, [
        (0, arp_request("02:00:00:00:00:10", "10.1.0.0", "10.1.0.1")),
        (0, neighbor_solicitation("02:00:00:00:00:10", "fc00:1::2", "fc00:1::1")),
        (0, echo4(rmac, "02:00:00:00:00:10", "10.1.0.0", "10.1.0.1")),
        (0, echo6(rmac, "02:00:00:00:00:10", "fc00:1::2", "fc00:1::1"))]))
    ttl1 = bytearray(r4("10.1.0.2", 0xC003))
    ttl1[22] = 1
    ttl1[24:26] = b"\0\0"
    ttl1[24:26] = struct.pack("!H", csum(bytes(ttl1[14:34])))
    write("fuzz_switch_path", "l3_ttl_expired", wrap(1, [(2, bytes(ttl1))]))
    # bed 2: L3 leaf resolving its neighbours (ARP/ND): frames wait for a host, which answers.
    hd = "02:00:00:00:00:33"
    d4 = roce4(rmac, "02:00:00:00:00:20", "10.20.0.5", "10.21.0.9", 0x04, 0x11, 0, payload=bytes(128))
    d6 = roce6(rmac, "02:00:00:00:00:20", "2001:db8:20::5", "2001:db8:21::9", 0x04, 0x12, 0, payload=bytes(128))
    via = roce4(rmac, "02:00:00:00:00:20", "10.20.0.5", "10.50.0.1", 0x04, 0x13, 0, payload=bytes(64))
    write("fuzz_switch_path", "l3dyn_resolve_and_release", wrap(2, [
        (0, d4), (0, d4), (0, d6), (0, via),
        (1, arp_reply(hd, "10.21.0.9", rmac, "10.21.0.1")),
        (1, neighbor_advert(hd, rmac, "2001:db8:21::9", "2001:db8:21::1")),
        (1, arp_request("02:00:00:00:00:44", "10.21.0.7", "10.21.0.1")),
        (0, d4), (0, via)]))
    write("fuzz_switch_path", "l3dyn_no_answer", wrap(2, [(0, d4)] * 12 + [(0, d6)], step=0))
    # beds 3 and 4: the same switches on 3 and 2 workers (frames, flood copies, releases and
    # neighbour resolution cross between workers).
    write("fuzz_switch_path", "l2w_lossless_incast", wrap(3, [(2, ro(h[2], h[0])), (2, ro(h[2], h[1]))] + burst,
                                                          step=0))
    write("fuzz_switch_path", "l2w_learn_flood_pfc", wrap(3, [(0, ro(h[0], h[2])), (2, ro(h[2], h[0])),
                                                             (1, tagged(h[1], h[0])),
                                                             (2, pfc(h[2], 0x08, 0xFFFF)), (0, ro(h[0], h[2]))]))
    write("fuzz_switch_path", "l3dynw_resolve_and_release", wrap(4, [
        (0, d4), (0, d4), (0, d6), (0, via),
        (1, arp_reply(hd, "10.21.0.9", rmac, "10.21.0.1")),
        (1, neighbor_advert(hd, rmac, "2001:db8:21::9", "2001:db8:21::1")),
        (1, arp_request("02:00:00:00:00:44", "10.21.0.7", "10.21.0.1")),
        (0, d4), (0, via)]))
    write("fuzz_switch_path", "l3dynw_no_answer", wrap(4, [(0, d4)] * 12 + [(0, d6)], step=0))

    # YAML: the example configs (fuzz_gen_config's first byte picks 1..4 ports; "\n" = 3).
    for f in sorted(os.listdir(os.path.join(ROOT, "conf"))):
        if f.endswith(".yaml"):
            write("fuzz_switch_config", f, open(os.path.join(ROOT, "conf", f), "rb").read())
    # config_db.json: the two examples as they are, and the real-shaped files
    # of conf/config_db/real cut to 4 ports (every table and buffer feature
    # kept; whole 64-port files would slow each run ~50x).
    for f in ("mellanox-tor.json", "broadcom-tor.json"):
        write("fuzz_switch_config", "config_db-" + f, open(os.path.join(ROOT, "conf", "config_db", f), "rb").read())
    real = os.path.join(ROOT, "conf", "config_db", "real")
    for f in sorted(os.listdir(real)):
        if f.endswith(".json"):
            d = shrink_config_db(json.load(open(os.path.join(real, f))), 4)
            write("fuzz_switch_config", "real-" + f, (json.dumps(d, indent=1) + "\n").encode())
    for f in sorted(os.listdir(os.path.join(ROOT, "conf", "gen"))):
        if f.endswith(".yaml"):
            write("fuzz_gen_config", f, b"\n" + open(os.path.join(ROOT, "conf", "gen", f), "rb").read())
    write("fuzz_gen_config", "ipv6_alltoall.yaml", b"\x01ip_version: 6\npattern: all-to-all\nmsg_size: 64KiB\n"
          b"loss: 0.5%\nlink_delay: 10us\npfc_tx: port=0,prio=3,quanta=100,interval=1ms,count=5,start=0s\n")
    write("fuzz_gen_config", "ring.yaml", b"\x03pattern: ring-allreduce\nmessages: 4\nsize_dist: uniform:4KiB-1MiB\n"
          b"arrivals: poisson:10us\n")

    units = {
        "rate": b"\x00100Gbps", "rate_frac": b"\x002.5Gbps", "time": b"\x0055us", "time_bare": b"\x01200",
        "bytes": b"\x0096KiB", "bytes_bare": b"\x019216", "percent": b"\x000.5%", "key_rate": b"\x00rate=10Gbps",
        "key_pfc_tx": b"\x00pfc_tx=port=0,prio=3,prio=4,quanta=100,interval=1ms,count=5,start=2ms",
        "key_size_dist": b"\x00size_dist=uniform:4KiB-1MiB", "key_arrivals": b"\x00arrivals=poisson:10us",
        "key_ack_timeout": b"\x00ack_timeout=14", "key_ack_timeout_t": b"\x00ack_timeout=1ms",
        "key_loss": b"\x00loss=1%", "key_pattern": b"\x00pattern=ring-allreduce", "key_pmtu": b"\x00pmtu=4096",
        # Regressions (units_parse_test): 130 decimals divided by zero; 20-digit sizes did not round-trip.
        "crash_many_decimals": b"\x000." + b"0" * 130 + b"Gbps", "crash_20_digit_bytes": b"010260000001021MB",
    }
    for k, v in units.items():
        write("fuzz_units", k, v)


if __name__ == "__main__":
    main()
