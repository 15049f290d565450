#!/usr/bin/python3
"""bench_handoff_floor.py - what handing every frame to the other CPU costs on
this machine with nothing else done to the frames, next to rocelab-switch.

bench/handoff/handoff_floor (DPDK only: rx_burst, an SP/SC rte_ring of mbuf
pointers, tx_burst) and rocelab-switch run on the same two-stream set-up as
tools/bench_scaling.py (pcap infinite_rx -> net_null, 74 B RoCEv2 frames by
default), configurations alternated, order reversed each round:

  floor-io1    one lcore forwards both streams (bench_scaling's 1w placement)
  floor-io2    two lcores, a stream each
  floor-cross  two lcores, each hands every frame it receives to the other
               through a ring, which transmits it (2w-cross placement)
  floor-grant  the same placement; only a request per burst crosses (frames,
               bytes), the egress port's owner grants it, and the receiving
               lcore sends the frames it kept on its own TX queue of that port
  *-touch      the same, reading each frame's first data line and writing an
               mbuf word on each side
  1w, 2w-cross rocelab-switch (tools/bench_scaling.py)

It prints the median Mpps of each and the ratios floor-cross / floor-io1
and 2w-cross / 1w: issue 22 asks 2w-cross / 1w >= 1.6, "as a burst ring of
mbuf pointers" costs; floor-cross / floor-io1 is what such a ring gives here.

  tools/bench_handoff_floor.py [--runs 3] [--windows 2] [--window 2] [--payload 16]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scaling  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def floor_once(bin_, mode, touch, pcaps, a):
    lc = ["-l", "0-1"] if mode == "io1" else ["--lcores", "0@0,1@0,2@1"]
    prefix = f"hf{os.getpid()}_{time.monotonic_ns()}"
    cmd = [bin_, "--no-huge", "-m", "1024", "--no-pci", *lc, "--file-prefix", prefix,
           "--log-level", "lib.eal:error",
           f"--vdev=net_pcap0,rx_pcap={pcaps[0]},infinite_rx=1", "--vdev=net_null1,no-rx=1",
           f"--vdev=net_pcap2,rx_pcap={pcaps[1]},infinite_rx=1", "--vdev=net_null3,no-rx=1",
           "--", "--mode", mode, "--windows", str(a.windows), "--window", str(a.window), "--warmup", str(a.warmup)]
    if touch:
        cmd.append("--touch")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        # EAL leaves its runtime directory (config, telemetry socket) behind.
        base = "/var/run/dpdk" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk"
        shutil.rmtree(os.path.join(base, prefix), ignore_errors=True)
    rates = [float(x) for x in re.findall(r"^window \d+: ([0-9.]+) Mpps", out.stdout, re.M)]
    if out.returncode != 0 or len(rates) != a.windows:
        sys.exit(f"bench_handoff_floor: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()[-400:]}")
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--windows", type=int, default=2)
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--payload", type=int, default=16)
    ap.add_argument("--floor-bin", default=os.path.join(ROOT, "build", "bench", "handoff", "handoff_floor"))
    ap.add_argument("--switch-bin", default=os.path.join(ROOT, "build", "app", "rocelab-switch"))
    ap.add_argument("--workdir", default="/tmp/rocelab-bench")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    pcaps = [os.path.join(a.workdir, f"scale_p{a.payload}_{i}.pcap") for i in (0, 1)]
    bench_scaling.make_pcap(pcaps[0], a.payload, "10.0.0.2")
    bench_scaling.make_pcap(pcaps[1], a.payload, "10.1.0.2")
    names = ["floor-io1", "floor-io2", "floor-cross", "floor-grant", "floor-io1-touch", "floor-cross-touch",
             "floor-grant-touch", "1w", "2w-cross"]
    res = {n: [] for n in names}
    sa = types.SimpleNamespace(switch_bin=a.switch_bin, warmup=a.warmup, windows=a.windows, window=a.window)
    for r in range(a.runs):
        for n in (names if r % 2 == 0 else names[::-1]):
            if n.startswith("floor-"):
                parts = n.split("-")
                rates = floor_once(a.floor_bin, parts[1], len(parts) > 2, pcaps, a)
            else:
                rates = bench_scaling.run_once(n, pcaps, sa)
            res[n] += rates
            print(f"run {r + 1}/{a.runs} {n:18s} " + " ".join(f"{x:6.2f}" for x in rates) + " Mpps", flush=True)
    med = {n: statistics.median(v) for n, v in res.items()}
    print(f"\n== {a.payload} B payload, two pcap(infinite_rx) -> net_null streams ==")
    for n in names:
        print(f"  {n:18s} {med[n]:6.2f} Mpps [{min(res[n]):.2f}-{max(res[n]):.2f}]")
    print(f"SUMMARY floor-io2/floor-io1={med['floor-io2'] / med['floor-io1']:.2f} "
          f"floor-cross/floor-io1={med['floor-cross'] / med['floor-io1']:.2f} "
          f"floor-cross-touch/floor-io1-touch={med['floor-cross-touch'] / med['floor-io1-touch']:.2f} "
          f"floor-grant/floor-io1={med['floor-grant'] / med['floor-io1']:.2f} "
          f"floor-grant-touch/floor-io1-touch={med['floor-grant-touch'] / med['floor-io1-touch']:.2f} "
          f"switch 2w-cross/1w={med['2w-cross'] / med['1w']:.2f}")


if __name__ == "__main__":
    main()
