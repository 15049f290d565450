#!/usr/bin/python3
"""Plot a DCQCN run: each QP's pacing rate (and goodput) over time from
rocelab-gen, and a switch egress queue's depth over time with Kmin, Kmax
(its WRED_PROFILE) and the PFC XOFF level drawn in.

  tools/plot_dcqcn.py --timeseries flows.csv [--trace trace.csv] \\
      --queue-csv queues.csv --switch-report sw.json --port Ethernet2 --queue 3 \\
      --out dcqcn.png

  --timeseries     rocelab-gen --timeseries CSV (rate_bps, goodput_bps per flow)
  --trace          rocelab-gen --dcqcn-trace CSV: exact R_C steps per QP
  --queue-csv      rocelab-switch --queue-csv CSV
  --switch-report  rocelab-switch --report JSON: Kmin/Kmax of the queue
  --xoff BYTES     the queue depth at which PFC XOFF holds every sender (with
                   dynamic thresholds N senders x (alpha S / (1 + N alpha) +
                   reserved), S the shared pool, alpha = 2^dynamic_th)
"""
import argparse
import csv
import json
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeseries", required=True)
    ap.add_argument("--trace")
    ap.add_argument("--queue-csv", required=True)
    ap.add_argument("--switch-report")
    ap.add_argument("--port", required=True, help="switch port name of the congested egress")
    ap.add_argument("--queue", default="3")
    ap.add_argument("--xoff", type=float, help="PFC XOFF level in bytes (drawn when given)")
    ap.add_argument("--out", default="dcqcn.png")
    a = ap.parse_args()

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    rates = defaultdict(lambda: ([], [], []))
    with open(a.timeseries) as f:
        for r in csv.DictReader(f):
            t, rate, gp = rates[r["flow"]]
            t.append(float(r["time_s"]))
            rate.append(float(r.get("rate_bps") or 0) / 1e6)
            gp.append(float(r["goodput_bps"]) / 1e6)
    if a.trace:
        steps = defaultdict(lambda: ([], []))
        with open(a.trace) as f:
            for r in csv.DictReader(f):
                t, rc = steps[r["flow"]]
                t.append(float(r["time_s"]))
                rc.append(float(r["rc_bps"]) / 1e6)
        for name, (t, rc) in sorted(steps.items()):
            ax1.step(t, rc, where="post", lw=0.7, label=f"{name} R_C (trace)")
    else:
        for name, (t, rate, _) in sorted(rates.items()):
            ax1.plot(t, rate, lw=0.9, label=f"{name} pacing rate")
    for name, (t, _, gp) in sorted(rates.items()):
        ax1.plot(t, gp, lw=1.5, ls="--", label=f"{name} goodput")
    ax1.set_ylabel("Mbps")
    ax1.set_title("Rate per QP (DCQCN reaction point) and goodput")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize="small", ncol=2)

    t, d, paused = [], [], []
    with open(a.queue_csv) as f:
        for r in csv.DictReader(f):
            if r["port"] == a.port and r["queue"] == str(a.queue):
                t.append(float(r["time_s"]))
                d.append(int(r["depth_bytes"]) / 1e3)
                paused.append(int(r["paused"]))
    if t:
        t0 = t[0]
        t = [x - t0 for x in t]
    ax2.plot(t, d, lw=0.8, label=f"{a.port} queue {a.queue}")
    xoff = a.xoff
    if a.switch_report:
        with open(a.switch_report) as f:
            rep = json.load(f)
        for p in rep["ports"]:
            if p["name"] == a.port:
                q = p["queues"][int(a.queue)]
                if q.get("wred_kmin_bytes") is not None:
                    ax2.axhline(q["wred_kmin_bytes"] / 1e3, color="tab:green", ls=":", label="Kmin")
                    ax2.axhline(q["wred_kmax_bytes"] / 1e3, color="tab:orange", ls=":", label="Kmax")
    if xoff:
        ax2.axhline(xoff / 1e3, color="tab:red", ls="--", label="PFC XOFF level")
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("queue depth (KB)")
    ax2.set_title("Egress queue depth")
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"plot: {a.out}")


if __name__ == "__main__":
    main()
