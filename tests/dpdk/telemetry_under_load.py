#!/usr/bin/python3
"""telemetry_under_load.py - every /rocelab/* telemetry command, read while
rocelab-switch forwards on two workers (for tools/tsan.sh).

The status line, telemetry and reports read counters, queue depths and the
ingress buffer's state that the workers write while they run; each such
read must be a relaxed atomic against the worker's relaxed atomic store, or
ThreadSanitizer reports a data race. This runs the switch (ROCELAB_BUILD's,
a TSan build under tools/tsan.sh) with two workers on both CPUs, a pcap
port replaying RoCEv2 frames into a 1Gbps net_null port (so the lossless
PG fills, goes into XOFF and overflows its headroom: every buffer figure
moves), queries every command ROUNDS times, then stops it with SIGINT.
Then the same in L3 with dynamic neighbours: frames to 200 hosts on
Ethernet1 that never answer, so the worker's neighbour table churns
(entries created, probed every 10 ms, failed, created again) while
/rocelab/neigh lists it. A worker's table is its own: the listing is a
copy the worker hands over (switch_pipeline::neighbors_live). A reply that
is an error fails. An empty listing is legitimate at one instant: the 200
entries are created within one burst and fail together, in one timer poll,
and the worker copies its table right after its timers (neighbour_step),
before the next burst creates them again; a worker that stalled past their
last probe (40 ms under TSan) fails them all at once too. So an empty
listing is asked again at the end of its round, up to five times 20 ms
apart (the worker runs its neighbour timers every 1 ms), and fails only
if every one is empty: a handover that is broken, or that copies nothing,
fails the first round.

Exit 0: every reply was JSON and the switch exited 0 with its report;
1 otherwise (a TSan report makes the switch exit 66; its output is printed).
Unlike a functional test it judges nothing by the switch's speed, so a slow
build cannot make it fail.

  ROCELAB_BUILD=build-tsan /usr/bin/python3 tests/dpdk/telemetry_under_load.py [ROUNDS]
"""
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import ROOT, SWITCH, mkpcap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools"))
from telemetry import run_under_load  # noqa: E402


L2_CFG = ("PORT:\n  Ethernet0: {device: net_pcap0}\n  Ethernet1: {device: net_null1, speed: 1Gbps}\n"
          "ROCELAB: {queue_sample_interval: 10ms}\n")
ROUTER_MAC = "02:00:00:00:01:00"
L3_CFG = """
ROCELAB: {mode: l3, neigh_retrans_time: 10ms, neigh_queue: 2, queue_sample_interval: 10ms}
DEVICE_METADATA:
  localhost: {mac: "%s"}
PORT:
  Ethernet0: {device: net_pcap0}
  Ethernet1: {device: net_null1, speed: 1Gbps}
INTERFACE:
  "Ethernet0|10.8.0.1/24": {}
  "Ethernet1|10.9.0.1/24": {}
""" % ROUTER_MAC


def run_phase(tmp, name, rounds, pcap_args, cfg_text, checker):
    """Runs the switch on 2 workers, queries every command `rounds` times.
    Returns (failures, queries, commands, output)."""
    pcap = os.path.join(tmp, f"{name}.pcap")
    mkpcap("roce", pcap, *pcap_args)
    cfg = os.path.join(tmp, f"{name}.yaml")
    with open(cfg, "w") as f:
        f.write(cfg_text)
    prefix = f"rltel{os.getpid()}{name}"
    report, out = os.path.join(tmp, f"{name}.json"), os.path.join(tmp, f"{name}.txt")
    cmd = [SWITCH, "--no-huge", "-m", "1024", "--no-pci", "--lcores", "0@0,1@1,2@0", "--file-prefix", prefix,
           "--log-level", "lib.eal:error", f"--vdev=net_pcap0,rx_pcap={pcap},infinite_rx=1",
           "--vdev=net_null1,no-rx=1", "--", "--config", cfg, "--report", report,
           "--queue-csv", os.path.join(tmp, f"{name}.csv")]
    commands = ["/rocelab/workers", "/rocelab/info", "/rocelab/ports", "/rocelab/fdb", "/rocelab/neigh"]
    for port in ("Ethernet0", "Ethernet1"):
        commands += [f"/rocelab/port,{port}", f"/rocelab/queues,{port}", f"/rocelab/buffer,{port}",
                     f"/rocelab/pfc,{port}"]

    def forwarding(path):
        # The status line (each second) names Ethernet0's RX; 2 s more
        # lets queues and PGs fill and neighbours churn.
        with open(path) as f:
            return re.search(r"\] \| Ethernet0 rx", f.read()) is not None

    failed, n, p = run_under_load(cmd, prefix, out, forwarding, commands, rounds, checker.check,
                                  after_round=checker.after_round, name="rocelab-switch")
    failed = checker.failed + failed
    with open(out) as f:
        text = f.read()
    if p.returncode != 0:
        failed.append(f"rocelab-switch exit status {p.returncode}")
    if "ThreadSanitizer" in text:
        failed.append("ThreadSanitizer reported")
    if not os.path.exists(report):
        failed.append("no report")
    return failed, n, len(commands), text


class L2Check:
    def __init__(self):
        self.failed = []

    def check(self, cmd, reply):
        return None

    def after_round(self, t):
        pass


class L3Check:
    """/rocelab/neigh must list neighbours under resolution: the worker
    handed its table over (no "error"), and it is not empty, or not empty
    when asked again (see the module's docstring)."""
    ASKS, GAP = 5, 0.02

    def __init__(self):
        self.failed = []
        self.empty = False
        self.reasked = 0

    @staticmethod
    def entries(reply):
        r = reply.get("/rocelab/neigh", reply)
        return r, r.get("entries")

    def check(self, cmd, reply):
        if cmd != "/rocelab/neigh":
            return None
        r, entries = self.entries(reply)
        if "error" in r:
            return r["error"]
        self.empty = not entries
        return None

    def after_round(self, t):
        if not self.empty:
            return
        self.empty = False
        self.reasked += 1
        for _ in range(self.ASKS):
            time.sleep(self.GAP)
            r, entries = self.entries(t.query("/rocelab/neigh"))
            if "error" in r:
                self.failed.append(f"/rocelab/neigh: {r['error']}")
                return
            if entries:
                return
        self.failed.append(f"/rocelab/neigh: no neighbour listed in {self.ASKS + 1} listings "
                           f"{self.GAP * 1000:.0f} ms apart while 200 are being resolved: {r}")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    phases = [
        ("l2", ["--count", "64", "--dscp", ",".join(["26"] * 63 + ["48"]), "--payload", "100"], L2_CFG, L2Check()),
        ("l3", ["--count", "200", "--payload", "100", "--dst-mac", ROUTER_MAC, "--src-ip", "10.8.0.2",
                "--dst-ip", "10.9.0.20", "--dst-ip-count", "200"], L3_CFG, L3Check()),
    ]
    with tempfile.TemporaryDirectory(prefix="rocelab-tel-") as tmp:
        for name, pcap_args, cfg, check in phases:
            failed, n, ncmd, text = run_phase(tmp, name, rounds, pcap_args, cfg, check)
            if failed:
                print(text[-12000:])
                print(f"telemetry_under_load: {name}: FAILED: " + "; ".join(dict.fromkeys(failed)))
                return 1
            again = f", {check.reasked} empty neighbour listing(s) asked again" if getattr(check, "reasked", 0) else ""
            print(f"telemetry_under_load: {name}: {n} queries of {ncmd} commands while forwarding on 2 workers{again}, "
                  f"exit 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
