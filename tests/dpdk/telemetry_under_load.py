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

Exit 0: every reply was JSON and the switch exited 0 with its report;
1 otherwise (a TSan report makes the switch exit 66; its output is printed).
Unlike a functional test it judges nothing by the switch's speed, so a slow
build cannot make it fail.

  ROCELAB_BUILD=build-tsan /usr/bin/python3 tests/dpdk/telemetry_under_load.py [ROUNDS]
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import ROOT, SWITCH, mkpcap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools"))
from telemetry import Telemetry  # noqa: E402


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory(prefix="rocelab-tel-") as tmp:
        pcap = os.path.join(tmp, "in.pcap")
        mkpcap("roce", pcap, "--count", "64", "--dscp", ",".join(["26"] * 63 + ["48"]), "--payload", "100")
        cfg = os.path.join(tmp, "c.yaml")
        with open(cfg, "w") as f:
            f.write("PORT:\n  Ethernet0: {device: net_pcap0}\n  Ethernet1: {device: net_null1, speed: 1Gbps}\n"
                    "ROCELAB: {queue_sample_interval: 10ms}\n")
        prefix = f"rltel{os.getpid()}"
        report, out = os.path.join(tmp, "r.json"), os.path.join(tmp, "out.txt")
        cmd = [SWITCH, "--no-huge", "-m", "1024", "--no-pci", "--lcores", "0@0,1@1,2@0", "--file-prefix", prefix,
               "--log-level", "lib.eal:error", f"--vdev=net_pcap0,rx_pcap={pcap},infinite_rx=1",
               "--vdev=net_null1,no-rx=1", "--", "--config", cfg, "--report", report,
               "--queue-csv", os.path.join(tmp, "q.csv")]
        with open(out, "w") as o:
            p = subprocess.Popen(cmd, stdout=o, stderr=subprocess.STDOUT)
        failed = []
        try:
            # Forwarding: the status line (each second) names Ethernet0's RX.
            deadline = time.monotonic() + 120
            while p.poll() is None and time.monotonic() < deadline:
                with open(out) as f:
                    if re.search(r"\] \| Ethernet0 rx", f.read()):
                        break
                time.sleep(0.2)
            time.sleep(2)  # queues and PGs filling
            commands = ["/rocelab/workers", "/rocelab/info", "/rocelab/ports", "/rocelab/fdb", "/rocelab/neigh"]
            for port in ("Ethernet0", "Ethernet1"):
                commands += [f"/rocelab/port,{port}", f"/rocelab/queues,{port}", f"/rocelab/buffer,{port}",
                             f"/rocelab/pfc,{port}"]
            n = 0
            for _ in range(rounds):
                if p.poll() is not None:
                    failed.append(f"rocelab-switch exited {p.returncode} while being queried")
                    break
                t = Telemetry(prefix)
                try:
                    for c in commands:
                        reply = t.query(c)
                        if not isinstance(reply, dict) or not reply:
                            failed.append(f"{c}: reply {reply!r}")
                        n += 1
                except (OSError, json.JSONDecodeError) as e:
                    failed.append(f"query failed ({e}): the switch stopped answering")
                    break
                finally:
                    t.close()
                time.sleep(0.1)
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            subprocess.run(["rm", "-rf", f"/var/run/dpdk/{prefix}"])
        with open(out) as f:
            text = f.read()
        if p.returncode != 0:
            failed.append(f"rocelab-switch exit status {p.returncode}")
        if "ThreadSanitizer" in text:
            failed.append("ThreadSanitizer reported")
        if not os.path.exists(report):
            failed.append("no report")
        if failed:
            print(text[-12000:])
            print("telemetry_under_load: FAILED: " + "; ".join(failed))
            return 1
        print(f"telemetry_under_load: {n} queries of {len(commands)} commands while forwarding on 2 workers, "
              f"exit 0")
        return 0


if __name__ == "__main__":
    sys.exit(main())
