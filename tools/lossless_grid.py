#!/usr/bin/python3
"""lossless_grid.py - lossless property tests in virtual time (issue 19 item 2).

Runs rocelab-fabric over

* the incast grid: an N:1 incast on one leaf (every port 100Gbps, 5 m
  cables, senders at line rate into one receiver port), N in {2, 8, 16, 32,
  63}, RoCE MTU (pmtu) in {256, 1024, 4096}, buffer pool in {the 12MiB
  default, 32MB, 64MB} (the default buffer set otherwise: lossless PGs 3-4
  with `xoff: auto`, dynamic_th 0), PFC on (the default), DCQCN `off` and
  `nvidia_cx` (ECN: the default WRED AZURE_LOSSLESS on queues 3-4);
* seeded random leaf-spine fabrics (tools/random_fabric.py);

and checks on every run, from the run's own reports:

* no lossless drop: the runner's lossless_drops and link_drops, every switch
  drop counter (headroom overflow, tail, WRED, watchdog, handoff, flood,
  link down, ... : any drop fails, lossless or not, since every data frame is
  lossless here), every PG's drop_headroom_overflow, every queue's
  drop_packets / wred_dropped, every cable's lost / rx_ring_full, and the
  hosts: no NAK, retransmission, timeout, out-of-sequence packet, bad ICRC or
  host-side drop;
* every message complete: messages_completed == messages_posted == the
  scenario's messages for every flow, and all_finished;
* the buffer returns to 0: the pool's shared use, the PGs' use, every PG's
  use_end_bytes, every queue's depth at the end, and no mbuf left in use;
* grid runs only: XOFF was sent (the leaf's xoff_sent on the lossless
  priority, and every sender's ingress PG went into XOFF), since the message
  sizes are chosen so that the senders' data overfills the shared pool.

One line per run: N, MTU, pool, DCQCN, XOFF frames, PGs that went into XOFF,
peak shared pool use, drops, completion, wall time. Exit 1 on any failure
(a fabric refused at start-up is a failure), 0 when all passed.

  tools/lossless_grid.py                       # the full grid + 50 random seeds
  tools/lossless_grid.py --sample              # the CI sample (tests/dpdk/test_lossless_grid.py)
  tools/lossless_grid.py --grid-only --part 2/4 --lock /tmp/rocelab-cpu.lock
  tools/lossless_grid.py --random-only --seeds 100 --first-seed 1000
  tools/lossless_grid.py --only n=63,mtu=256,pool=12MiB,dcqcn=off --keep /tmp/g

Binaries from $ROCELAB_BUILD (default build/); --build overrides.
"""
import argparse
import fcntl
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import random_fabric  # noqa: E402

GRID_N = (2, 8, 16, 32, 63)
GRID_MTU = (256, 1024, 4096)
GRID_POOL = ("12MiB", "32MB", "64MB")   # 12MiB = the default buffers (no BUFFER_* table)
GRID_DCQCN = ("off", "nvidia_cx")
# The CI sample: the points the issue names (N=16 MTU 256 default pool; N=63)
# and one of each other pool and MTU, both DCQCN modes.
SAMPLE = (
    (16, 256, "12MiB", "off"),
    (63, 1024, "12MiB", "nvidia_cx"),
    (63, 256, "64MB", "off"),
    (8, 4096, "32MB", "nvidia_cx"),
    (2, 1024, "12MiB", "off"),
)
SAMPLE_SEEDS = 5
FULL_SEEDS = 50

PORT_RATE = 100e9
HOST_CABLE_DELAY = "25ns"                # 5 m at 1.98e8 m/s, SONiC's server cable
LOSSLESS_PRIO = 3                        # the generator's RoCE traffic: DSCP 26 -> TC 3 -> PG 3

SIZES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 10**3, "MB": 10**6, "GB": 10**9}


def size_bytes(text):
    for u in sorted(SIZES, key=len, reverse=True):
        if text.endswith(u):
            return int(float(text[: -len(u)]) * SIZES[u])
    return int(text)


