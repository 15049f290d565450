#!/usr/bin/python3
"""stage_cycles_test.py - the per-stage frame and cycle counters of the
stage-cycles binaries (run by tools/stage_cycles.sh).

rocelab-switch-stages and rocelab-gen-stages are rocelab-switch and
rocelab-gen with -DROCELAB_STAGE_CYCLES=1 in their pipelines and runtime
(pipelines/meson.build, app/meson.build; built on demand in any tree:
ninja -C build app/rocelab-switch-stages app/rocelab-gen-stages).
Each case runs one of them, from ROCELAB_BUILD (default ./build), for 2 s on
virtual devices and reads workers[].stages from its JSON report. The stage
counters come from laps in the workers' polls (pipelines/stage_clock.hpp);
the oracles do not: the ports' own counters in the same report (what the
PMD burst calls returned) and the runtime's busy cycles per worker (timed
around whole polls, runtime/worker.hpp).

  switch-l2   rocelab-switch, no config: pcap infinite_rx -> net_null
  switch-l3   the same with conf/bench-l3.yaml (the L3 leaf: ingress, bulk
              LPM, route and admit)
  gen-tx      rocelab-gen --tx-only, 256 QPs, into net_null
  gen-closed  rocelab-gen closed loop on a loopback pair at 400Gbps

Checks, per case: the stages it must have are all there, each ran; the RX
stages' frames equal the frames the ports received and the TX stages'
frames equal those they sent, exactly; the stages' cycles add up to at
most the worker's busy cycles and to at least half of them (the laps cover
the poll). Exit 0 when every case passes.

  ROCELAB_BUILD=build /usr/bin/python3 tests/dpdk/stage_cycles_test.py
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from bench_switch import make_pcap  # noqa: E402
from stages import table as stages_table  # noqa: E402

SW_L2 = ["l2: rx, parse, bridge, admit", "egress: drain (PFC, scheduler, shaper, tx)"]
SW_L3 = ["l3: rx, parse, classify", "l3: bulk LPM", "l3: route, admit", "egress: drain (PFC, scheduler, shaper, tx)"]
GEN_RX = "rx: parse, responder, ACK/NAK/CNP to the requester"
GEN_SVC = "requester service: timers, completions, posts"
GEN_CNP = "tx: CNPs"
GEN_TX = "tx: PFC sources, replies, data (round robin, pacer, build), send"


def run(tmp, name, argv):
    prefix = f"rlstg{os.getpid()}{name.replace('-', '')}"
    report = os.path.join(tmp, f"{name}.json")
    cmd = argv[:1] + ["--no-huge", "-m", "1024", "--no-pci", "-l", "0-1", "--file-prefix", prefix,
                      "--log-level", "lib.eal:error"] + argv[1:] + ["--quiet", "--duration", "2s", "--report", report]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    finally:
        subprocess.run(["rm", "-rf", f"/var/run/dpdk/{prefix}"])
    if p.returncode != 0 or not os.path.exists(report):
        return None, f"exit {p.returncode}: {p.stdout[-2000:]}"
    with open(report) as f:
        return json.load(f), None


def stages_of(w):
    return {s["stage"]: s for s in w.get("stages", [])}


def check(name, r, need, rx_stages, tx_stages):
    """Returns a list of failures."""
    bad = []
    if len(r["workers"]) != 1:
        return [f"{name}: {len(r['workers'])} workers, expected 1"]
    w = r["workers"][0]
    st = stages_of(w)
    for n in need:
        if n not in st:
            bad.append(f"{name}: stage {n!r} missing (has {sorted(st)})")
        elif st[n]["calls"] == 0:
            bad.append(f"{name}: stage {n!r} never ran")
    if bad:
        return bad
    ports = r["ports"]
    rx = sum(p["rx_packets"] for p in ports)
    tx = sum(p["tx_packets"] for p in ports)
    srx = sum(st[n]["frames"] for n in rx_stages if n in st)
    stx = sum(st[n]["frames"] for n in tx_stages if n in st)
    if srx != rx:
        bad.append(f"{name}: RX stages counted {srx} frames, the ports received {rx}")
    if stx != tx:
        bad.append(f"{name}: TX stages counted {stx} frames, the ports sent {tx}")
    if tx == 0:
        bad.append(f"{name}: nothing was sent")
    cyc = sum(s["cycles"] for s in st.values())
    busy = w["busy_cycles"]
    if not (busy * 0.5 <= cyc <= busy):
        bad.append(f"{name}: the stages' cycles ({cyc}) are not within [0.5, 1] x the worker's busy cycles ({busy})")
    print(f"stage_cycles_test: {name}: rx {rx}, tx {tx} frames")
    print("\n".join("    " + line for line in stages_table(r)))
    return bad


def main():
    sw = os.path.join(BUILD, "app", "rocelab-switch-stages")
    gen = os.path.join(BUILD, "app", "rocelab-gen-stages")
    failed = []
    with tempfile.TemporaryDirectory(prefix="rocelab-stg-") as tmp:
        # bench_switch's frames (256 QPs, the default profile's DSCPs), which
        # conf/bench-l3.yaml routes.
        pcap = os.path.join(tmp, "roce.pcap")
        make_pcap(pcap, 16, 512)
        vdevs = [f"--vdev=net_pcap0,rx_pcap={{}},infinite_rx=1", "--vdev=net_null1,no-rx=1"]
        cases = [
            ("switch-l2", [sw, vdevs[0].format(pcap), vdevs[1], "--"], SW_L2, SW_L2[:1], SW_L2[1:]),
            ("switch-l3", [sw, vdevs[0].format(pcap), vdevs[1], "--", "--config",
                           os.path.join(ROOT, "conf", "bench-l3.yaml")], SW_L3, SW_L3[:1], SW_L3[3:]),
            ("gen-tx", [gen, "--vdev=net_null0,copy=1,size=1082", "--", "--tx-only", "--senders", "256",
                        "--mbufs", "16384"], [GEN_RX, GEN_SVC, GEN_TX], [GEN_RX], [GEN_TX, GEN_CNP]),
            ("gen-closed", [gen, "--", "--loopback-pairs", "1", "--rate", "400Gbps", "--senders", "4"],
             [GEN_RX, GEN_SVC, GEN_TX], [GEN_RX], [GEN_TX, GEN_CNP]),
        ]
        for name, argv, need, rxs, txs in cases:
            r, err = run(tmp, name, argv)
            if err:
                failed.append(f"{name}: {err}")
                continue
            failed += check(name, r, need, rxs, txs)
    if failed:
        print("stage_cycles_test: FAILED:\n  " + "\n  ".join(failed))
        return 1
    print(f"stage_cycles_test: {len(cases)} cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
