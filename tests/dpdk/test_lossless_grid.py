#!/usr/bin/python3
"""Lossless property tests in virtual time, the CI sample (issue 19 item 2;
docs/testing.md, "Lossless property tests"; the full grid and 50 random
fabrics: tools/lossless_grid.py).

- Grid points of the N:1 incast (tools/lossless_grid.py SAMPLE): N=16 MTU 256
  with the default 12 MiB pool, N=63 (default pool, DCQCN nvidia_cx; 64 MB
  pool, DCQCN off), N=8 MTU 4096 32 MB, N=2 MTU 1024. Each must send XOFF
  from every sender's ingress PG (the messages overfill the shared pool),
  lose nothing lossless (every switch, cable and host drop counter; no NAK or
  retransmission), complete every message, and end with the pool, every PG
  and every queue at 0 bytes. Each run's peak shared pool use is printed.
- 6 seeded random leaf-spine fabrics (tools/random_fabric.py, seeds 1-5 and 15):
  the same invariants (XOFF not required), and the headroom the switch
  computed for every port (`xoff: auto`, reported in <switch>.json) must be
  the generator's own computation of the formula - checked here against the
  worked values of ROCE_REFERENCE.md 2.3 - so the generator's promise that
  the headroom fits the pool is the switch's view too.
- The checker fails what it must: a 16:1 incast whose lossless PG has a
  hand-written 4 KiB of headroom overflows it and is reported as lossless
  drops; a fabric the switch refuses at start-up (headroom larger than the
  pool) is a failure, not a pass.

Without the rocelab-fabric binary every case is a SKIP (exit 77), not an OK.

Run: ROCELAB_BUILD=build /usr/bin/python3 tests/dpdk/test_lossless_grid.py -v
"""
import io
import os
import shutil
import sys
import tempfile
import types
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402
from switchtest import BUILD, ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools"))
import lossless_grid as lg  # noqa: E402
import random_fabric as rf  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
# Seeds 1-5, and 15: a host paused for 3.4 ms while it receives a flow - its
# reply ring overflowed and 8311 ACKs were dropped before the generator's
# responder coalesced a QP's ACKs (replies_coalesced), as RC responders do.
SEEDS = [*range(1, 1 + lg.SAMPLE_SEEDS), 15]


def args(workdir):
    return types.SimpleNamespace(fabric=FABRIC, lock="", timeout=300)


