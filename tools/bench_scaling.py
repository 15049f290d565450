#!/usr/bin/python3
"""bench_scaling.py - rocelab-switch (or rocelab-gen) with 1 and 2 worker lcores, side by side.

Two streams of real RoCEv2 frames (many QPs, a distinct UDP source port per
frame, the default profile's DSCPs), each replayed from its own net_pcap
infinite_rx source into its own net_null sink (conf/bench-scaling.yaml, an
L3 leaf routing every frame). Configurations alternate in one session
(A B C A B C ...), each with --no-huge -m 1024 --no-pci and 16K mbufs:

  1w        -l 0-1: one worker (CPU 1) owns all four ports
  2w        --lcores 0@0,1@0,2@1: two workers, one per CPU (the main lcore,
            which sleeps between status checks, shares CPU 0), each owning
            one stream (--port-workers 0,0,1,1: no handoff)
  2w-cross  the same, --port-workers 0,1,1,0: every frame is handed to the
            other worker (the egress port's owner)
  2w-shared, 2w-cross-shared  2w and 2w-cross with both workers on CPU 1
            (--lcores 0@0,1@1,2@1 --idle-yield), as the tests run them

Counting is at both sinks' ethdev opackets (DPDK telemetry), in WINDOW-second
windows after WARMUP seconds; each result is the median [min-max] over all
windows of all runs. TSC cycles per packet per worker = TSC Hz x workers /
pps (the workers poll at 100 %). For 4, 8 and 16 workers on a bigger box,
see docs/benchmarks.md, "Scaling over workers" (one stream per worker).

  tools/bench_scaling.py                  # 74 B and 1082 B frames, 3 runs
  tools/bench_scaling.py --runs 1 --windows 2 --sizes 16

RSS, one stream into one port, out over two uplinks by ECMP
(conf/bench-rss.yaml, --configs rss-1w,rss-2w):
  rss-1w    -l 0-1: one worker, the port's one RX queue replays the stream
  rss-2w    --lcores 0@0,1@0,2@1, --rx-queues 2, --port-workers 0,0,1: the
            stream split into two RX queues as the NIC's Toeplitz hash with
            the default key would (net_pcap does not hash: one rx_pcap per
            queue); queue 0 and uplink 1 on worker 0, queue 1 and uplink 2
            on worker 1, which charges the ingress PGs from worker 0's
            credit; about half of each worker's frames cross to the other
  rss-2w-local  rss-2w with ECMP local bias (conf/bench-rss-local.yaml):
            each worker routes its queue's frames over its own uplink, none
            crosses

--app gen: rocelab-gen --tx-only on two net_null sinks (no-rx=1), --pattern
all-to-all (a QP sending from each port), RC WRITE
frames of 1082 B with their ICRC per packet (prefilled payload, header CRC
combined), every QP paced and shaped (--rate 400Gbps: above what a worker
sends, so pacing costs but does not limit) with DCQCN's reaction point on:
  gen-1w  -l 0-1, one worker sends on both ports
  gen-2w  --lcores 0@0,1@0,2@1, a worker per port
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from telemetry import measure_sink_mpps  # noqa: E402
from bench_switch import tsc_hz  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {
    "1w": (1, "-l", "0-1", None),
    "2w": (2, "--lcores", "0@0,1@0,2@1", "0,0,1,1"),
    "2w-cross": (2, "--lcores", "0@0,1@0,2@1", "0,1,1,0"),
    "rss-1w": (1, "-l", "0-1", None),
    "rss-2w": (2, "--lcores", "0@0,1@0,2@1", "0,0,1"),
    "rss-2w-local": (2, "--lcores", "0@0,1@0,2@1", "0,0,1"),
    "gen-1w": (1, "-l", "0-1", None),
    "gen-2w": (2, "--lcores", "0@0,1@0,2@1", "0,1"),
    # Both workers on CPU 1, as the tests run them, yielding it (--idle-yield).
    "2w-shared": (2, "--lcores", "0@0,1@1,2@1", "0,0,1,1", ["--idle-yield"]),
    "2w-cross-shared": (2, "--lcores", "0@0,1@1,2@1", "0,1,1,0", ["--idle-yield"]),
}


def make_pcap(path, payload, dst_ip):
    if not os.path.exists(path):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "mkpcap.py"), "roce", path,
                        "--count", "4096", "--qps", "256", "--vary-sport", "--payload", str(payload),
                        "--dscp", "26,3,0,8,48,46", "--src-ip", dst_ip[:-1] + "1", "--dst-ip", dst_ip],
                       check=True, stderr=subprocess.DEVNULL)


RSS_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")


def toeplitz(data, key=RSS_KEY):
    """The RSS hash (Microsoft's RSS specification) of `data` under `key`."""
    h, k, klen = 0, int.from_bytes(key, "big"), len(key) * 8
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (klen - 32 - (i * 8 + b))) & 0xFFFFFFFF
    return h


