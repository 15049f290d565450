#!/usr/bin/python3
"""bench_switch.py - end-to-end Mpps of rocelab-switch against dpdk-testpmd.

Follows shared BENCHMARKING.md: real RoCEv2 frames (many QPs, varied UDP
source ports, the default profile's DSCPs) replayed from a net_pcap
infinite_rx source into a net_null sink (no-rx=1), EAL --no-huge -m 1024
--no-pci -l 0-1 (main lcore on CPU 0, one forwarding lcore on CPU 1), 16K
mbufs, bursts of 32. Counting is at the sink's transmit counter (ethdev
opackets, read over DPDK telemetry) in WINDOW-second windows after WARMUP
seconds. Tools alternate (A B C A B C ...) in the same session; each result
is the median [min-max] over all windows of all runs, and TSC cycles per
packet = TSC Hz / pps (the forwarding lcore polls at 100 %).

  tools/bench_switch.py                       # 64 B-class and 1 KB frames, 5 runs each
  tools/bench_switch.py --runs 2 --windows 3  # quicker
  tools/bench_switch.py --tools rocelab,rocelab-pfc   # PFC accounting off vs on
  tools/bench_switch.py --tools rocelab,rocelab-l3    # L2 bridge vs L3 leaf (routing every frame)
  tools/bench_switch.py --tools rocelab-plain,rocelab,rocelab-ecn,testpmd-5tswap
                        # no buffers/WRED vs the RoCE defaults vs CE-marking every frame
  tools/bench_switch.py --tools rocelab@before,rocelab --before-bin ../before/build/app/rocelab-switch
                        # A/B: the same tool from two builds, alternating in one session
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from telemetry import measure_sink_mpps, paired_ab  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tsc_hz():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":")[1]) * 1e6
    except OSError:
        pass
    return 2.5e9


def make_pcap(path, payload, count):
    if not os.path.exists(path):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "mkpcap.py"), "roce", path,
                        "--count", str(count), "--qps", "256", "--vary-sport", "--payload", str(payload),
                        "--dscp", "26,3,0,8,48,46"], check=True, stderr=subprocess.DEVNULL)


def eal(prefix, pcap):
    return ["--no-huge", "-m", "1024", "--no-pci", "-l", "0-1", "--file-prefix", prefix,
            "--log-level", "lib.eal:error",
            f"--vdev=net_pcap0,rx_pcap={pcap},infinite_rx=1", "--vdev=net_null1,no-rx=1"]


def command(tool, prefix, pcap, switch_bin, switch_args):
    if tool == "rocelab":
        return [switch_bin] + eal(prefix, pcap) + ["--", "--quiet"] + switch_args
    if tool == "rocelab-l3":  # L3 leaf: checksum, LPM, ECMP hash, TTL, MAC rewrite (conf/bench-l3.yaml)
        return [switch_bin] + eal(prefix, pcap) + ["--", "--quiet", "--config",
                                                   os.path.join(ROOT, "conf", "bench-l3.yaml")] + switch_args
    if tool == "rocelab-pfc":  # ingress buffer accounting + PFC on (conf/bench-pfc.yaml)
        return [switch_bin] + eal(prefix, pcap) + ["--", "--quiet", "--config",
                                                   os.path.join(ROOT, "conf", "bench-pfc.yaml")] + switch_args
    if tool in ("rocelab-ecn", "rocelab-plain"):  # WRED/ECN marking every frame / no buffers, no WRED
        conf = {"rocelab-ecn": "bench-ecn.yaml", "rocelab-plain": "bench-plain.yaml"}[tool]
        return [switch_bin] + eal(prefix, pcap) + ["--", "--quiet", "--config",
                                                   os.path.join(ROOT, "conf", conf)] + switch_args
    mode = {"testpmd-5tswap": "5tswap", "testpmd-io": "io", "testpmd-mac": "mac"}[tool]
    return ["dpdk-testpmd"] + eal(prefix, pcap) + [
        "--", f"--forward-mode={mode}", "--stats-period", "60", "--no-flush-rx", "--nb-cores=1",
        "--rxq=1", "--txq=1", "--burst=32", "--total-num-mbufs=16384", "--auto-start"]


def run_once(tool, pcap, a):
    prefix = f"bench{os.getpid()}_{tool.replace('@', '_')}_{time.monotonic_ns()}"
    # TOOL@before: the same command with --before-bin (an A/B of two builds, alternating in one session).
    base, _, which = tool.partition("@")
    if which and which != "before":
        sys.exit(f"tool {tool}: only TOOL@before is known")
    if which and not a.before_bin:
        sys.exit(f"tool {tool} needs --before-bin")
    cmd = command(base, prefix, pcap, a.before_bin if which else a.switch_bin,
                  a.switch_args.split() if a.switch_args else [])
    return measure_sink_mpps(cmd, prefix, tool, 1, a.warmup, a.windows, a.window)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--window", type=float, default=2.0, help="seconds per window (default 2)")
    ap.add_argument("--warmup", type=float, default=6.0, help="seconds of warm-up (default 6)")
    ap.add_argument("--sizes", default="16,1024", help="RoCE payload bytes per frame class (default 16,1024: "
                    "74 B and 1082 B frames)")
    ap.add_argument("--tools", default="rocelab,testpmd-5tswap,testpmd-io")
    ap.add_argument("--switch-bin", default=os.path.join(ROOT, "build", "app", "rocelab-switch"))
    ap.add_argument("--switch-args", default="")
    ap.add_argument("--before-bin", help="A/B: tools named TOOL@before run this rocelab-switch (e.g. a build of the "
                                         "commit before a change) with TOOL's arguments")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "rocelab-bench"))
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    tools = a.tools.split(",")
    hz = tsc_hz()
    summary = []
    for payload in [int(x) for x in a.sizes.split(",")]:
        pcap = os.path.join(a.workdir, f"roce_p{payload}.pcap")
        make_pcap(pcap, payload, 4096)
        results = {tool: [] for tool in tools}
        per_run = {tool: [] for tool in tools}  # window rates of each run, for the paired A/B
        for r in range(a.runs):
            for tool in tools:
                rates = run_once(tool, pcap, a)
                results[tool] += rates
                per_run[tool].append(rates)
                print(f"payload {payload} B run {r + 1}/{a.runs} {tool:16s} "
                      + " ".join(f"{x:6.2f}" for x in rates) + " Mpps", flush=True)
        med = {tool: statistics.median(v) for tool, v in results.items()}
        print(f"\n== RoCEv2 frames with {payload} B payload, pcap(infinite_rx) -> net_null, 1 forwarding lcore ==")
        for tool in tools:
            v = results[tool]
            print(f"  {tool:16s} {med[tool]:6.2f} Mpps [{min(v):.2f}-{max(v):.2f}]  "
                  f"{hz / (med[tool] * 1e6):6.0f} TSC cycles/pkt")
        if "rocelab" in med:
            for tool in tools:
                if tool != "rocelab":
                    print(f"  ratio rocelab / {tool}: {med['rocelab'] / med[tool]:.2f}")
                    summary.append((payload, tool, med["rocelab"] / med[tool]))
        # The goals (issue 22: each rocelab profile against testpmd 5tswap),
        # paired by run as the A/B below: the host's rate drifts between runs.
        for base in [t for t in tools if t.startswith("testpmd")]:
            for tool in [t for t in tools if t.startswith("rocelab") and not t.endswith("@before")]:
                pm, plo, phi = paired_ab(per_run[tool], per_run[base])
                print(f"  {tool} / {base}, paired by run: median {pm:.3f} [{plo:.3f}-{phi:.3f}] over {a.runs} runs")
                summary.append((payload, f"paired {tool}/{base}", pm))
        for tool in tools:  # A/B: each TOOL against TOOL@before
            if tool + "@before" in med:
                print(f"  A/B {tool}: after / before = {med[tool] / med[tool + '@before']:.3f}")
                summary.append((payload, "A/B " + tool, med[tool] / med[tool + "@before"]))
                pm, plo, phi = paired_ab(per_run[tool], per_run[tool + "@before"])
                print(f"  A/B {tool}, paired by run: median {pm:.3f} [{plo:.3f}-{phi:.3f}] over {a.runs} runs")
                summary.append((payload, "A/B paired " + tool, pm))
        print(flush=True)
    for payload, tool, ratio in summary:
        if tool.startswith("A/B "):
            print(f"SUMMARY payload={payload}B {tool} after/before={ratio:.3f}")
        elif tool.startswith("paired "):
            print(f"SUMMARY payload={payload}B {tool[7:]} paired={ratio:.3f}")
        else:
            print(f"SUMMARY payload={payload}B rocelab/{tool}={ratio:.2f}")


if __name__ == "__main__":
    main()
