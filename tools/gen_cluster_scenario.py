#!/usr/bin/env python3
"""gen_cluster_scenario.py - writes the cluster scenario (conf/scenarios/cluster-*.yaml).

Two leaves, S spines, routed (L3, ECMP). Leaf L has H host ports at HOST_RATE
(Ethernet0..H-1, hosts 10.<L+1>.<p>.2, leaf 10.<L+1>.<p>.1/24) and U uplinks at
UP_RATE (Ethernet<H>..), uplink u to spine u % S over the /31 10.0.<k>.0/31,
k = L*U + u (spine .0, leaf .1). Every host and switch uses one MAC (the
generator addresses frames to its peer's MAC; an L3 switch takes only its
router MAC). PFC on priority 3, explicit lossless profiles, no ECN by default.

  sed -n '/^name:/q;p' conf/scenarios/cluster-8x8-200g.yaml > /tmp/header  # keep the comment
  tools/gen_cluster_scenario.py --header /tmp/header --duration 200us \
      --expect "lossless_drops == 0" ... > conf/scenarios/cluster-8x8-200g.yaml
(the file's expectations are in its expect: list; pass each with --expect)
"""
import argparse

MAC = '"02:00:00:00:01:00"'


def switch(name, ports, intf, routes, neigh, pool, pgs, profiles, mbufs):
    s = f"  - name: {name}\n    config:\n"
    s += f"      ROCELAB: {{mode: l3, seed: 7, mbufs: {mbufs}}}\n"
    s += f"      DEVICE_METADATA: {{localhost: {{mac: {MAC}}}}}\n"
    s += "      PORT:\n" + "".join(f"        {p}: {{speed: {r}}}\n" for p, r in ports)
    s += '      PORT_QOS_MAP: {global: {pfc_enable: "3"}}\n'
    s += "      WRED_PROFILE: {}\n"
    s += f"      BUFFER_POOL: {{ingress_lossless_pool: {{size: {pool}, type: ingress, mode: dynamic}}}}\n"
    s += "      BUFFER_PROFILE:\n" + "".join(f"        {k}: {v}\n" for k, v in profiles.items())
    s += "      BUFFER_PG:\n" + "".join(f'        "{k}": {{profile: {v}}}\n' for k, v in pgs)
    s += "      INTERFACE:\n" + "".join(f'        "{p}|{a}": {{}}\n' for p, a in intf)
    s += "      ROUTE:\n" + "".join(f'        "{pre}": {{nexthop: "{nh}", ifname: "{ifn}"}}\n' for pre, nh, ifn in routes)
    s += "      NEIGH:\n" + "".join(f'        "{p}|{a}": {{neigh: {MAC}, family: IPv4}}\n' for p, a in neigh)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int, default=8)
    ap.add_argument("--ports", type=int, default=8, help="NIC ports per server")
    ap.add_argument("--uplinks", type=int, default=16, help="uplinks per leaf")
    ap.add_argument("--spines", type=int, default=2)
    ap.add_argument("--host-rate", default="200Gbps")
    ap.add_argument("--up-rate", default="400Gbps")
    ap.add_argument("--pattern", default="all-to-all",
                    help="all-to-all (listed flows, as the library file) or a pattern such as ring-allreduce, "
                         "all-gather, reduce-scatter, alltoall (collectives over the hosts' addresses)")
    ap.add_argument("--messages", type=int, default=0, help="messages per flow; collectives: iterations (0: unlimited)")
    ap.add_argument("--msg-size", default="64KiB")
    ap.add_argument("--duration", default="200us")
    ap.add_argument("--mbufs", type=int, default=49152, help="ROCELAB mbufs per switch")
    ap.add_argument("--header", default="", help="file whose text goes first (the comment)")
    ap.add_argument("--name", default="cluster-8x8-200g")
    ap.add_argument("--expect", action="append", default=[])
    a = ap.parse_args()
    nhosts = a.servers * a.ports
    assert nhosts % 2 == 0 and a.uplinks % a.spines == 0
    H = nhosts // 2  # host ports per leaf
    U = a.uplinks
    per_spine = U // a.spines
    profiles = {
        "pg_lossless_host": "{pool: ingress_lossless_pool, dynamic_th: -3, xoff: auto}",
        "ingress_lossy_profile": "{pool: ingress_lossless_pool, size: 0, dynamic_th: 3}",
    }
    out = ""
    for L in (0, 1):
        ports = [(f"Ethernet{p}", a.host_rate) for p in range(H)] + [(f"Ethernet{H + u}", a.up_rate) for u in range(U)]
        intf = [(f"Ethernet{p}", f"10.{L + 1}.{p}.1/24") for p in range(H)]
        intf += [(f"Ethernet{H + u}", f"10.0.{L * U + u}.1/31") for u in range(U)]
        nh = ",".join(f"10.0.{L * U + u}.0" for u in range(U))
        ifn = ",".join(f"Ethernet{H + u}" for u in range(U))
        routes = [(f"10.{2 - L}.0.0/16", nh, ifn)]
        neigh = [(f"Ethernet{p}", f"10.{L + 1}.{p}.2") for p in range(H)]
        neigh += [(f"Ethernet{H + u}", f"10.0.{L * U + u}.0") for u in range(U)]
        pgs = [("global|3", "pg_lossless_host"), ("global|0", "ingress_lossy_profile")]
        out += switch(f"leaf{L}", ports, intf, routes, neigh, "32MiB", pgs, profiles, a.mbufs)
    for s in range(a.spines):
        ports, intf, neigh, routes = [], [], [], []
        for L in (0, 1):
            ks = [L * U + u for u in range(U) if u % a.spines == s]
            for j, k in enumerate(ks):
                p = f"Ethernet{L * per_spine + j}"
                ports.append((p, a.up_rate))
                intf.append((p, f"10.0.{k}.0/31"))
                neigh.append((p, f"10.0.{k}.1"))
            routes.append((f"10.{L + 1}.0.0/16", ",".join(f"10.0.{k}.1" for k in ks),
                           ",".join(f"Ethernet{L * per_spine + j}" for j in range(len(ks)))))
        pgs = [("global|3", "pg_lossless_host"), ("global|0", "ingress_lossy_profile")]
        out += switch(f"spine{s}", ports, intf, routes, neigh, "32MiB", pgs, profiles, a.mbufs)
    hosts = "".join(f"  - {{name: h{h}, mac: {MAC}, ip: 10.{h // H + 1}.{h % H}.2}}\n" for h in range(nhosts))
    links = f"  - {{a: h0..h{H - 1}, b: leaf0:Ethernet0..Ethernet{H - 1}}}\n"
    links += f"  - {{a: h{H}..h{nhosts - 1}, b: leaf1:Ethernet0..Ethernet{H - 1}}}\n"
    for L in (0, 1):
        for u in range(U):
            s = u % a.spines
            j = u // a.spines
            links += f"  - {{a: leaf{L}:Ethernet{H + u}, b: spine{s}:Ethernet{L * per_spine + j}, rate: {a.up_rate}}}\n"
    header = open(a.header).read() if a.header else ""
    # all-to-all's flows are listed (the library file's form, names and order);
    # any other pattern uses the hosts' addresses itself (docs/scenarios.md).
    if a.pattern == "all-to-all":
        flows = "  flows:\n"
        i = 0
        for s_ in range(nhosts):
            for d in range(nhosts):
                if s_ != d:
                    flows += f"    - {{name: h{s_}->h{d}#{i}, src: h{s_}, dst: h{d}}}\n"
                    i += 1
    else:
        flows = f"  pattern: {a.pattern}\n"
    if a.messages:
        flows += f"  messages: {a.messages}\n"
    print(header + f"""name: {a.name}
description: {a.servers} servers x {a.ports} ports at {a.host_rate} on 2 leaves, {U} x {a.up_rate} uplinks per leaf to {a.spines} spines, L3 ECMP, {a.pattern}
duration: {a.duration}
link: {{rate: {a.host_rate}, delay: 100ns}}
switches:
{out}hosts:
{hosts}links:
{links}traffic:
  seed: 7
{flows}  msg_size: {a.msg_size}
  pmtu: 4096
  window: 1024
  dcqcn: off
  mbufs: 16384
expect:
""" + "".join(f"  - {e}\n" for e in (a.expect or ["lossless_drops == 0"])), end="")


main()
