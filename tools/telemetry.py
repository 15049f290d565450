#!/usr/bin/python3
"""telemetry.py - a minimal client for a DPDK process's telemetry socket.

  tools/telemetry.py PREFIX /rocelab/port,Ethernet0
  tools/telemetry.py PREFIX /ethdev/stats,1

Prints the JSON reply. Used by the benchmark harness and the tests; for
interactive use, dpdk-telemetry.py -f PREFIX does the same.
"""
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time


def socket_path(prefix):
    base = "/var/run/dpdk" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk"
    return os.path.join(base, prefix, "dpdk_telemetry.v2")


class Telemetry:
    def __init__(self, prefix):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(socket_path(prefix))
        info = json.loads(self.sock.recv(4096).decode())
        self.max_len = info.get("max_output_len", 16384)

    def query(self, cmd):
        self.sock.send(cmd.encode())
        return json.loads(self.sock.recv(self.max_len).decode())

    def close(self):
        self.sock.close()


def stop_process(p, prefix, timeout=60):
    """Stops a DPDK process we started: SIGINT, then SIGKILL after
    `timeout` seconds; removes its runtime directory."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    shutil.rmtree(os.path.dirname(socket_path(prefix)), ignore_errors=True)


def query_under_load(p, prefix, commands, rounds, check, after_round=None, name="the process"):
    """Queries every command in `commands` `rounds` times (0.1 s apart, a
    new connection each round) while `p` runs, then stops `p` (SIGINT).

    check(cmd, reply) returns None or why the reply is wrong; a reply that
    is not a non-empty JSON object always fails. after_round(t), if given,
    runs more queries on the round's connection. Returns (failures,
    queries)."""
    failed, n = [], 0
    try:
        for _ in range(rounds):
            if p.poll() is not None:
                failed.append(f"{name} exited {p.returncode} while being queried")
                break
            t = Telemetry(prefix)
            try:
                for c in commands:
                    reply = t.query(c)
                    if not isinstance(reply, dict) or not reply:
                        failed.append(f"{c}: reply {reply!r}")
                    else:
                        why = check(c, reply)
                        if why:
                            failed.append(f"{c}: {why}")
                    n += 1
                if after_round:
                    after_round(t)
            except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
                failed.append(f"query failed ({e!r}): {name} stopped answering")
                break
            finally:
                t.close()
            time.sleep(0.1)
    finally:
        stop_process(p, prefix)
    return failed, n


def run_under_load(cmd, prefix, out, ready, commands, rounds, check, after_round=None, name="the process",
                   ready_timeout=120, settle=2.0):
    """Starts `cmd` (a DPDK process with --file-prefix `prefix`, its output
    to the file `out`), waits until ready(out) is true (at most
    `ready_timeout` seconds, or until it exits), lets it run `settle`
    seconds more, queries it with query_under_load, and stops it whatever
    happens (stop_process). Returns (failures, queries, the Popen, whose
    returncode is set)."""
    with open(out, "w") as o:
        p = subprocess.Popen(cmd, stdout=o, stderr=subprocess.STDOUT)
    failed, n = [], 0
    try:
        deadline = time.monotonic() + ready_timeout
        while p.poll() is None and time.monotonic() < deadline and not ready(out):
            time.sleep(0.2)
        time.sleep(settle)
        failed, n = query_under_load(p, prefix, commands, rounds, check, after_round, name=name)
    finally:
        stop_process(p, prefix)
    return failed, n, p


def measure_sink_mpps(cmd, prefix, tool, sink_port, warmup, windows, window):
    """Run `cmd` (a DPDK process started with --file-prefix `prefix`), wait
    for its telemetry socket, warm up, then return Mpps at the sink port's
    ethdev opackets (summed, when sink_port is a tuple of ports) for each of
    `windows` windows of `window` seconds. The process is stopped by its PID
    (SIGTERM, then SIGKILL after 15 s) and its EAL runtime directory removed."""
    sinks = sink_port if isinstance(sink_port, (tuple, list)) else (sink_port,)

    def opackets(t):
        return sum(t.query(f"/ethdev/stats,{s}")["/ethdev/stats"]["opackets"] for s in sinks)

    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rates = []
    try:
        t = None
        deadline = time.monotonic() + 20
        while t is None and time.monotonic() < deadline:
            if p.poll() is not None:
                raise RuntimeError(f"{tool} exited: {p.stderr.read().decode()[-800:]}")
            try:
                t = Telemetry(prefix)
            except OSError:
                time.sleep(0.2)
        if t is None:
            raise RuntimeError(f"{tool}: no telemetry socket")
        time.sleep(warmup)
        last = opackets(t)
        t_last = time.monotonic()
        for _ in range(windows):
            time.sleep(window)
            now_pk = opackets(t)
            t_now = time.monotonic()
            rates.append((now_pk - last) / (t_now - t_last) / 1e6)
            last, t_last = now_pk, t_now
        t.close()
    finally:
        p.terminate()
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        # dpdk-testpmd leaves its EAL runtime directory behind (rocelab's
        # apps remove their own); the prefix is this run's alone.
        shutil.rmtree(os.path.dirname(socket_path(prefix)), ignore_errors=True)
    return rates


def paired_ab(after_runs, before_runs):
    """A/B paired by run: run r of TOOL against run r of TOOL@before, which ran
    next to it in time, so drift of the host over the session (this VM's rate
    moves by up to 30 % within minutes) cancels within each pair.
    after_runs, before_runs: one list of window rates per run. Returns
    (median, min, max) of the per-run ratios of window medians."""
    r = [statistics.median(a) / statistics.median(b) for a, b in zip(after_runs, before_runs) if a and b]
    return statistics.median(r), min(r), max(r)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    t = Telemetry(sys.argv[1])
    print(json.dumps(t.query(sys.argv[2]), indent=1))
    t.close()


if __name__ == "__main__":
    main()