# --- the incast grid ---------------------------------------------------------

def grid_points():
    return [(n, mtu, pool, dc) for n in GRID_N for mtu in GRID_MTU for pool in GRID_POOL for dc in GRID_DCQCN]


def point_name(p):
    n, mtu, pool, dc = p
    return f"incast-{n}to1-mtu{mtu}-pool{pool}-{dc}"


def incast_traffic(n, pool):
    """Message size and count per sender so that the senders overfill the pool.

    Every lossless PG has reserved + headroom = 91136 B per PG at 100Gbps/5m
    (docs/config.md), two per port; the rest of the pool is shared. With
    dynamic_th 0 (alpha 1) N equally filled PGs reach XOFF at S/(N+1) each,
    N x S/(N+1) in all, while the receiver port drains one sender's worth:
    each sender must send more than S x N / ((N+1)(N-1)) before the first
    XOFF. Twice that, in 1 MiB messages, at least 2 per sender.
    """
    ports = n + 1
    shared = size_bytes(pool) - ports * 2 * 91136
    need = shared * n / ((n + 1) * (n - 1))
    msg = 1 << 20
    messages = max(2, math.ceil(2 * need / msg))
    return msg, messages


def incast_scenario(p):
    n, mtu, pool, dc = p
    msg, messages = incast_traffic(n, pool)
    # Fabric time: all data (with headers) through the receiver port at line
    # rate, x 1.5 for ACK/PFC gaps, + 2 ms. The run stops at `duration`; idle
    # virtual time costs nothing.
    frames = math.ceil(msg / mtu)
    wire = n * messages * (msg + frames * 90)
    duration_us = math.ceil(wire * 8 / PORT_RATE * 1e6 * 1.5) + 2000
    ports = "".join(f"        Ethernet{i}: {{speed: 100Gbps}}\n" for i in range(n + 1))
    buffers = ""
    if pool != "12MiB":
        buffers = (
            "      BUFFER_POOL:\n"
            f"        ingress_lossless_pool: {{size: {pool}, type: ingress, mode: dynamic, cell: 96}}\n"
            "      BUFFER_PROFILE:\n"
            "        pg_lossless_auto_profile: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto}\n"
            "        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}\n"
            "      BUFFER_PG:\n"
            '        "global|3-4": {profile: pg_lossless_auto_profile}\n'
            '        "global|0": {profile: ingress_lossy_profile}\n'
        )
    text = (
        f"# {point_name(p)} - written by tools/lossless_grid.py (lossless property grid)\n"
        f"# {n}:1 incast, every sender at 100Gbps line rate into one receiver port;\n"
        f"# pool {pool} ({'the built-in default buffers' if pool == '12MiB' else 'default profiles, pool resized'}),"
        f" PFC on priorities 3-4 (default), DCQCN {dc}.\n"
        f"# {messages} x {msg} B messages per sender, all posted at once, window the whole PSN space\n"
        f"# (a NIC's RC QP sends until paused): twice what fills the shared pool to XOFF.\n"
        f"name: {point_name(p)}\n"
        f"duration: {duration_us}us\n"
        f"sample_interval: {max(1, duration_us // 50)}us\n"
        f"link: {{rate: 100Gbps, delay: {HOST_CABLE_DELAY}}}\n"
        "switches:\n"
        "  - name: leaf0\n"
        "    config:\n"
        "      PORT:\n" + ports + buffers +
        f"hosts: h0..h{n}\n"
        "links:\n"
        f"  - {{a: h0..h{n}, b: leaf0:Ethernet0..Ethernet{n}}}\n"
        "traffic:\n"
        "  seed: 7\n"
        "  pattern: incast\n"
        f"  senders: {n}\n"
        f"  msg_size: {msg}B\n"
        f"  messages: {messages}\n"
        f"  outstanding: {min(messages, 512)}\n"
        "  window: 8388607\n"
        f"  pmtu: {mtu}\n"
        f"  dcqcn: {dc}\n"
        "expect:\n"
        "  - lossless_drops == 0\n"
        "  - drops == 0\n"
        "  - link_drops == 0\n"
    )
    meta = {"kind": "grid", "n": n, "mtu": mtu, "pool": pool, "dcqcn": dc, "messages": messages,
            "msg_size": msg, "receiver_port": f"Ethernet{n}",
            "sender_ports": [f"Ethernet{i}" for i in range(n)]}
    return text, meta