class LosslessGrid(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="lossless-grid-test-")

    PURE = ("test_headroom_formula_matches_the_reference", "test_random_fabrics_are_valid_and_seeded")

    def setUp(self):
        if self._testMethodName not in self.PURE and not os.access(FABRIC, os.X_OK):
            self.skipTest(f"no {FABRIC} (set ROCELAB_BUILD)")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_grid(self, p):
        text, meta = lg.incast_scenario(p)
        meta["flows"] = p[0]
        buf = io.StringIO()
        with redirect_stdout(buf):
            r = lg.run_one(lg.point_name(p), text, meta, args(self.dir), self.dir)
        sys.stdout.write(buf.getvalue())
        return r

    def test_grid_sample(self):
        names = {(n, mtu, pool) for n, mtu, pool, _ in lg.SAMPLE}
        self.assertIn((16, 256, "12MiB"), names)
        self.assertTrue(any(n == 63 for n, _, _ in names))
        for p in lg.SAMPLE:
            with self.subTest(point=lg.point_name(p)):
                r = self.run_grid(p)
                self.assertEqual(r["fails"], [])
                f = r["fig"]
                self.assertGreater(f["xoff_sent"], 0)
                self.assertEqual(f["pgs_xoff"], p[0], "every sender's ingress PG went into XOFF")
                self.assertEqual(f["lossless_drops"], 0)
                self.assertEqual(f["other_drops"], 0)
                n, _, pool, dc = p
                # The shared pool really filled: at least N/(N+1) of its
                # threshold-limited share (dynamic_th 0), less 10 %.
                self.assertGreater(f["peak_shared"], 0.9 * f["shared_size"] * n / (n + 1))
                self.assertEqual(f["pool_size"], lg.size_bytes(pool))
                if dc == "nvidia_cx":
                    self.assertGreater(f["cnp_rx"], 0, "DCQCN acted")
                else:
                    self.assertEqual(f["cnp_rx"], 0)

    def test_headroom_formula_matches_the_reference(self):
        # ROCE_REFERENCE.md 2.3 / lib/qos/headroom.hpp worked values.
        self.assertEqual(rf.headroom(100e9, 5), (72704, 18432))
        self.assertEqual(rf.headroom(100e9, 40), (81920, 18432))
        self.assertEqual(rf.headroom(100e9, 300), (146432, 18432))
        self.assertEqual(rf.headroom(400e9, 40), (176128, 18432))

    def test_random_fabrics(self):
        for seed in SEEDS:
            with self.subTest(seed=seed):
                fab = rf.generate(seed)
                meta = {"kind": "random", "flows": len(fab.flows),
                        "messages_of": lambda name, fab=fab: fab.flows[name]["messages"]}
                buf = io.StringIO()
                with redirect_stdout(buf):
                    r = lg.run_one(f"random-seed{seed}", fab.yaml(), meta, args(self.dir), self.dir)
                sys.stdout.write(buf.getvalue() + f"      {fab.summary()}\n")
                self.assertEqual(r["fails"], [])
                # The switch's headroom is the generator's: every port's PG 3.
                out = os.path.join(self.dir, f"random-seed{seed}")
                lengths = {}
                for c in fab.cables:
                    for e in (c["a"], c["b"]):
                        if isinstance(e, tuple):
                            lengths[e] = (c["gbps"] * 1e9, c["m"])
                for sw in fab.ports:
                    rep = lg.load(out, f"{sw}.json")
                    for port in rep["ports"]:
                        pg3 = [g for g in port["priority_groups"] if g["pg"] == 3][0]
                        xoff, xon = rf.headroom(*lengths[(sw, port["name"])])
                        self.assertTrue(pg3["lossless"])
                        self.assertEqual((pg3["xoff"], pg3["reserved"]), (xoff, xon), f"{sw}:{port['name']}")

    def test_random_fabrics_are_valid_and_seeded(self):
        # Same seed, same file; every switch's reservations fit 3/4 of its pool.
        self.assertEqual(rf.generate(11).yaml(), rf.generate(11).yaml())
        shortened = 0
        for seed in range(1, 51):
            fab = rf.generate(seed)
            shortened += len(fab.shortened)
            for sw in fab.ports:
                need = sum(2 * rf.pg_reservation(c["gbps"] * 1e9, c["m"]) for c in fab.cables
                           if any(isinstance(e, tuple) and e[0] == sw for e in (c["a"], c["b"])))
                self.assertLessEqual(need, rf.POOL_BYTES[fab.pool[sw]] * 3 / 4, f"seed {seed} {sw}")
            for c in fab.cables:
                self.assertTrue(1.0 <= c["m"] <= 10000.0)
                self.assertIn(c["gbps"], rf.RATES_GBPS)
        self.assertGreater(shortened, 0, "some of the 50 seeds needed a shorter cable")

    def test_checker_reports_headroom_overflow_as_lossless_drops(self):
        # The 16:1 point with a hand-written 4 KiB xoff on a 12 MiB pool: the
        # frames in flight when XOFF goes out overflow it. A user error, but
        # the checker must see the loss.
        p = (16, 1024, "12MiB", "off")
        text, meta = lg.incast_scenario(p)
        meta["flows"] = 16
        text = text.replace("      PORT:\n", "      BUFFER_POOL:\n"
                            "        ingress_lossless_pool: {size: 12MiB, type: ingress, mode: dynamic, cell: 96}\n"
                            "      BUFFER_PROFILE:\n"
                            "        short: {pool: ingress_lossless_pool, size: 18432, dynamic_th: 0, xoff: 4096}\n"
                            "      BUFFER_PG:\n"
                            '        "global|3": {profile: short}\n'
                            "      PORT:\n", 1)
        buf = io.StringIO()
        with redirect_stdout(buf):
            r = lg.run_one("short-headroom", text, meta, args(self.dir), self.dir)
        print(buf.getvalue().splitlines()[0])
        self.assertFalse(r["ok"])
        self.assertGreater(r["fig"]["lossless_drops"], 0)
        self.assertTrue(any("drop_headroom_overflow" in f for f in r["fails"]), r["fails"])

    def test_fabric_refused_at_start_up_is_a_failure(self):
        p = (8, 1024, "32MB", "off")
        text, meta = lg.incast_scenario(p)
        meta["flows"] = 8
        text = text.replace("size: 32MB", "size: 1MB")   # 9 ports x 2 x 91136 B do not fit
        buf = io.StringIO()
        with redirect_stdout(buf):
            r = lg.run_one("refused", text, meta, args(self.dir), self.dir)
        print(buf.getvalue().splitlines()[0])
        self.assertFalse(r["ok"])
        self.assertTrue(r["fails"][0].startswith("rocelab-fabric exit 2"), r["fails"])


if __name__ == "__main__":
    testmain.main()
