#!/usr/bin/python3
"""plot_queues.py CSV [--port P] [--out FILE] - queue depth over time from a
rocelab-switch --queue-csv trace, one line per non-empty queue, with paused
intervals shaded. Optional horizontal lines mark thresholds (e.g. ECN Kmin/Kmax
or the PFC XOFF level): --hline 150KiB:ECN_Kmin."""
import argparse
import csv
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "KB": 1000, "MB": 1000 ** 2}


def parse_size(s):
    m = re.fullmatch(r"([0-9.]+)\s*(B|KiB|MiB|KB|MB)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"{s}: expected a size with units, e.g. 150KiB")
    return float(m.group(1)) * UNITS[m.group(2)]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--port")
    ap.add_argument("--out", default="queues.png")
    ap.add_argument("--title", default="egress queue depth")
    ap.add_argument("--hline", action="append", default=[], help="SIZE:LABEL threshold line")
    a = ap.parse_args()
    series = {}
    paused = {}
    with open(a.csv) as f:
        for row in csv.DictReader(f):
            if a.port and row["port"] != a.port:
                continue
            key = (row["port"], int(row["queue"]))
            t = float(row["time_s"])
            series.setdefault(key, ([], []))
            series[key][0].append(t)
            series[key][1].append(int(row["depth_bytes"]) / 1024)
            if row.get("paused") == "1":
                paused.setdefault(key, []).append(t)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    t0 = min((v[0][0] for v in series.values() if v[0]), default=0)
    for (port, q), (ts, ds) in sorted(series.items()):
        if max(ds, default=0) == 0:
            continue
        ax.plot([t - t0 for t in ts], ds, label=f"{port} q{q}", linewidth=1)
    for spec in a.hline:
        size, _, label = spec.partition(":")
        ax.axhline(parse_size(size) / 1024, linestyle="--", color="grey")
        ax.text(0, parse_size(size) / 1024, f" {label or size}", va="bottom", color="grey")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue depth (KiB)")
    ax.set_title(a.title)
    ax.legend(loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
