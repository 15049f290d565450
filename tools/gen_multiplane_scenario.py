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

--leaves L --spines S: each plane a two-tier leaf-spine instead, routed (L3)
as tools/gen_cluster_scenario.py routes its cluster: L leaves with servers / L
host ports each and S uplinks, one to each of the plane's S spines, at
(servers / L) x the host rate / (S x --oversub) each (1: not oversubscribed);
each leaf routes every other leaf's /16 over its S uplinks (S-way ECMP), each
spine every leaf's /16 over its one cable to it. Switches p<k>leaf<l> and
p<k>spine<s>. Addresses: plane k's leaf l is 10.<1 + k L + l>.0.0/16, its
host port p 10.<..>.<p>.1/24 with the host at .2; uplink n = (k L + l) S + s
is the /31 10.0.0.0 + 2n (spine even, leaf odd). One MAC for every host and
switch (the generator addresses its frames to the peer's MAC; an L3 switch
takes only its router MAC). PFC on priority 3 with lossless profiles and a
--buffer pool per switch, no ECN, as the cluster.

--traffic permutation: instead of the striped ring, every host writes to
the host of the same plane --shift servers on (default servers / L: the same
port of the next leaf, so every flow crosses a spine), closed loop, messages
of --msg-size, as listed flows (one per host, named s<i>p<k>->s<j>p<k>). The
planes then share nothing (no server gate), so --threads can split them plane
by plane, cutting no cable (a striped collective makes each server's ports
one unit, which joins its leaf in every plane into one part: a split cuts
uplinks).

  tools/gen_multiplane_scenario.py --name multiplane-8x4 --header FILE \\
      --expect "lossless_drops == 0" ... > conf/scenarios/multiplane-8x4.yaml
  tools/gen_multiplane_scenario.py --name planes-256x8 --servers 256 --planes 8 \\
      --leaves 8 --spines 4 --traffic permutation --duration 100us > /tmp/planes-256x8.yaml
