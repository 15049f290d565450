#!/usr/bin/python3
"""Writes a port-breakout scenario: one leaf of 32 physical 400G ports (8
lanes each), in mode 1x400G (32 hosts at 400G) or 2x200G (64 hosts at
200G, each physical port two ports and two cables), running the same ring
all-reduce. The pair shows what breakout buys: twice the hosts on the same
leaf, each at half the rate.

  tools/gen_breakout_scenario.py --mode 2x200G > conf/scenarios/breakout-2x200g-allreduce.yaml
  tools/gen_breakout_scenario.py --mode 1x400G > conf/scenarios/breakout-1x400g-allreduce.yaml
"""
import argparse
import sys

MODES = {"1x400G": (1, 400), "2x200G": (2, 200), "4x100G": (4, 100)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=sorted(MODES), default="2x200G")
    ap.add_argument("--ports", type=int, default=32, help="physical 400G ports of the leaf")
    ap.add_argument("--size", default="16MiB", help="each rank's all-reduce buffer")
    a = ap.parse_args()
    n, gbps = MODES[a.mode]
    hosts = a.ports * n
    lanes = 8 // n
    name = f"breakout-{a.mode.lower()}-allreduce"
    ring = f"2({hosts}-1)/{hosts}"
    floor_factor = 2 * (hosts - 1) / hosts
    out = [f"# {name}.yaml - port breakout: a leaf of {a.ports} physical 400G ports (8 lanes",
           f"# of 50G each) in mode {a.mode}: {hosts} hosts at {gbps}G, each on its own port and cable,",
           f"# running nccl-tests' ring all-reduce of a {a.size} buffer per rank",
           "# (written by tools/gen_breakout_scenario.py; docs/config.md, \"BREAKOUT_CFG\").",
           "#",
           "# Shows: what breakout buys. The same leaf serves 32 hosts at 400G in",
           "# mode 1x400G (breakout-1x400g-allreduce.yaml) and 64 at 200G in 2x200G",
           "# (breakout-2x200g-allreduce.yaml): twice the radix, the same 12.8 Tbps,",
           f"# so each rank's bus bandwidth is its own link's: busbw = algbw x {ring}.",
           "#",
           "# Expect: no drop, no PFC, the collectives complete, busbw above 90 % of",
           f"# the host link ({gbps}G).",
           "#",
           f"#   rocelab-fabric run conf/scenarios/{name}.yaml --out out",
           f"name: {name}",
           f"description: one leaf, {a.ports} x 400G ports as {a.mode} - {hosts} hosts at {gbps}G, "
           f"ring all-reduce of {a.size}",
           "duration: 4ms",
           f"link: {{rate: {gbps}Gbps, delay: 25ns}}",
           "switches:",
           "  - name: leaf0",
           "    config:",
           "      ROCELAB: {mbufs: 131072}",
           '      PORT_QOS_MAP: {global: {pfc_enable: "3"}}',
           "      WRED_PROFILE: {}",
           "      BUFFER_POOL: {ingress_lossless_pool: {size: 64MiB, type: ingress, mode: dynamic}}",
           "      BUFFER_PROFILE:",
           "        pg_lossless: {pool: ingress_lossless_pool, dynamic_th: -3, xoff: auto}",
           "        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}",
           "      BUFFER_PG:",
           '        "global|3": {profile: pg_lossless}',
           '        "global|0": {profile: ingress_lossy_profile}',
           "      PORT:"]
    names = []
    for p in range(a.ports):
        for k in range(n):
            first = p * 8 + k * lanes
            nm = f"Ethernet{first}"
            names.append(nm)
            ls = ",".join(str(first + i) for i in range(lanes))
            out.append(f'        {nm}: {{lanes: "{ls}"}}')
    out.append("      BREAKOUT_CFG:")
    for p in range(a.ports):
        out.append(f"        Ethernet{p * 8}: {{brkout_mode: {a.mode}}}")
    out.append(f"hosts: h0..h{hosts - 1}")
    out.append("links:")
    for i, nm in enumerate(names):
        out.append(f"  - {{a: h{i}, b: leaf0:{nm}}}")
    out += ["traffic:", "  seed: 7", "  pattern: ring-allreduce", "  messages: 2", f"  msg_size: {a.size}",
            "  pmtu: 4096", "  window: 1024", "  dcqcn: off",
            "expect:", "  - drops == 0", "  - lossless_drops == 0", "  - pfc_tx(leaf0) == 0",
            "  - collectives >= 2", f"  - busbw >= {int(gbps * 0.9)}Gbps"]
    del floor_factor
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
