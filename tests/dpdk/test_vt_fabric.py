#!/usr/bin/python3
"""rocelab-fabric, the virtual-time runner, as a user runs it.

- A small 2:1 RoCE incast at 100 Gbps (inline switch and generator configs)
  runs twice: every output but speed.json (wall-clock figures) is byte for
  byte the same, captures included.
- Its wire captures decode cleanly in tshark (no malformed frame, no expert
  warning), every RoCE frame's ICRC verifies in scapy (an independent
  implementation), the leaf marks CE on the congested egress (RFC 3168, read
  by tshark), the receiver answers with CNPs (BTH opcode 0x81) and the leaf
  sends PFC XOFF upstream (802.1Qbb, decoded by scapy); timestamps are in
  fabric time (0 .. the duration).
- Bad topologies fail with exit 2 and one line naming the file, line, field
  and what is accepted. --help and `check` work without EAL.

Run: /usr/bin/python3 tests/dpdk/test_vt_fabric.py -v
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT, icrc_ok, tshark_expert, tshark_fields  # noqa: E402
from scapy.all import Ether, rdpcap  # noqa: E402
from scapy.contrib.mac_control import MACControlClassBasedFlowControl  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")

SMALL = """duration: 300us
link: {rate: 100Gbps, delay: 25ns}
nodes:
  - name: leaf0
    switch:
      PORT:
        Ethernet0: {speed: 100Gbps}
        Ethernet1: {speed: 100Gbps}
        Ethernet2: {speed: 100Gbps}
      WRED_PROFILE:
        ECN_LOW: {wred_green_enable: "true", ecn: ecn_all, green_min_threshold: 20000, green_max_threshold: 100000,
                  green_drop_probability: 10}
      QUEUE:
        Ethernet2|3: {wred_profile: ECN_LOW}
      BUFFER_POOL:                      # the default set-up with a 1MiB pool, so that PFC acts within the run
        ingress_lossless_pool: {size: 1MiB, type: ingress, mode: dynamic, cell: 96}
      BUFFER_PROFILE:
        pg_lossless_auto_profile: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto}
        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}
      BUFFER_PG:
        "global|3-4": {profile: pg_lossless_auto_profile}
        "global|0": {profile: ingress_lossy_profile}
  - name: hosts
    gen: {seed: 3, pattern: incast, senders: 2, msg_size: 256KiB, pmtu: 1024, window: 4096}
links:
  - {a: hosts:0..2, b: leaf0:Ethernet0..Ethernet2}