"""
import argparse
import json
import re


def rate_bps(r):
    m = re.fullmatch(r"(\d+)([GM])bps", r)
    return int(m.group(1)) * (10**9 if m.group(2) == "G" else 10**6)


def fmt_rate(bps):
    return f"{bps // 10**9}Gbps" if bps % 10**9 == 0 else f"{bps // 10**6}Mbps"


MAC = '"02:00:00:00:01:00"'


def l3_switch(name, ports, intf, routes, neigh, pool):
    """An L3 switch with PFC on priority 3, as tools/gen_cluster_scenario.py writes it."""
    out = [f"  - name: {name}", "    config:",
           "      ROCELAB: {mode: l3, seed: 7}",
           f"      DEVICE_METADATA: {{localhost: {{mac: {MAC}}}}}",
           "      PORT:"]
    out += [f"        {p}: {{speed: {r}}}" for p, r in ports]
    out += ['      PORT_QOS_MAP: {global: {pfc_enable: "3"}}',
            "      WRED_PROFILE: {}",
            f"      BUFFER_POOL: {{ingress_lossless_pool: {{size: {pool}, type: ingress, mode: dynamic}}}}",
            "      BUFFER_PROFILE:",
            "        pg_lossless_host: {pool: ingress_lossless_pool, dynamic_th: -3, xoff: auto}",
            "        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}",
            "      BUFFER_PG:",
            '        "global|3": {profile: pg_lossless_host}',
            '        "global|0": {profile: ingress_lossy_profile}',
            "      INTERFACE:"]
    out += [f'        "{p}|{a}": {{}}' for p, a in intf]
    if routes:
        out.append("      ROUTE:")
        out += [f'        "{pre}": {{nexthop: "{nh}", ifname: "{ifn}"}}' for pre, nh, ifn in routes]
    out.append("      NEIGH:")
    out += [f'        "{p}|{a}": {{neigh: {MAC}, family: IPv4}}' for p, a in neigh]
    return out


def leaf_spine(a, planes, host_bps):
    """Each plane an L3 leaf-spine (the module's doc): switch lines, hosts
    (with addresses), link lines."""
    L, S = a.leaves, a.spines
    if L < 2 or S < 1 or a.servers % L != 0:
        raise SystemExit(f"gen_multiplane_scenario: --leaves {L} --spines {S}: needs >= 2 leaves, >= 1 spine, "
                         f"and the {a.servers} servers a multiple of the leaves")
    H = a.servers // L  # host ports per leaf
    if planes * L > 254 or H > 254 or 2 * planes * L * S > 65536:
        raise SystemExit(f"gen_multiplane_scenario: {planes} planes x {L} leaves x {H} hosts x {S} spines "
                         "do not fit the addressing (planes x leaves <= 254, hosts per leaf <= 254, "
                         "planes x leaves x spines <= 32768)")
    up_bps, rem = divmod(H * host_bps, S * a.oversub)
    if rem or up_bps % 10**6:
        raise SystemExit(f"gen_multiplane_scenario: {H} x {fmt_rate(host_bps)} / ({S} spines x {a.oversub}) "
                         "is not a whole number of Mbps")
    up = fmt_rate(up_bps)

    def octet(k, leaf):
        return 1 + k * L + leaf

    def uplink(k, leaf, s):  # (spine side, leaf side) of uplink n's /31
        n = 2 * ((k * L + leaf) * S + s)
        return f"10.0.{n >> 8}.{n & 255}", f"10.0.{n >> 8}.{(n & 255) + 1}"

    sw, links = [], []
    for k in range(planes):
        for leaf in range(L):
            ports = [(f"Ethernet{p}", fmt_rate(host_bps)) for p in range(H)]
            ports += [(f"Ethernet{H + s}", up) for s in range(S)]
            intf = [(f"Ethernet{p}", f"10.{octet(k, leaf)}.{p}.1/24") for p in range(H)]
            intf += [(f"Ethernet{H + s}", uplink(k, leaf, s)[1] + "/31") for s in range(S)]
            nh = ",".join(uplink(k, leaf, s)[0] for s in range(S))
            ifn = ",".join(f"Ethernet{H + s}" for s in range(S))
            routes = [(f"10.{octet(k, m)}.0.0/16", nh, ifn) for m in range(L) if m != leaf]
            neigh = [(f"Ethernet{p}", f"10.{octet(k, leaf)}.{p}.2") for p in range(H)]
            neigh += [(f"Ethernet{H + s}", uplink(k, leaf, s)[0]) for s in range(S)]
            sw += l3_switch(f"p{k}leaf{leaf}", ports, intf, routes, neigh, a.buffer)
        for s in range(S):
            ports = [(f"Ethernet{leaf}", up) for leaf in range(L)]
            intf = [(f"Ethernet{leaf}", uplink(k, leaf, s)[0] + "/31") for leaf in range(L)]
            routes = [(f"10.{octet(k, leaf)}.0.0/16", uplink(k, leaf, s)[1], f"Ethernet{leaf}") for leaf in range(L)]
            neigh = [(f"Ethernet{leaf}", uplink(k, leaf, s)[1]) for leaf in range(L)]
            sw += l3_switch(f"p{k}spine{s}", ports, intf, routes, neigh, a.buffer)
        for srv in range(a.servers):
            leaf, port = divmod(srv, H)
            links.append(f"  - {{a: s{srv}p{k}, b: p{k}leaf{leaf}:Ethernet{port}}}")
        for leaf in range(L):
            for s in range(S):
                extra = ""
                if k == a.fault_plane and leaf == 0 and s == 0:
                    extra = f", loss: {a.fault_loss}, loss_seed: 11"
                links.append(f"  - {{a: p{k}leaf{leaf}:Ethernet{H + s}, b: p{k}spine{s}:Ethernet{leaf}, "
                             f"rate: {up}{extra}}}")
    hosts = ["hosts:"]
    for srv in range(a.servers):
        leaf, port = divmod(srv, H)
        hosts += [f"  - {{name: s{srv}p{k}, mac: {MAC}, ip: 10.{octet(k, leaf)}.{port}.2}}" for k in range(planes)]
    return sw, hosts, links


def l2_tree(a, planes, host_bps):
    """Each plane an L2 tree: two leaves joined by one spine (switches, hosts, links)."""
    assert a.servers % 2 == 0 and a.servers >= 2
    half = a.servers // 2
    up = fmt_rate(host_bps * half)
    out = []
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
    return out


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
    ap.add_argument("--leaves", type=int, default=0, help="per plane: an L3 leaf-spine of L leaves (default: the L2 tree)")
    ap.add_argument("--spines", type=int, default=1, help="per plane, with --leaves: spines (S-way ECMP)")
    ap.add_argument("--oversub", type=int, default=1, help="with --leaves: host capacity / uplink capacity per leaf")
    ap.add_argument("--buffer", default="32MiB", help="with --leaves: each switch's BUFFER_POOL")
    ap.add_argument("--delay", default="25ns", help="every cable's propagation delay")
    ap.add_argument("--traffic", default="ring", choices=["ring", "permutation"])
    ap.add_argument("--shift", type=int, default=0,
                    help="permutation: server i writes to server i + shift (default servers / leaves)")
    ap.add_argument("--name", required=True)
    ap.add_argument("--description", default="")
    ap.add_argument("--header", default="")
    ap.add_argument("--expect", action="append", default=[])
    a = ap.parse_args()
    planes = 1 if a.single else a.planes
    host_bps = rate_bps(a.rate) * (a.planes if a.single else 1)
    out = []
    if a.header:
        with open(a.header) as f:
            out.append(f.read().rstrip("\n"))
    out.append(f"name: {a.name}")
    if a.description:
        out.append("description: " + json.dumps(a.description))
    out.append(f"duration: {a.duration}")
    out.append(f"link: {{rate: {fmt_rate(host_bps)}, delay: {a.delay}}}")
    out.append("switches:")
    if a.leaves:
        sw, hosts, links = leaf_spine(a, planes, host_bps)
        out += sw
        out += hosts
        out.append("links:")
        out += links
        per_leaf = a.servers // a.leaves
    else:
        out += l2_tree(a, planes, host_bps)
        per_leaf = a.servers // 2
    out.append("traffic:")
    out.append("  seed: 7")
    if a.traffic == "ring":
        out.append("  pattern: ring-allreduce")
        out.append(f"  msg_size: {a.msg_size}")
        out.append(f"  messages: {a.collectives}")
    else:
        shift = a.shift or per_leaf
        if shift % a.servers == 0:
            raise SystemExit(f"gen_multiplane_scenario: --shift {shift}: a server would write to itself")
        out.append("  flows:")
        for srv in range(a.servers):
            for k in range(planes):
                d = (srv + shift) % a.servers
                out.append(f"    - {{name: s{srv}p{k}->s{d}p{k}, src: s{srv}p{k}, dst: s{d}p{k}}}")
        out.append(f"  msg_size: {a.msg_size}")
    out.append("  pmtu: 1024")
    out.append("  window: 1024")
    out.append("  ack_timeout: 3                  # 32.8 us: a lost tail is resent within a few round trips")
    if planes > 1 and a.traffic == "ring":
        out.append(f"  planes: {planes}")
        out.append(f"  striping: {a.striping}")
    if a.expect:
        out.append("expect:")
        for e in a.expect:
            out.append(f"  - {e}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
