#!/usr/bin/python3
"""rocelab-fabric over MPI ranks (issue 21 items 1 and 3): `mpirun -np 2
rocelab-fabric run SCENARIO` against the same scenario in one process.

Oracles that do not come from the rank mode's own code:
  - the one-process run (one engine, no MPI, no cross-rank link): over two
    ranks every capture file (every frame on every cable direction, with its
    nanosecond time stamp), fabric.json (every link's, node's and switch's
    counters, the engine's), summary.json (the expectations as judged, every
    flow's metrics, the collectives, the deadlocks found, the totals), the
    time series (flows.csv, queues.csv, pfc.csv: every sample step), fct.csv,
    every node report the ranks write, and the plots and index.html are
    byte-identical to it;
  - what is gathered is not trivially equal: a PFC deadlock whose cycle
    spans switches on both ranks is found (the watch reads both ranks'
    queues at each step), and the seed cluster's all-reduce completes a
    collective whose flows run on both ranks;
  - the partition really crosses ranks: speed.json's per-rank packet-hops
    are both non-zero and cables are cut (a run where one rank did all the
    work would compare equal too);
  - the files the ranks write are exactly the one process's, the report of
    a generator whose hosts run on both ranks included (the seed cluster's
    hosts.json: each flow's two ends, each port and each worker come from
    the rank that ran them);
  - a rank killed mid-run (SIGKILL, by its PID) ends the job non-zero
    within 30 s with rocelab-fabric's own line from the surviving rank and
    mpirun's line naming the killed one: no hang;
  - SIGUSR1 to mpirun stops both ranks after the same sample step, with
    fabric.json gathered (its links' deliveries add up to the packet-hops
    both ranks counted);
  - bad input (a partition file naming an unknown switch; a cable with no
    delay between ranks) is one line on stderr, from rank 0 only, exit 2,
    and nothing is written.

Needs MPI (meson registers it only when MPI and mpirun are found); runs 2
ranks with --oversubscribe on this machine, loopback only.
"""
import filecmp
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import ROOT  # noqa: E402
import fabrictest  # noqa: E402
import testmain  # noqa: E402

MPIRUN = shutil.which("mpirun") or "/usr/bin/mpirun"
MPI = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", "2"]