"""


def run(args, timeout=300):
    p = subprocess.Popen([FABRIC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"rocelab-fabric (pid {p.pid}) did not finish in {timeout}s\n{out}\n{err}")
    return p.returncode, out, err


class FabricRunner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="rocelab-vt-")
        cls.topo = os.path.join(cls.tmp.name, "small.yaml")
        with open(cls.topo, "w") as f:
            f.write(SMALL)
        cls.outs = []
        for k in range(2):
            out = os.path.join(cls.tmp.name, f"run{k}")
            rc, so, se = run(["run", cls.topo, "--out", out, "--pcap", "--snaplen", "2048B", "--quiet"])
            assert rc == 0, f"rocelab-fabric failed ({rc}):\n{so}\n{se}"
            cls.outs.append(out)
        cls.stdout = so

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_two_runs_are_byte_identical(self):
        a, b = self.outs
        names = sorted(os.listdir(a))
        self.assertEqual(names, sorted(os.listdir(b)))
        self.assertIn("fabric.json", names)
        pcaps = [n for n in names if n.endswith(".pcap")]
        self.assertEqual(len(pcaps), 12, "tx and rx at both ends of 3 cables")
        for n in names:
            if n == "speed.json":
                continue
            with open(os.path.join(a, n), "rb") as fa, open(os.path.join(b, n), "rb") as fb:
                self.assertTrue(fa.read() == fb.read(), f"{n} differs between two runs")

    def test_fabric_report(self):
        with open(os.path.join(self.outs[0], "fabric.json")) as f:
            rep = json.load(f)
        self.assertEqual(rep["fabric_time_ns"], 300_000)
        self.assertEqual([n["spins"] for n in rep["nodes"]], [0, 0])
        self.assertEqual(sum(n.get("drops", 0) for n in rep["nodes"]), 0)
        links = {l["from"]: l for l in rep["links"]}
        self.assertEqual(len(links), 6)
        # 2 senders at 100 Gbps into one 100 Gbps port: it is busy once the
        # first frames arrive (a few us), so > 95 % over the whole run.
        self.assertGreater(links["leaf0:Ethernet2"]["busy"], 0.95)
        self.assertTrue(all(l["lost"] == 0 and l["rx_ring_full"] == 0 for l in rep["links"]))
        with open(os.path.join(self.outs[0], "speed.json")) as f:
            sp = json.load(f)
        self.assertEqual(sp["packet_hops"], rep["packet_hops"])
        self.assertGreater(sp["packet_hops_per_wall_s"], 0)
        self.assertIn("spins 0", self.stdout)

    def test_captures_decode_cleanly_in_fabric_time(self):
        for n in sorted(os.listdir(self.outs[0])):
            if not n.endswith(".pcap"):
                continue
            path = os.path.join(self.outs[0], n)
            exp = tshark_expert(path)
            self.assertNotIn("Malformed", exp, f"{n}: {exp}")
            self.assertNotIn("Warning", exp, f"{n}: {exp}")
            ts = [float(r[0]) for r in tshark_fields(path, "frame.time_epoch")]
            self.assertTrue(ts, n)
            self.assertGreaterEqual(min(ts), 0.0)
            self.assertLessEqual(max(ts), 300e-6 + 1e-12, f"{n}: a timestamp past the fabric time")
            self.assertEqual(ts, sorted(ts), f"{n}: not in time order")

    def test_icrc_of_every_roce_frame_verifies_in_scapy(self):
        path = os.path.join(self.outs[0], "leaf0-Ethernet2-tx.pcap")
        frames = [bytes(p) for p in rdpcap(path)]
        roce = [f for f in frames if len(f) > 42 and f[12:14] == b"\x08\x00" and f[23] == 17 and f[36:38] == b"\x12\xb7"]
        self.assertGreater(len(roce), 1000)
        bad = [i for i, f in enumerate(roce) if not icrc_ok(f)]
        self.assertEqual(bad, [], f"{len(bad)} of {len(roce)} RoCE frames fail scapy's ICRC")

    def test_ce_marks_cnps_and_pfc_on_the_wire(self):
        out = self.outs[0]
        # CE on the congested egress, as tshark reads the IP header.
        ce = tshark_fields(os.path.join(out, "leaf0-Ethernet2-tx.pcap"), "ip.dsfield.ecn",
                           display_filter="udp.dstport == 4791 && ip.dsfield.ecn == 3")
        self.assertGreater(len(ce), 0, "the leaf must mark CE above the profile's Kmin")
        # CNPs from the receiver (BTH opcode 0x81), each to one of the senders.
        cnp = tshark_fields(os.path.join(out, "hosts-port2-tx.pcap"), "infiniband.bth.opcode",
                            display_filter="infiniband.bth.opcode == 129")
        self.assertGreater(len(cnp), 0)
        # PFC XOFF for priority 3 upstream towards a sender (scapy's 802.1Qbb layer).
        xoff = 0
        for p in rdpcap(os.path.join(out, "leaf0-Ethernet0-tx.pcap")):
            if MACControlClassBasedFlowControl in p:
                c = p[MACControlClassBasedFlowControl]
                if c.c3_enabled and c.c3_pause_time > 0:
                    xoff += 1
        self.assertGreater(xoff, 0, "a 2:1 incast into 100 Gbps must pause the senders")


class FabricCli(unittest.TestCase):
    def test_help_and_check_need_no_eal(self):
        rc, out, _ = run(["--help"])
        self.assertEqual(rc, 0)
        self.assertIn("rocelab-fabric [EAL options --] run TOPOLOGY.yaml", out)
        rc, out, err = run(["check", os.path.join(ROOT, "conf", "fabric", "incast-8to1-100g.yaml")])
        self.assertEqual(rc, 0, err)
        self.assertIn("valid (2 nodes, 9 cables, 10ms of fabric time)", out)

    def bad(self, text, *expect):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text)
        try:
            rc, out, err = run(["run", f.name, "--out", tempfile.gettempdir() + "/rocelab-vt-never"])
        finally:
            os.unlink(f.name)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(f.name, err)
        for e in expect:
            self.assertIn(e, err)
        return err

    def test_bad_topologies_name_file_line_field_and_range(self):
        base = SMALL
        self.bad(base.replace("duration: 300us", "duration: 300us\nspeed: 1"), ":2:1: speed: unknown key; accepted")
        self.bad(base.replace("rate: 100Gbps, delay", "rate: fast, delay"), "link.rate: 'fast': a rate > 0 with units")
        self.bad(base.replace("leaf0:Ethernet0..Ethernet2", "leaf0:Ethernet0..Ethernet9"),
                 "links[0].b: 'Ethernet9': a PORT name of leaf0 or an index 0..2")
        self.bad(base.replace("hosts:0..2", "hosts:0..1"), "links[0]: a names 2 ports and b 3")
        self.bad(base.replace("hosts:0..2", "nobody:0..2"), "links[0].a: 'nobody': no node of that name")
        self.bad(base.replace("link: {rate", "link: {loss: 200%, rate"), "link.loss: '200%': a loss rate 0%..100%")
        # An inline generator config's own error, at its line in this file.
        line = base.splitlines().index([l for l in base.splitlines() if "senders: 2," in l][0]) + 1
        self.bad(base.replace("senders: 2,", "senders: 2, bogus: 1,"), f".yaml:{line}:", "unknown option or key 'bogus'")


if __name__ == "__main__":
    unittest.main()
