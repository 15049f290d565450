#!/usr/bin/python3
"""demo_summary.py REPORT PORT - per-queue share of a port's egress from a
rocelab-switch JSON report, with the DWRR ratio between data queues."""
import json
import sys


def main():
    rep = json.load(open(sys.argv[1]))
    port = next(p for p in rep["ports"] if p["name"] == sys.argv[2])
    el = rep["elapsed_s"]
    tot = sum(q["deq_bytes"] for q in port["queues"])
    print(f"\n{port['name']} at {port['line_rate']}: egress per queue over {el:.2f}s")
    print(f"  {'queue':>5} {'Mbps':>9} {'share':>7} {'tx frames':>11} {'tail drops':>11} {'max depth':>11}"
          "   (Mbps: frame bytes; the 1Gbps line also carries 24 B/frame of FCS, preamble and gap)")
    for q in port["queues"]:
        if q["enq_packets"] == 0 and q["drop_packets"] == 0:
            continue
        mbps = q["deq_bytes"] * 8 / el / 1e6
        print(f"  {q['queue']:>5} {mbps:9.1f} {q['deq_bytes'] / max(tot, 1):7.1%} {q['deq_packets']:>11} "
              f"{q['drop_packets']:>11} {q['max_depth_bytes']:>10}B")
    by = {q["queue"]: q["deq_bytes"] for q in port["queues"]}
    if by.get(0):
        print(f"  DWRR data queues 3:1:0 = {by.get(3, 0) / by[0]:.2f} : {by.get(1, 0) / by[0]:.2f} : 1"
              f"  (weights 5 : 2 : 1); queue 6 (strict, CNPs) drops: "
              f"{next(q['drop_packets'] for q in port['queues'] if q['queue'] == 6)}")
    print(f"  mbufs in use at exit: {rep['mbufs_in_use_at_exit']}")


if __name__ == "__main__":
    main()
