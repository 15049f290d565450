#!/usr/bin/python3
"""stages.py - the per-stage figures of a bench build's report, as a table.

A stage-cycles rocelab-switch or rocelab-gen (build/app/rocelab-switch-stages
and rocelab-gen-stages, which tools/stage_cycles.sh builds; or a tree
configured with -Dstage_cycles=true) writes, per worker in
its --report, `stages`: each stage's calls, frames and TSC cycles. This
prints them per worker: cycles per frame (per flow side serviced for the
generator's service stage), cycles per call and each stage's share of the
worker's stage cycles, with the run's rate from the report.

  tools/stages.py REPORT.json [REPORT.json ...]

Exit 1 when a report has no stages (a production build's).
"""
import json
import sys


def table(r):
    """Lines describing report r's stages; None when it has none."""
    lines = []
    for w in r.get("workers", []):
        st = w.get("stages")
        if not st:
            return None
        total = sum(s["cycles"] for s in st) or 1
        busy = w.get("busy_cycles", 0)
        lines.append(f"worker {w['worker']} ({', '.join(w.get('ports', []))}): stages {total} TSC cycles"
                     + (f", {total / busy:.1%} of its busy cycles" if busy else ""))
        lines.append(f"  {'stage':66s} {'calls':>11s} {'frames':>12s} {'cyc/frame':>10s} {'cyc/call':>9s} {'share':>6s}")
        for s in st:
            per_frame = f"{s['cycles'] / s['frames']:10.1f}" if s["frames"] else f"{'-':>10s}"
            per_call = s["cycles"] / s["calls"] if s["calls"] else 0.0
            lines.append(f"  {s['stage']:66s} {s['calls']:11d} {s['frames']:12d} {per_frame} {per_call:9.1f} "
                         f"{s['cycles'] / total:6.1%}")
    return lines


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    rc = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            r = json.load(f)
        tool = r.get("provenance", {}).get("tool", "?")
        print(f"== {path} ({tool}, {r.get('elapsed_s', 0):.2f} s)")
        lines = table(r)
        if lines is None:
            print("  no stages: not a stage-cycles build (ninja -C build app/rocelab-switch-stages app/rocelab-gen-stages)")
            rc = 1
            continue
        print("\n".join(lines))
    return rc


if __name__ == "__main__":
    sys.exit(main())
