#!/usr/bin/python3
"""compare_fc.py - one report of the same fabric run with PFC and with credit
flow control (or any two or more rocelab-fabric runs), side by side.

Usage:
  tools/compare_fc.py --out DIR LABEL=RUN_DIR LABEL=RUN_DIR [...]
  tools/compare_fc.py --run SCENARIO_A SCENARIO_B --out DIR [--fabric EXE] [--duration T]

With --run it runs each scenario (rocelab-fabric run ... --out DIR/<name>)
first, labelled by the scenario's name. It reads each run's summary.json,
fabric.json and queues.csv and writes DIR/compare.json, DIR/compare.html
(tables and one plot) and DIR/queues.png: per run, PFC frames, drops, credit
waits and overruns; per flow, goodput over the run and over its FCT, FCT p50
and p99; the deepest egress queues; and the deepest queue's depth over time,
all runs on one plot. It prints the tables too.
"""
import argparse
import csv
import html
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_run(label, d):
    with open(os.path.join(d, "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(d, "fabric.json")) as f:
        fab = json.load(f)
    pfc = sum(p["tx_frames"] for n in fab["nodes"] for p in n.get("pfc", []))
    queues = sorted(fab["queues"], key=lambda q: -q["max_depth_bytes"])
    series = {}
    with open(os.path.join(d, "queues.csv")) as f:
        for r in csv.DictReader(f):
            series.setdefault((r["node"], r["port"], r["queue"]), []).append((float(r["time_s"]), int(r["depth_bytes"])))
    t = s["totals"]
    return {
        "label": label,
        "dir": d,
        "scenario": s["scenario"],
        "passed": s["passed"],
        "pfc_frames_sent": pfc,
        "drops": t["drops"],
        "lossless_drops": t["lossless_drops"],
        "credit_waits": t.get("credit_waits"),
        "credit_overruns": t.get("credit_overruns"),
        "flows": {x["flow"]: {"goodput_gbps": x["goodput"] / 1e9, "goodput_fct_gbps": x.get("goodput_fct", 0) / 1e9,
                              "fct_p50_us": x["fct_p50"] / 1e3, "fct_p99_us": x["fct_p99"] / 1e3,
                              "messages": x["messages"]} for x in s["flows"]},
        "queues": [{"queue": f'{q["node"]}:{q["port"]}:{q["queue"]}', "peak_bytes": q["max_depth_bytes"]}
                   for q in queues[:6]],
        "series": series,
    }


def fmt(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}{unit}"
    return f"{v}{unit}"


def tables(runs):
    """[(title, header, rows)]"""
    out = []
    out.append(("Runs", ["run", "scenario", "PFC frames sent (switches)", "drops", "lossless drops", "credit waits", "credit overruns"],
                [[r["label"], r["scenario"], fmt(r["pfc_frames_sent"]), fmt(r["drops"]), fmt(r["lossless_drops"]),
                  fmt(r["credit_waits"]), fmt(r["credit_overruns"])] for r in runs]))
    flows = []
    for r in runs:
        for f in r["flows"]:
            if f not in flows:
                flows.append(f)
    hdr = ["flow"]
    for r in runs:
        hdr += [f"{r['label']} goodput Gbps", f"{r['label']} over FCT Gbps", f"{r['label']} FCT p50 us",
                f"{r['label']} FCT p99 us"]
    rows = []
    for f in flows:
        row = [f]
        for r in runs:
            x = r["flows"].get(f)
            row += [fmt(x["goodput_gbps"]), fmt(x["goodput_fct_gbps"]), fmt(x["fct_p50_us"]), fmt(x["fct_p99_us"])] \
                if x else ["-"] * 4
        rows.append(row)
    out.append(("Flows", hdr, rows))
    qs = []
    for r in runs:
        for q in r["queues"]:
            if q["queue"] not in qs:
                qs.append(q["queue"])
    rows = []
    for q in qs[:8]:
        row = [q]
        for r in runs:
            peak = max((max(v for _, v in s) for k, s in r["series"].items() if ":".join(k) == q), default=None)
            row.append(fmt(peak / 1e3 if peak is not None else None, " KB"))
        rows.append(row)
    out.append(("Deepest egress queues (peak of the time series)", ["queue"] + [r["label"] for r in runs], rows))
    return out


def plot(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4))
    for r in runs:
        if not r["queues"]:
            continue
        q = r["queues"][0]["queue"]
        key = next(k for k in r["series"] if ":".join(k) == q)
        pts = r["series"][key]
        ax.plot([t * 1e3 for t, _ in pts], [v / 1e3 for _, v in pts], label=f'{r["label"]}: {q}')
    ax.set_xlabel("fabric time (ms)")
    ax.set_ylabel("queue depth (KB)")
    ax.set_title("The deepest egress queue of each run")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("runs", nargs="*", help="LABEL=RUN_DIR (a rocelab-fabric --out folder)")
    ap.add_argument("--run", nargs="+", metavar="SCENARIO", help="run these scenarios first")
    ap.add_argument("--out", required=True)
    ap.add_argument("--fabric", default=os.path.join(os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build")),
                                                     "app", "rocelab-fabric"))
    ap.add_argument("--duration", help="--duration for --run")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    pairs = []
    for s in a.run or []:
        name = os.path.splitext(os.path.basename(s))[0]
        d = os.path.join(a.out, name)
        cmd = [a.fabric, "run", s, "--out", d, "--quiet", "--no-plots"] + (["--duration", a.duration] if a.duration else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            sys.exit(f"compare_fc.py: {s}: rocelab-fabric exit {r.returncode}: {r.stderr.strip()}")
        pairs.append((name, d))
    for x in a.runs:
        if "=" not in x:
            sys.exit(f"compare_fc.py: '{x}': expected LABEL=RUN_DIR")
        lab, d = x.split("=", 1)
        pairs.append((lab, d))
    if len(pairs) < 2:
        sys.exit("compare_fc.py: give at least two runs")
    runs = [load_run(lab, d) for lab, d in pairs]
    ts = tables(runs)
    for title, hdr, rows in ts:
        print(f"== {title}")
        w = [max(len(str(c)) for c in col) for col in zip(hdr, *rows)]
        for row in [hdr] + rows:
            print("  ".join(str(c).ljust(n) for c, n in zip(row, w)))
    plot(runs, os.path.join(a.out, "queues.png"))
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        json.dump([{k: v for k, v in r.items() if k != "series"} for r in runs], f, indent=1)
    h = ["<!doctype html><meta charset=utf-8><title>rocelab: flow control side by side</title>",
         "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child{text-align:left}</style>",
         "<h1>" + " vs ".join(html.escape(r["label"]) for r in runs) + "</h1>"]
    for title, hdr, rows in ts:
        h.append(f"<h2>{html.escape(title)}</h2><table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in hdr) + "</tr>")
        for row in rows:
            h.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
        h.append("</table>")
    h.append('<h2>Queue depth over time</h2><img src="queues.png" alt="queue depth over time">')
    with open(os.path.join(a.out, "compare.html"), "w") as f:
        f.write("\n".join(h) + "\n")
    print(f"compare_fc.py: {os.path.join(a.out, 'compare.html')}")


if __name__ == "__main__":
    main()
