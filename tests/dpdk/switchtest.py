"""Shared helpers for tests that run the real rocelab-switch binary on
--no-huge virtual devices. Each run gets its own --file-prefix and is
stopped by its PID (duration, SIGTERM, or kill on timeout)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build"))
SWITCH = os.path.join(BUILD, "app", "rocelab-switch")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from scapy.all import Ether, rdpcap, wrpcap, PcapWriter  # noqa: E402
from stall_lines import check_stall_lines  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

_seq = [0]


# ROCELAB_TEST_WORKERS=N runs every switch of these tests with N worker
# lcores (at most one per port; meson runs the L2 and L3 classes again with
# 2 and 3). The main lcore (status, capture, telemetry) keeps CPU 0; the
# workers share CPU 1 and yield it when idle (--idle-yield).
TEST_WORKERS = int(os.environ.get("ROCELAB_TEST_WORKERS", "1"))


# ROCELAB_TEST_SPREAD_WORKERS=1 (tools/tsan.sh) puts the workers on
# alternate CPUs (1, 0, 1, ...) so that they really run at the same time.
SPREAD_WORKERS = os.environ.get("ROCELAB_TEST_SPREAD_WORKERS") == "1"


def worker_lcores(n):
    """EAL --lcores for a main lcore and n workers on this machine's 2 CPUs:
    every worker on CPU 1 (the main lcore, which mostly sleeps, on CPU 0), or
    spread over both CPUs with ROCELAB_TEST_SPREAD_WORKERS=1."""
    if n <= 1:
        return "0-1"
    return ",".join(["0@0"] + [f"{k}@{k % 2 if SPREAD_WORKERS else 1}" for k in range(1, n + 1)])


def eal_args(vdevs, lcores=None):
    _seq[0] += 1
    prefix = f"rlt{os.getpid()}_{_seq[0]}"
    if lcores is None:
        lcores = worker_lcores(min(TEST_WORKERS, max(1, len(vdevs))))
    opt = "--lcores" if "@" in lcores else "-l"
    args = ["--no-huge", "-m", "1024", "--no-pci", opt, lcores, "--file-prefix", prefix,
            "--log-level", "lib.eal:error"]
    for v in vdevs:
        args.append(f"--vdev={v}")
    return args, prefix


class Run:
    def __init__(self, rc, out, err, report, workers=1):
        self.rc, self.out, self.err, self.report = rc, out, err, report
        self.workers = workers  # worker lcores the run was given

    def port(self, name):
        return next(p for p in self.report["ports"] if p["name"] == name)


def colocated(nports, *groups):
    """--port-workers for a test whose expectation needs some ports on one
    worker (frames of those ports processed in the order one worker polls
    them), the rest spread over the others; [] with one test worker. Every
    group (a tuple of port indices) goes to one worker."""
    if TEST_WORKERS <= 1:
        return []
    owner = {p: g for g, ports in enumerate(groups) for p in ports}
    others = [p for p in range(nports) if p not in owner]
    spare = min(TEST_WORKERS, len(groups) + len(others)) - len(groups)  # workers left for the others
    for i, p in enumerate(others):
        owner[p] = len(groups) + i % spare if spare > 0 else i % len(groups)
    return ["--port-workers", ",".join(str(owner[p]) for p in range(nports))]


# A run that replays captures (net_pcap rx_pcap, not infinite_rx) stops
# UNTIL_IDLE after the switch went idle (--until-idle: nothing received or
# sent, no frame held anywhere, every worker polled), its --duration only
# bounding it: the captures are forwarded in milliseconds, and a second of
# waiting per run added minutes to CI.
UNTIL_IDLE = "100ms"


def replays_captures(vdevs):
    """True when every RX of these vdevs is a finite capture (net_pcap rx_pcap
    without infinite_rx) or there is none, and at least one is."""
    def rx(v):  # "capture", "live" (frames may come at any time) or None (no RX)
        if v.startswith("net_pcap"):
            if "rx_iface" in v or "infinite_rx=1" in v:
                return "live"
            return "capture" if "rx_pcap=" in v else None
        if v.startswith("net_null"):
            return None if "no-rx=1" in v else "live"
        return "live"  # net_ring, net_tap, memif, ...
    kinds = {rx(v) for v in vdevs}
    return "capture" in kinds and "live" not in kinds


def run_switch(tmp, vdevs, app_args=(), config=None, timeout=60, until_idle=UNTIL_IDLE):
    """Run rocelab-switch to completion (app_args should include --duration).
    With --port-workers in app_args, as many workers as it names. A run that
    replays captures stops once idle (--until-idle `until_idle`; None: runs
    the whole --duration, for a test that needs time to pass after its
    input)."""
    workers = None
    if "--port-workers" in app_args:
        workers = max(int(x) for x in app_args[list(app_args).index("--port-workers") + 1].split(",")) + 1
    if workers is None:
        workers = min(TEST_WORKERS, max(1, len(vdevs)))
    eal, _ = eal_args(vdevs, worker_lcores(workers))
    report = os.path.join(tmp, "report.json")
    if os.path.exists(report):
        os.remove(report)
    args = list(app_args) + ["--report", report, "--quiet"] + (["--idle-yield"] if workers > 1 else [])
    if until_idle and "--duration" in args and "--until-idle" not in args and replays_captures(vdevs):
        args += ["--until-idle", until_idle]
    if config is not None:
        cfg = os.path.join(tmp, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(config)
        args += ["--config", cfg]
    rc, out, err = run_to_end([SWITCH] + eal + ["--"] + args, timeout, "did not stop within")
    rep = None
    if os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
        if rc == 0:
            check_stall_lines(out, rep)
    return Run(rc, out, err, rep, workers)


def run_to_end(cmd, timeout, hung="did not finish in"):
    """Runs `cmd` to its end: (exit status, stdout, stderr). Still running
    after `timeout` seconds, it is killed, and an AssertionError names it,
    its pid, `hung` and the timeout, with what it printed."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        name = os.path.basename(cmd[0])
        raise AssertionError(f"{name} (pid {p.pid}) {hung} {timeout}s\n{out}\n{err}")
    return p.returncode, out, err


def frames(path):
    if not os.path.exists(path) or os.path.getsize(path) <= 24:
        return []
    return [bytes(p) for p in rdpcap(path)]


def icrc_ok(raw):
    """True when the frame's ICRC verifies: scapy recomputes it independently."""
    p = Ether(raw)
    if BTH not in p:
        return False
    q = Ether(raw)
    q[BTH].icrc = None
    return bytes(q) == raw


def write_pcap(path, pkts):
    w = PcapWriter(path, linktype=1, sync=False)
    for x in pkts:
        w.write(bytes(x))
    w.close()


def tshark_fields(path, *fields, display_filter=None):
    cmd = ["tshark", "-r", path, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    if display_filter:
        cmd += ["-Y", display_filter]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [line.split("\t") for line in r.stdout.splitlines() if line]


def tshark_expert(path):
    """Return tshark's expert-info/malformed lines for a capture."""
    r = subprocess.run(["tshark", "-r", path, "-z", "expert,note", "-q"], capture_output=True, text=True)
    return r.stdout


def mkpcap(*args):
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "mkpcap.py")] + list(args), check=True,
                   stderr=subprocess.DEVNULL)
