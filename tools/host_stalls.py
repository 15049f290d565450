#!/usr/bin/python3
"""host_stalls.py - does this machine take the CPU away from busy threads?

Runs one busy thread per CPU (a process pinned to it) for --seconds, each
reading the monotonic clock in a loop, and reports per CPU the gaps between
two reads longer than 1 ms: how many, their total and the longest. A gap
is time the thread did not run: the guest kernel (another runnable task,
an interrupt) or the hypervisor (a vCPU descheduled, a CPU quota spent)
took the CPU.

Why: rocelab's timing tests run two busy-polling threads (a worker and a
traffic source, or two workers) on the two CPUs of the test machine. Some
virtual machines cannot run both vCPUs flat out: once the VM's CPU quota is
spent the hypervisor freezes a vCPU for a whole scheduling period (100 ms
on the host measured in docs/testing.md, "A host that freezes its VM").
Neither the guest's run_delay nor its steal time shows such a freeze, and a
test whose worker stopped for 100 ms sees its rates fall short. This
probe names the cause when such tests fail or skip. It judges nothing:
exit 0 whatever it finds (2 on bad arguments).

  tools/host_stalls.py [--seconds 3] [--cpus 0,1]

Prints one line per CPU and a verdict line starting "host_stalls:".
"""
import argparse
import multiprocessing as mp
import os
import sys
import time

GAP_S = 1e-3        # a gap longer than this is counted
FREEZE_S = 50e-3    # one this long is a freeze, not a tick or an interrupt


def spin(cpu, seconds, out):
    os.sched_setaffinity(0, {cpu})
    clock = time.monotonic
    t0 = prev = clock()
    gaps, total, longest = 0, 0.0, 0.0
    while True:
        t = clock()
        g = t - prev
        if g > GAP_S:
            gaps += 1
            total += g
            longest = max(longest, g)
        prev = t
        if t - t0 >= seconds:
            break
    out.put((cpu, gaps, total, longest, t - t0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="how long both CPUs spin (default 3)")
    ap.add_argument("--cpus", default=None, help="CPUs to spin on (default: every CPU this process may use)")
    a = ap.parse_args()
    cpus = sorted(int(c) for c in a.cpus.split(",")) if a.cpus else sorted(os.sched_getaffinity(0))
    if a.seconds <= 0 or not cpus:
        ap.error("--seconds must be positive and --cpus not empty")
    q = mp.Queue()
    procs = [mp.Process(target=spin, args=(c, a.seconds, q)) for c in cpus]
    for p in procs:
        p.start()
    res = sorted(q.get() for _ in procs)
    for p in procs:
        p.join()
    worst_share, worst_gap = 0.0, 0.0
    for cpu, gaps, total, longest, elapsed in res:
        share = total / elapsed if elapsed > 0 else 0.0
        worst_share, worst_gap = max(worst_share, share), max(worst_gap, longest)
        print(f"host_stalls: CPU {cpu}: {gaps} gaps over 1 ms, {total * 1e3:.1f} ms in all "
              f"({share:.1%} of {elapsed:.1f} s), longest {longest * 1e3:.1f} ms")
    if worst_gap >= FREEZE_S:
        print(f"host_stalls: FROZEN: with {len(cpus)} CPUs busy at once a CPU lost up to {worst_share:.1%} of the "
              f"time, in gaps up to {worst_gap * 1e3:.0f} ms: the VM is frozen (a hypervisor CPU quota). Timing "
              f"tests that run two busy threads can fail or skip here (docs/testing.md, \"A host that freezes "
              f"its VM\").")
    else:
        print(f"host_stalls: ok: with {len(cpus)} CPUs busy at once no gap reached {FREEZE_S * 1e3:.0f} ms "
              f"(longest {worst_gap * 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