def rss_split(src, outs):
    """Write src's frames into len(outs) pcaps, each frame where a NIC with
    RSS over IPv4 + UDP ports (default key, even 128-entry table) puts it."""
    if all(os.path.exists(o) for o in outs):
        return
    from scapy.all import IP, UDP, rdpcap, wrpcap
    per = [[] for _ in outs]
    for f in rdpcap(src):
        d = bytes(f[IP])[12:20] + f[UDP].sport.to_bytes(2, "big") + f[UDP].dport.to_bytes(2, "big")
        per[(toeplitz(d) & 127) % len(outs)].append(f)
    for o, fs in zip(outs, per):
        wrpcap(o, fs)


def run_once(name, pcaps, a):
    workers, lopt, lval, pw = CONFIGS[name][:4]
    extra = CONFIGS[name][4] if len(CONFIGS[name]) > 4 else []
    prefix = f"bsc{os.getpid()}_{name}_{time.monotonic_ns()}"
    eal = ["--no-huge", "-m", "1024", "--no-pci", lopt, lval, "--file-prefix", prefix, "--log-level", "lib.eal:error"]
    if name.startswith("gen-"):
        sinks = (0, 1)
        cmd = [a.gen_bin] + eal + ["--vdev=net_null0,no-rx=1", "--vdev=net_null1,no-rx=1", "--", "--tx-only",
                                   "--quiet", "--rate", "400Gbps", "--mbufs", "16384", "--pattern", "all-to-all"]
    elif name.startswith("rss-"):
        sinks = (1, 2)
        rx = f"rx_pcap={pcaps[0]}" if name == "rss-1w" else f"rx_pcap={pcaps[2]},rx_pcap={pcaps[3]}"
        conf = "bench-rss-local.yaml" if name == "rss-2w-local" else "bench-rss.yaml"
        cmd = [a.switch_bin] + eal + [f"--vdev=net_pcap0,{rx},infinite_rx=1", "--vdev=net_null1,no-rx=1",
                                      "--vdev=net_null2,no-rx=1",
                                      "--", "--quiet", "--config", os.path.join(ROOT, "conf", conf)]
        if name != "rss-1w":
            cmd += ["--rx-queues", "2"]
    else:
        sinks = (1, 3)
        cmd = [a.switch_bin] + eal + [
            f"--vdev=net_pcap0,rx_pcap={pcaps[0]},infinite_rx=1", "--vdev=net_null1,no-rx=1",
            f"--vdev=net_pcap2,rx_pcap={pcaps[1]},infinite_rx=1", "--vdev=net_null3,no-rx=1",
            "--", "--quiet", "--config", os.path.join(ROOT, "conf", "bench-scaling.yaml")]
    if pw:
        cmd += ["--port-workers", pw]
    cmd += extra
    return measure_sink_mpps(cmd, prefix, name, sinks, a.warmup, a.windows, a.window)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--sizes", default="16,1024", help="RoCE payload bytes (default 16,1024: 74 B and 1082 B frames)")
    ap.add_argument("--configs", default="1w,2w,2w-cross")
    ap.add_argument("--switch-bin", default=os.path.join(ROOT, "build", "app", "rocelab-switch"))
    ap.add_argument("--gen-bin", default=os.path.join(ROOT, "build", "app", "rocelab-gen"))
    ap.add_argument("--app", choices=("switch", "gen"), default="switch")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "rocelab-bench"))
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    names = a.configs.split(",")
    if a.app == "gen":
        names = ["gen-1w", "gen-2w"]
        a.sizes = "1024"
    hz = tsc_hz()
    for payload in [int(x) for x in a.sizes.split(",")]:
        pcaps = [os.path.join(a.workdir, f"scale_p{payload}_{i}.pcap") for i in (0, 1)]
        make_pcap(pcaps[0], payload, "10.0.0.2")
        make_pcap(pcaps[1], payload, "10.1.0.2")
        if any(n.startswith("rss-") for n in names):
            pcaps += [os.path.join(a.workdir, f"scale_p{payload}_0_rss{q}.pcap") for q in (0, 1)]
            rss_split(pcaps[0], pcaps[2:])
        res = {n: [] for n in names}
        for r in range(a.runs):
            for n in names:
                rates = run_once(n, pcaps, a)
                res[n] += rates
                print(f"payload {payload} B run {r + 1}/{a.runs} {n:9s} " + " ".join(f"{x:6.2f}" for x in rates)
                      + " Mpps", flush=True)
        med = {n: statistics.median(v) for n, v in res.items()}
        print(f"\n== {payload} B payload: " + ("rocelab-gen --tx-only, paced, DCQCN on, two net_null sinks ==" if a.app == "gen"
              else "two pcap(infinite_rx) -> net_null streams, L3 leaf =="))
        for n in names:
            w = CONFIGS[n][0]
            print(f"  {n:9s} {med[n]:6.2f} Mpps [{min(res[n]):.2f}-{max(res[n]):.2f}]  "
                  f"{hz * w / (med[n] * 1e6):6.0f} TSC cycles/pkt per worker")
        base = "gen-1w" if a.app == "gen" else ("rss-1w" if names[0].startswith("rss-") else "1w")
        for n in names:
            if n != base and base in med:
                print(f"SUMMARY payload={payload}B {n}/{base}={med[n] / med[base]:.2f}")
        print(flush=True)


if __name__ == "__main__":
    main()
