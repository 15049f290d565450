#!/usr/bin/python3
"""rocelab-fabric on several threads (issue 20 item 3): the same bytes for
every thread count.

- leaf-spine-ecmp (4 switches, 8 hosts, L3 ECMP) with captures, and a
  100us cut of the seed cluster (64 hosts, 4 switches), each on 1 and 2
  threads: every report, time series, node report, plot input and pcap is
  byte for byte the same (speed.json, which holds wall-clock figures and the
  partitioning, excepted). speed.json shows the run really was cut into 2
  partitions, with a lookahead and synchronisation windows.
- Bad input gets one line and exit 2: more threads than parts that can run
  apart (the 8:1 incast has one switch), --threads with --real-time.

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
