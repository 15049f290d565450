#!/usr/bin/python3
"""plot_loop.py --off DIR --on DIR - the congestion-control loop, side by
side: the same incast with DCQCN off (PFC alone) and on (ECN + DCQCN), from
two rocelab-fabric output folders, or two real-time runs.

  tools/plot_loop.py --off out-pfc --on out-dcqcn --port leaf0:Ethernet8 --queue 3 --out loop.png

A real-time run's folder holds rocelab-switch's --queue-csv as queues.csv
(with its pfc_tx column) and --report as switch.json, and rocelab-gen's
--timeseries as flows.csv; --port then names the switch port only
(Ethernet0). The two processes' clocks start apart (the switch waits for
the generator): the switch's series are shifted so that its first
non-empty queue sample meets the generator's first sample with traffic
(good to one sample interval).

Three rows, one column per run: PFC frames the switch sent per bin; the
congested egress queue with Kmin and Kmax (the ON run's WRED profile, from
fabric.json) and the depth at which the PFC-only run sent its first XOFF;
each flow's goodput with the fair share. Prints the figures that say
whether the loop works (and writes them with --json): PFC frames in the
first millisecond and after, the queue after the first 2 ms (mean, p99,
share of samples between Kmin and Kmax), and the senders' goodput over the
second half (min, max, Jain's fairness index)."""
import argparse
import csv
import json
import os
import sys
from collections import defaultdict


def realtime(d):
    """A real-time run's folder (rocelab-switch + rocelab-gen), not rocelab-fabric's."""
    return not os.path.exists(os.path.join(d, "fabric.json"))


def wred_of(d, node, port, q):
    """(Kmin, Kmax) of the queue, from fabric.json or the switch report."""
    if realtime(d):
        with open(os.path.join(d, "switch.json")) as f:
            rep = json.load(f)
        p = next((x for x in rep["ports"] if x["name"] == port), None)
        qq = next((x for x in p["queues"] if x["queue"] == q), None) if p else None
        return (qq.get("wred_kmin_bytes", 0), qq.get("wred_kmax_bytes", 0)) if qq else None
    with open(os.path.join(d, "fabric.json")) as f:
        fab = json.load(f)
    x = next((x for x in fab["queues"] if x["node"] == node and x["port"] == port and x["queue"] == q), None)
    return (x.get("kmin_bytes", 0), x.get("kmax_bytes", 0)) if x else None


def rt_offset(d):
    """Real time: seconds to subtract from the switch's times to put them on the generator's clock."""
    if not realtime(d):
        return 0.0
    with open(os.path.join(d, "queues.csv")) as f:
        t_sw = min((float(r["time_s"]) for r in csv.DictReader(f) if int(r["depth_bytes"]) > 0), default=None)
    with open(os.path.join(d, "flows.csv")) as f:
        t_gen = min((float(r["time_s"]) for r in csv.DictReader(f) if int(r["tx_bytes"]) > 0), default=None)
    return t_sw - t_gen if t_sw is not None and t_gen is not None else 0.0


def pfc_sent(d, node):
    """[(t, PFC frames the switch sent since the previous sample)] from the cumulative counters."""
    by = defaultdict(int)
    if realtime(d):
        seen = set()
        with open(os.path.join(d, "queues.csv")) as f:
            for r in csv.DictReader(f):
                k = (r["time_s"], r["port"])
                if k not in seen:  # one row per queue; the port's counter is on each
                    seen.add(k)
                    by[float(r["time_s"])] += int(r["pfc_tx"])
    else:
        with open(os.path.join(d, "pfc.csv")) as f:
            for r in csv.DictReader(f):
                if r["node"] == node:
                    by[float(r["time_s"])] += int(r["pfc_tx"])
    out, prev = [], 0
    off = rt_offset(d)
    for t in sorted(by):
        out.append((t - off, by[t] - prev))
        prev = by[t]
    return out


def queue_depth(d, node, port, q):
    out = []
    off = rt_offset(d)
    with open(os.path.join(d, "queues.csv")) as f:
        for r in csv.DictReader(f):
            if r.get("node", node) == node and r["port"] == port and int(r["queue"]) == q:
                out.append((float(r["time_s"]) - off, int(r["depth_bytes"])))
    return out


