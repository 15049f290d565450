#!/usr/bin/python3
"""random_fabric.py - seeded random leaf-spine scenarios for rocelab-fabric.

Every fabric is one a user could write and the switch accepts:

* 2-4 leaves, 1-3 spines (one cable from every leaf to every spine), 1-6
  hosts per leaf; routed (ROCELAB mode l3, ECMP over the uplinks), one MAC
  for every host and switch as in tools/gen_cluster_scenario.py;
* each cable a port rate from {25, 40, 50, 100, 200, 400} Gbps (both ends the
  same speed) and a length from 1 m to 10 km (log-uniform); its delay is the
  length at 1.98e8 m/s (the headroom formula's signal speed) and both switch
  ends get it as CABLE_LENGTH, so `xoff: auto` sizes the headroom for the
  cable that is really there;
* each switch a pool of 12MiB, 32MB or 64MB (96 B cells) with SONiC's
  lossless profile (`xoff: auto`, dynamic_th 0) on PGs 3-4 and the lossy
  profile on PG 0 - the built-in defaults, resized;
* the headroom must fit: the sum over ports of 2 x (xon + xoff) (docs/config.md,
  "The pool must hold the reservations"), computed here with the formula of
  lib/qos/headroom.hpp / ROCE_REFERENCE.md 2.3, must leave at least a quarter
  of the pool shared. Where it does not, the longest cable of that switch is
  shortened (halved, to at least 1 m) and the check repeated: the generator
  shortens cables, it never writes a fabric the switch would refuse;
* flows: an incast (2..all other hosts into one host) carrying twice the
  pool of the receiver's leaf in 1 MiB messages, so PFC acts unless the
  senders are slower than the receiver, plus 0-6 random pairs, each with its
  own message size (4KiB..2MiB) and count (1..6); every flow starts at a
  random 0..200us, posts all its messages at once and has the whole PSN
  space as window (a NIC's RC QP sends until paused); one RoCE MTU per
  fabric (256/1024/4096); DCQCN off or nvidia_cx.

The run's duration bounds the traffic: every byte (headers included)
through the slowest cable one after the other, x 2, plus 20 round trips of
the longest cable, plus 2 ms; idle virtual time costs nothing.

  tools/random_fabric.py --seed 7 > /tmp/r7.yaml
  build/app/rocelab-fabric run /tmp/r7.yaml --out /tmp/r7
"""
import argparse
import math
import random
import sys

RATES_GBPS = (25, 40, 50, 100, 200, 400)
POOLS = ("12MiB", "32MB", "64MB")
POOL_BYTES = {"12MiB": 12 * (1 << 20), "32MB": 32 * 10**6, "64MB": 64 * 10**6}
MTUS = (256, 1024, 4096)
MAC = '"02:00:00:00:01:00"'
V = 1.98e8                      # m/s, the headroom formula's propagation speed

# ROCELAB headroom defaults (docs/config.md): the formula's constants.
CELL = 96
PIPELINE_LATENCY = 18 * 1024
MAC_PHY = 819.2
SMALL_PERCENT = 100
LOSSLESS_MTU = 1500
PORT_MTU = 9100
QUANTA = ((100e6, 1), (1e9, 2), (10e9, 67), (25e9, 80), (40e9, 118), (50e9, 147), (100e9, 394),
          (200e9, 453), (400e9, 905), (800e9, 905))


def ceil_kib(b):
    return 0 if b <= 0 else math.ceil(b / 1024.0) * 1024


def headroom(speed_bps, length_m):
    """(xoff, xon) of one lossless PG with `xoff: auto` (SONiC's well-known formula)."""
    quanta = next((q for s, q in QUANTA if speed_bps <= s), QUANTA[-1][1])
    peer = quanta * 512 / 8
    cable_rt = 2.0 * length_m / V * speed_bps / 8
    wcf = CELL / 64 if CELL > 128 else 2.0 * CELL / (1 + CELL)
    occupancy = (100 - SMALL_PERCENT + SMALL_PERCENT * wcf) / 100
    propagation = PORT_MTU + cable_rt + MAC_PHY + peer
    return ceil_kib(LOSSLESS_MTU + propagation * occupancy), ceil_kib(PIPELINE_LATENCY)


def pg_reservation(speed_bps, length_m):
    xoff, xon = headroom(speed_bps, length_m)
    return xoff + xon          # reserved (= xon) + headroom (xoff)


def fmt_len(m):
    return f"{m:g}m"


class Fabric:
    def __init__(self, seed):
        self.seed = seed
        self.shortened = []     # (cable, from_m, to_m, switch)
        self.flows = {}         # name -> {src, dst, msg_size, messages, start}

    def summary(self):
        rates = sorted({c["gbps"] for c in self.cables})
        lens = [c["m"] for c in self.cables]
        return (f"{self.L} leaves x {self.S} spines, {len(self.hosts)} hosts, {len(self.cables)} cables "
                f"{'/'.join(str(r) for r in rates)}G {fmt_len(min(lens))}..{fmt_len(max(lens))}, "
                f"{len(self.flows)} flows, pmtu {self.mtu}, dcqcn {self.dcqcn}, "
                f"{len(self.shortened)} cables shortened")

    def yaml(self):
        return render(self)


