#!/usr/bin/python3
"""bench_gen.py - Mpps per core of rocelab-gen generating RoCEv2 frames, against dpdk-testpmd txonly.

Follows shared BENCHMARKING.md: one process at a time, EAL --no-huge -m 1024
--no-pci -l 0-1 (main lcore on CPU 0, the generating lcore on CPU 1), 16K
mbufs, bursts of 32, sinking into net_null0,no-rx=1. Counting is at the
sink's transmit counter (ethdev opackets, /ethdev/stats,0 over DPDK
telemetry) in WINDOW-second windows after WARMUP seconds. Tools alternate
(A B A B ...) in the same session; each result is the median [min-max] over
all windows of all runs; TSC cycles per packet = TSC Hz / pps (the lcore
polls at 100 %).

Two sinks, each tool runs into both:
  null       net_null0,no-rx=1: nobody reads the frames
  null-copy  net_null0,copy=1,size=FRAME (net_null refuses no-rx=1 with
             copy=1; testpmd txonly and rocelab-gen --tx-only never poll
             rx): the sink memcpy's FRAME
             bytes of every frame (reads them as a NIC's DMA would). This is
             net_null's devarg; dpdk-testpmd 22.11 has no copy option of its
             own (--help lists none).

Tools:
  rocelab          rocelab-gen --tx-only (default --tx-payload prefilled):
                   RC WRITE, 64KiB messages, PMTU 1024 -> frames of 1082 B
                   (MIDDLE/LAST) and 1098 B (FIRST, with RETH)
  rocelab-copy     same with --tx-payload copy (memcpy of the payload per frame)
  rocelab-build    same with --tx-payload build (whole frame built and hashed)
  rocelab-noicrc   same with --tx-payload no-icrc (ICRC left 0: what the ICRC costs)
  rocelab-256qp    rocelab with 256 QPs (--senders 256) instead of 1: one frame per QP per visit
  testpmd          dpdk-testpmd --forward-mode=txonly --txpkts=1082 --txonly-multi-flow

Then it verifies rocelab-gen's own frames: a short rate-limited run per
payload mode with --pcap-out; scapy (contrib.roce) checks the ICRC of a
sample of frames, tshark decodes them all as InfiniBand with nothing
malformed, and the PSNs must increase by one from frame to frame.

  tools/bench_gen.py                          # 5 runs x 5 windows of 2 s, 6 s warm-up
  tools/bench_gen.py --runs 2 --windows 3     # shorter
  tools/bench_gen.py --quick                  # a few seconds per tool: proves it works, figures indicative
"""
import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from telemetry import measure_sink_mpps, paired_ab  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRAME = 14 + 20 + 8 + 12 + 1024 + 4  # WRITE MIDDLE with 1024 B payload, no FCS
MODES = {"rocelab": "prefilled", "rocelab-copy": "copy", "rocelab-build": "build", "rocelab-noicrc": "no-icrc",
         "rocelab-dcqcn-off": "prefilled", "rocelab-paced": "prefilled", "rocelab-paced-dcqcn": "prefilled",
         "rocelab-256qp": "prefilled"}
# DCQCN is on by default (nvidia_cx): `rocelab` runs it on unpaced QPs (the
# RP's byte counter per packet). The paced pair sets a 400Gbps line rate, so
# every packet also goes through the QP pacer and the line shaper, with the
# reaction point on or off (400Gbps: above what one lcore sends, so the
# figure is the cost of pacing and DCQCN, not the pacing rate).
EXTRA = {"rocelab-dcqcn-off": ["--dcqcn", "off"],
         "rocelab-paced": ["--rate", "400Gbps", "--dcqcn", "off"],
         "rocelab-paced-dcqcn": ["--rate", "400Gbps"],
         # 256 QPs (one frame per QP per visit: the per-visit service dominates)
         "rocelab-256qp": ["--senders", "256"]}


def tsc_hz():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":")[1]) * 1e6
    except OSError:
        pass
    return 2.5e9


def sink_vdev(sink):
    # net_null refuses copy=1 together with no-rx=1; neither tool polls rx in these modes.
    return f"net_null0,copy=1,size={FRAME}" if sink == "null-copy" else "net_null0,no-rx=1"


def eal(prefix, sink):
    return ["--no-huge", "-m", "1024", "--no-pci", "-l", "0-1", "--file-prefix", prefix,
            "--log-level", "lib.eal:error", f"--vdev={sink_vdev(sink)}"]