def goodput(d):
    out = defaultdict(list)
    with open(os.path.join(d, "flows.csv")) as f:
        for r in csv.DictReader(f):
            out[r["flow"]].append((float(r["time_s"]), float(r["goodput_bps"])))
    return out


def binned(series, width):
    """Sums of (t, v) over bins of `width` seconds: [(bin start, sum)]."""
    acc = defaultdict(float)
    for t, v in series:
        acc[int(t / width)] += v
    return [(k * width, acc[k]) for k in sorted(acc)]


def rate(bps):
    return f"{bps / 1e9:.1f} Gbps" if bps >= 1e9 else f"{bps / 1e6:.0f} Mbps"


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else 0.0


def figures(d, node, port, q, kmin, kmax, settle, first):
    pfc = pfc_sent(d, node)
    depth = queue_depth(d, node, port, q)
    gp = goodput(d)
    end = max((t for series in gp.values() for t, _ in series), default=0.0)
    t0 = min((t for t, _ in depth), default=0.0)
    settled = sorted(v for t, v in depth if t >= t0 + settle)
    half = {n: [v for t, v in s if t > end / 2] for n, s in gp.items()}
    rates = [sum(v) / len(v) for v in half.values() if v]
    inside = [v for v in settled if kmin <= v <= kmax] if kmax else []
    return {
        "pfc_frames": sum(v for _, v in pfc),
        "pfc_frames_first": sum(v for t, v in pfc if t <= t0 + first),
        "pfc_frames_after_first": sum(v for t, v in pfc if t > t0 + first),
        "queue_mean_bytes": sum(settled) / len(settled) if settled else 0,
        "queue_p99_bytes": settled[min(len(settled) - 1, int(0.99 * len(settled)))] if settled else 0,
        "queue_peak_bytes": max((v for _, v in depth), default=0),
        "queue_share_between_kmin_kmax": len(inside) / len(settled) if settled and kmax else None,
        "goodput_min_bps": min(rates) if rates else 0,
        "goodput_max_bps": max(rates) if rates else 0,
        "goodput_sum_bps": sum(rates),
        "jain_index": jain(rates),
    }


def first_xoff_depth(d, node, port, q):
    """The queue depth at the first sample where the switch had sent a PFC frame."""
    pfc = pfc_sent(d, node)
    t0 = next((t for t, v in pfc if v > 0), None)
    if t0 is None:
        return None
    depth = dict(queue_depth(d, node, port, q))
    return depth.get(t0)


