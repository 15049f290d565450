#!/usr/bin/python3
"""gen_multiplane_scenario.py - writes a multi-plane fabric scenario
(conf/scenarios/multiplane-*.yaml): S servers, each with P NIC ports, port k
in plane k. A plane is its own L2 tree: two leaves (half the servers each)
joined by one spine, the uplinks at (servers / 2) x the host rate so the
tree is not oversubscribed. Hosts are named s<server>p<plane>, listed server
by server (host i is server i / P in plane i % P, as `planes:` expects). The
traffic is a ring all-reduce striped over the planes (traffic `planes`,
`striping`).

A fault: --fault-plane K --fault-loss 1% puts i.i.d. loss on plane K's first
leaf uplink (both directions), a bad optic.
--single: one plane of the same capacity instead (P = 1, hosts at P x the
rate, uplinks likewise), the comparison the issue asks for.

  tools/gen_multiplane_scenario.py --name multiplane-8x4 --header FILE \\
      --expect "lossless_drops == 0" ... > conf/scenarios/multiplane-8x4.yaml
"""
import argparse
import json
import re


def rate_bps(r):
    m = re.fullmatch(r"(\d+)([GM])bps", r)
    return int(m.group(1)) * (10**9 if m.group(2) == "G" else 10**6)


def fmt_rate(bps):
    return f"{bps // 10**9}Gbps" if bps % 10**9 == 0 else f"{bps // 10**6}Mbps"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", type=int, default=8)
    ap.add_argument("--planes", type=int, default=4)
    ap.add_argument("--rate", default="100Gbps", help="per NIC port (plane)")
    ap.add_argument("--single", action="store_true", help="one plane of the same capacity")
    ap.add_argument("--striping", default="static", choices=["static", "weighted"])
    ap.add_argument("--fault-plane", type=int, default=-1)
    ap.add_argument("--fault-loss", default="1%")
    ap.add_argument("--msg-size", default="16MiB")
    ap.add_argument("--collectives", type=int, default=8)
    ap.add_argument("--duration", default="10ms")
    ap.add_argument("--name", required=True)
    ap.add_argument("--description", default="")
    ap.add_argument("--header", default="")
    ap.add_argument("--expect", action="append", default=[])
    a = ap.parse_args()
    assert a.servers % 2 == 0 and a.servers >= 2
    planes = 1 if a.single else a.planes
    host_bps = rate_bps(a.rate) * (a.planes if a.single else 1)
    half = a.servers // 2
    up = fmt_rate(host_bps * half)
    out = []
    if a.header:
        with open(a.header) as f:
            out.append(f.read().rstrip("\n"))
    out.append(f"name: {a.name}")
    if a.description:
        out.append("description: " + json.dumps(a.description))
    out.append(f"duration: {a.duration}")
    out.append(f"link: {{rate: {fmt_rate(host_bps)}, delay: 25ns}}")
    out.append("switches:")
    for k in range(planes):
        for leaf in range(2):
            out.append(f"  - name: p{k}leaf{leaf}")
            out.append("    config:")
            out.append("      PORT:")
            for s in range(half):
                out.append(f"        Ethernet{s}: {{speed: {fmt_rate(host_bps)}}}")
            out.append(f"        Ethernet{half}: {{speed: {up}}}   # uplink")
        out.append(f"  - name: p{k}spine")
        out.append("    config:")
        out.append("      PORT:")
        out.append(f"        Ethernet0: {{speed: {up}}}")
        out.append(f"        Ethernet1: {{speed: {up}}}")
    hosts = [f"s{s}p{k}" for s in range(a.servers) for k in range(planes)]
    out.append("hosts: [" + ", ".join(hosts) + "]")
    out.append("links:")
    for k in range(planes):
        for s in range(a.servers):
            leaf, port = divmod(s, half)
            out.append(f"  - {{a: s{s}p{k}, b: p{k}leaf{leaf}:Ethernet{port}}}")
        for leaf in range(2):
            extra = ""
            if k == a.fault_plane and leaf == 0:
                extra = f", loss: {a.fault_loss}, loss_seed: 11"
            out.append(f"  - {{a: p{k}leaf{leaf}:Ethernet{half}, b: p{k}spine:Ethernet{leaf}, rate: {up}{extra}}}")
    out.append("traffic:")
    out.append("  seed: 7")
    out.append("  pattern: ring-allreduce")
    out.append(f"  msg_size: {a.msg_size}")
    out.append(f"  messages: {a.collectives}")
    out.append("  pmtu: 1024")
    out.append("  window: 1024")
    out.append("  ack_timeout: 3                  # 32.8 us: a lost tail is resent within a few round trips")
    if planes > 1:
        out.append(f"  planes: {planes}")
        out.append(f"  striping: {a.striping}")
    if a.expect:
        out.append("expect:")
        for e in a.expect:
            out.append(f"  - {e}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
