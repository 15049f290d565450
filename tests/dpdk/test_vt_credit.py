#!/usr/bin/python3
"""Credit flow control (issue 24 item 3): cables in `flow_control: credit`
(InfiniBand-style link-level credits) beside the same fabrics with PFC.

Oracles that do not come from the credit code:
  - the wire: the captures (read by tests/dpdk/wire.py, not rocelab) carry
    no MAC Control frame at all on a credit fabric, and PFC frames on the
    same fabric with PFC; the receiver's goodput, counted from its capture,
    is the same either way (the bottleneck port is full in both);
  - the switch's own buffer accounting (its report's priority groups, kept
    by the MMU, not by the credit code): no lossless PG ever held more than
    its reserved + headroom bytes (the configuration's figures in the same
    report), which is what a credit link promises; with PFC the same PGs
    go far beyond (into the shared pool);
  - two threads give the same bytes as one (the credit updates cross the
    partitions like frames);
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
import wire  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
SCN = os.path.join(ROOT, "conf", "scenarios")


def run(path, out, *extra):
    return subprocess.run([FABRIC, "run", path, "--out", out, "--quiet", *extra],
                          capture_output=True, text=True, timeout=300)


def load(out, name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


def mac_control_frames(pcap_dir):
    n = 0
    for name in os.listdir(pcap_dir):
        if name.endswith("-tx.pcap"):
            n += sum(1 for fr in wire.frames(os.path.join(pcap_dir, name)) if fr.kind == "mac_control")
    return n


def rx_bytes(pcap):
    return sum(fr.length for fr in wire.frames(pcap) if fr.kind == "roce")


class Credit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = {}
        for name in ("incast-8to1-credit", "incast-8to1-pfc"):
            o = os.path.join(cls.tmp.name, name)
            r = run(os.path.join(SCN, name + ".yaml"), o, "--duration", "2ms", "--pcap")
            assert r.returncode in (0, 1), r.stdout + r.stderr
            cls.out[name] = o

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_pfc_on_the_wire_with_credits(self):
        self.assertEqual(mac_control_frames(self.out["incast-8to1-credit"]), 0)
        self.assertGreater(mac_control_frames(self.out["incast-8to1-pfc"]), 0)

    def test_same_goodput_from_the_wire(self):
        c = rx_bytes(self.out["incast-8to1-credit"] + "/leaf0-Ethernet8-tx.pcap")
        p = rx_bytes(self.out["incast-8to1-pfc"] + "/leaf0-Ethernet8-tx.pcap")
        self.assertGreater(c, 0)
        self.assertLess(abs(c - p) / p, 0.02, (c, p))
        # The bottleneck full: 100 Gbps for 2 ms less the first round trip, with 24 B per frame on the wire.
        n = sum(1 for fr in wire.frames(self.out["incast-8to1-credit"] + "/leaf0-Ethernet8-tx.pcap"))
        self.assertGreater((c + 24 * n) * 8 / 2e-3, 0.97e11)

    def test_buffer_never_beyond_what_was_given(self):
        for name, within in (("incast-8to1-credit", True), ("incast-8to1-pfc", False)):
            rep = load(self.out[name], "leaf0.json")
            beyond = 0
            for port in rep["ports"]:
                for pg in port["priority_groups"]:
                    if not pg["lossless"] or pg["peak_use"] == 0:
                        continue
                    guaranteed = pg["reserved"] + pg["xoff"]
                    self.assertGreater(guaranteed, 0)
                    if within:
                        self.assertLessEqual(pg["peak_use"], guaranteed, (name, port["name"], pg))
                        self.assertEqual(pg["xoff_transitions"], 0, (name, port["name"], pg))
                    beyond += pg["peak_use"] > guaranteed
            if not within:
                self.assertGreater(beyond, 0, "with PFC the PGs fill the shared pool")
        s = load(self.out["incast-8to1-credit"], "summary.json")
        self.assertEqual(s["totals"]["lossless_drops"], 0)
        self.assertEqual(s["totals"]["credit_overruns"], 0)
        self.assertGreater(s["totals"]["credit_waits"], 0)
        # Every credited class the report lists: what the sender holds never passed the limit it was given.
        for c in load(self.out["incast-8to1-credit"], "fabric.json")["credits"]:
            if "fctbs_blocks" in c:
                self.assertLessEqual(c["fctbs_blocks"], c["fccl_blocks"], c)

    def test_side_by_side_report(self):
        out = os.path.join(self.tmp.name, "cmp")
        r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "compare_fc.py"), "--out", out,
                            "pfc=" + self.out["incast-8to1-pfc"], "credit=" + self.out["incast-8to1-credit"]],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(out, "compare.json")) as f:
            c = json.load(f)
        self.assertEqual([x["label"] for x in c], ["pfc", "credit"])
        self.assertGreater(c[0]["pfc_frames_sent"], 0)
        self.assertEqual(c[1]["pfc_frames_sent"], 0)
        self.assertEqual(set(c[0]["flows"]), set(c[1]["flows"]))
        # The deepest queue is the receiver's, far deeper with PFC than with credits.
        self.assertEqual(c[0]["queues"][0]["queue"], "leaf0:Ethernet8:3")
        self.assertEqual(c[1]["queues"][0]["queue"], "leaf0:Ethernet8:3")
        self.assertGreater(c[0]["queues"][0]["peak_bytes"], 4 * c[1]["queues"][0]["peak_bytes"])
        with open(os.path.join(out, "compare.html")) as f:
            page = f.read()
        self.assertIn("queues.png", page)
        self.assertTrue(os.path.getsize(os.path.join(out, "queues.png")) > 1000)

    def test_two_threads_same_bytes(self):
        with tempfile.TemporaryDirectory() as o1, tempfile.TemporaryDirectory() as o2:
            path = os.path.join(SCN, "congestion-spreading-credit.yaml")
            r1 = run(path, o1, "--duration", "1ms")
            r2 = run(path, o2, "--duration", "1ms", "--threads", "2")
            self.assertEqual(r1.returncode, 0, r1.stdout + r1.stderr)
            self.assertEqual(r2.returncode, 0, r2.stdout + r2.stderr)
            for f in ("summary.json", "flows.csv", "queues.csv", "pfc.csv"):
                with open(os.path.join(o1, f), "rb") as a, open(os.path.join(o2, f), "rb") as b:
                    self.assertEqual(a.read(), b.read(), f)
            f1, f2 = load(o1, "fabric.json"), load(o2, "fabric.json")
            self.assertEqual(f1["credits"], f2["credits"])
            self.assertEqual(f1["links"], f2["links"])
            self.assertGreater(sum(c.get("updates", 0) for c in f1["credits"]), 0)


BASE = """name: bad
duration: 1ms
link: {rate: 100Gbps, delay: 25ns, flow_control: credit%s}
switches:
  - name: leaf0
    config:
      PORT:
        Ethernet0: {speed: 100Gbps}
        Ethernet1: {speed: 100Gbps}
