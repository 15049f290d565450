#!/usr/bin/python3
"""PFC deadlock (issue 24 item 4): conf/scenarios/pfc-deadlock-ring*.yaml,
written by tools/gen_deadlock_scenario.py, in virtual time.

Oracles that do not come from the detector under test:
  - the routes, read from the scenario file, are loop-free (every flow
    reaches its host without visiting a switch twice), and the clockwise
    ring ports form a cycle of the channel dependency graph built from them
    (the textbook condition for a PFC deadlock);
  - the time series (queues.csv, flows.csv) show the cycle stuck after the
    reported detection: every queue on it paused with the same depth, no
    flow receiving a byte;
  - with the watchdog, the switch reports' drop_pfcwd equal the watchdog's
    own tx+rx drop counts, on ring ports only.
And a fabric with pauses but no cycle (a PFC incast; the same ring with
1-hop flows) reports no deadlock. The scenario files must be what the tool
writes."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
TOOL = os.path.join(ROOT, "tools", "gen_deadlock_scenario.py")
RING = os.path.join(ROOT, "conf", "scenarios", "pfc-deadlock-ring.yaml")
RING_WD = os.path.join(ROOT, "conf", "scenarios", "pfc-deadlock-ring-watchdog.yaml")
CYCLE = ["s0:Ethernet1:3", "s1:Ethernet1:3", "s2:Ethernet1:3", "s3:Ethernet1:3"]


def run(path, out, *extra):
    r = subprocess.run([FABRIC, "run", path, "--out", out, "--quiet", *extra],
                       capture_output=True, text=True, timeout=120)
    return r


def load(out, name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


def routes_of(scn):
    """{switch: [(network, prefix_len, out_port)]}, {switch: {port: peer}}, host address per switch port."""
    import ipaddress
    routes, iface = {}, {}
    for sw in scn["switches"]:
        c = sw["config"]
        routes[sw["name"]] = [(ipaddress.ip_network(k), v["ifname"]) for k, v in c.get("ROUTE", {}).items()]
        iface[sw["name"]] = [(ipaddress.ip_interface(k.split("|")[1]), k.split("|")[0]) for k in c["INTERFACE"]]
    peers = {}
    for l in scn["links"]:
        a, b = l["a"], l["b"]
        peers[a] = b
        peers[b] = a
    return routes, iface, peers


def path_of(scn, src, dst_ip):
    """The (switch, out port) hops of a frame from host src to dst_ip, by longest-prefix match."""
    import ipaddress
    routes, iface, peers = routes_of(scn)
    node = peers[src].split(":")[0]
    hops, seen = [], set()
    ip = ipaddress.ip_address(dst_ip)
    while True:
        if node in seen:
            raise AssertionError(f"routing loop through {node}")
        seen.add(node)
        connected = [(i.network, p) for i, p in iface[node] if ip in i.network]
        cands = connected + [(n, p) for n, p in routes[node] if ip in n]
        net, port = max(cands, key=lambda c: c[0].prefixlen)
        hops.append((node, port))
        nxt = peers[f"{node}:{port}"]
        if ":" not in nxt:
            return hops, nxt  # a host
        node = nxt.split(":")[0]


class Deadlock(unittest.TestCase):
    def test_files_are_the_tools(self):
        for path, args in ((RING, []), (RING_WD, ["--watchdog"])):
            want = subprocess.run(["/usr/bin/python3", TOOL] + args, capture_output=True, text=True,
                                  check=True).stdout
            with open(path) as f:
                self.assertEqual(f.read(), want, f"{path} is not what {TOOL} {' '.join(args)} writes")

    def test_routes_loop_free_with_a_cyclic_dependency(self):
        with open(RING) as f:
            scn = yaml.safe_load(f)
        hosts = {h["name"]: h["ip"] for h in scn["hosts"]}
        deps = {}  # channel (switch:port) -> channels a frame holding it waits for next
        for fl in scn["traffic"]["flows"]:
            hops, last = path_of(scn, fl["src"], hosts[fl["dst"]])
            self.assertEqual(last, fl["dst"], fl)
            chans = [f"{s}:{p}" for s, p in hops]
            for a, b in zip(chans, chans[1:]):
                deps.setdefault(a, set()).add(b)
        # The clockwise ring ports depend on each other in a cycle.
        ring = ["s0:Ethernet1", "s1:Ethernet1", "s2:Ethernet1", "s3:Ethernet1"]
        for a, b in zip(ring, ring[1:] + ring[:1]):
            self.assertIn(b, deps.get(a, set()), f"{a} -> {b} missing from the dependency graph {deps}")

    def test_ring_deadlocks_and_the_cycle_is_stuck(self):
        with tempfile.TemporaryDirectory() as out:
            r = run(RING, out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("PFC deadlock at 500us: s0:Ethernet1 q3 -> s1:Ethernet1 q3 -> s2:Ethernet1 q3 -> "
                          "s3:Ethernet1 q3 -> s0:Ethernet1 q3", r.stdout)
            s = load(out, "summary.json")
            self.assertTrue(s["passed"], s["expectations"])
            self.assertEqual(len(s["deadlocks"]), 1)
            d = s["deadlocks"][0]
            self.assertEqual(d["cycle"], CYCLE)
            self.assertIsNone(d["cleared_ns"])
            t0 = d["detected_ns"] / 1e9
            # From detection on, every queue on the cycle is paused and never
            # shrinks (a queue shrinks only by sending); frames already on the
            # cable when the pause came still land, then the depth is constant.
            with open(os.path.join(out, "queues.csv")) as f:
                rows = [r for r in csv.DictReader(f)
                        if f"{r['node']}:{r['port']}:{r['queue']}" in CYCLE and float(r["time_s"]) >= t0 - 1e-12]
            self.assertGreater(len(rows), 4 * 50)
            for q in CYCLE:
                mine = [r for r in rows if f"{r['node']}:{r['port']}:{r['queue']}" == q]
                self.assertTrue(all(r["paused"] == "1" for r in mine), q)
                depths = [int(r["depth_bytes"]) for r in mine]
                self.assertEqual(depths, sorted(depths), q)
                self.assertEqual(len(set(depths[len(depths) // 2:])), 1, q)
                self.assertGreater(depths[0], 0, q)
            # ... and no flow receives a byte.
            with open(os.path.join(out, "flows.csv")) as f:
                late = [r for r in csv.DictReader(f) if float(r["time_s"]) > t0 + 1e-12]
            self.assertTrue(late)
            self.assertTrue(all(float(r["goodput_bps"]) == 0 for r in late))
            for n in ("s0", "s1", "s2", "s3"):
                rep = load(out, f"{n}.json")
                self.assertEqual(sum(sum(p["drops"].values()) for p in rep["ports"]), 0, n)

    def test_watchdog_breaks_it_and_names_the_drops(self):
        with tempfile.TemporaryDirectory() as out:
            r = run(RING_WD, out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            s = load(out, "summary.json")
            self.assertTrue(s["passed"], s["expectations"])
            cleared = [d for d in s["deadlocks"] if d["cleared_ns"] is not None]
            self.assertGreaterEqual(len(cleared), 2)
            for d in cleared:
                self.assertEqual(d["cycle"], CYCLE)
                # Detection 1 ms, polled every 1 ms, plus a sample: within 3 ms.
                self.assertLessEqual(d["cleared_ns"] - d["detected_ns"], 3_000_000, d)
                self.assertIn("cleared at", r.stdout)
            ring_drops = 0
            for n in ("s0", "s1", "s2", "s3"):
                for p in load(out, f"{n}.json")["ports"]:
                    wd = sum(w["tx_dropped"] + w["rx_dropped"] for w in p["pfc"]["watchdog"])
                    self.assertEqual(p["drops"]["drop_pfcwd"], wd, f"{n}:{p['name']}")
                    other = {k: v for k, v in p["drops"].items() if v and k != "drop_pfcwd"}
                    self.assertEqual(other, {}, f"{n}:{p['name']}")
                    if p["name"] == "Ethernet0":
                        self.assertEqual(p["drops"]["drop_pfcwd"], 0, f"{n}: a host port")
                    ring_drops += p["drops"]["drop_pfcwd"]
            self.assertGreater(ring_drops, 0)

    def test_no_cycle_no_deadlock(self):
        """Pauses without a cycle: the PFC-only 8:1 incast, and the ring with
        1-hop flows (each ring egress carries one flow: nothing waits)."""
        with tempfile.TemporaryDirectory() as out:
            r = run(os.path.join(ROOT, "conf", "scenarios", "incast-8to1-pfc.yaml"), out, "--duration", "2ms")
            self.assertIn(r.returncode, (0, 3), r.stdout + r.stderr)
            s = load(out, "summary.json")
            self.assertGreater(s["totals"].get("packet_hops", 0), 0)
            pfc = sum(int(row["pfc_tx"]) for row in csv.DictReader(open(os.path.join(out, "pfc.csv")))
                      if row["time_s"] == max(x["time_s"] for x in csv.DictReader(open(os.path.join(out, "pfc.csv")))))
            self.assertGreater(pfc, 0, "the incast must pause someone for this to mean anything")
            self.assertEqual(s["deadlocks"], [])
        with tempfile.TemporaryDirectory() as tmp:
            one_hop = os.path.join(tmp, "ring1.yaml")
            txt = subprocess.run(["/usr/bin/python3", TOOL, "--hops", "1"], capture_output=True, text=True,
                                 check=True).stdout
            with open(one_hop, "w") as f:
                f.write(txt.split("\nexpect:\n")[0] + "\n")
            out = os.path.join(tmp, "out")
            r = run(one_hop, out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(load(out, "summary.json")["deadlocks"], [])
            self.assertNotIn("PFC deadlock", r.stdout)

    def test_deadlock_metrics_are_checked(self):
        """An expectation that the deadlock-free claim holds fails on the ring."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.yaml")
            with open(RING) as f:
                txt = f.read().split("\nexpect:\n")[0]
            with open(path, "w") as f:
                f.write(txt + "\nexpect:\n  - deadlocks == 0\n")
            r = run(path, os.path.join(tmp, "out"))
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("FAIL  deadlocks == 0   (1 == 0: no)", r.stdout)


if __name__ == "__main__":
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
