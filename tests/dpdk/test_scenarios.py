#!/usr/bin/python3
"""The scenario library (conf/scenarios/*.yaml) as a user runs it.

- Every library scenario but the cluster (cluster-*.yaml: tens of seconds,
  and it needs EAL options) runs with `--out DIR --quiet`: exit status 0 and
  summary.json says passed, with every expectation passed. Each scenario's
  expectations are chosen to fail when the mechanism it shows is broken
  (docs/scenarios.md).
- One scenario runs twice: every output file but speed.json (wall-clock
  figures) is byte for byte the same.
- A scenario whose expectation fails exits 3, and its summary says which.
- Hosts with addresses and a traffic pattern (which would ignore them) are
  refused with exit 2.

Run: ROCELAB_BUILD=build /usr/bin/python3 tests/dpdk/test_scenarios.py -v
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
LIBRARY = sorted(p for p in glob.glob(os.path.join(ROOT, "conf", "scenarios", "*.yaml"))
                 if not os.path.basename(p).startswith("cluster-"))


def run(path, out, *extra):
    return subprocess.run([FABRIC, "run", path, "--out", out, "--quiet", *extra],
                          capture_output=True, text=True, timeout=120)


class Scenarios(unittest.TestCase):
    def test_library_is_there(self):
        names = {os.path.basename(p) for p in LIBRARY}
        for n in ("incast-8to1-pfc.yaml", "incast-8to1-pfc-dcqcn.yaml", "congestion-spreading.yaml",
                  "pfc-storm.yaml", "pfc-storm-watchdog.yaml", "dcqcn-fairness.yaml", "long-haul-300km.yaml",
                  "long-haul-300km-headroom.yaml", "hpcc-incast-2to1.yaml", "leaf-spine-ecmp.yaml"):
            self.assertIn(n, names)
        self.assertTrue(any(n.startswith("loss-gbn-") for n in names))

    def test_every_scenario_passes(self):
        for path in LIBRARY:
            name = os.path.basename(path)
            with self.subTest(scenario=name), tempfile.TemporaryDirectory() as out:
                r = run(path, out)
                self.assertEqual(r.returncode, 0, f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
                with open(os.path.join(out, "summary.json")) as f:
                    s = json.load(f)
                self.assertTrue(s["passed"], f"{name}: {json.dumps(s['expectations'], indent=1)}")
                self.assertTrue(s["expectations"], f"{name}: no expectation")
                for e in s["expectations"]:
                    self.assertTrue(e["passed"], f"{name}: {e}")
                # The file says what it shows and how to run it.
                with open(path) as f:
                    head = f.read(4000)
                self.assertTrue(head.startswith("# " + name), name)
                self.assertIn("rocelab-fabric run conf/scenarios/" + name, head)

    def test_same_bytes_twice(self):
        path = os.path.join(ROOT, "conf", "scenarios", "congestion-spreading.yaml")
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            for d in (a, b):
                r = run(path, d)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            files = sorted(f for f in os.listdir(a) if f != "speed.json")
            self.assertEqual(files, sorted(f for f in os.listdir(b) if f != "speed.json"))
            self.assertIn("summary.json", files)
            self.assertIn("flows.csv", files)
            for f in files:
                with open(os.path.join(a, f), "rb") as fa, open(os.path.join(b, f), "rb") as fb:
                    self.assertEqual(fa.read(), fb.read(), f)

    def test_a_failed_expectation_exits_3(self):
        # pfc-storm without its storm: the victim is no longer starved.
        with open(os.path.join(ROOT, "conf", "scenarios", "pfc-storm.yaml")) as f:
            text = f.read()
        text = text.replace("start=200us", "start=20ms")  # after the end of the run
        with tempfile.TemporaryDirectory() as out:
            p = os.path.join(out, "calm.yaml")
            with open(p, "w") as f:
                f.write(text)
            r = run(p, os.path.join(out, "o"))
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            with open(os.path.join(out, "o", "summary.json")) as f:
                s = json.load(f)
            self.assertFalse(s["passed"])
            failed = [e["expect"] for e in s["expectations"] if not e["passed"]]
            self.assertIn("goodput(victim) < 5Gbps", " ".join(failed))

    def test_pattern_with_host_addresses_is_refused(self):
        with open(os.path.join(ROOT, "conf", "scenarios", "incast-8to1-pfc.yaml")) as f:
            text = f.read()
        text = text.replace("hosts: h0..h8", "hosts: [h0..h7, {name: h8, ip: 10.9.0.9}]")
        with tempfile.TemporaryDirectory() as out:
            p = os.path.join(out, "addressed.yaml")
            with open(p, "w") as f:
                f.write(text)
            r = run(p, os.path.join(out, "o"))
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("mac/ip/gateway is used only by explicit traffic.flows", r.stderr + r.stdout)


if __name__ == "__main__":
    unittest.main()