%s
hosts: h0..h1
links:
  - {a: h0..h1, b: leaf0:Ethernet0..Ethernet1}
traffic: {pattern: incast, senders: 1, msg_size: 64KiB%s}
"""


class BadInput(unittest.TestCase):
    def bad(self, text, *want, extra=()):
        fabrictest.assert_refused(self, text, *want, extra=extra)

    def test_real_time_over_ethdevs(self):
        # --real-time runs the pipelines over net_ring ethdevs, which the credit count cannot see.
        with open(os.path.join(SCN, "incast-8to1-credit.yaml")) as f:
            text = f.read()
        self.bad(text, "flow_control: credit runs on simulated ports, not over ethdevs",
                 extra=("--real-time", "--duration", "1ms"))

    def test_unknown_mode(self):
        self.bad(BASE.replace("flow_control: credit", "flow_control: ib") % ("", "", ""), "flow_control", "pfc", "credit")

    def test_credit_mixed_with_host_pfc(self):
        self.bad(BASE % ("", "", ", pfc_tx: 'port=0,prio=3,interval=10us,count=0'"),
                 "credit mixed with PFC", "host port 0")

    def test_credit_mixed_with_pause(self):
        self.bad(BASE % ("", "      PORT_QOS_MAP:\n        Ethernet0: {pfc_enable: '3,4', pfc_mode: pause}", ""),
                 "credit mixed with PFC/PAUSE", "Ethernet0")

    def test_no_lossless_class(self):
        self.bad(BASE % ("", "      PORT_QOS_MAP:\n        Ethernet1: {pfc_enable: ''}", ""),
                 "no lossless class", "Ethernet1")

    def test_credits_beyond_the_guaranteed_buffer(self):
        self.bad(BASE % (", credits: 64MiB", "", ""), "exceed what PG 3 always holds", "could be dropped")

    def test_credits_below_one_frame(self):
        self.bad(BASE % (", credits: 1KiB", "", ""), "less than one frame")

    def test_two_hosts(self):
        text = ("name: bad\nduration: 1ms\nlink: {rate: 100Gbps, delay: 25ns, flow_control: credit}\n"
                "switches:\n  - {name: leaf0, config: {PORT: {Ethernet0: {speed: 100Gbps}}}}\n"
                "hosts: h0..h2\nlinks:\n  - {a: h0, b: h1}\n  - {a: h2, b: leaf0:Ethernet0}\n"
                "traffic: {pattern: one_to_one, msg_size: 64KiB}\n")
        self.bad(text, "needs a switch at one end")


if __name__ == "__main__":
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
