#!/usr/bin/python3
"""Plot rocelab-gen results: throughput per flow over time (from --timeseries
CSV) and the message FCT CDF (from the --report JSON: p50/p99/max per flow,
or the full CDF when the CSV has per-flow completions).

  tools/plot_gen.py --timeseries ts.csv --report report.json --out gen.png
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
    ap.add_argument("--timeseries", required=True, help="CSV written by rocelab-gen --timeseries")
    ap.add_argument("--report", help="JSON written by rocelab-gen --report (FCT percentiles)")
    ap.add_argument("--out", default="gen.png", help="PNG to write")
    a = ap.parse_args()

    series = defaultdict(lambda: ([], []))
    with open(a.timeseries) as f:
        for row in csv.DictReader(f):
            t, g = series[row["flow"]]
            t.append(float(row["time_s"]))
            g.append(float(row["goodput_bps"]) / 1e9)
    ncols = 2 if a.report else 1
    fig, axes = plt.subplots(1, ncols, figsize=(6 * ncols, 4), squeeze=False)
    ax = axes[0][0]
    for name, (t, g) in sorted(series.items()):
        ax.plot(t, g, label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Gbps)")
    ax.set_title("Throughput per flow")
    ax.grid(True, alpha=0.3)
    if len(series) <= 12:
        ax.legend(fontsize="small")
    if a.report:
        with open(a.report) as f:
            rep = json.load(f)
        ax2 = axes[0][1]
        for fl in rep["flows"]:
            pts = [(fl["fct_p50_ns"], 0.5), (fl["fct_p99_ns"], 0.99), (fl["fct_max_ns"], 1.0)]
            if fl["fct_samples"] == 0:
                continue
            xs = [0, *[p[0] / 1e6 for p in pts]]
            ys = [0, *[p[1] for p in pts]]
            ax2.step(xs, ys, where="post", marker="o", label=fl["name"])
        ax2.set_xlabel("message FCT (ms)")
        ax2.set_ylabel("CDF (p50, p99, max)")
        ax2.set_title("Flow completion time")
        ax2.grid(True, alpha=0.3)
        if len(rep["flows"]) <= 12:
            ax2.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(a.out)


if __name__ == "__main__":
    main()
