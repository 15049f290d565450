#!/usr/bin/python3
"""bench_planes.py - a generated multi-plane fabric on one and two threads.

Writes the scenario with tools/gen_multiplane_scenario.py (default: 256
servers x 8 planes, each plane an L3 leaf-spine of 8 leaves and 4 spines, a
permutation in every plane: 2048 NIC ports, 96 switches), then runs
`rocelab-fabric run` for a short fabric time in each configuration, the
configurations alternated round by round:
  1           one thread;
  2auto       two threads, the automatic partition rule (--threads 2);
  2planes     two threads, a partition per half of the planes (a
              --partition file: planes 0..P/2-1 on partition 0, the rest on
              1; no cable between them is cut);
  2planes-r   the same halves the other way round (planes 0..P/2-1 on
              partition 1, run by the second thread): an imbalance that
              follows the thread rather than the planes is the CPU's;
  2ranks      two MPI ranks of one thread each (mpirun -np 2), the
              automatic rule (docs/fabric.md "Over MPI ranks");
  2ranks-planes  two ranks, the half-planes partition file (partition p on
              rank p mod 2).
The rank runs write fewer files (what is gathered over ranks); those they
write are compared.
Each run goes through `flock LOCK` (the CPUs are shared: one heavy run at a
time). Prints one row per run from its speed.json: set-up, wall, peak RSS,
packet-hops, M packet-hops per wall second, partitions, cables cut,
lookahead, windows, and each thread's share of the wall time waiting at the
window barrier. Every run's reports (all but speed.json) must be the same
bytes as the first run's; a difference is printed and fails the tool.

  tools/bench_planes.py --duration 100us --rounds 2 [--build build] [--json rows.json]
"""
import argparse
import filecmp
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def same_reports(a, b):
    """Files of run a that differ from run b (speed.json and the plots aside)."""
    diff = []
    for dirpath, _, files in os.walk(a):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), a)
            if rel == "speed.json" or rel.endswith(".png") or rel.endswith(".html"):
                continue
            other = os.path.join(b, rel)
            if not os.path.exists(other) or not filecmp.cmp(os.path.join(dirpath, f), other, shallow=False):
                diff.append(rel)
    return sorted(diff)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", type=int, default=256)
    ap.add_argument("--planes", type=int, default=8)
    ap.add_argument("--leaves", type=int, default=8, help="per plane")
    ap.add_argument("--spines", type=int, default=4, help="per plane")
    ap.add_argument("--rate", default="100Gbps", help="per NIC port")
    ap.add_argument("--msg-size", default="64KiB")
    ap.add_argument("--duration", default="100us", help="fabric time per run")
    ap.add_argument("--rounds", type=int, default=2, help="each configuration this many times, alternated")
    ap.add_argument("--configs", default="1,2auto,2planes",
                    help="of 1, 2auto, 2planes, 2planes-r, 2ranks, 2ranks-planes")
    ap.add_argument("--build", default=os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--lock", default="/tmp/rocelab-cpu.lock", help="flock file around each run ('' for none)")
    ap.add_argument("--keep", help="keep the scenario and the runs' reports in this directory")
    ap.add_argument("--json", help="write the rows here too")
    a = ap.parse_args()
    exe = os.path.join(a.build, "app", "rocelab-fabric")
    work = a.keep or tempfile.mkdtemp(prefix="rocelab-planes-")
    os.makedirs(work, exist_ok=True)
    name = f"planes-{a.servers}x{a.planes}"
    scn = os.path.join(work, name + ".yaml")
    gen = [sys.executable, os.path.join(ROOT, "tools", "gen_multiplane_scenario.py"), "--name", name,
           "--servers", str(a.servers), "--planes", str(a.planes), "--leaves", str(a.leaves),
           "--spines", str(a.spines), "--rate", a.rate, "--traffic", "permutation", "--msg-size", a.msg_size,
           "--duration", a.duration]
    with open(scn, "w") as f:
        subprocess.run(gen, stdout=f, check=True)
    parts = {}
    for name, flip in (("planes", 0), ("planes-r", 1)):
        parts[name] = os.path.join(work, name + ".part")
        with open(parts[name], "w") as f:
            f.write("# a partition per half of the planes (bench_planes.py)\n")
            for k in range(a.planes):
                for sw in [f"p{k}leaf{l}" for l in range(a.leaves)] + [f"p{k}spine{s}" for s in range(a.spines)]:
                    f.write(f"{sw}: {(k * 2 // a.planes) ^ flip}\n")
    print("scenario: " + " ".join(gen[1:]) + f" > {scn}", flush=True)
    configs = {"1": ["--threads", "1"], "2auto": ["--threads", "2"],
               "2planes": ["--threads", "2", "--partition", parts["planes"]],
               "2planes-r": ["--threads", "2", "--partition", parts["planes-r"]],
               "2ranks": ["--threads", "1"],
               "2ranks-planes": ["--threads", "1", "--partition", parts["planes"]]}
    mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2"]
    rows, first, bad = [], None, False
    head = (f"{'config':>9} {'setup s':>8} {'wall s':>8} {'RSS GB':>7} {'packet-hops':>12} {'M hops/s':>9} "
            f"{'parts':>5} {'cut':>5} {'lookahead':>9} {'windows':>8}  wait share per thread")
    print(head, flush=True)
    for r in range(a.rounds):
        for c in a.configs.split(","):
            out = os.path.join(work, f"run{r}-{c}")
            shutil.rmtree(out, ignore_errors=True)
            cmd = [exe, "run", scn, "--out", out, "--quiet", "--no-plots", *configs[c]]
            if c.startswith("2ranks"):
                cmd = mpirun + cmd
            if a.lock:
                cmd = ["flock", a.lock, *cmd]
            before = set(glob.glob("/var/run/dpdk/rocelab-fabric-*"))
            p = subprocess.run(cmd, capture_output=True, text=True)
            # EAL's runtime directory, if this run left one (it was not there
            # before, and its process is gone); others' are left alone.
            for d in set(glob.glob("/var/run/dpdk/rocelab-fabric-*")) - before:
                if not os.path.exists(f"/proc/{d.rsplit('-', 1)[1]}"):
                    shutil.rmtree(d, ignore_errors=True)
            if p.returncode != 0:
                print(f"{c}: rocelab-fabric exited {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}", flush=True)
                bad = True
                continue
            with open(os.path.join(out, "speed.json")) as f:
                sp = json.load(f)
            row = {"round": r, "config": c, **sp}
            rows.append(row)
            waits = ", ".join(f"{w * 100:.1f} %" for w in sp.get("thread_wait_share", []))
            if "per_rank" in sp:  # over ranks: each rank's wait for the others
                waits = "ranks: " + ", ".join(f"{r['rank_wait_share'] * 100:.1f} %" for r in sp["per_rank"])
            print(f"{c:>9} {sp['setup_s']:8.2f} {sp['wall_s']:8.2f} {sp['peak_rss_bytes'] / 1e9:7.2f} "
                  f"{sp['packet_hops']:12d} {sp['packet_hops_per_wall_s'] / 1e6:9.3f} {sp['partitions']:5d} "
                  f"{sp['cut_cables']:5d} {sp['lookahead_ns']:7d}ns {sp['windows']:8d}  {waits}", flush=True)
            if first is None:
                first = out
            else:
                d = same_reports(out, first)
                if d:
                    print(f"{c}: reports differ from {os.path.basename(first)}'s: {', '.join(d[:8])}", flush=True)
                    bad = True
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
