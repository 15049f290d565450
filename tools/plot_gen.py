#!/usr/bin/python3
"""Plot rocelab-gen results: throughput per flow over time (from --timeseries
CSV) and the message FCT CDF.

  tools/plot_gen.py --timeseries ts.csv --report report.json --fct fct.csv --out gen.png

The CDF is over every message in --fct (the CSV rocelab-gen --fct-csv
writes: every completed message, up to each flow's sample cap; the title
says when the cap left some out). Without --fct it can only draw the
report's three points per flow (p50, p99, max), and says so.
"""
import argparse
import csv
import json
import os
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fabric_report import cdf_points, load_fct, time_unit  # noqa: E402


def fct_cdf(ax, fct, rep):
    """The CDF of every FCT sample: per flow (up to 12 flows) and all together."""
    names = [n for n in fct if fct[n]]
    if not names:
        ax.text(0.5, 0.5, "no message completed", ha="center", va="center", transform=ax.transAxes)
        return
    allv = sorted(v for n in names for v in fct[n])
    div, unit = time_unit(allv[-1] / 1e9)
    if 1 < len(names) <= 12:
        for n in names:
            x, y = cdf_points(sorted(fct[n]))
            ax.step([v / 1e9 * div for v in x], y, where="post", lw=1.0, label=f"{n} ({len(fct[n]):,})")
    x, y = cdf_points(allv)
    ax.step([v / 1e9 * div for v in x], y, where="post", color="black", lw=1.4,
            label=f"all ({len(allv):,})" if len(names) > 1 else f"{names[0]} ({len(allv):,})")
    dropped = sum(f.get("fct_samples_dropped", 0) for f in (rep or {}).get("flows", []))
    what = f"{len(allv):,} of {len(allv) + dropped:,} messages (sample cap)" if dropped else \
        f"every message ({len(allv):,})"
    ax.set_title(f"Message FCT CDF over {what}")
    ax.set_xlabel(f"message FCT ({unit})")
    ax.set_ylabel("share of messages")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small", loc="best")


def percentile_steps(ax, rep):
    """Without the samples: the report's p50, p99 and max per flow."""
    for fl in rep["flows"]:
        if fl["fct_samples"] == 0:
            continue
        pts = [(fl["fct_p50_ns"], 0.5), (fl["fct_p99_ns"], 0.99), (fl["fct_max_ns"], 1.0)]
        ax.step([0, *[p[0] / 1e6 for p in pts]], [0, *[p[1] for p in pts]], where="post", marker="o",
                label=fl["name"])
    ax.set_xlabel("message FCT (ms)")
    ax.set_ylabel("CDF (p50, p99, max only: no --fct)")
    ax.set_title("Flow completion time")
    if len(rep["flows"]) <= 12:
        ax.legend(fontsize="small")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeseries", required=True, help="CSV written by rocelab-gen --timeseries")
    ap.add_argument("--report", help="JSON written by rocelab-gen --report (FCT percentiles, samples dropped)")
    ap.add_argument("--fct", help="CSV written by rocelab-gen --fct-csv (every message's FCT)")
    ap.add_argument("--out", default="gen.png", help="PNG to write")
    a = ap.parse_args()

    series = defaultdict(lambda: ([], []))
    with open(a.timeseries) as f:
        for row in csv.DictReader(f):
            t, g = series[row["flow"]]
            t.append(float(row["time_s"]))
            g.append(float(row["goodput_bps"]) / 1e9)
    rep = None
    if a.report:
        with open(a.report) as f:
            rep = json.load(f)
    fct = load_fct(a.fct) if a.fct else None
    if a.fct and fct is None:
        sys.exit(f"plot_gen.py: {a.fct}: no such file")
    ncols = 2 if (rep or fct is not None) else 1
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
    if ncols == 2:
        ax2 = axes[0][1]
        if fct is not None:
            fct_cdf(ax2, fct, rep)
        else:
            percentile_steps(ax2, rep)
        ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(a.out)


if __name__ == "__main__":
    main()
