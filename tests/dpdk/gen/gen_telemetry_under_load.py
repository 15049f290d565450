#!/usr/bin/python3
"""gen_telemetry_under_load.py - every /rocelab_gen/* telemetry command, read
while rocelab-gen runs closed loop on two workers (for tools/tsan.sh).

What telemetry reads of the generator (port counters, PFC/PAUSE received and
paused time, every requester and responder counter, the workers' figures)
the workers write while they run: each read must be a relaxed atomic
against the worker's relaxed atomic store, or ThreadSanitizer reports a data
race. This runs rocelab-gen (ROCELAB_BUILD's, a TSan build under
tools/tsan.sh) with a loopback pair, one port per worker on CPUs 1 and 0,
two QPs at 1Gbps with 1 % data loss (NAKs, go-back-N) and PFC from port 1
every 5 ms (pauses start and end on port 0), queries every command ROUNDS
times, then stops it with SIGINT.

Exit 0: every reply was JSON, the counters moved between the first and the
last round, and rocelab-gen exited 0 with no mbuf in use; 1 otherwise (a
TSan report makes it exit 66; its output is printed). It judges nothing by
speed.

  ROCELAB_BUILD=build-tsan /usr/bin/python3 tests/dpdk/gen/gen_telemetry_under_load.py [ROUNDS]
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build"))
GEN = os.path.join(BUILD, "app", "rocelab-gen")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from telemetry import run_under_load, socket_path  # noqa: E402


def reply_check(cmd, reply):
    if next(iter(reply.values())) is None:
        return "empty reply"
    return None


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    prefix = f"rlgtl{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="rocelab-gtel-") as tmp:
        out = os.path.join(tmp, "out.txt")
        cmd = [GEN, "--no-huge", "-m", "1024", "--no-pci", "--lcores", "0@0,1@1,2@0", "--file-prefix", prefix,
               "--log-level", "lib.eal:error", "--",
               "--loopback-pairs", "1", "--senders", "2", "--rate", "1Gbps", "--loss", "1%",
               "--pfc-tx", "port=1,prio=3,quanta=500,interval=5ms,count=0", "--status-interval", "1s"]
        commands = ["/rocelab_gen/workers", "/rocelab_gen/info", "/rocelab_gen/ports", "/rocelab_gen/port,0",
                    "/rocelab_gen/port,1", "/rocelab_gen/flows", "/rocelab_gen/flow,0", "/rocelab_gen/flow,1"]
        flows = []

        def read_flow(t):
            flows.append(t.query("/rocelab_gen/flow,0")["/rocelab_gen/flow"])

        # Ready: the telemetry socket exists; 2 s more for the commands to
        # register and traffic, losses and pauses to get under way.
        failed, n, p = run_under_load(cmd, prefix, out, lambda _: os.path.exists(socket_path(prefix)), commands,
                                      rounds, reply_check, read_flow, name="rocelab-gen")
        first, last = (flows[0], flows[-1]) if flows else (None, None)
        with open(out) as f:
            text = f.read()
        if p.returncode != 0:
            failed.append(f"rocelab-gen exit status {p.returncode}")
        if "ThreadSanitizer" in text:
            failed.append("ThreadSanitizer reported")
        if "mbufs in use at exit: 0 " not in text:
            failed.append("mbufs in use at exit, or no final summary")
        if first and last and not failed:
            for k in ("tx_packets", "messages_completed"):
                if not last[k] > first[k]:
                    failed.append(f"flow 0's {k} did not move between the rounds ({first[k]} -> {last[k]})")
            if last.get("naks_rx", 0) + last.get("retransmissions", 0) == 0:
                failed.append("no NAK or retransmission at 1 % loss")
        if failed:
            print(text[-12000:])
            print("gen_telemetry_under_load: FAILED: " + "; ".join(dict.fromkeys(failed)))
            return 1
        print(f"gen_telemetry_under_load: {n} queries of {len(commands)} commands while 2 workers ran closed loop, "
              f"exit 0")
        return 0


if __name__ == "__main__":
    sys.exit(main())