# --- running and checking ----------------------------------------------------

class Lock:
    """Holds an flock on PATH for one run (the shared CPU lock), or nothing."""

    def __init__(self, path):
        self.path = path
        self.f = None

    def __enter__(self):
        if self.path:
            self.f = open(self.path, "a")
            fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.f:
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()


def run_fabric(fabric, scenario, out, lock, timeout):
    with Lock(lock):
        t0 = time.monotonic()
        proc = subprocess.Popen([fabric, "run", scenario, "--out", out],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            text, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            text, _ = proc.communicate()
            text += f"\n(timeout after {timeout} s: killed)"
            return 124, text, time.monotonic() - t0
        return proc.returncode, text, time.monotonic() - t0


def load(out, name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


# Switch drop counters (leaf.json ports[].drops). Every one fails a run: the
# scenarios carry only lossless data (TC 3) besides ACKs and CNPs, and a lost
# ACK or CNP is a fault as well. The lossless ones are summed as "lossless".
LOSSLESS_SWITCH_DROPS = ("drop_headroom_overflow", "drop_tail", "drop_wred", "drop_pfcwd",
                         "drop_handoff_full", "drop_flood_nombuf", "drop_link_down")
HOST_FLOW_FAULTS = ("naks_rx", "naks_tx", "retransmissions", "timeouts", "retry_exceeded",
                    "out_of_sequence", "duplicates", "invalid_requests")
HOST_PORT_DROPS = ("rx_bad_icrc", "rx_unknown_qpn", "drop_cnp_full", "rx_malformed", "loss_data",
                   "loss_ack", "drop_delay_full", "drop_reply_full", "tx_alloc_fail")


def check(out, meta):
    """Returns (figures, failures) from a run's reports."""
    fails = []
    fab = load(out, "fabric.json")
    summ = load(out, "summary.json")
    hosts = load(out, "hosts.json")
    speed = load(out, "speed.json")
    fig = {"wall_s": speed.get("wall_s", 0.0), "fabric_ms": fab["fabric_time_ns"] / 1e6,
           "packet_hops": fab["packet_hops"]}

    tot = summ["totals"]
    for k in ("lossless_drops", "link_drops", "drops"):
        if tot[k] != 0:
            fails.append(f"summary {k} {tot[k]}")

    lossless = 0
    other = 0
    xoff_sent = 0
    peak_shared = 0
    pool_size = 0
    shared_size = 0
    wred_kept = 0
    switches = [n for n in fab["nodes"] if n["kind"] == "switch"]
    for node in switches:
        name = node["name"]
        bp = node.get("buffer_pool")
        if not bp:
            fails.append(f"{name}: no buffer_pool in fabric.json (accounting off)")
            continue
        if bp["peak_shared_used_bytes"] >= peak_shared:   # the fullest switch's figures
            peak_shared = bp["peak_shared_used_bytes"]
            pool_size = bp["size_bytes"]
            shared_size = bp["shared_bytes"]
        if bp["shared_used_end_bytes"] != 0 or bp["pg_use_end_bytes"] != 0:
            fails.append(f"{name}: pool not back to 0 (shared {bp['shared_used_end_bytes']} B, "
                         f"PGs {bp['pg_use_end_bytes']} B)")
        if node["drops"] != 0:
            fails.append(f"{name}: {node['drops']} drops")
        rep = load(out, f"{name}.json")
        if rep.get("mbufs_in_use_at_exit", 0) != 0:
            fails.append(f"{name}: {rep['mbufs_in_use_at_exit']} mbufs in use at exit")
        for port in rep["ports"]:
            pname = port["name"]
            for k, v in port["drops"].items():
                if v == 0:
                    continue
                if k in LOSSLESS_SWITCH_DROPS:
                    lossless += v
                else:
                    other += v
                fails.append(f"{name}:{pname} {k} {v}")
            for k in ("imissed", "ierrors", "oerrors", "rx_nombuf"):
                if port["ethdev"].get(k, 0):
                    lossless += port["ethdev"][k]
                    fails.append(f"{name}:{pname} ethdev {k} {port['ethdev'][k]}")
            for pg in port["priority_groups"]:
                if pg["drop_headroom_overflow"] or pg["drop_lossy"]:
                    fails.append(f"{name}:{pname}:PG{pg['pg']} drop_headroom_overflow "
                                 f"{pg['drop_headroom_overflow']} drop_lossy {pg['drop_lossy']}")
                if pg["lossless"] and pg["peak_headroom"] > pg["xoff"]:
                    fails.append(f"{name}:{pname}:PG{pg['pg']} headroom peak {pg['peak_headroom']} "
                                 f"> xoff {pg['xoff']}")
            for q in port["queues"]:
                if q["drop_packets"] or q["wred_dropped"]:
                    if q["queue"] in (3, 4):
                        lossless += q["drop_packets"]
                    fails.append(f"{name}:{pname}:Q{q['queue']} drop_packets {q['drop_packets']} "
                                 f"wred_dropped {q['wred_dropped']}")
                if q["depth_bytes"] != 0:
                    fails.append(f"{name}:{pname}:Q{q['queue']} depth {q['depth_bytes']} B at the end")
            xoff_sent += sum(port["pfc"]["xoff_sent"])
            wred_kept += port.get("wred_lossless_kept", 0)
    for pg in fab["priority_groups"]:
        if pg["use_end_bytes"] != 0:
            fails.append(f"{pg['node']}:{pg['port']}:PG{pg['pg']} use at the end {pg['use_end_bytes']} B")
        if pg["drop_headroom_overflow"]:
            fails.append(f"{pg['node']}:{pg['port']}:PG{pg['pg']} drop_headroom_overflow "
                         f"{pg['drop_headroom_overflow']}")
    for q in fab["queues"]:
        if q["drop_packets"] or q["wred_dropped"]:
            fails.append(f"{q['node']}:{q['port']}:Q{q['queue']} drop_packets {q['drop_packets']} "
                         f"wred_dropped {q['wred_dropped']}")
    for ln in fab["links"]:
        if ln["lost"] or ln["rx_ring_full"]:
            lossless += ln["rx_ring_full"]
            fails.append(f"cable from {ln['from']}: lost {ln['lost']} rx_ring_full {ln['rx_ring_full']}")

    # Completion: every flow, every message.
    posted = completed = 0
    incomplete = []
    for f in hosts["flows"]:
        posted += f["messages_posted"]
        completed += f["messages_completed"]
        want = meta["messages_of"](f["name"]) if "messages_of" in meta else meta["messages"]
        if not (f["messages_completed"] == f["messages_posted"] == want):
            incomplete.append(f"{f['name']} {f['messages_completed']}/{f['messages_posted']} of {want}")
        for k in HOST_FLOW_FAULTS:
            if f.get(k, 0):
                fails.append(f"flow {f['name']}: {k} {f[k]}")
    if incomplete:
        fails.append("incomplete: " + ", ".join(incomplete[:6]) + (" ..." if len(incomplete) > 6 else ""))
    if len(hosts["flows"]) != meta["flows"]:
        fails.append(f"{len(hosts['flows'])} flows in hosts.json, the scenario has {meta['flows']}")
    if not hosts.get("all_finished"):
        fails.append("hosts.json: all_finished false")
    if hosts.get("mbufs_in_use_at_exit", 0) != 0:
        fails.append(f"hosts: {hosts['mbufs_in_use_at_exit']} mbufs in use at exit")
    for port in hosts["ports"]:
        for k in HOST_PORT_DROPS:
            if port.get(k, 0):
                fails.append(f"hosts:{port['name']} {k} {port[k]}")

    fig.update({"lossless_drops": lossless + tot["lossless_drops"], "other_drops": other,
                "xoff_sent": xoff_sent, "peak_shared": peak_shared, "pool_size": pool_size,
                "shared_size": shared_size,
                "messages": f"{completed}/{posted}", "wred_lossless_kept": wred_kept,
                "ecn_marked": tot["ecn_marked"], "cnp_rx": hosts["totals"]["cnp_rx"]})

    if meta["kind"] == "grid":
        # XOFF on the receiver's PGs: the leaf's ingress PGs of the senders.
        rep = load(out, "leaf0.json")
        by_name = {p["name"]: p for p in rep["ports"]}
        pgs_xoff = 0
        for pn in meta["sender_ports"]:
            port = by_name[pn]
            pg3 = [g for g in port["priority_groups"] if g["pg"] == LOSSLESS_PRIO][0]
            if pg3["xoff_transitions"] > 0 and port["pfc"]["xoff_sent"][LOSSLESS_PRIO] > 0:
                pgs_xoff += 1
        fig["pgs_xoff"] = pgs_xoff
        # With dynamic_th 0 the N senders' PGs stop at S/(N+1) each: the
        # shared pool fills to N/(N+1) of its size (less a frame or two).
        n = len(meta["sender_ports"])
        if peak_shared < 0.9 * shared_size * n / (n + 1):
            fails.append(f"peak shared use {peak_shared} B < 0.9 x {n}/{n + 1} of the shared {shared_size} B")
        if xoff_sent == 0:
            fails.append("no XOFF sent: the run never filled the pool to XOFF")
        elif pgs_xoff != len(meta["sender_ports"]):
            fails.append(f"only {pgs_xoff} of {len(meta['sender_ports'])} sender PGs went into XOFF")
    return fig, fails


def fmt_mb(b):
    return f"{b / 1e6:.2f}MB"


def line(label, fig, ok, wall):
    x = f"xoff {fig.get('xoff_sent', '-'):>6}"
    if "pgs_xoff" in fig:
        x += f" ({fig['pgs_xoff']} PGs)"
    return (f"{'PASS' if ok else 'FAIL'}  {label:<42} {x:<20} peak shared pool {fmt_mb(fig.get('peak_shared', 0)):>8}"
            f" of {fmt_mb(fig.get('shared_size', 0)):>7} (pool {fmt_mb(fig.get('pool_size', 0))})"
            f"  lossless drops {fig.get('lossless_drops', '-')}"
            f" other {fig.get('other_drops', '-')}  messages {fig.get('messages', '-'):>11}"
            f"  cnp {fig.get('cnp_rx', '-')}"
            f"  fabric {fig.get('fabric_ms', 0):.1f}ms  wall {wall:.2f}s")


def run_one(label, text, meta, args, workdir):
    scen = os.path.join(workdir, label + ".yaml")
    out = os.path.join(workdir, label)
    with open(scen, "w") as f:
        f.write(text)
    rc, log, wall = run_fabric(args.fabric, scen, out, args.lock, args.timeout)
    if rc not in (0, 3) or not os.path.exists(os.path.join(out, "fabric.json")):
        # Refused at start-up or crashed: a failure, never a pass.
        fig = {}
        fails = [f"rocelab-fabric exit {rc}: " + " | ".join(log.strip().splitlines()[-3:])]
    else:
        try:
            fig, fails = check(out, meta)
        except (KeyError, IndexError, ValueError, OSError) as e:
            fig, fails = {}, [f"report unreadable: {e!r}"]
        if rc == 3:
            fails.append("an expectation of the scenario failed (see summary.json)")
    ok = not fails
    print(line(label, fig, ok, wall), flush=True)
    for f in fails:
        print(f"      {f}", flush=True)
    if not ok:
        print(f"      reproduce: {args.fabric} run {scen} --out OUT", flush=True)
    return {"label": label, "ok": ok, "fig": fig, "fails": fails, "wall": wall, "scenario": scen}


def parse_only(spec):
    want = dict(kv.split("=", 1) for kv in spec.split(","))
    return [p for p in grid_points()
            if all(str(v) == want.get(k, str(v)) for k, v in zip(("n", "mtu", "pool", "dcqcn"), p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", action="store_true", help="the CI sample: 5 grid points and 5 seeds")
    ap.add_argument("--seeds", type=int, default=None, help="random fabrics (default 50; 5 with --sample)")
    ap.add_argument("--first-seed", type=int, default=1, help="first random seed (default 1)")
    ap.add_argument("--grid-only", action="store_true")
    ap.add_argument("--random-only", action="store_true")
    ap.add_argument("--only", default="", help="grid points matching n=..,mtu=..,pool=..,dcqcn=..")
    ap.add_argument("--part", default="", help="I/K: run the I-th of K equal chunks of the runs")
    ap.add_argument("--lock", default="", help="flock this file around each run (e.g. /tmp/rocelab-cpu.lock)")
    ap.add_argument("--keep", default="", help="keep scenarios and reports in this directory")
    ap.add_argument("--json", default="", help="write every run's figures and failures here")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    ap.add_argument("--build", default=os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build")))
    args = ap.parse_args()
    args.fabric = os.path.join(args.build, "app", "rocelab-fabric")
    if not os.access(args.fabric, os.X_OK):
        print(f"lossless_grid: no rocelab-fabric at {args.fabric} (set ROCELAB_BUILD or --build)", file=sys.stderr)
        return 2

    runs = []
    if not args.random_only:
        pts = list(SAMPLE) if args.sample else grid_points()
        if args.only:
            pts = parse_only(args.only)
            if not pts:
                print(f"lossless_grid: --only {args.only} matches no grid point", file=sys.stderr)
                return 2
        runs += [("grid", p) for p in pts]
    if not args.grid_only and not args.only:
        n = args.seeds if args.seeds is not None else (SAMPLE_SEEDS if args.sample else FULL_SEEDS)
        runs += [("random", s) for s in range(args.first_seed, args.first_seed + n)]
    if args.part:
        i, k = (int(x) for x in args.part.split("/"))
        if not 1 <= i <= k:
            print("lossless_grid: --part I/K with 1 <= I <= K", file=sys.stderr)
            return 2
        runs = runs[(i - 1) * len(runs) // k: i * len(runs) // k]

    workdir = args.keep or tempfile.mkdtemp(prefix="lossless-grid-")
    os.makedirs(workdir, exist_ok=True)
    results = []
    t0 = time.monotonic()
    try:
        for kind, what in runs:
            if kind == "grid":
                text, meta = incast_scenario(what)
                meta["flows"] = what[0]
                results.append(run_one(point_name(what), text, meta, args, workdir))
            else:
                fab = random_fabric.generate(what)
                meta = {"kind": "random", "flows": len(fab.flows),
                        "messages_of": lambda name, fab=fab: fab.flows[name]["messages"]}
                label = f"random-seed{what} ({fab.summary()})"
                results.append(run_one(f"random-seed{what}", fab.yaml(), meta, args, workdir))
                print(f"      {label}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    total = time.monotonic() - t0
    bad = [r for r in results if not r["ok"]]
    peaks = [r["fig"]["peak_shared"] for r in results if "peak_shared" in r["fig"]]
    print(f"lossless_grid: {len(results) - len(bad)} of {len(results)} runs passed in {total:.1f} s"
          + (f"; peak pool use {fmt_mb(min(peaks))}..{fmt_mb(max(peaks))}" if peaks else ""))
    for r in bad:
        print(f"  FAILED {r['label']}: {r['fails'][0]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: v for k, v in r.items()} for r in results], f, indent=1)
    return 1 if bad or not results else 0


if __name__ == "__main__":
    sys.exit(main())
