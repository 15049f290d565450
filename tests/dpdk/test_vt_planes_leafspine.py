#!/usr/bin/python3
"""Multi-plane fabrics whose planes are L3 leaf-spines (issue 21 item 4):
tools/gen_multiplane_scenario.py --leaves L --spines S, small.

Oracles that do not come from the script's own arithmetic:
  - the fabric's routing: every flow of a permutation that crosses the
    spines delivers, with no drop, and every spine carries traffic in both
    directions (the leaves' ECMP uses all their uplinks);
  - the links' own rates in fabric.json: a leaf's uplinks carry its hosts'
    capacity (not oversubscribed), or a share of it with --oversub;
  - the planes share nothing under a permutation: one partition per plane on
    two threads cuts no cable and gives the reports of one thread, byte for
    byte;
  - a ring all-reduce striped over leaf-spine planes completes;
  - the 256 servers x 8 planes fabric (2048 hosts, 96 L3 switches) is
    accepted by `rocelab-fabric check`, well within a minute (it was refused:
    a generator's hosts stopped at 1024; and parsing its hosts was quadratic);
  - a generator of 512 hosts populates mbufs for what its polls take, not
    for all its ports at once;
  - sizes the addressing cannot take are refused in one line.
"""
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import ROOT  # noqa: E402
import fabrictest  # noqa: E402

TOOL = os.path.join(ROOT, "tools", "gen_multiplane_scenario.py")


def load(out, name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


class LeafSpinePlanes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def gen(self, *args, name="ls"):
        path = os.path.join(self.tmp.name, name + ".yaml")
        with open(path, "w") as f:
            subprocess.run(["/usr/bin/python3", TOOL, "--name", name, *args], stdout=f, check=True, timeout=60)
        return path

    def run_fabric(self, path, out, *extra):
        rc, so, se = fabrictest.run(["run", path, "--out", os.path.join(self.tmp.name, out), "--quiet",
                                     "--no-plots", *extra], timeout=120)
        self.assertEqual(rc, 0, so + se)
        return os.path.join(self.tmp.name, out)

    def test_permutation_crosses_every_spine_and_planes_split_cleanly(self):
        path = self.gen("--servers", "8", "--planes", "2", "--leaves", "2", "--spines", "2",
                        "--traffic", "permutation", "--msg-size", "16KiB", "--duration", "20us")
        one = self.run_fabric(path, "one")
        s, fab = load(one, "summary.json"), load(one, "fabric.json")
        self.assertEqual(s["totals"]["drops"], 0)
        self.assertEqual(s["totals"]["link_drops"], 0)
        self.assertEqual(len(s["flows"]), 16)
        for f in s["flows"]:  # s<i>p<k> -> s<i+4>p<k>: every flow from one leaf to the other
            self.assertGreaterEqual(f["messages"], 1, f["flow"])
        links = {l["from"]: l for l in fab["links"]}
        for k in range(2):
            for sp in range(2):
                for leaf in range(2):
                    down = links[f"p{k}spine{sp}:Ethernet{leaf}"]
                    up = links[f"p{k}leaf{leaf}:Ethernet{4 + sp}"]
                    self.assertGreater(down["tx_bytes"], 0, f"p{k}spine{sp} -> leaf{leaf}")
                    self.assertGreater(up["tx_bytes"], 0, f"p{k}leaf{leaf} -> spine{sp}")
                    self.assertEqual(up["rate_bps"], 4 * 100e9 / 2)  # 4 hosts of 100G over 2 uplinks
        # One partition per plane: nothing crosses, and the reports are the same bytes.
        part = os.path.join(self.tmp.name, "planes.part")
        with open(part, "w") as f:
            for k in range(2):
                for sw in ("leaf0", "leaf1", "spine0", "spine1"):
                    f.write(f"p{k}{sw}: {k}\n")
        two = self.run_fabric(path, "two", "--threads", "2", "--partition", part)
        sp = load(two, "speed.json")
        self.assertEqual((sp["partitions"], sp["cut_cables"]), (2, 0))
        self.assertEqual(len(sp["thread_wait_s"]), 2)
        names = sorted(n for n in os.listdir(one) if n != "speed.json")
        self.assertEqual(names, sorted(n for n in os.listdir(two) if n != "speed.json"))
        for n in names:
            self.assertTrue(filecmp.cmp(os.path.join(one, n), os.path.join(two, n), shallow=False), n)

    def test_oversubscribed_uplinks(self):
        path = self.gen("--servers", "8", "--planes", "1", "--leaves", "2", "--spines", "2", "--oversub", "2",
                        "--traffic", "permutation", "--msg-size", "16KiB", "--duration", "2us")
        fab = load(self.run_fabric(path, "o"), "fabric.json")
        rates = {l["rate_bps"] for l in fab["links"] if "spine" in l["from"]}
        self.assertEqual(rates, {4 * 100e9 / 2 / 2})

    def test_ring_striped_over_leaf_spine_planes(self):
        path = self.gen("--servers", "8", "--planes", "2", "--leaves", "2", "--spines", "2",
                        "--msg-size", "256KiB", "--collectives", "1", "--duration", "100us")
        s = load(self.run_fabric(path, "ring"), "summary.json")
        self.assertEqual(s["totals"]["drops"], 0)
        self.assertEqual(len(s["collectives"]), 1)
        self.assertEqual(s["collectives"][0]["completed"], 1)
        self.assertEqual(s["collectives"][0]["planes"], 2)

    def test_the_256x8_fabric_is_accepted(self):
        path = self.gen("--servers", "256", "--planes", "8", "--leaves", "8", "--spines", "4",
                        "--traffic", "permutation", "--msg-size", "64KiB", "--duration", "50us")
        rc, so, se = fabrictest.run(["check", path], timeout=60)
        self.assertEqual(rc, 0, so + se)
        self.assertIn("valid (97 nodes, 2304 cables", so)

    def test_many_hosts_populate_what_their_polls_take(self):
        # 512 hosts in one generator: its workers are polled one host at a
        # time, so the mbufs kept ahead are a switch's poll's, not 512 ports'
        # (that mark populated 2 x 133120 mbufs before the first event).
        path = self.gen("--servers", "64", "--planes", "8", "--rate", "25Gbps", "--traffic", "permutation",
                        "--msg-size", "16KiB", "--duration", "1us")
        sp = load(self.run_fabric(path, "many"), "speed.json")
        self.assertLess(sp["mbufs_populated"], 65536)

    def test_sizes_the_script_cannot_address_are_refused(self):
        for args, want in ((["--servers", "8", "--leaves", "3"], "multiple of the leaves"),
                           (["--servers", "8", "--planes", "32", "--leaves", "8"], "do not fit the addressing"),
                           (["--servers", "6", "--leaves", "2", "--spines", "7", "--rate", "1Mbps"], "whole number of Mbps")):
            r = subprocess.run(["/usr/bin/python3", TOOL, "--name", "x", *args], capture_output=True, text=True,
                               timeout=60)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(want, r.stderr, args)
            self.assertEqual(r.stdout, "", args)


if __name__ == "__main__":
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
