#!/usr/bin/python3
"""Multi-plane fabrics (issue 24 item 2): conf/scenarios/multiplane-*.yaml,
written by tools/gen_multiplane_scenario.py: 8 servers x 4 planes of 100G,
a ring all-reduce striped over the planes, a fault in one plane, static and
weighted striping, and one plane of the same capacity.

Oracles that do not come from the generator's striping code:
  - the wire-time floor of a ring all-reduce (2(n-1) steps of one chunk per
    plane, each chunk's frames back to back at the plane's rate);
  - the links' own byte counters (the cable model): with static striping the
    healthy planes carry exactly the bytes they carry without the fault;
    weighted striping moves bytes off the faulty plane;
  - the single plane of the same capacity as the reference for the healthy
    multi-plane fabric;
  - the scenario files must be what the tool writes;
  - bad input gets one line, exit 2, and no report.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT  # noqa: E402
import fabrictest  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
TOOL = os.path.join(ROOT, "tools", "gen_multiplane_scenario.py")
SCN = os.path.join(ROOT, "conf", "scenarios")
NAMES = ["multiplane-8x4", "multiplane-8x4-fault", "multiplane-8x4-fault-weighted", "multiplane-8x1-single"]
PLANES, SERVERS = 4, 8


def run(path, out, *extra):
    return subprocess.run([FABRIC, "run", path, "--out", out, "--quiet", "--no-plots", *extra],
                          capture_output=True, text=True, timeout=300)


def load(out, name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


class MultiPlane(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sum, cls.fab = {}, {}
        for n in NAMES:
            o = os.path.join(cls.tmp.name, n)
            r = run(os.path.join(SCN, n + ".yaml"), o)
            assert r.returncode == 0, n + "\n" + r.stdout + r.stderr
            cls.sum[n] = load(o, "summary.json")
            cls.fab[n] = load(o, "fabric.json")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def coll(self, n):
        c = self.sum[n]["collectives"]
        self.assertEqual(len(c), 1)
        self.assertEqual(c[0]["completed"], 6, n)
        return c[0]

    def host_bytes(self, n):
        """tx bytes of each plane's host links (host i is on port i, plane i % 4)."""
        per = [0] * PLANES
        for l in self.fab[n]["links"]:
            if l["from"].startswith("hosts:port"):
                per[int(l["from"][len("hosts:port"):]) % PLANES] += l["tx_bytes"]
        return per

    def test_healthy_planes_match_one_plane_and_the_wire_floor(self):
        h, s = self.coll("multiplane-8x4"), self.coll("multiplane-8x1-single")
        self.assertLess(abs(h["time_mean_ns"] - s["time_mean_ns"]) / s["time_mean_ns"], 0.02)
        # Floor: 2(n-1) steps, each a chunk of S / (n P) per plane in 1024-byte
        # payloads; a frame is payload + 14 Eth + 20 IPv4 + 8 UDP + 12 BTH + 4 ICRC
        # + 24 B on the wire (RETH on each message's first frame ignored).
        S, n = 16 * 2**20, SERVERS
        chunk = S // (n * PLANES)
        frames = -(-chunk // 1024)
        floor_ns = 2 * (n - 1) * (chunk + frames * (14 + 20 + 8 + 12 + 4 + 24)) * 8 / 100e9 * 1e9
        self.assertGreaterEqual(h["time_min_ns"], floor_ns)
        self.assertLess(h["time_mean_ns"], 1.15 * floor_ns)
        self.assertEqual(h["planes"], 4)
        self.assertEqual(h["striping"], "static")
        self.assertNotIn("planes", s)

    def test_static_striping_waits_for_the_slowest_plane(self):
        h, f = self.coll("multiplane-8x4"), self.coll("multiplane-8x4-fault")
        self.assertGreater(f["time_mean_ns"], 1.2 * h["time_mean_ns"])
        # The other planes' links carry the same traffic as before, byte for byte.
        hb, fb = self.host_bytes("multiplane-8x4"), self.host_bytes("multiplane-8x4-fault")
        for k in range(PLANES):
            if k == 2:
                self.assertGreater(fb[k], hb[k], "plane 2 resends what its uplink lost")
            else:
                self.assertEqual(fb[k], hb[k], f"plane {k}")
        lost = sum(l["lost"] for l in self.fab["multiplane-8x4-fault"]["links"])
        self.assertGreater(lost, 0)
        self.assertTrue(all(l["lost"] == 0 for l in self.fab["multiplane-8x4-fault"]["links"]
                            if not l["from"].startswith(("p2leaf0:Ethernet4", "p2spine:Ethernet0"))))

    def test_weighted_striping_wins_back_most_of_it(self):
        h = self.coll("multiplane-8x4")
        st = self.coll("multiplane-8x4-fault")
        w = self.coll("multiplane-8x4-fault-weighted")
        self.assertEqual(w["striping"], "weighted")
        self.assertLess(w["time_mean_ns"], st["time_mean_ns"])
        # Once settled (the last three collectives), at least 40 % of the loss is won back.
        settled = lambda c: sum(c["times_ns"][-3:]) / 3  # noqa: E731
        won = (settled(st) - settled(w)) / (settled(st) - h["time_mean_ns"])
        self.assertGreater(won, 0.4, (settled(st), settled(w), h["time_mean_ns"]))
        # The first collective is striped evenly, as static; the later ones are quicker.
        self.assertLess(max(w["times_ns"][2:]), w["times_ns"][0])
        # The bytes moved off the faulty plane.
        wb = self.host_bytes("multiplane-8x4-fault-weighted")
        for k in (0, 1, 3):
            self.assertLess(wb[2], wb[k])

    def test_files_are_what_the_tool_writes(self):
        for n in NAMES:
            with open(os.path.join(SCN, n + ".yaml")) as f:
                text = f.read()
            body = text[text.index("\nname: ") + 1:]
            args = {"multiplane-8x4": [], "multiplane-8x4-fault": ["--fault-plane", "2"],
                    "multiplane-8x4-fault-weighted": ["--fault-plane", "2", "--striping", "weighted"],
                    "multiplane-8x1-single": ["--single"]}[n]
            import yaml
            doc = yaml.safe_load(text)
            cmd = ["/usr/bin/python3", TOOL, "--name", n, "--collectives", "6", "--duration", "7ms",
                   "--description", doc["description"], *args]
            for e in body.split("expect:\n", 1)[1].splitlines():
                cmd += ["--expect", e.strip()[2:]]
            r = subprocess.run(cmd, capture_output=True, text=True, check=True)
            self.assertEqual(r.stdout, body, n)


class BadInput(unittest.TestCase):
    def bad(self, text, *want, extra=()):
        fabrictest.assert_refused(self, text, *want, extra=extra)

    def scenario(self):
        with open(os.path.join(SCN, "multiplane-8x4.yaml")) as f:
            return f.read()

    def test_plane_with_no_path(self):
        # Plane 1's spine loses its cable to the second leaf: servers 0-3 cannot reach 4-7 in plane 1.
        text = self.scenario().replace("  - {a: p1leaf1:Ethernet4, b: p1spine:Ethernet1, rate: 400Gbps}\n", "")
        self.assertNotEqual(text, self.scenario())
        self.bad(text, "plane 1 has no path from", "s3p1", "s4p1")

    def test_planes_need_a_ring_collective(self):
        self.bad(self.scenario().replace("pattern: ring-allreduce", "pattern: alltoall"), "planes 4", "alltoall")

    def test_hosts_must_be_whole_servers(self):
        self.bad(self.scenario().replace("planes: 4", "planes: 3"), "planes 3", "not whole servers")

    def test_weighted_needs_planes(self):
        with open(os.path.join(SCN, "multiplane-8x1-single.yaml")) as f:
            text = f.read()
        self.bad(text.replace("  window: 1024\n", "  window: 1024\n  striping: weighted\n"), "striping weighted", "planes >= 2")

    def test_unknown_striping(self):
        self.bad(self.scenario().replace("striping: static", "striping: adaptive"), "striping", "static", "weighted")


if __name__ == "__main__":
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