def generate(seed):
    r = random.Random(seed)
    f = Fabric(seed)
    f.L = r.randint(2, 4)
    f.S = r.randint(1, 3)
    per_leaf = [r.randint(1, 6) for _ in range(f.L)]
    f.mtu = r.choice(MTUS)
    f.dcqcn = r.choice(("off", "nvidia_cx"))
    f.pool = {}
    f.cables = []          # {a: (sw, port), b: (sw, port) or host, gbps, m}
    f.hosts = []           # (name, leaf, port, ip)
    f.ports = {}           # switch -> [(port, gbps)]
    for L in range(f.L):
        f.ports[f"leaf{L}"] = []
    for s in range(f.S):
        f.ports[f"spine{s}"] = []
    for sw in f.ports:
        f.pool[sw] = r.choice(POOLS)

    def length():
        m = math.exp(r.uniform(math.log(1.0), math.log(10000.0)))
        return round(m, 1) if m < 10 else float(round(m))

    h = 0
    for L in range(f.L):
        for p in range(per_leaf[L]):
            name = f"h{h}"
            g = r.choice(RATES_GBPS)
            port = f"Ethernet{p}"
            f.ports[f"leaf{L}"].append((port, g))
            f.hosts.append((name, L, p, f"10.{L + 1}.{p}.2"))
            f.cables.append({"a": name, "b": (f"leaf{L}", port), "gbps": g, "m": length()})
            h += 1
    for L in range(f.L):
        for s in range(f.S):
            g = r.choice(RATES_GBPS)
            lp = f"Ethernet{per_leaf[L] + s}"
            sp = f"Ethernet{L}"
            f.ports[f"leaf{L}"].append((lp, g))
            f.ports[f"spine{s}"].append((sp, g))
            f.cables.append({"a": (f"leaf{L}", lp), "b": (f"spine{s}", sp), "gbps": g, "m": length(),
                             "k": L * f.S + s, "leaf": L, "spine": s})
    f.per_leaf = per_leaf

    # Make the headroom fit: shorten the longest cable of a switch whose
    # lossless reservations leave less than a quarter of its pool shared.
    def ends(c):
        return [e for e in (c["a"], c["b"]) if isinstance(e, tuple)]

    for sw in f.ports:
        while True:
            mine = [c for c in f.cables if any(e[0] == sw for e in ends(c))]
            need = sum(2 * pg_reservation(c["gbps"] * 1e9, c["m"]) for c in mine)
            if need <= POOL_BYTES[f.pool[sw]] * 3 / 4:
                break
            c = max(mine, key=lambda c: c["m"])
            if c["m"] <= 1.0:
                raise RuntimeError(f"seed {seed}: {sw} cannot fit its headroom even with 1 m cables")
            new = max(1.0, round(c["m"] / 2, 1) if c["m"] < 20 else float(round(c["m"] / 2)))
            f.shortened.append((c, c["m"], new, sw))
            c["m"] = new

    # Flows: an incast into one host, then random pairs.
    names = [x[0] for x in f.hosts]
    dst = r.choice(names)
    others = [n for n in names if n != dst]
    fan_in = r.sample(others, r.randint(min(2, len(others)), len(others)))
    # The incast carries twice the pool of the receiver's leaf in 1 MiB
    # messages, so that (unless its senders are slower than its receiver)
    # the buffer fills to XOFF somewhere.
    dst_leaf = f"leaf{next(x[1] for x in f.hosts if x[0] == dst)}"
    per_sender = math.ceil(2 * POOL_BYTES[f.pool[dst_leaf]] / len(fan_in) / (1 << 20))
    for i, src in enumerate(fan_in):
        f.flows[f"f{i}"] = {"src": src, "dst": dst, "msg_size": 1 << 20, "messages": per_sender,
                            "start_us": r.randint(0, 200)}
    for i in range(len(fan_in), len(fan_in) + r.randint(0, 6)):
        a, b = r.sample(names, 2)
        f.flows[f"f{i}"] = {"src": a, "dst": b, "msg_size": r.choice((4, 16, 64, 256, 1024, 2048)) * 1024,
                            "messages": r.randint(1, 6), "start_us": r.randint(0, 200)}
    f.outstanding = min(512, max(fl["messages"] for fl in f.flows.values()))

    wire = sum(fl["msg_size"] * fl["messages"] * (1 + 90 / f.mtu) for fl in f.flows.values())
    slowest = min(c["gbps"] for c in f.cables) * 1e9
    longest = max(c["m"] for c in f.cables) / V
    f.duration_us = math.ceil((2 * wire * 8 / slowest + 20 * 2 * longest) * 1e6) + 2200
    return f


