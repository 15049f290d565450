#!/usr/bin/python3
"""fabric_report.py DIR - plots and a one-page summary of a rocelab-fabric run.

Reads the report folder that `rocelab-fabric run SCENARIO.yaml --out DIR`
wrote (summary.json, fabric.json, flows.csv, fct.csv, queues.csv, pfc.csv)
and writes into it:

  throughput.png  goodput of each flow over fabric time, with its DCQCN
                  pacing rate dashed where it is not the line rate; with more
                  than 12 flows the aggregate goodput, and the slowest,
                  median and fastest flows labelled over the others in grey
  fct.png         the CDF of message completion times over every message in
                  fct.csv (all completed messages, or all up to each flow's
                  sample cap, as the title says): all flows together, and
                  each flow when there are 12 or fewer
  queues.png      egress queue depth over fabric time (the 8 deepest queues),
                  each queue's ECN Kmin (dotted) and Kmax (dashed) from
                  fabric.json, and shaded spans where the queue was paused
                  by PFC
  pfc.png         PFC/PAUSE frames received and sent per sample interval, per
                  port, for the ports that saw any
  index.html      the scenario, a PASSED/FAILED banner, the expectations,
                  key figures, flows, busiest links, queue and PG peaks, and
                  the plots (self-contained, no script or external style)

A plot without data (no flow, no switch queue, no PFC frame) is not written
(a stale one is removed) and index.html says why. The same folder gives the
same bytes: nothing depends on the wall clock, the folder's path or the
Python hash seed (speed.json, the only wall-clock file, is not read).

rocelab-fabric runs this after every run unless given --no-plots.
Exit status: 0 done, 2 DIR is not a report folder, 1 anything else (one line
on stderr).
"""
import csv
import html
import json
import os
import sys

PROG = "fabric_report.py"
PLOTS = ("throughput.png", "fct.png", "queues.png", "pfc.png")
MANY_FLOWS = 12        # above this, the aggregate and a few labelled flows
MAX_QUEUES = 8         # queues.png: the deepest ones
MAX_PFC_PORTS = 12     # pfc.png: per panel, the ports with the most frames
MAX_GREY_FLOWS = 200   # background flows drawn in grey when there are many
MAX_FLOW_ROWS = 40     # index.html flow table; above, the slowest ones
TOP_ROWS = 8           # links, queues, priority groups in index.html
CDF_POINTS = 4000      # fct.png: points drawn per line (the CDF is of every sample)


class NotAReport(Exception):
    pass


# --- formatting -------------------------------------------------------------

def fmt_int(v):
    return f"{int(round(v)):,}"


