#!/usr/bin/python3
"""bench_cycles_ab.py - A/B of two builds by the cycles they spend per frame, in alternating short runs.

Each run is one process of a few seconds (--duration, --report) of the
build under test or the build before, on the bench set-ups of
tools/bench_switch.py (pcap infinite_rx -> net_null) and tools/bench_gen.py
(--tx-only into net_null copy=1). From each report: the worker's busy TSC
cycles per frame sent and, for a stage-cycles build
(build/app/rocelab-switch-stages, rocelab-gen-stages), each stage's cycles
per frame. The builds alternate (A B, B A, A B, ...), so a slow period of
the host falls on both runs of a pair; the result is the median, per
figure, of the pairs' after / before ratios, and how many pairs improved.

This host's speed drifts by tens of per cent from minute to minute, and a
throughput A/B (tools/bench_switch.py) of a 2 % change needs a calm
sitting; pairs of 2 s runs moved together closely enough to show 2-3 %
changes in 8 of 8 pairs (docs/benchmarks.md, thirtieth session). It
measures cycles per frame only: the ratio to testpmd is bench_switch.py's
and bench_gen.py's.

  tools/bench_cycles_ab.py --before OLD/rocelab-switch --after build/app/rocelab-switch
  tools/bench_cycles_ab.py --before OLD/rocelab-switch-stages --after build/app/rocelab-switch-stages --setup l3
  tools/bench_cycles_ab.py --before OLD/rocelab-gen --after build/app/rocelab-gen --setup gen --pairs 8
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gen  # noqa: E402
import bench_switch  # noqa: E402

ROOT = bench_switch.ROOT
SETUPS = ("l2", "l3", "gen")


def command(binary, setup, prefix, pcap, report, duration):
    if setup == "gen":
        return [binary] + bench_gen.eal(prefix, "null-copy") + [
            "--", "--tx-only", "--quiet", "--tx-payload", "prefilled", "--mbufs", "16384",
            "--duration", duration, "--report", report]
    cfg = ["--config", os.path.join(ROOT, "conf", "bench-l3.yaml")] if setup == "l3" else []
    return [binary] + bench_switch.eal(prefix, pcap) + ["--", "--quiet", "--duration", duration,
                                                         "--report", report] + cfg


def figures(report):
    """(names, values): busy cycles per frame sent, then each stage's cycles per frame (stage builds)."""
    with open(report) as f:
        r = json.load(f)
    sent = sum(p.get("tx_packets", 0) for p in r["ports"])
    if sent == 0:
        raise RuntimeError(f"{report}: no frame sent")
    names, values = ["busy cycles / frame"], [r["busy_cycles"] / sent]
    for w in r.get("workers", [])[:1]:
        for s in w.get("stages") or []:
            if s["frames"]:
                names.append(s["stage"])
                values.append(s["cycles"] / s["frames"])
    return names, values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the build before (a rocelab-switch or rocelab-gen binary)")
    ap.add_argument("--after", required=True, help="the build under test")
    ap.add_argument("--setup", choices=SETUPS, default="l2",
                    help="l2: the switch with no config (RoCE default profile); l3: conf/bench-l3.yaml; "
                         "gen: rocelab-gen --tx-only (default l2)")
    ap.add_argument("--pairs", type=int, default=8, help="pairs of runs (default 8)")
    ap.add_argument("--duration", default="2s", help="each run's length (default 2s)")
    ap.add_argument("--payload", type=int, default=16, help="switch: RoCE payload bytes (default 16: 74 B frames)")
    a = ap.parse_args()
    for b in (a.before, a.after):
        if not os.access(b, os.X_OK):
            sys.exit(f"bench_cycles_ab: {b} is not an executable")
    work = tempfile.mkdtemp(prefix="rocelab-cycles-ab-")
    prefix = f"cyclesab{os.getpid()}"
    try:
        pcap = os.path.join(tempfile.gettempdir(), "rocelab-bench", f"roce_p{a.payload}.pcap")
        if a.setup != "gen":
            os.makedirs(os.path.dirname(pcap), exist_ok=True)
            bench_switch.make_pcap(pcap, a.payload, 4096)
        runs = {"before": [], "after": []}
        names = None
        for i in range(a.pairs):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for which in order:
                report = os.path.join(work, f"{which}.json")
                binary = a.before if which == "before" else a.after
                subprocess.run(command(binary, a.setup, prefix, pcap, report, a.duration),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                n, v = figures(report)
                if names is not None and n != names:
                    sys.exit(f"bench_cycles_ab: the two builds report different stages ({names} / {n})")
                names = n
                runs[which].append(v)
            print(f"pair {i + 1}/{a.pairs}: before " + " ".join(f"{x:6.1f}" for x in runs["before"][-1]) +
                  " | after " + " ".join(f"{x:6.1f}" for x in runs["after"][-1]), flush=True)
        print(f"\n{'cycles per frame':44s} {'before':>8s} {'after':>8s} {'after/before':>13s} {'pairs better':>13s}")
        for j, name in enumerate(names):
            ratios = [af[j] / bf[j] for bf, af in zip(runs["before"], runs["after"])]
            better = sum(1 for r in ratios if r < 1.0)
            print(f"{name[:44]:44s} {statistics.median(r[j] for r in runs['before']):8.1f} "
                  f"{statistics.median(r[j] for r in runs['after']):8.1f} {statistics.median(ratios):13.3f} "
                  f"{better:>9d} of {len(ratios)}")
            if j == 0:
                print(f"SUMMARY setup={a.setup} cycles/frame after/before paired={statistics.median(ratios):.3f} "
                      f"better={better}/{len(ratios)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(os.path.join("/var/run/dpdk", prefix), ignore_errors=True)


if __name__ == "__main__":
    main()
