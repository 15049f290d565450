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
- Real time (--real-time, docs/scenarios.md "Real time"): the 8:1 incast
  and the PFC storm pass slowed down 100x (100G cables run at 1Gbps), the
  run takes that long in wall time, the summary says real-time and puts
  the figures back on the scenario's scale; the calm storm fails (exit 3)
  in real time too.

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

    def test_l3_leaf_resolves_its_hosts_by_arp(self):
        """l3-gateway-arp.yaml has no NEIGH table: the leaf sends one ARP
        request per host, the generator answers, the frames that waited are
        released (none dropped), and the report lists the 4 hosts with their
        MACs. Deterministic in virtual time, so the counts are exact."""
        path = os.path.join(ROOT, "conf", "scenarios", "l3-gateway-arp.yaml")
        with tempfile.TemporaryDirectory() as out:
            r = run(path, out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(out, "leaf0.json")) as f:
                rep = json.load(f)
        n = rep["neighbors"]
        self.assertEqual((n["requests"], n["learned"], n["failed"], n["dropped_queue_full"]), (4, 4, 0, 0))
        self.assertEqual(n["held"], n["released"])
        self.assertGreater(n["held"], 0, "some frames had to wait for an answer")
        got = {(e["address"], e["port"], e["mac"], e["state"]) for e in n["entries"]}
        self.assertEqual(got, {(f"10.{p}.0.1", f"Ethernet{p}", f"02:00:00:00:0{p}:01", "reachable") for p in range(4)})
        self.assertEqual([p["arp_requests"] for p in rep["ports"]], [1, 1, 1, 1])

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


class RealTime(unittest.TestCase):
    def run_rt(self, path, out):
        import time
        t0 = time.monotonic()
        r = run(path, out, "--real-time", "--no-plots")
        return r, time.monotonic() - t0

    def test_incast_and_storm_pass_in_real_time(self):
        for name, scenario_s in (("incast-8to1-pfc.yaml", 0.005), ("pfc-storm.yaml", 0.010)):
            path = os.path.join(ROOT, "conf", "scenarios", name)
            with self.subTest(scenario=name), tempfile.TemporaryDirectory() as out:
                r, wall = self.run_rt(path, out)
                self.assertEqual(r.returncode, 0, f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
                self.assertIn("slowed down 100x", r.stdout)
                self.assertNotIn("did not keep up", r.stdout)
                with open(os.path.join(out, "summary.json")) as f:
                    s = json.load(f)
                self.assertEqual(s["backend"], "real-time")
                self.assertAlmostEqual(s["rt_factor"], 0.01)
                # 100 x the scenario's time on the TSC, which the wall clock confirms.
                self.assertAlmostEqual(s["rt_time_ns"] / 1e9, 100 * scenario_s, delta=0.01 * scenario_s * 100)
                self.assertAlmostEqual(s["fabric_time_ns"] / 1e9, scenario_s, delta=0.01 * scenario_s)
                self.assertGreaterEqual(wall, 100 * scenario_s)
                self.assertGreater(s["rt_rounds"], 1000)
                # Host stalls the fabric was frozen through (docs/fabric.md): counted, and
                # a small part of the run (the frozen time is wall time beyond rt_time_ns).
                self.assertGreaterEqual(s["rt_stalls"], 0)
                self.assertLess(s["rt_frozen_ns"], 0.2 * s["rt_time_ns"])
                self.assertGreaterEqual(wall, (s["rt_time_ns"] + s["rt_frozen_ns"]) / 1e9)
                self.assertTrue(s["passed"], json.dumps(s["expectations"], indent=1))
                for e in s["expectations"]:
                    self.assertTrue(e["passed"], e)
                # Goodput on the scenario's scale: the incast's senders share 100G, not 1G.
                if name.startswith("incast"):
                    g = [f["goodput"] for f in s["flows"]]
                    self.assertEqual(len(g), 8)
                    self.assertTrue(all(10e9 < x < 12.5e9 for x in g), g)
                # The cables ran at 1/100 of their rate, their delays 100x.
                with open(os.path.join(out, "fabric.json")) as f:
                    fab = json.load(f)
                self.assertEqual(max(l["rate_bps"] for l in fab["links"]), 1_000_000_000)
                if name.startswith("incast"):
                    self.assertEqual({l["delay_ns"] for l in fab["links"]}, {2500})  # 25 ns x 100

    def test_a_calm_storm_fails_in_real_time_too(self):
        with open(os.path.join(ROOT, "conf", "scenarios", "pfc-storm.yaml")) as f:
            text = f.read().replace("start=200us", "start=20ms")
        with tempfile.TemporaryDirectory() as out:
            p = os.path.join(out, "calm.yaml")
            with open(p, "w") as f:
                f.write(text)
            r, _ = self.run_rt(p, os.path.join(out, "o"))
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            with open(os.path.join(out, "o", "summary.json")) as f:
                s = json.load(f)
            failed = [e["expect"] for e in s["expectations"] if not e["passed"]]
            self.assertIn("goodput(victim) < 5Gbps", " ".join(failed))


if __name__ == "__main__":
    unittest.main()