def rate_unit(vmax):
    for div, name in ((1e12, "Tbps"), (1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")):
        if vmax >= div:
            return div, name
    return 1.0, "bps"


def fmt_rate(v):
    div, name = rate_unit(abs(v))
    return f"{v / div:.4g} {name}"


def bytes_unit(vmax):
    for div, name in ((1024 ** 3, "GiB"), (1024 ** 2, "MiB"), (1024, "KiB")):
        if vmax >= div:
            return div, name
    return 1.0, "B"


def fmt_bytes(v):
    div, name = bytes_unit(abs(v))
    return f"{int(v)} B" if div == 1.0 else f"{v / div:.2f} {name}"


def time_unit(tmax_s):
    if tmax_s < 1e-3:
        return 1e6, "µs"
    if tmax_s < 1.0:
        return 1e3, "ms"
    return 1.0, "s"


def fmt_ns(ns):
    ns = float(ns)
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e9:.3f} s"


def fmt_dur(ns):
    """A duration without trailing zeros: 5 ms, 25 µs, 1.5 s."""
    ns = float(ns)
    for div, name in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= div:
            return f"{ns / div:.6g} {name}"
    return f"{ns:.6g} ns"


def fmt_share(b):
    s = f"{100 * b:.2f}"
    return "> 99.99 %" if s == "100.00" and b < 1 else f"{s} %"


def esc(s):
    return html.escape(str(s), quote=True)


# --- reading ----------------------------------------------------------------

def load_json(path, required):
    if not os.path.exists(path):
        if required:
            raise NotAReport(f"no {os.path.basename(path)}")
        return None
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            if required:
                raise NotAReport(f"{os.path.basename(path)} is not JSON ({e})")
            raise ValueError(f"{os.path.basename(path)}: not JSON ({e})")


def load_csv(path, columns):
    """Rows of a CSV as dicts, [] when the file is missing or holds no rows."""
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        r = csv.DictReader(f)
        if r.fieldnames is None:
            return []
        missing = [c for c in columns if c not in r.fieldnames]
        if missing:
            raise ValueError(f"{os.path.basename(path)}: no column {', '.join(missing)}")
        # A run cut short may leave a last line half written: skip it.
        return [row for row in r if all(row.get(c) is not None for c in columns)]


def load(d):
    if not os.path.isdir(d):
        raise NotAReport("not a directory")
    summary = load_json(os.path.join(d, "summary.json"), True)
    if not isinstance(summary, dict) or "expectations" not in summary or "flows" not in summary:
        raise NotAReport("summary.json is not a rocelab-fabric summary")
    fabric = load_json(os.path.join(d, "fabric.json"), False) or {}
    flows = {}   # flow -> {"t": [...], "goodput": [...], "rate": [...]}, in file order
    for r in load_csv(os.path.join(d, "flows.csv"), ("time_s", "flow", "goodput_bps", "rate_bps")):
        s = flows.setdefault(r["flow"], {"t": [], "goodput": [], "rate": []})
        s["t"].append(float(r["time_s"]))
        s["goodput"].append(float(r["goodput_bps"]))
        s["rate"].append(float(r["rate_bps"] or 0))
    queues = {}  # (node, port, queue) -> {"t", "depth", "paused"}
    for r in load_csv(os.path.join(d, "queues.csv"), ("time_s", "node", "port", "queue", "depth_bytes", "paused")):
        s = queues.setdefault((r["node"], r["port"], int(r["queue"])), {"t": [], "depth": [], "paused": []})
        s["t"].append(float(r["time_s"]))
        s["depth"].append(float(r["depth_bytes"]))
        s["paused"].append(r["paused"] == "1")
    pfc = {}     # (node, port) -> {"t", "rx", "tx"} cumulative
    for r in load_csv(os.path.join(d, "pfc.csv"), ("time_s", "node", "port", "pfc_rx", "pfc_tx")):
        s = pfc.setdefault((r["node"], r["port"]), {"t": [], "rx": [], "tx": []})
        s["t"].append(float(r["time_s"]))
        s["rx"].append(int(r["pfc_rx"]))
        s["tx"].append(int(r["pfc_tx"]))
    fct = load_fct(os.path.join(d, "fct.csv"))
    return summary, fabric, flows, queues, pfc, fct


def load_fct(path):
    """flow -> [FCT in ns, ...] from fct.csv (every message the generators
    kept), in file order; None when the file is missing (an older folder)."""
    if not os.path.exists(path):
        return None
    out = {}
    with open(path, encoding="utf-8") as f:
        head = f.readline().strip()
        if head != "flow,fct_ns":
            raise ValueError(f"fct.csv: header {head!r}, not 'flow,fct_ns'")
        for line in f:
            flow, sep, v = line.rstrip("\n").rpartition(",")
            if not sep or not v.isdigit():
                continue   # a last line half written
            out.setdefault(flow, []).append(int(v))
    return out


# --- plots ------------------------------------------------------------------

def plt_module():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "font.size": 9,
                         "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 8})
    return plt


def save(plt, fig, path):
    # No Software text chunk (it names the matplotlib version): the bytes
    # depend only on the data. PNG carries no creation time from matplotlib.
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def colour(plt, i, n):
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return cmap(i % cmap.N)


def gen_line_rate(fabric):
    gens = {n.get("name") for n in fabric.get("nodes", []) if n.get("kind") == "gen"}
    rates = [l.get("rate_bps", 0) for l in fabric.get("links", [])
             if str(l.get("from", "")).split(":")[0] in gens]
    return max(rates) if rates else None


def shows_rate(s, line_rate):
    """The pacing rate is worth a dashed line when it is not the line rate."""
    r = s["rate"]
    if not r or max(r) <= 0:
        return False
    ref = line_rate if line_rate else max(r)
    return any(v != ref for v in r)


def plot_throughput(plt, path, flows, summary, fabric, t_end):
    names = list(flows)
    line_rate = gen_line_rate(fabric)
    tdiv, tname = time_unit(t_end)
    if len(names) <= MANY_FLOWS:
        fig, ax = plt.subplots(figsize=(10, 4.6))
        vmax = max([max(s["goodput"] + [0]) for s in flows.values()] +
                   [max(s["rate"] + [0]) for s in flows.values() if shows_rate(s, line_rate)])
        div, unit = rate_unit(vmax)
        for i, n in enumerate(names):
            s, c = flows[n], colour(plt, i, len(names))
            t = [x * tdiv for x in s["t"]]
            ax.plot(t, [v / div for v in s["goodput"]], color=c, lw=1.0, label=f"{n} goodput")
            if shows_rate(s, line_rate):
                ax.plot(t, [v / div for v in s["rate"]], color=c, lw=0.9, ls="--", label=f"{n} pacing rate")
        ax.set_title("goodput per flow" + (" (dashed: DCQCN pacing rate)" if any(
            shows_rate(flows[n], line_rate) for n in names) else ""))
        axes = [ax]
    else:
        fig, (ax0, ax) = plt.subplots(2, 1, figsize=(10, 7), sharex=True, gridspec_kw={"height_ratios": [1, 1.4]})
        agg = {}
        for s in flows.values():
            for x, v in zip(s["t"], s["goodput"]):
                agg[x] = agg.get(x, 0.0) + v
        ts = sorted(agg)
        adiv, aunit = rate_unit(max(agg.values(), default=0))
        ax0.plot([x * tdiv for x in ts], [agg[x] / adiv for x in ts], color="black", lw=1.2,
                 label=f"all {len(names)} flows (sum)")
        ax0.set_ylabel(f"goodput ({aunit})")
        ax0.set_title(f"aggregate goodput of {len(names)} flows")
        ax0.legend(loc="best")
        # A few flows by their whole-run goodput: slowest, median, fastest.
        gp = {f.get("flow"): f.get("goodput", 0) for f in summary.get("flows", [])}
        ranked = sorted(names, key=lambda n: gp.get(n, 0))  # stable: ties in file order
        picks = []
        for label, n in (("slowest", ranked[0]), ("median", ranked[len(ranked) // 2]), ("fastest", ranked[-1])):
            if n not in [p for _, p in picks]:
                picks.append((label, n))
        picked = {n for _, n in picks}
        vmax = max([max(flows[n]["goodput"] + [0]) for n in names] +
                   [max(flows[n]["rate"] + [0]) for _, n in picks if shows_rate(flows[n], line_rate)])
        div, unit = rate_unit(vmax)
        grey = [n for n in names if n not in picked][:MAX_GREY_FLOWS]
        for k, n in enumerate(grey):
            s = flows[n]
            ax.plot([x * tdiv for x in s["t"]], [v / div for v in s["goodput"]], color="0.8", lw=0.5,
                    label=f"other flows ({len(names) - len(picks)})" if k == 0 else None, zorder=1)
        for i, (label, n) in enumerate(picks):
            s, c = flows[n], colour(plt, i, 10)
            tt = [x * tdiv for x in s["t"]]
            ax.plot(tt, [v / div for v in s["goodput"]], color=c, lw=1.1, label=f"{n} ({label}) goodput", zorder=3)
            if shows_rate(s, line_rate):
                ax.plot(tt, [v / div for v in s["rate"]], color=c, lw=0.9, ls="--", label=f"{n} pacing rate",
                        zorder=3)
        ax.set_title("goodput per flow: slowest, median and fastest labelled" + (
            " (dashed: DCQCN pacing rate)" if any(shows_rate(flows[n], line_rate) for _, n in picks) else ""))
        axes = [ax0, ax]
    dashed = any(l.get_linestyle() == "--" for l in ax.get_lines())
    ax.set_ylabel(f"goodput{', pacing rate' if dashed else ''} ({unit})")
    ax.set_xlabel(f"fabric time ({tname})")
    for a in axes:
        a.set_xlim(0, t_end * tdiv)
        a.set_ylim(bottom=0)
    ax.legend(loc="best", ncol=2 if len(ax.get_legend_handles_labels()[1]) > 8 else 1)
    fig.tight_layout()
    save(plt, fig, path)


def cdf_points(sorted_v, n_max=CDF_POINTS):
    """(x, y) of the empirical CDF of every value in sorted_v, drawn with at
    most about n_max points: above that, the values at n_max evenly spaced
    ranks (the first and the last included). y = rank / n."""
    n = len(sorted_v)
    if n == 0:
        return [], []
    if n <= n_max:
        idx = range(n)
    else:
        idx = sorted({round(i * (n - 1) / (n_max - 1)) for i in range(n_max)})
    # From 0 at the smallest value (a step plot then rises at each sample).
    return [sorted_v[0]] + [sorted_v[i] for i in idx], [0.0] + [(i + 1) / n for i in idx]


def fct_counts(summary, fct):
    """(samples in fct.csv, completions the per-flow sample cap left out)."""
    kept = sum(len(v) for v in fct.values())
    dropped = sum(int(f.get("fct_samples_dropped", 0)) for f in summary.get("flows", []))
    return kept, dropped


def plot_fct(plt, path, fct, summary):
    names = [n for n in fct if fct[n]]
    allv = sorted(v for n in names for v in fct[n])
    kept, dropped = fct_counts(summary, fct)
    div, unit = time_unit(allv[-1] / 1e9)
    fig, ax = plt.subplots(figsize=(10, 4.6))
    per_flow = 1 < len(names) <= MANY_FLOWS
    if per_flow:
        for i, n in enumerate(names):
            x, y = cdf_points(sorted(fct[n]))
            ax.step([v / 1e9 * div for v in x], y, where="post", color=colour(plt, i, len(names)), lw=1.0,
                    label=f"{n} ({len(fct[n]):,})")
    x, y = cdf_points(allv)
    ax.step([v / 1e9 * div for v in x], y, where="post", color="black", lw=1.6 if per_flow else 1.2,
            label=f"all flows ({len(allv):,} messages)" if len(names) > 1 else f"{names[0]} ({len(allv):,} messages)")
    for q, ls in ((0.5, ":"), (0.99, "--")):
        ax.axhline(q, color="0.5", ls=ls, lw=0.8)
    if dropped:
        what = f"{kept:,} of {kept + dropped:,} completed messages (the rest past the per-flow sample cap)"
    else:
        what = f"every message: {kept:,} completed"
    ax.set_title(f"message completion time CDF over {what}")
    ax.set_xlabel(f"message FCT ({unit})")
    ax.set_ylabel("share of messages (dotted p50, dashed p99)")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.legend(loc="best", ncol=2 if len(ax.get_legend_handles_labels()[1]) > 8 else 1)
    fig.tight_layout()
    save(plt, fig, path)


def paused_spans(s):
    """(start, end) in seconds of each run of samples with the queue paused."""
    spans, start = [], None
    t = s["t"]
    for i, p in enumerate(s["paused"]):
        if p and start is None:
            start = t[i]
        if not p and start is not None:
            spans.append((start, t[i]))
            start = None
    if start is not None:
        spans.append((start, t[-1] if t[-1] > start else start + (t[1] - t[0] if len(t) > 1 else 0)))
    return spans


def top_queues(queues):
    keys = list(queues)
    return sorted(keys, key=lambda k: -max(queues[k]["depth"]))[:MAX_QUEUES]  # stable: ties in file order


def thresholds(fabric):
    th = {}
    for q in fabric.get("queues", []):
        if q.get("wred") and "kmin_bytes" in q:
            th[(q.get("node"), q.get("port"), q.get("queue"))] = (q["kmin_bytes"], q.get("kmax_bytes"))
    return th


def plot_queues(plt, path, queues, fabric, t_end):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    keys = top_queues(queues)
    th = thresholds(fabric)
    tdiv, tname = time_unit(t_end)
    vmax = max([max(queues[k]["depth"]) for k in keys] +
               [v for k in keys if k in th for v in th[k] if v is not None] + [1])
    div, unit = bytes_unit(vmax)
    fig, ax = plt.subplots(figsize=(10, 4.6))
    any_th = any_paused = False
    for i, k in enumerate(keys):
        s, c = queues[k], colour(plt, i, len(keys))
        ax.plot([x * tdiv for x in s["t"]], [v / div for v in s["depth"]], color=c, lw=1.0,
                label=f"{k[0]}:{k[1]} q{k[2]}")
        if k in th:
            kmin, kmax = th[k]
            ax.axhline(kmin / div, color=c, ls=":", lw=1.0)
            if kmax is not None:
                ax.axhline(kmax / div, color=c, ls="--", lw=1.0)
            any_th = True
        for a, b in paused_spans(s):
            ax.axvspan(a * tdiv, b * tdiv, color=c, alpha=0.15, lw=0)
            any_paused = True
    handles, labels = ax.get_legend_handles_labels()
    if any_th:
        handles += [Line2D([], [], color="0.3", ls=":"), Line2D([], [], color="0.3", ls="--")]
        labels += ["ECN Kmin", "ECN Kmax"]
    if any_paused:
        handles.append(Patch(color="0.3", alpha=0.15))
        labels.append("paused (PFC)")
    ax.legend(handles, labels, loc="best", ncol=2 if len(labels) > 8 else 1)
    more = len(queues) - len(keys)
    ax.set_title("egress queue depth" + (f" (the {len(keys)} deepest of {len(queues)} queues)" if more > 0 else ""))
    ax.set_ylabel(f"depth ({unit})")
    ax.set_xlabel(f"fabric time ({tname})")
    ax.set_xlim(0, t_end * tdiv)
    ax.set_ylim(bottom=0)
    fig.tight_layout()
    save(plt, fig, path)


def pfc_ports(pfc):
    """Ports that sent or received any PFC frame, with per-interval counts."""
    out = {}
    for k, s in pfc.items():
        if (s["rx"] and s["rx"][-1] > 0) or (s["tx"] and s["tx"][-1] > 0):
            d = {"t": s["t"]}
            for col in ("rx", "tx"):
                v = s[col]
                d[col] = [v[0]] + [v[i] - v[i - 1] for i in range(1, len(v))]
                d[col + "_total"] = v[-1]
            out[k] = d
    return out


def plot_pfc(plt, path, ports, t_end, interval_s):
    from matplotlib.ticker import MaxNLocator
    tdiv, tname = time_unit(t_end)
    keys = list(ports)
    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for ax, col, what in ((axes[0], "rx", "received"), (axes[1], "tx", "sent")):
        have = [k for k in keys if ports[k][col + "_total"] > 0]
        top = set(sorted(have, key=lambda k: -ports[k][col + "_total"])[:MAX_PFC_PORTS])
        top = [k for k in keys if k in top]   # back in file order
        for i, k in enumerate(top):
            s, c = ports[k], colour(plt, i, len(top))
            ax.step([x * tdiv for x in s["t"]], s[col], where="pre", color=c, lw=1.0,
                    label=f"{k[0]}:{k[1]} ({s[col + '_total']})")
        title = f"PFC/PAUSE frames {what} per port"
        if len(have) > len(top):
            title += f" (the {len(top)} busiest of {len(have)} ports)"
        if not have:
            title += ": none"
        ax.set_title(title)
        per = f" per {fmt_dur(interval_s * 1e9)}" if interval_s > 0 else " per sample"
        ax.set_ylabel("frames" + per)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if top:
            ax.legend(loc="best", ncol=2 if len(top) > 6 else 1)
    axes[1].set_xlabel(f"fabric time ({tname})")
    axes[1].set_xlim(0, t_end * tdiv)
    fig.tight_layout()
    save(plt, fig, path)


def sample_interval(series):
    for s in series.values():
        if len(s["t"]) > 1:
            return s["t"][1] - s["t"][0]
    return 0.0


# --- index.html -------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1100px;
color:#1d1d1f;padding:0 1em}
h1{margin:0 0 .2em;font-size:1.7em}h2{margin:1.4em 0 .4em;font-size:1.2em;border-bottom:1px solid #ddd}
.desc{color:#444;margin:.2em 0}.file{color:#777;font-size:.9em}
.banner{margin:1em 0;padding:.6em 1em;font-size:2em;font-weight:700;color:#fff;border-radius:6px}
.banner small{font-size:.5em;font-weight:400;margin-left:1em}
.pass{background:#1e8e3e}.fail{background:#c5221f}
table{border-collapse:collapse;font-size:.9em;margin:.3em 0}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fce8e6}span.ok{color:#1e8e3e;font-weight:700}span.ko{color:#c5221f;font-weight:700}
.figs{display:flex;flex-wrap:wrap;gap:.4em 2em}.figs div{min-width:9em}
.figs b{display:block;font-size:1.3em}.figs span{color:#666;font-size:.85em}
img{max-width:100%;border:1px solid #eee}.note{color:#666;font-style:italic}code{font-size:.95em}
"""


def table(headers, rows, numeric=(), row_class=None):
    """rows: lists of already-escaped cell HTML."""
    out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>"]
    for i, r in enumerate(rows):
        cls = row_class(i) if row_class else ""
        out.append(f"<tr{' class=' + chr(34) + cls + chr(34) if cls else ''}>" + "".join(
            f"<td class=\"n\">{c}</td>" if j in numeric else f"<td>{c}</td>" for j, c in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def figure(label, value, note=""):
    return f"<div><span>{esc(label)}</span><b>{esc(value)}</b>{'<span>' + esc(note) + '</span>' if note else ''}</div>"


def html_page(summary, fabric, flows, queues, pfc_by_port, plots):
    name = summary.get("scenario") or summary.get("file") or "rocelab-fabric run"
    exps = summary.get("expectations", [])
    passed = bool(summary.get("passed"))
    n_ok = sum(1 for e in exps if e.get("passed"))
    tot = summary.get("totals", {})
    h = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
         f"<title>{esc(name)}: {'PASSED' if passed else 'FAILED'}</title>",
         f"<style>{CSS}</style></head><body>",
         f"<h1>{esc(name)}</h1>"]
    if summary.get("description"):
        h.append(f"<p class=\"desc\">{esc(summary['description'])}</p>")
    h.append(f"<p class=\"file\">{esc(summary.get('file', ''))} &middot; "
             f"{esc(fmt_dur(summary.get('fabric_time_ns', 0)))} of fabric time</p>")
    if exps:
        sub = f"{n_ok} of {len(exps)} expectations passed"
    else:
        sub = "no expectations in the scenario"
    h.append(f"<div class=\"banner {'pass' if passed else 'fail'}\">{'PASSED' if passed else 'FAILED'}"
             f"<small>{esc(sub)}</small></div>")

    h.append("<h2>Expectations</h2>")
    if exps:
        rows = [[f"<span class=\"{'ok' if e.get('passed') else 'ko'}\">{'PASS' if e.get('passed') else 'FAIL'}</span>",
                 f"<code>{esc(e.get('expect', ''))}</code>", esc(e.get("detail", ""))] for e in exps]
        h.append(table(["result", "expectation", "measured"], rows,
                       row_class=lambda i: "" if exps[i].get("passed") else "bad"))
    else:
        h.append("<p class=\"note\">The scenario states no expectation (an <code>expect:</code> list).</p>")

    h.append("<h2>Key figures</h2><div class=\"figs\">")
    pfc_tx = sum(p["tx_total"] for p in pfc_by_port.values())
    pfc_rx = sum(p["rx_total"] for p in pfc_by_port.values())
    sflows = summary.get("flows", [])
    h += [figure("fabric time", fmt_dur(summary.get("fabric_time_ns", 0))),
          figure("packet-hops", fmt_int(tot.get("packet_hops", fabric.get("packet_hops", 0)))),
          figure("drops (switches)", fmt_int(tot.get("drops", 0))),
          figure("lossless drops", fmt_int(tot.get("lossless_drops", 0))),
          figure("link drops", fmt_int(tot.get("link_drops", 0))),
          figure("ECN marks", fmt_int(tot.get("ecn_marked", 0))),
          figure("PFC frames sent", fmt_int(pfc_tx), f"{fmt_int(pfc_rx)} received"),
          figure("flows", fmt_int(len(sflows)),
                 f"{fmt_int(sum(f.get('messages', 0) for f in sflows))} messages")]
    if sflows:
        h.append(figure("goodput, all flows", fmt_rate(sum(f.get("goodput", 0) for f in sflows)), "over the run"))
    h.append("</div>")

    colls = summary.get("collectives", [])
    if colls:
        # nccl-tests' figures: size S, time, algbw = S / t, busbw = algbw x bus factor.
        h.append("<h2>Collectives</h2>")
        rows = [[esc(c.get("kind", "")), fmt_int(c.get("ranks", 0)), esc(fmt_bytes(c.get("size_bytes", 0))),
                 fmt_int(c.get("completed", 0)), fmt_int(c.get("steps_completed", 0)),
                 esc(fmt_ns(c.get("time_mean_ns", 0))) if c.get("completed") else "&ndash;",
                 esc(fmt_ns(c.get("time_min_ns", 0))) if c.get("completed") else "&ndash;",
                 esc(fmt_ns(c.get("time_max_ns", 0))) if c.get("completed") else "&ndash;",
                 esc(fmt_rate(c.get("algbw_gbps", 0) * 1e9)), esc(fmt_rate(c.get("busbw_gbps", 0) * 1e9))]
                for c in colls]
        h.append(table(["collective", "ranks", "size", "completed", "steps done", "time mean", "time min", "time max",
                        "algbw", "busbw"], rows, numeric=range(1, 10)))
        h.append("<p class=\"note\">As nccl-tests reports them: algbw = size / mean time; busbw = algbw &times; "
                 "2(n&minus;1)/n for all-reduce, (n&minus;1)/n for the others, comparable to the link rate.</p>")

    dls = summary.get("deadlocks", [])
    if dls:
        # PFC deadlocks the runner found (docs/scenarios.md, "PFC deadlock").
        h.append("<h2>PFC deadlocks</h2>")
        rows = [[esc(fmt_ns(d.get("detected_ns", 0))),
                 esc(fmt_ns(d["cleared_ns"])) if d.get("cleared_ns") is not None else "holds at the end",
                 esc(" \u2192 ".join(d.get("cycle", []) + d.get("cycle", [])[:1]))]
                for d in dls]
        h.append(table(["found", "cleared", "cycle of paused queues (node:port:queue)"], rows, numeric=range(0, 2)))
        h.append("<p class=\"note\">Every queue on a cycle is paused by the switch it sends to, which holds the "
                 "pause because its own queue on the cycle cannot send: nothing moves until frames are dropped "
                 "(the PFC watchdog) or a pause is lifted.</p>")

    h.append("<h2>Flows</h2>")
    if sflows:
        shown = sflows
        if len(sflows) > MAX_FLOW_ROWS:
            order = sorted(range(len(sflows)), key=lambda i: (sflows[i].get("goodput", 0), i))
            gps = [sflows[i].get("goodput", 0) for i in order]
            h.append(f"<p>{len(sflows)} flows: goodput min {esc(fmt_rate(gps[0]))}, median "
                     f"{esc(fmt_rate(gps[len(gps) // 2]))}, max {esc(fmt_rate(gps[-1]))}. "
                     f"The {MAX_FLOW_ROWS} slowest below; every flow is in summary.json.</p>")
            shown = [sflows[i] for i in order[:MAX_FLOW_ROWS]]
        rows = []
        for f in shown:
            done = f.get("messages", 0) > 0
            rows.append([esc(f.get("flow", "")), esc(fmt_rate(f.get("goodput", 0))),
                         esc(fmt_rate(f.get("goodput_fct", 0))) if done and "goodput_fct" in f else "&ndash;",
                         esc(fmt_ns(f.get("flow_fct", 0))) if done and "flow_fct" in f else "&ndash;",
                         fmt_int(f.get("messages", 0)),
                         esc(fmt_ns(f.get("fct_p50", 0))) if done else "&ndash;",
                         esc(fmt_ns(f.get("fct_p99", 0))) if done else "&ndash;",
                         esc(fmt_ns(f.get("fct_max", 0))) if done else "&ndash;",
                         fmt_int(f.get("cnp_rx", 0)), fmt_int(f.get("naks", 0)), fmt_int(f.get("retx", 0)),
                         fmt_int(f.get("timeouts", 0)), esc(fmt_rate(f.get("rate_min", 0))),
                         esc(fmt_rate(f.get("rate_mean", 0)))])
        h.append(table(["flow", "goodput over the run", "goodput over the flow's FCT", "flow FCT", "messages",
                        "message FCT p50", "message FCT p99", "message FCT max", "CNPs", "NAKs", "retx",
                        "timeouts", "rate min", "rate mean"], rows, numeric=range(1, 14)))
        h.append("<p class=\"note\">Goodput over the run: payload received over the run from the flow's start; "
                 "over the flow's FCT: the completed messages' bytes &times; 8 over the flow's completion time "
                 "(its first message's post to its last message's completion). Message FCT: post to completion "
                 "of each message.</p>")
    else:
        h.append("<p class=\"note\">No flow: the scenario has no traffic.</p>")

    links = fabric.get("links", [])
    h.append("<h2>Busiest links</h2>")
    if links:
        top = sorted(range(len(links)), key=lambda i: (-links[i].get("busy", 0), i))[:TOP_ROWS]
        rows = [[esc(links[i].get("from", "")), esc(fmt_rate(links[i].get("rate_bps", 0))),
                 fmt_share(links[i].get("busy", 0)), fmt_int(links[i].get("tx_frames", 0)),
                 fmt_int(links[i].get("lost", 0)), fmt_int(links[i].get("rx_ring_full", 0))] for i in top]
        h.append(table(["cable direction (from node:port)", "rate", "busy", "frames", "lost", "RX ring full"], rows,
                       numeric=range(1, 6)))
        if len(links) > len(top):
            h.append(f"<p class=\"note\">{len(top)} of {len(links)} cable directions; all in fabric.json.</p>")
    else:
        h.append("<p class=\"note\">No link in fabric.json.</p>")

    fq = fabric.get("queues", [])
    h.append("<h2>Egress queues</h2>")
    if fq:
        top = sorted(range(len(fq)), key=lambda i: (-fq[i].get("max_depth_bytes", 0), i))[:TOP_ROWS]
        rows = []
        for i in top:
            q = fq[i]
            k = (f"{esc(fmt_bytes(q['kmin_bytes']))} / {esc(fmt_bytes(q.get('kmax_bytes', 0)))}"
                 if q.get("wred") and "kmin_bytes" in q else "&ndash;")
            rows.append([esc(f"{q.get('node')}:{q.get('port')} q{q.get('queue')}"), fmt_int(q.get("enq_packets", 0)),
                         esc(fmt_bytes(q.get("max_depth_bytes", 0))), fmt_int(q.get("drop_packets", 0)),
                         fmt_int(q.get("ecn_marked", 0)), k])
        h.append(table(["queue", "packets", "max depth", "drops", "ECN marked", "Kmin / Kmax"], rows,
                       numeric=range(1, 6)))
        if len(fq) > len(top):
            h.append(f"<p class=\"note\">The {len(top)} deepest of {len(fq)} queues; all in fabric.json.</p>")
    else:
        h.append("<p class=\"note\">No switch egress queue carried traffic (a scenario without a switch has "
                 "none).</p>")

    pgs = fabric.get("priority_groups", [])
    h.append("<h2>Lossless priority groups (peaks)</h2>")
    if pgs:
        top = sorted(range(len(pgs)), key=lambda i: (-pgs[i].get("peak_use_bytes", 0), i))[:TOP_ROWS]
        rows = [[esc(f"{pgs[i].get('node')}:{pgs[i].get('port')} pg{pgs[i].get('pg')}"),
                 esc(fmt_bytes(pgs[i].get("peak_use_bytes", 0))), esc(fmt_bytes(pgs[i].get("peak_headroom_bytes", 0))),
                 fmt_int(pgs[i].get("xoff_transitions", 0)), fmt_int(pgs[i].get("drop_headroom_overflow", 0))]
                for i in top]
        h.append(table(["priority group", "peak use", "peak headroom", "XOFF transitions", "headroom overflow drops"],
                       rows, numeric=range(1, 5)))
        if len(pgs) > len(top):
            h.append(f"<p class=\"note\">The {len(top)} fullest of {len(pgs)} priority groups; all in "
                     f"fabric.json.</p>")
    else:
        h.append("<p class=\"note\">No lossless priority group held a byte.</p>")

    h.append("<h2>Plots</h2>")
    for fname, title, why in plots:
        h.append(f"<h3>{esc(title)}</h3>")
        if why is None:
            h.append(f"<p><img src=\"{esc(fname)}\" alt=\"{esc(title)}\"></p>")
        else:
            h.append(f"<p class=\"note\">{esc(why)}</p>")
    h.append("<p class=\"file\">Data: summary.json, fabric.json, flows.csv, queues.csv, pfc.csv in this folder "
             "(tools/fabric_report.py).</p>")
    h.append("</body></html>")
    return "\n".join(h) + "\n"


# --- main -------------------------------------------------------------------

def report(d):
    summary, fabric, flows, queues, pfc, fct = load(d)
    t_end = summary.get("fabric_time_ns", 0) / 1e9
    t_end = max([t_end] + [s["t"][-1] for s in list(flows.values()) + list(queues.values()) if s["t"]])
    if t_end <= 0:
        t_end = 1e-6
    pfc_by_port = pfc_ports(pfc)
    plots = []
    plt = None
    if fct is None:
        fct_why = "No fct.csv in this folder (written by rocelab-fabric since the FCT CDF was added): nothing to plot."
    else:
        fct_why = "No message completed (fct.csv is empty): nothing to plot."
    todo = (("throughput.png", "Goodput per flow", flows,
             "No flow in flows.csv: nothing to plot."),
            ("fct.png", "Message completion time (CDF)", {k: v for k, v in (fct or {}).items() if v}, fct_why),
            ("queues.png", "Egress queue depth", queues,
             "No switch egress queue in queues.csv (a scenario without a switch has none): nothing to plot."),
            ("pfc.png", "PFC frames per sample interval", pfc_by_port,
             "No port sent or received a PFC or PAUSE frame: nothing to plot."))
    for fname, title, data, why in todo:
        path = os.path.join(d, fname)
        if not data:
            if os.path.exists(path):
                os.remove(path)      # a stale plot of another run
            plots.append((fname, title, why))
            continue
        plt = plt or plt_module()
        if fname == "throughput.png":
            plot_throughput(plt, path, flows, summary, fabric, t_end)
        elif fname == "fct.png":
            plot_fct(plt, path, data, summary)
        elif fname == "queues.png":
            plot_queues(plt, path, queues, fabric, t_end)
        else:
            plot_pfc(plt, path, pfc_by_port, t_end, sample_interval(pfc))
        plots.append((fname, title, None))
    page = html_page(summary, fabric, flows, queues, pfc_by_port, plots)
    tmp = os.path.join(d, ".index.html.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(page)
    os.replace(tmp, os.path.join(d, "index.html"))


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        if len(argv) == 2:
            print(__doc__.strip())
            return 0
        print(f"usage: {PROG} DIR (a rocelab-fabric --out folder)", file=sys.stderr)
        return 2
    d = argv[1]
    try:
        report(d)
    except NotAReport as e:
        print(f"{PROG}: {d}: not a rocelab-fabric report folder ({e})", file=sys.stderr)
        return 2
    except Exception as e:  # one line, not a traceback
        print(f"{PROG}: {d}: {type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
