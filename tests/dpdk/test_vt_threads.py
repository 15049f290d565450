#!/usr/bin/python3
"""rocelab-fabric on several threads (issue 20 item 3): the same bytes for
every thread count.

- leaf-spine-ecmp (4 switches, 8 hosts, L3 ECMP) with captures, and a
  100us cut of the seed cluster (64 hosts, 4 switches), each on 1 and 2
  threads: every report, time series, node report, plot input and pcap is
  byte for byte the same (speed.json, which holds wall-clock figures and the
  partitioning, excepted). speed.json shows the run really was cut into 2
  partitions, with a lookahead and synchronisation windows.
- --partition FILE (the partitions given, not computed): the same bytes as
  one thread.
- Bad input gets one line and exit 2: more threads than parts that can run
  apart (the 8:1 incast has one switch), --threads with --real-time, and
  partition files that name an unknown node or a generator, leave a switch
  out, name one twice, skip a partition, split switches that share hosts,
  or are malformed, and more threads than their partitions.

Run: /usr/bin/python3 tests/dpdk/test_vt_threads.py -v
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")


def run(args):
    return subprocess.run([FABRIC] + args, capture_output=True, text=True, timeout=900)


class Threads(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocelab-thr-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def same_for_1_and_2_threads(self, scenario, extra):
        outs = []
        for t in (1, 2):
            out = os.path.join(self.tmp, f"t{t}")
            r = run(["run", scenario, "--out", out, "--quiet", "--no-plots", "--threads", str(t)] + extra)
            self.assertIn(r.returncode, (0, 3), r.stdout + r.stderr)
            outs.append(out)
        files = sorted(f for f in os.listdir(outs[0]) if f != "speed.json")
        self.assertEqual(files, sorted(f for f in os.listdir(outs[1]) if f != "speed.json"))
        self.assertIn("summary.json", files)
        for f in files:
            self.assertTrue(filecmp.cmp(os.path.join(outs[0], f), os.path.join(outs[1], f), shallow=False),
                            f"{f} differs between 1 and 2 threads")
        with open(os.path.join(outs[1], "speed.json")) as f:
            sp = json.load(f)
        self.assertEqual(sp["threads"], 2)
        self.assertEqual(sp["partitions"], 2)
        self.assertGreater(sp["cut_cables"], 0)
        self.assertGreater(sp["lookahead_ns"], 0)
        self.assertGreater(sp["windows"], 100)
        print(f"{os.path.basename(scenario)}: {len(files)} files identical; 2 threads: {sp['cut_cables']} cables cut, "
              f"lookahead {sp['lookahead_ns']} ns, {sp['windows']} windows")
        return files

    def test_leaf_spine_with_captures(self):
        files = self.same_for_1_and_2_threads(os.path.join(ROOT, "conf", "scenarios", "leaf-spine-ecmp.yaml"),
                                              ["--pcap", "--duration", "1ms"])
        self.assertGreater(sum(f.endswith(".pcap") for f in files), 20)

    def test_seed_cluster_cut(self):
        self.same_for_1_and_2_threads(os.path.join(ROOT, "conf", "scenarios", "cluster-8x8-200g.yaml"),
                                      ["--duration", "100us"])

    def test_given_partitions_give_the_same_bytes(self):
        # --partition: the leaves on one thread, the spines on the other (the
        # automatic rule pairs a leaf with a spine and cuts 2 cables; this cuts
        # all 4 leaf-spine cables): the same bytes as one thread.
        ls = os.path.join(ROOT, "conf", "scenarios", "leaf-spine-ecmp.yaml")
        part = os.path.join(self.tmp, "parts.txt")
        with open(part, "w") as f:
            f.write("# leaf-spine-ecmp on two threads\nleaf0: 0\nleaf1: 0\nspine0: 1   # the spines apart\nspine1: 1\n")
        outs = []
        for extra in ([], ["--partition", part]):
            out = os.path.join(self.tmp, f"p{len(outs)}")
            r = run(["run", ls, "--out", out, "--quiet", "--no-plots", "--pcap", "--duration", "1ms"] + extra)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            outs.append(out)
        files = sorted(f for f in os.listdir(outs[0]) if f != "speed.json")
        self.assertGreater(sum(f.endswith(".pcap") for f in files), 20)
        for f in files:
            self.assertTrue(filecmp.cmp(os.path.join(outs[0], f), os.path.join(outs[1], f), shallow=False),
                            f"{f} differs with --partition")
        with open(os.path.join(outs[1], "speed.json")) as f:
            sp = json.load(f)
        self.assertEqual((sp["threads"], sp["partitions"], sp["cut_cables"]), (2, 2, 4))
        self.assertGreater(sp["windows"], 100)

    def test_bad_partition_files_are_one_line(self):
        ls = os.path.join(ROOT, "conf", "scenarios", "leaf-spine-ecmp.yaml")
        mp = os.path.join(ROOT, "conf", "scenarios", "multiplane-8x4.yaml")
        part = os.path.join(self.tmp, "bad.txt")
        planes = "".join(f"p{k}{n}: {1 if k == 1 else 0}\n" for k in range(4) for n in ("leaf0", "leaf1", "spine"))
        cases = [
            (ls, "leaf0: 0\nleaf1: 1\nspine0: 0\nspine9: 1\n", [],
             "bad.txt:4: no switch 'spine9' in the fabric (its switches: leaf0, leaf1, spine0, spine1)"),
            (ls, "hosts: 0\n", [], "bad.txt:1: 'hosts' is a generator"),
            (ls, "leaf0: 0\nleaf1: 1\nspine0: 0\n", [], "switch 'spine1' has no partition"),
            (ls, "leaf0: 0\nleaf1: 2\nspine0: 0\nspine1: 0\n", [], "partition 1 has no switch"),
            (ls, "leaf0 0\n", [], "bad.txt:1: 'leaf0 0': expected 'SWITCH: PARTITION'"),
            (ls, "leaf0: 0\nleaf0: 1\n", [], "bad.txt:2: 'leaf0' again (first at"),
            (ls, "leaf0: 0\nleaf1: 1\nspine0: 0\nspine1: 1\n", ["--threads", "3"],
             "--threads 3: --partition " + part + " has 2 partitions: at most 2 threads"),
            (mp, planes, [], "'p0leaf0' (partition 0) and 'p1leaf0' (partition 1) share hosts' cables"),
        ]
        for scen, text, extra, want in cases:
            with open(part, "w") as f:
                f.write(text)
            out = os.path.join(self.tmp, "never")
            r = run(["run", scen, "--out", out, "--duration", "100us", "--partition", part] + extra)
            self.assertEqual(r.returncode, 2, text + r.stdout + r.stderr)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn(want, lines[0])
            self.assertFalse(os.path.exists(out), "a refused run wrote reports")

    def test_bad_thread_counts_are_one_line(self):
        inc = os.path.join(ROOT, "conf", "fabric", "incast-8to1-100g.yaml")
        r = run(["run", inc, "--out", os.path.join(self.tmp, "x"), "--threads", "2"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("--threads 2: the fabric has 1 part that can run apart", lines[0])
        r = run(["run", inc, "--real-time", "--threads", "2"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("virtual time only", r.stderr)
        r = run(["run", inc, "--threads", "0"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--threads '0': 1..256", r.stderr)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