def end_name(e):
    return e if isinstance(e, str) else f"{e[0]}:{e[1]}"


def delay_ns(m):
    return max(1, math.ceil(m / V * 1e9))


def render(f):
    out = [f"# random-fabric seed {f.seed} - written by tools/random_fabric.py", f"# {f.summary()}"]
    for c, a, b, sw in f.shortened:
        out.append(f"# shortened for {sw}'s pool: {end_name(c['a'])} - {end_name(c['b'])} {fmt_len(a)} -> {fmt_len(b)}")
    out += [f"name: random-fabric-{f.seed}", f"duration: {f.duration_us}us",
            f"sample_interval: {max(1, f.duration_us // 50)}us", "switches:"]
    cable_of = {}
    for c in f.cables:
        for e in (c["a"], c["b"]):
            if isinstance(e, tuple):
                cable_of[e] = c
    for sw, ports in f.ports.items():
        out += [f"  - name: {sw}", "    config:",
                f"      ROCELAB: {{mode: l3, seed: {f.seed}}}",
                f"      DEVICE_METADATA: {{localhost: {{mac: {MAC}}}}}", "      PORT:"]
        out += [f"        {p}: {{speed: {g}Gbps}}" for p, g in ports]
        out += ["      CABLE_LENGTH:", "        AZURE:"]
        out += [f"          {p}: {fmt_len(cable_of[(sw, p)]['m'])}" for p, _ in ports]
        out += ["      BUFFER_POOL:",
                f"        ingress_lossless_pool: {{size: {f.pool[sw]}, type: ingress, mode: dynamic, cell: 96}}",
                "      BUFFER_PROFILE:",
                "        pg_lossless_auto_profile: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto}",
                "        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}",
                "      BUFFER_PG:",
                '        "global|3-4": {profile: pg_lossless_auto_profile}',
                '        "global|0": {profile: ingress_lossy_profile}']
        intf, routes, neigh = [], [], []
        if sw.startswith("leaf"):
            L = int(sw[4:])
            for p in range(f.per_leaf[L]):
                intf.append((f"Ethernet{p}", f"10.{L + 1}.{p}.1/24"))
                neigh.append((f"Ethernet{p}", f"10.{L + 1}.{p}.2"))
            ups = [c for c in f.cables if c.get("leaf") == L]
            for c in ups:
                intf.append((c["a"][1], f"10.0.{c['k']}.1/31"))
                neigh.append((c["a"][1], f"10.0.{c['k']}.0"))
            nh = ",".join(f"10.0.{c['k']}.0" for c in ups)
            ifn = ",".join(c["a"][1] for c in ups)
            for L2 in range(f.L):
                if L2 != L:
                    routes.append((f"10.{L2 + 1}.0.0/16", nh, ifn))
        else:
            s = int(sw[5:])
            for c in f.cables:
                if c.get("spine") == s:
                    intf.append((c["b"][1], f"10.0.{c['k']}.0/31"))
                    neigh.append((c["b"][1], f"10.0.{c['k']}.1"))
                    routes.append((f"10.{c['leaf'] + 1}.0.0/16", f"10.0.{c['k']}.1", c["b"][1]))
        out.append("      INTERFACE:")
        out += [f'        "{p}|{a}": {{}}' for p, a in intf]
        out.append("      ROUTE:")
        out += [f'        "{pre}": {{nexthop: "{nh}", ifname: "{ifn}"}}' for pre, nh, ifn in routes]
        out.append("      NEIGH:")
        out += [f'        "{p}|{a}": {{neigh: {MAC}, family: IPv4}}' for p, a in neigh]
    out.append("hosts:")
    out += [f"  - {{name: {n}, mac: {MAC}, ip: {ip}}}" for n, _, _, ip in f.hosts]
    out.append("links:")
    for c in f.cables:
        out.append(f"  - {{a: {end_name(c['a'])}, b: {end_name(c['b'])}, rate: {c['gbps']}Gbps, delay: {delay_ns(c['m'])}ns}}"
                   f"   # {fmt_len(c['m'])}")
    out += ["traffic:", f"  seed: {f.seed}", f"  pmtu: {f.mtu}", f"  dcqcn: {f.dcqcn}",
            "  window: 8388607", f"  outstanding: {f.outstanding}", "  flows:"]
    for name, fl in f.flows.items():
        out.append(f"    - {{name: {name}, src: {fl['src']}, dst: {fl['dst']}, msg_size: {fl['msg_size']}B, "
                   f"messages: {fl['messages']}, start: {fl['start_us']}us}}")
    out += ["expect:", "  - lossless_drops == 0", "  - drops == 0", "  - link_drops == 0"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    a = ap.parse_args()
    sys.stdout.write(generate(a.seed).yaml())
    return 0


if __name__ == "__main__":
    sys.exit(main())