def command(tool, prefix, sink, gen_bin):
    if tool in MODES:
        return [gen_bin] + eal(prefix, sink) + ["--", "--tx-only", "--quiet", "--tx-payload", MODES[tool],
                                                "--mbufs", "16384"] + EXTRA.get(tool, [])
    return ["dpdk-testpmd"] + eal(prefix, sink) + [
        "--", "--forward-mode=txonly", f"--txpkts={FRAME}", "--txonly-multi-flow", "--stats-period", "60",
        "--nb-cores=1", "--rxq=1", "--txq=1", "--burst=32", "--total-num-mbufs=16384", "--auto-start"]


def run_once(tool, sink, a):
    prefix = f"bgen{os.getpid()}_{time.monotonic_ns()}"
    # TOOL@before: the same command with --before-bin (an A/B of two builds, alternating in one session).
    base, _, which = tool.partition("@")
    if which and which != "before":
        sys.exit(f"tool {tool}: only TOOL@before is known")
    if which and not a.before_bin:
        sys.exit(f"tool {tool} needs --before-bin")
    return measure_sink_mpps(command(base, prefix, sink, a.before_bin if which else a.gen_bin), prefix, tool, 0,
                             a.warmup, a.windows, a.window)


def pcap_frames(path):
    """(raw bytes) of every frame of a classic or nanosecond pcap."""
    out = []
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return out
        endian = "<" if hdr[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                break
            _, _, incl, _ = struct.unpack(endian + "IIII", rh)
            out.append(f.read(incl))
    return out


def verify(a, mode, workdir):
    """Short capture of rocelab-gen's own frames; returns (ok, text)."""
    from scapy.all import Ether
    from scapy.contrib.roce import BTH

    cap = os.path.join(workdir, f"cap-{mode}")
    shutil.rmtree(cap, ignore_errors=True)
    prefix = f"bgenv{os.getpid()}_{mode}"
    r = subprocess.run([a.gen_bin] + eal(prefix, "null") + [
        "--", "--tx-only", "--quiet", "--tx-payload", mode, "--rate", "200Mbps", "--duration", "1s",
        "--pcap-out", cap], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return False, f"rocelab-gen exited {r.returncode}: {r.stderr[-400:]}"
    path = os.path.join(cap, "net_null0-tx.pcap")
    frames = pcap_frames(path)
    if not frames:
        return False, "no frames captured"
    sample = frames[:: max(1, len(frames) // a.sample)][: a.sample]
    bad_icrc = 0
    for raw in sample:
        p = Ether(raw)
        q = Ether(raw)
        if BTH not in q:
            bad_icrc += 1
            continue
        q[BTH].icrc = None
        bad_icrc += bytes(q) != raw
    psns = [int.from_bytes(raw[14 + 20 + 8 + 9:14 + 20 + 8 + 12], "big") for raw in frames]
    gaps = sum(1 for x, y in zip(psns, psns[1:]) if y != (x + 1) & 0xFFFFFF)
    tsh = subprocess.run(["tshark", "-r", path, "-Y", "infiniband", "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True)
    ib = len([x for x in tsh.stdout.splitlines() if x])
    mal = subprocess.run(["tshark", "-r", path, "-Y", "_ws.malformed or _ws.expert.severity >= \"warning\"",
                          "-T", "fields", "-e", "frame.number"], capture_output=True, text=True)
    malformed = len([x for x in mal.stdout.splitlines() if x])
    sizes = sorted({len(raw) for raw in frames})
    ok = bad_icrc == 0 and gaps == 0 and ib == len(frames) and malformed == 0
    shutil.rmtree(cap, ignore_errors=True)
    return ok, (f"{len(frames)} frames (sizes {sizes}), scapy ICRC bad {bad_icrc}/{len(sample)} sampled, "
                f"tshark InfiniBand {ib}/{len(frames)}, malformed/expert {malformed}, PSN gaps {gaps}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--window", type=float, default=2.0, help="seconds per window (default 2)")
    ap.add_argument("--warmup", type=float, default=6.0, help="seconds of warm-up (default 6)")
    ap.add_argument("--quick", action="store_true", help="1 run, 2 windows of 1 s, 2 s warm-up (figures indicative)")
    ap.add_argument("--tools", default="rocelab,rocelab-noicrc,rocelab-copy,rocelab-build,testpmd")
    ap.add_argument("--sinks", default="null-copy,null")
    ap.add_argument("--sample", type=int, default=500, help="frames whose ICRC scapy checks per mode")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--gen-bin", default=os.path.join(ROOT, "build", "app", "rocelab-gen"))
    ap.add_argument("--before-bin", help="A/B: tools named TOOL@before run this rocelab-gen (e.g. a build of the "
                                         "commit before a change) with TOOL's arguments")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "rocelab-bench-gen"))
    a = ap.parse_args()
    if a.quick:
        a.runs, a.windows, a.window, a.warmup = 1, 2, 1.0, 2.0
    os.makedirs(a.workdir, exist_ok=True)
    tools = a.tools.split(",")
    hz = tsc_hz()
    summary = []
    label = " (QUICK: indicative only)" if a.quick else ""
    for sink in a.sinks.split(","):
        results = {tool: [] for tool in tools}
        per_run = {tool: [] for tool in tools}  # window rates of each run, for the paired A/B
        for r in range(a.runs):
            for tool in tools:
                rates = run_once(tool, sink, a)
                results[tool] += rates
                per_run[tool].append(rates)
                print(f"{sink:9s} run {r + 1}/{a.runs} {tool:15s} " + " ".join(f"{x:6.2f}" for x in rates) + " Mpps",
                      flush=True)
        med = {tool: statistics.median(v) for tool, v in results.items()}
        print(f"\n== {FRAME} B RoCEv2 frames (1024 B payload) into {sink_vdev(sink)}, 1 lcore{label} ==")
        for tool in tools:
            v = results[tool]
            print(f"  {tool:15s} {med[tool]:6.2f} Mpps [{min(v):.2f}-{max(v):.2f}]  "
                  f"{hz / (med[tool] * 1e6):6.0f} TSC cycles/pkt")
        if "testpmd" in med:
            for tool in tools:
                if tool != "testpmd":
                    summary.append((sink, tool, med[tool] / med["testpmd"]))
                    print(f"  ratio {tool} / testpmd txonly: {med[tool] / med['testpmd']:.2f}")
                    if not tool.endswith("@before"):  # paired by run: the host's rate drifts between runs
                        pm, plo, phi = paired_ab(per_run[tool], per_run["testpmd"])
                        print(f"  {tool} / testpmd txonly, paired by run: median {pm:.3f} [{plo:.3f}-{phi:.3f}] "
                              f"over {a.runs} runs")
                        summary.append((sink, tool + "(paired)", pm))
        for tool in tools:  # A/B: each TOOL against TOOL@before
            if tool + "@before" in med:
                summary.append((sink, tool + "(after/before)", med[tool] / med[tool + "@before"]))
                print(f"  A/B {tool}: after / before = {med[tool] / med[tool + '@before']:.3f}")
                pm, plo, phi = paired_ab(per_run[tool], per_run[tool + "@before"])
                print(f"  A/B {tool}, paired by run: median {pm:.3f} [{plo:.3f}-{phi:.3f}] over {a.runs} runs")
                summary.append((sink, "paired " + tool + "(after/before)", pm))
        if "rocelab" in med and "rocelab-noicrc" in med:
            icrc = hz / (med["rocelab"] * 1e6) - hz / (med["rocelab-noicrc"] * 1e6)
            print(f"  ICRC cost (rocelab - rocelab-noicrc): {icrc:.0f} TSC cycles/pkt "
                  f"({icrc / (hz / (med['rocelab'] * 1e6)) * 100:.0f} % of the frame)")
        print(flush=True)
    for sink, tool, ratio in summary:
        if tool.endswith("(after/before)"):
            print(f"SUMMARY{' QUICK' if a.quick else ''} sink={sink} A/B {tool[:-14]} after/before={ratio:.3f}")
        elif tool.endswith("(paired)"):
            print(f"SUMMARY{' QUICK' if a.quick else ''} sink={sink} {tool[:-8]}/testpmd-txonly paired={ratio:.3f}")
        else:
            print(f"SUMMARY{' QUICK' if a.quick else ''} sink={sink} {tool}/testpmd-txonly={ratio:.2f}")
    if not a.no_verify:
        all_ok = True
        for mode in ("prefilled", "copy"):
            ok, text = verify(a, mode, a.workdir)
            all_ok = all_ok and ok
            print(f"VERIFY {mode:9s} {'OK  ' if ok else 'FAIL'} {text}", flush=True)
        sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
