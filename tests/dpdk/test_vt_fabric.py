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
- After the run, tools/fabric_report.py writes index.html and four plots:
  the page names every expectation and the verdict of summary.json, the
  PNGs are valid and carry no text chunk (no version, no time), both runs
  give the same bytes; the script on its own says when a plot has no data,
  and refuses a folder that is not a report; --no-plots skips it, and its
  failure is a warning that keeps the run's exit status.
- Bad topologies fail with exit 2 and one line naming the file, line, field
  and what is accepted. --help and `check` work without EAL.

Run: /usr/bin/python3 tests/dpdk/test_vt_fabric.py -v
"""
import html
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fabrictest import FABRIC, PLOTS, incast_2to1, run  # noqa: E402
from switchtest import ROOT, icrc_ok, tshark_expert, tshark_fields  # noqa: E402
from scapy.all import Ether, rdpcap  # noqa: E402
from scapy.contrib.mac_control import MACControlClassBasedFlowControl  # noqa: E402

REPORT = os.path.join(ROOT, "tools", "fabric_report.py")

SMALL = "duration: 300us\n" + incast_2to1("256KiB") + """name: small-2to1
description: "2:1 incast at 100 Gbps, ECN & PFC <small>"
expect:
  - lossless_drops == 0
  - busy(leaf0:Ethernet2) >= 95%
  - naks(h0->h2#0) == 0
  - pfc_tx(leaf0) > 0
"""


def png_chunks(data):
    """[(type, length)] of a PNG, or AssertionError if it is not one."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
    out, i = [], 8
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        out.append((kind.decode("ascii"), n, data[i + 8:i + 8 + n]))
        i += 12 + n
    assert out and out[0][0] == "IHDR" and out[-1][0] == "IEND", "chunks out of order"
    return out


def report(d):
    p = subprocess.run(["/usr/bin/python3", REPORT, d], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


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
        for n in ("index.html",) + PLOTS:
            self.assertIn(n, names)
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

    def test_summary_page_and_plots(self):
        self.assertIn(f"rocelab-fabric: summary {self.outs[-1]}/index.html", self.stdout)  # the last run's
        out = self.outs[0]
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertEqual(len(summary["expectations"]), 4)
        self.assertTrue(summary["passed"])
        self.assertIn('class="banner pass">PASSED', page)
        self.assertNotIn("FAILED", page)
        self.assertIn("<h1>small-2to1</h1>", page)
        self.assertIn("ECN &amp; PFC &lt;small&gt;", page, "the description, escaped")
        for e in summary["expectations"]:
            row = (f'<span class="ok">PASS</span></td><td><code>{html.escape(e["expect"])}</code></td>'
                   f'<td>{html.escape(e["detail"])}</td>')
            self.assertIn(row, page)
        for fl in summary["flows"]:
            self.assertIn(f"<td>{html.escape(fl['flow'])}</td>", page)
        # Self-contained: the plots by relative name, nothing fetched.
        for n in PLOTS:
            self.assertIn(f'<img src="{n}"', page)
        for bad in ("<script", "http:", "https:", "<link", out):
            self.assertNotIn(bad, page)
        for n in PLOTS:
            with open(os.path.join(out, n), "rb") as f:
                data = f.read()
            self.assertGreater(len(data), 10_000, f"{n}: too small to hold a plot")
            chunks = png_chunks(data)
            w, h = struct.unpack(">II", chunks[0][2][:8])
            self.assertGreaterEqual((w, h), (800, 400), n)
            self.assertEqual([c[0] for c in chunks if c[0] in ("tEXt", "iTXt", "zTXt", "tIME")], [],
                             f"{n}: a text or time chunk (not deterministic)")

    def test_summary_page_without_queues_or_pfc_and_failed(self):
        # The script on its own, on a copy: no switch queue, no PFC frame,
        # an expectation failed. Stale plots go; the page says why.
        with tempfile.TemporaryDirectory(prefix="rocelab-vt-rep-") as d:
            for n in os.listdir(self.outs[0]):
                if not n.endswith(".pcap"):
                    shutil.copy(os.path.join(self.outs[0], n), d)
            for n, header in (("queues.csv", "time_s,node,port,queue,depth_bytes,paused\n"),):
                with open(os.path.join(d, n), "w") as f:
                    f.write(header)
            os.unlink(os.path.join(d, "pfc.csv"))
            with open(os.path.join(d, "summary.json")) as f:
                summary = json.load(f)
            summary["expectations"][1]["passed"] = False
            summary["passed"] = False
            with open(os.path.join(d, "summary.json"), "w") as f:
                json.dump(summary, f)
            rc, so, se = report(d)
            self.assertEqual((rc, so, se), (0, "", ""))
            self.assertTrue(os.path.exists(os.path.join(d, "throughput.png")))
            self.assertFalse(os.path.exists(os.path.join(d, "queues.png")), "a stale plot stays")
            self.assertFalse(os.path.exists(os.path.join(d, "pfc.png")), "a stale plot stays")
            with open(os.path.join(d, "index.html"), encoding="utf-8") as f:
                page = f.read()
            self.assertIn('class="banner fail">FAILED<small>3 of 4 expectations passed', page)
            self.assertIn('<tr class="bad"><td><span class="ko">FAIL</span></td><td><code>'
                          + html.escape(summary["expectations"][1]["expect"]), page)
            self.assertIn("No switch egress queue in queues.csv", page)
            self.assertIn("No port sent or received a PFC or PAUSE frame", page)
            self.assertNotIn('src="queues.png"', page)
            self.assertNotIn('src="pfc.png"', page)
            # Not a report folder: exit 2, one line.
            os.unlink(os.path.join(d, "summary.json"))
            rc, so, se = report(d)
            self.assertEqual(rc, 2)
            self.assertEqual(se.count("\n"), 1, se)
            self.assertIn("not a rocelab-fabric report folder (no summary.json)", se)

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

    def test_no_plots_and_a_failing_script(self):
        with tempfile.TemporaryDirectory(prefix="rocelab-vt-") as d:
            topo = os.path.join(d, "small.yaml")
            with open(topo, "w") as f:
                f.write(SMALL)
            rc, out, err = run(["run", topo, "--out", os.path.join(d, "a"), "--quiet", "--no-plots"])
            self.assertEqual(rc, 0, err)
            self.assertNotIn("summary", out)
            self.assertFalse(set(os.listdir(os.path.join(d, "a"))) & {"index.html", *PLOTS})
            # The script fails: a warning naming it, the reports stay, exit 0.
            env = dict(os.environ, ROCELAB_TOOLS=os.path.join(d, "none"))
            p = subprocess.run([FABRIC, "run", topo, "--out", os.path.join(d, "b"), "--quiet"], env=env,
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            warn = [l for l in p.stderr.splitlines() if l.startswith("rocelab-fabric: warning:")]
            self.assertEqual(len(warn), 1, p.stderr)
            self.assertIn(os.path.join(d, "none", "fabric_report.py") + " failed", warn[0])
            self.assertTrue(os.path.exists(os.path.join(d, "b", "summary.json")))

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
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
