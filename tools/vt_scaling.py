#!/usr/bin/python3
"""How the virtual-time runner scales with fabric size.

For each host count N it writes a topology with one leaf switch of N
100 Gbps ports and one generator with N hosts, runs `rocelab-fabric run`
for a fixed fabric time and reads speed.json / fabric.json. Two patterns:
  incast       N-1 senders -> 1 receiver (lossless, PFC + DCQCN defaults)
  permutation  host i -> host (i+1) mod N, every port loaded both ways
Prints one table row per N: packet-hops, wall seconds, M packet-hops per
wall second, node polls per hop, and the slowdown (wall / fabric time).

  tools/vt_scaling.py --hosts 2,4,8,16,32,64 --time 2ms [--build build]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def topology(n, pattern, time):
    ports = "\n".join(f"        Ethernet{i}: {{speed: 100Gbps}}" for i in range(n))
    if pattern == "incast":
        gen = f"pattern: incast\n      senders: {n - 1}"
    else:
        gen = "pattern: permutation"
    return f"""duration: {time}
link: {{rate: 100Gbps, delay: 25ns}}
nodes:
  - name: leaf0
    switch:
      ROCELAB: {{mbufs: {max(147456, 4096 * n)}}}
      PORT:
{ports}
  - name: hosts
    gen:
      seed: 7
      {gen}
      msg_size: 1MiB
      pmtu: 1024
      window: 256
      mbufs: {max(16384, 1536 * n)}
links:
  - {{a: hosts:0..{n - 1}, b: leaf0:0..{n - 1}}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", default="2,4,8,16,32,64")
    ap.add_argument("--time", default="2ms", help="fabric time per run")
    ap.add_argument("--pattern", default="incast", choices=["incast", "permutation"])
    ap.add_argument("--build", default=os.environ.get("ROCELAB_BUILD", "build"))
    ap.add_argument("--json", help="write the rows here too")
    a = ap.parse_args()
    exe = os.path.join(a.build, "app", "rocelab-fabric")
    rows = []
    print(f"{'hosts':>5} {'packet-hops':>12} {'wall s':>8} {'M hops/s':>9} {'polls/hop':>9} {'slowdown':>9}")
    with tempfile.TemporaryDirectory() as d:
        for n in [int(x) for x in a.hosts.split(",")]:
            topo = os.path.join(d, f"t{n}.yaml")
            with open(topo, "w") as f:
                f.write(topology(n, a.pattern, a.time))
            out = os.path.join(d, f"out{n}")
            r = subprocess.run([exe, "run", topo, "--out", out, "--quiet", "--no-plots"], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"N={n}: rocelab-fabric failed ({r.returncode}):\n{r.stdout}{r.stderr}", file=sys.stderr)
                return 1
            with open(os.path.join(out, "speed.json")) as f:
                s = json.load(f)
            with open(os.path.join(out, "fabric.json")) as f:
                fab = json.load(f)
            drops = sum(n.get("drops", 0) for n in fab["nodes"]) + sum(l["lost"] + l["rx_ring_full"] for l in fab["links"])
            row = {"hosts": n, "pattern": a.pattern, "fabric_time_ns": s["fabric_time_ns"], "packet_hops": s["packet_hops"],
                   "wall_s": s["wall_s"], "mhops_per_s": s["packet_hops_per_wall_s"] / 1e6,
                   "polls_per_hop": s["node_polls"] / max(1, s["packet_hops"]), "slowdown": s["slowdown"], "drops": drops}
            rows.append(row)
            print(f"{n:>5} {row['packet_hops']:>12} {row['wall_s']:>8.3f} {row['mhops_per_s']:>9.2f} "
                  f"{row['polls_per_hop']:>9.2f} {row['slowdown']:>8.0f}x" + (f"  drops {drops}" if drops else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