def mpi_run(args, timeout=300):
    """mpirun -np 2 rocelab-fabric `args`: (exit status, stdout, stderr).
    mpirun and its ranks are one process group: killed together when it
    does not finish in `timeout` seconds."""
    p = subprocess.Popen(MPI + [fabrictest.FABRIC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError(f"mpirun rocelab-fabric did not finish in {timeout}s\n{out}\n{err}")
    return p.returncode, out, err


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def scenario(rel):
    return os.path.join(ROOT, rel)


class OverRanks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def compare(self, rel, duration="1ms", crosses=True, extra=(), plots=False, pcap=True, status=0, eal=()):
        """One process and two ranks on `rel` (with captures unless told
        not): the ranks' files are the one process's, byte for byte. `eal`:
        EAL options (ending in "--") given to the ranks.
        Returns the ranks' speed.json, summary.json and stdout."""
        one = os.path.join(self.tmp.name, "one")
        two = os.path.join(self.tmp.name, "two")
        common = ["run", scenario(rel), "--duration", duration, "--quiet"]
        common += (["--pcap"] if pcap else []) + ([] if plots else ["--no-plots"])
        rc, so, se = fabrictest.run(common + ["--out", one], timeout=300)
        self.assertEqual(rc, status, so + se)
        rc, so, se = mpi_run([*eal] + common + ["--out", two, *extra], timeout=300)
        print(so)
        self.assertEqual(rc, status, so + se)
        self.assertIn("over 2 ranks", so)
        fabric = load(one, "fabric.json")
        want = set(os.listdir(one))
        for f in ("fabric.json", "speed.json", "summary.json", "flows.csv", "queues.csv", "pfc.csv", "fct.csv"):
            self.assertIn(f, want)
        for n in fabric["nodes"]:  # every node's own report, a generator's whose hosts run on both ranks too
            self.assertIn(n["name"] + ".json", want)
        if plots:
            self.assertIn("index.html", want)
        got = set(os.listdir(two))
        self.assertEqual(got, want, "the files over ranks: the one process's")
        self.assertNotIn("not written", so)
        if pcap:
            self.assertGreater(len([f for f in got if f.endswith(".pcap")]), 0)
        same, diff, errs = filecmp.cmpfiles(one, two, sorted(got - {"speed.json"}), shallow=False)
        self.assertEqual((diff, errs), ([], []), f"files that differ over ranks ({len(same)} equal)")
        speed = load(two, "speed.json")
        self.assertEqual(speed["ranks"], 2)
        self.assertEqual(len(speed["per_rank"]), 2)
        self.assertEqual(sum(r["packet_hops"] for r in speed["per_rank"]), fabric["packet_hops"])
        if crosses:
            self.assertGreater(speed["cut_cables"], 0)
            for r in speed["per_rank"]:
                self.assertGreater(r["packet_hops"], 0, f"rank {r['rank']} carried nothing: {speed}")
        return speed, load(two, "summary.json"), so

    def test_leaf_spine_over_two_ranks_is_the_one_process_run(self):
        self.compare("conf/scenarios/leaf-spine-ecmp.yaml")

    def test_threads_and_ranks_combine(self):
        # Two threads per rank: four partitions (leaf-spine's four parts),
        # two on each rank; the one process ran on one thread.
        speed, _, _ = self.compare("conf/scenarios/leaf-spine-ecmp.yaml", extra=("--threads", "2"))
        self.assertEqual(speed["partitions"], 4)
        self.assertEqual([r["partitions"] for r in speed["per_rank"]], [2, 2])

    def test_seed_cluster_1ms_over_two_ranks_is_the_one_process_run(self):
        _, _, out = self.compare("conf/scenarios/cluster-8x8-200g.yaml")
        # The hosts' report is one generator whose 64 hosts ran on both
        # ranks (one leaf each): flows were sent and received on each side.
        hosts = load(os.path.join(self.tmp.name, "two"), "hosts.json")
        leaf0 = {f"h{i}" for i in range(32)}
        sides = {(f["src"] in leaf0, f["dst"] in leaf0) for f in hosts["flows"] if f["tx_packets"] and f["rx_packets"]}
        self.assertTrue({(True, False), (False, True)} <= sides, sides)
        self.assertTrue(all(p["tx_packets"] > 0 and p["rx_packets"] > 0 for p in hosts["ports"]), "a host sent nothing")

    def test_incast_8to1_over_two_ranks_is_the_one_process_run(self):
        # One switch: one part that can run apart; rank 1 runs nothing and
        # still takes part in every window.
        speed, _, _ = self.compare("conf/fabric/incast-8to1-100g.yaml", crosses=False)
        self.assertEqual(speed["partitions"], 1)
        self.assertEqual([r["partitions"] for r in speed["per_rank"]], [1, 0])

    def test_a_deadlock_across_ranks_is_found_as_in_one_process(self):
        # Four switches in a ring, two on each rank: the cycle of paused
        # queues crosses both ranks. With the plots, which are the one
        # process's too.
        speed, summary, out = self.compare("conf/scenarios/pfc-deadlock-ring.yaml", duration="3ms", plots=True)
        self.assertEqual([r["partitions"] for r in speed["per_rank"]], [1, 1])
        self.assertEqual(len(summary["deadlocks"]), 1, summary["deadlocks"])
        cycle = summary["deadlocks"][0]["cycle"]
        self.assertEqual(sorted(q.split(":")[0] for q in cycle), ["s0", "s1", "s2", "s3"])
        self.assertTrue(summary["passed"])
        self.assertEqual(len(re.findall(r"^rocelab-fabric: PFC deadlock at ", out, re.M)), 1, out)

    def test_the_seed_all_reduce_over_two_ranks_is_the_one_process_run(self):
        # 64 hosts on two leaves, one on each rank: every ring step crosses.
        # (No captures: 8.5 M packet-hops.)
        _, summary, _ = self.compare("conf/scenarios/cluster-8x8-200g-allreduce.yaml", duration="8ms", pcap=False)
        self.assertEqual(len(summary["collectives"]), 1)
        self.assertGreaterEqual(summary["collectives"][0]["completed"], 1, summary["collectives"])
        self.assertTrue(summary["passed"], summary["expectations"])

    def long_run(self, name):
        """mpirun -np 2 on the seed cluster for 100 ms of fabric time (far
        longer than a test waits), into `name`: (the mpirun process, its
        first line, the out folder). Its process group is killed at the
        test's end if it still runs."""
        out = os.path.join(self.tmp.name, name)
        p = subprocess.Popen(MPI + [fabrictest.FABRIC, "run", scenario("conf/scenarios/cluster-8x8-200g.yaml"),
                                    "--duration", "100ms", "--out", out, "--no-plots"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)

        def stop():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            p.stdout.close()
        self.addCleanup(stop)
        # The run has started when rank 0 prints the fabric's first line.
        first = p.stdout.readline()
        self.assertIn("cluster-8x8-200g", first)
        return p, first, out

    def finish(self, p, timeout, what):
        """The rest of `p`'s output once it ends; fails (and kills it) when it
        still runs after `timeout` seconds, saying `what`."""
        try:
            rest, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rest, _ = p.communicate()
            self.fail(what + ":\n" + rest)
        return rest

    def test_failed_expectations_over_ranks_fail_the_run_as_in_one_process(self):
        # Two expectations that cannot hold: exit 3 both ways, each FAIL
        # line printed once (by rank 0), the summaries identical.
        with open(scenario("conf/scenarios/leaf-spine-ecmp.yaml")) as f:
            text = f.read()
        old = "  - busy(leaf0:Ethernet4) > 30%"
        self.assertIn(old, text)
        path = os.path.join(self.tmp.name, "failing.yaml")
        with open(path, "w") as f:
            f.write(text.replace(old, "  - busy(leaf0:Ethernet4) > 99%\n  - drops > 0", 1))
        _, summary, out = self.compare(path, pcap=False, status=3)
        self.assertFalse(summary["passed"])
        failed = [e["expect"] for e in summary["expectations"] if not e["passed"]]
        self.assertEqual(failed, ["busy(leaf0:Ethernet4) > 99%", "drops > 0"])
        self.assertEqual(len(re.findall(r"^  FAIL  ", out, re.M)), 2, out)
        self.assertIn("expectations passed - FAILED", out)

    def test_a_killed_rank_ends_the_run_with_one_line_and_no_hang(self):
        t0 = time.monotonic()
        p, first, out = self.long_run("killed")
        ranks = {}
        for _ in range(100):
            for c in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
                try:
                    with open(f"/proc/{c}/environ", "rb") as f:
                        env = f.read().split(b"\0")
                except OSError:
                    continue
                for e in env:
                    if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                        ranks[int(e.split(b"=")[1])] = int(c)
            if len(ranks) == 2:
                break
            time.sleep(0.1)
        self.assertEqual(sorted(ranks), [0, 1], "the two ranks' PIDs")
        time.sleep(1.0)  # into the run's windows
        os.kill(ranks[1], signal.SIGKILL)
        t_kill = time.monotonic()
        rest = self.finish(p, 60, "the job still ran 60 s after rank 1 was killed (a hang)")
        took = time.monotonic() - t_kill
        for pid in ranks.values():  # each rank stopped; EAL's runtime directories they could not clean up
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            shutil.rmtree(f"/var/run/dpdk/rocelab-fabric-{pid}", ignore_errors=True)
        text = first + rest
        print(text)
        print(f"exit {p.returncode}, {took:.1f} s after the kill, {time.monotonic() - t0:.1f} s in all")
        self.assertNotEqual(p.returncode, 0)
        self.assertLess(took, 30.0)
        lines = [ln for ln in text.splitlines() if ln.startswith("rocelab-fabric: rank 0 of 2: ended by a signal")]
        self.assertEqual(len(lines), 1, text)
        self.assertRegex(text, r"process rank 1 .*exited on signal 9")
        self.assertFalse(os.path.exists(os.path.join(out, "fabric.json")), "no report from a broken run")

    def test_sigusr1_to_mpirun_stops_every_rank_at_one_step_with_the_reports(self):
        p, first, out = self.long_run("stopped")
        time.sleep(1.5)
        os.kill(p.pid, signal.SIGUSR1)  # mpirun passes it on to every rank
        rest = self.finish(p, 60, "still running 60 s after SIGUSR1")
        print(first + rest)
        self.assertEqual(p.returncode, 0, rest)
        self.assertRegex(rest, r"stopped at \S+ of fabric time \(SIGUSR1\)")
        fabric = load(out, "fabric.json")
        speed = load(out, "speed.json")
        ran = fabric["fabric_time_ns"]
        # Both ranks stopped after the same sample step (100 ms / 200 = 500 us):
        # the figures gathered from both add up, and the time is a step's end.
        self.assertGreater(ran, 0)
        self.assertLess(ran, 100_000_000)
        self.assertEqual(ran % 500_000, 0, ran)
        self.assertEqual(sum(r["packet_hops"] for r in speed["per_rank"]), fabric["packet_hops"])
        delivered = sum(link["delivered"] for link in fabric["links"])
        self.assertEqual(delivered, fabric["packet_hops"], "every hop delivered by a link, counted once")

    def refused(self, args, *want):
        """`args` over two ranks: exit 2, one rocelab-fabric line on stderr
        (rank 0's), holding each of `want`; no report written."""
        out = os.path.join(self.tmp.name, "bad")
        rc, so, se = mpi_run(args + ["--out", out, "--quiet", "--no-plots"], timeout=120)
        self.assertEqual(rc, 2, so + se)
        lines = [ln for ln in se.splitlines() if ln.startswith("rocelab-fabric:")]
        self.assertEqual(len(lines), 1, se)
        for w in want:
            self.assertIn(w, lines[0])
        self.assertFalse(os.path.exists(os.path.join(out, "fabric.json")))
        self.assertFalse(os.path.exists(os.path.join(out, "leaf0.json")))

    def test_a_partition_file_naming_an_unknown_switch_is_one_line(self):
        part = os.path.join(self.tmp.name, "parts.txt")
        with open(part, "w") as f:
            f.write("leaf0: 0\nleaf9: 1\nspine0: 0\nspine1: 1\n")
        self.refused(["run", scenario("conf/scenarios/leaf-spine-ecmp.yaml"), "--partition", part],
                     part + ":2", "no switch 'leaf9'")

    def test_a_cable_without_delay_between_ranks_is_one_line(self):
        with open(scenario("conf/scenarios/leaf-spine-ecmp.yaml")) as f:
            text = f.read()
        self.assertIn("link: {rate: 100Gbps, delay: 100ns}", text)
        path = os.path.join(self.tmp.name, "nodelay.yaml")
        with open(path, "w") as f:
            f.write(text.replace("link: {rate: 100Gbps, delay: 100ns}", "link: {rate: 100Gbps, delay: 0ns}"))
        # One process takes it (threads and one engine need no lookahead).
        rc, so, se = fabrictest.run(["run", path, "--duration", "20us", "--out", os.path.join(self.tmp.name, "one"),
                                     "--quiet", "--no-plots"], timeout=120)
        self.assertIn(rc, (0, 3), so + se)
        self.refused(["run", path, "--duration", "20us"], "has no propagation delay", "joins rank",
                     "needs a delay")

    def test_eal_options_over_ranks_get_a_file_prefix_per_rank(self):
        # mpirun gives every rank the same options, and DPDK allows one
        # process per file prefix: each rank takes PREFIX-rank<N>. Before
        # 2026-12-05 rank 1's EAL failed ("Cannot create lock") and rank 0
        # waited for it for ever.
        prefix = f"rkt{os.getpid()}"
        try:
            self.compare("conf/fabric/incast-8to1-100g.yaml", crosses=False, pcap=False,
                         eal=["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error",
                              "--file-prefix", prefix, "--"])
        finally:
            for r in (0, 1):
                shutil.rmtree(os.path.join(dpdk_runtime_dir(), f"{prefix}-rank{r}"), ignore_errors=True)

    def test_eal_failing_on_one_rank_stops_every_rank_with_one_line(self):
        # Rank 1's file prefix is held, as by a DPDK process already running
        # under it: only rank 1's EAL fails. Every rank must stop, at once,
        # with rank 1's line, and nothing runs.
        import fcntl
        prefix = f"rkf{os.getpid()}"
        held_dir = os.path.join(dpdk_runtime_dir(), f"{prefix}-rank1")
        out = os.path.join(self.tmp.name, "out")
        os.makedirs(held_dir, exist_ok=True)
        try:
            with open(os.path.join(held_dir, "config"), "w") as held:
                fcntl.lockf(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # EAL's lock on its config file
                t0 = time.monotonic()
                rc, so, se = mpi_run(["--no-huge", "-m", "1024", "--no-pci", "--file-prefix", prefix, "--", "run",
                                      scenario("conf/fabric/incast-8to1-100g.yaml"), "--duration", "1ms",
                                      "--quiet", "--no-plots", "--out", out], timeout=120)
                took = time.monotonic() - t0
        finally:
            for r in (0, 1):
                shutil.rmtree(os.path.join(dpdk_runtime_dir(), f"{prefix}-rank{r}"), ignore_errors=True)
        self.assertNotEqual(rc, 0, so + se)
        lines = [ln for ln in se.splitlines() if ln.startswith("rocelab-fabric:")]
        self.assertEqual(len(lines), 1, se)
        self.assertTrue(lines[0].startswith("rocelab-fabric: rank 1: EAL initialisation failed"), se)
        self.assertNotIn("over 2 ranks", so)
        self.assertFalse(os.path.exists(out), "nothing may run")
        self.assertLess(took, 60, "every rank stops at once")


def dpdk_runtime_dir():
    """Where EAL keeps its file prefixes' directories (DPDK's eal_create_runtime_dir)."""
    if os.getuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


if __name__ == "__main__":
    testmain.main()