def parse_time(s):
    for unit, f in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if s.endswith(unit):
            return float(s[:-len(unit)]) * f
    sys.exit(f"plot_loop: {s}: expected a time with units (100us, 2ms, 1s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--off", required=True, help="output folder of the run without DCQCN (PFC alone)")
    ap.add_argument("--on", required=True, help="output folder of the run with ECN + DCQCN")
    ap.add_argument("--port", default="leaf0:Ethernet8", help="NODE:PORT of the congested egress")
    ap.add_argument("--queue", type=int, default=3)
    ap.add_argument("--bin", default="100us", help="PFC bin width (100us, 10ms, ...)")
    ap.add_argument("--out", default="loop.png")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--first", default="1ms", help="PFC counted apart in this first part of the run")
    ap.add_argument("--settle", default="2ms", help="queue figures from this far into the run")
    a = ap.parse_args()
    node, port = a.port.split(":", 1) if ":" in a.port else ("", a.port)
    width = parse_time(a.bin)
    k = wred_of(a.on, node, port, a.queue)
    if k is None:
        sys.exit(f"plot_loop: {a.port} queue {a.queue} is not in {a.on}'s report")
    kmin, kmax = k
    xoff = first_xoff_depth(a.off, node, port, a.queue)
    first = parse_time(a.first)
    settle = parse_time(a.settle)
    figs = {"off": figures(a.off, node, port, a.queue, kmin, kmax, settle, first),
            "on": figures(a.on, node, port, a.queue, kmin, kmax, settle, first),
            "first_s": first, "settle_s": settle,
            "kmin_bytes": kmin, "kmax_bytes": kmax, "first_xoff_queue_bytes": xoff}
    for name, label in (("off", "DCQCN off (PFC alone)"), ("on", "ECN + DCQCN")):
        f = figs[name]
        share = f["queue_share_between_kmin_kmax"]
        print(f"{label:22} PFC frames sent {f['pfc_frames']:>6} ({f['pfc_frames_first']} in the first {a.first}, "
              f"{f['pfc_frames_after_first']} after) | queue after {a.settle}: mean {f['queue_mean_bytes'] / 1e3:.0f} KB, "
              f"p99 {f['queue_p99_bytes'] / 1e3:.0f} KB"
              + (f", {share * 100:.0f} % of samples within Kmin..Kmax" if share is not None else "")
              + f" | senders over the second half {rate(f['goodput_min_bps'])}..{rate(f['goodput_max_bps'])},"
              f" Jain {f['jain_index']:.3f}")
    print(f"  Kmin {kmin / 1e3:.0f} KB, Kmax {kmax / 1e3:.0f} KB; the PFC-only run's first XOFF with "
          + (f"{xoff / 1e3:.0f} KB queued" if xoff is not None else "no XOFF at all"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figs, f, indent=1)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rt = realtime(a.on)
    scale, xlabel = (1.0, "time (s)") if rt else (1e3, "fabric time (ms)")
    fig, axes = plt.subplots(3, 2, figsize=(13, 9), sharex=True, sharey="row")
    for col, (d, title) in enumerate(((a.off, "DCQCN off: PFC alone"), (a.on, "ECN + DCQCN"))):
        pfc = binned(pfc_sent(d, node), width)
        ax = axes[0][col]
        ax.bar([t * scale for t, _ in pfc], [v for _, v in pfc], width=width * scale, align="edge", color="tab:red")
        ax.set_title(f"{title}: {figs['off' if col == 0 else 'on']['pfc_frames']} PFC frames")
        ax.set_ylabel(f"PFC frames sent\nper {a.bin}")
        ax = axes[1][col]
        depth = queue_depth(d, node, port, a.queue)
        ax.plot([t * scale for t, _ in depth], [v / 1e6 for _, v in depth], lw=0.8, color="tab:blue")
        if kmin:
            ax.axhline(kmin / 1e6, color="tab:green", ls="--", lw=1, label=f"Kmin {kmin / 1e3:.0f} KB")
            ax.axhline(kmax / 1e6, color="tab:orange", ls="--", lw=1, label=f"Kmax {kmax / 1e3:.0f} KB")
        if xoff:
            ax.axhline(xoff / 1e6, color="tab:red", ls=":", lw=1.2, label=f"first XOFF (PFC only) {xoff / 1e6:.1f} MB")
        ax.set_ylabel(f"{a.port} q{a.queue}\ndepth (MB)")
        ax.legend(loc="upper right", fontsize=8)
        ax = axes[2][col]
        gp = goodput(d)
        for n, s in sorted(gp.items()):
            ax.plot([t * scale for t, _ in s], [v / 1e9 for _, v in s], lw=0.7, label=n)
        total = figs["off" if col == 0 else "on"]["goodput_sum_bps"]
        if gp:
            ax.axhline(total / len(gp) / 1e9, color="black", ls="--", lw=1, label="fair share")
        ax.set_ylabel("goodput (Gbps)")
        ax.set_xlabel(xlabel)
        if len(gp) <= 12:
            ax.legend(loc="upper right", fontsize=7, ncol=2)
    t_end = max((t for d in (a.off, a.on) for series in goodput(d).values() for t, _ in series), default=0.0)
    if t_end > 0:
        axes[2][0].set_xlim(-0.03 * t_end * scale, 1.05 * t_end * scale)
    fig.suptitle("The loop: the same incast with PFC alone and with ECN + DCQCN")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"plot: {a.out}")


if __name__ == "__main__":
    main()
