#!/usr/bin/python3
"""DCQCN end to end, in real time on memif links: rocelab-gen hosts through
rocelab-switch.

Closed loop (conf/dcqcn-2to1-1g.yaml + conf/gen/dcqcn-2to1-1g.yaml): two RC
QPs at 1Gbps into one 1Gbps switch port, the switch marks ECN on queue 3, the
receiver sends CNPs, the senders' reaction points (nvidia_cx, timers scaled
x100 to the emulated rate, docs/dcqcn.md) cut and recover. The same run with
`--dcqcn off` is the reference: its queue sits at the PFC XOFF level and the
switch keeps pausing the senders.

Built-in defaults: a config that gives only ports (with speeds, so the egress
is shaped) keeps SONiC's RoCE defaults; ECT(0) RoCE at 2 x the egress rate
is marked CE (seen on the wire by tshark) and PFC XOFF for priority 3 goes
upstream (decoded by scapy).

Run: /usr/bin/python3 tests/dpdk/test_dcqcn.py -v
"""
import csv
import collections
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import ROOT  # noqa: E402
from test_fabric import GEN, SWITCH, run_fabric, run_fabric_undisturbed  # noqa: E402

KMIN, KMAX = 100_000, 400_000  # conf/dcqcn-2to1-1g.yaml WRED_PROFILE DCQCN_1G


def queue_samples(path, port="Ethernet2", queue="3", after_s=2.0):
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["port"] == port and r["queue"] == queue]
    t0 = float(rows[0]["time_s"])
    return [int(r["depth_bytes"]) for r in rows if float(r["time_s"]) - t0 > after_s]


def late_goodput(path, t_from=2.0, t_to=5.5):
    """Mean goodput per flow from the time series, after the first burst."""
    g = collections.defaultdict(list)
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        t = float(r["time_s"])
        if t_from < t < t_to:
            g[r["flow"]].append(float(r["goodput_bps"]))
    return {k: sum(v) / len(v) for k, v in g.items()}


def xoff_level(sw_report, senders, dynamic_th):
    """Queue depth at which every sender's lossless PG 3 is in XOFF: each
    holds its reserved bytes plus the dynamic threshold alpha x free shared,
    which with N equal senders settles at alpha S / (1 + N alpha)."""
    alpha = 2.0 ** dynamic_th
    shared = sw_report["pool_shared_size"]
    reserved = [pg["reserved"] for pg in sw_report["ports"][0]["priority_groups"] if pg["pg"] == 3][0]
    return int(senders * (alpha * shared / (1 + senders * alpha) + reserved))


def run_2to1(test, tmp, dcqcn):
    """The 2:1 run, repeated (fresh directory) if host stalls made a QP time out."""
    attempt = iter(range(1, 4))
    g, s, d = run_fabric_undisturbed(test, 3, 1e9, lambda: run_2to1_once(test, tmp, dcqcn, f"{dcqcn}{next(attempt)}"))
    return d, g, s


def run_2to1_once(test, tmp, dcqcn, sub):
    d = os.path.join(tmp, sub)
    os.makedirs(d)
    g, s = run_fabric(
        test, d, 3,
        ["--config", os.path.join(ROOT, "conf", "dcqcn-2to1-1g.yaml"), "--duration", "9s",
         "--queue-csv", os.path.join(d, "queues.csv")],
        ["--config", os.path.join(ROOT, "conf", "gen", "dcqcn-2to1-1g.yaml"), "--dcqcn", dcqcn,
         "--timeseries", os.path.join(d, "flows.csv"), "--timeseries-interval", "50ms",
         "--dcqcn-trace", os.path.join(d, "trace.csv")], "d" + sub, one_cpu=True)
    return g, s, d


class DcqcnClosedLoop(unittest.TestCase):
    def test_two_to_one_dcqcn_on_versus_off(self):
        with tempfile.TemporaryDirectory(prefix="rocelab-dcqcn-") as tmp:
            d_on, g_on, s_on = run_2to1(self, tmp, "nvidia_cx")
            d_off, g_off, s_off = run_2to1(self, tmp, "off")
            for g in (g_on, g_off):
                for f in g["flows"]:
                    self.assertEqual((f["naks_rx"], f["retransmissions"], f["timeouts"]), (0, 0, 0), f["name"])
            for s in (s_on, s_off):
                drops = {p["name"]: {k: v for k, v in p["drops"].items() if v and k != "rx_pfc_disabled_prio"}
                         for p in s["ports"]}
                self.assertTrue(all(not x for x in drops.values()), drops)

            # The loop closed: the switch marked, every mark the receiver saw
            # is a CE it counted, CNPs went out and each one came back to its QP.
            rx_port = s_on["ports"][2]
            self.assertGreater(rx_port["queues"][3]["ecn_marked"], 0)
            self.assertEqual(rx_port["queues"][3]["wred_kmin_bytes"], KMIN)
            self.assertEqual(rx_port["queues"][3]["wred_kmax_bytes"], KMAX)
            tot = g_on["totals"]
            # Every mark reached the receiver, except marks on frames the
            # switch had dequeued (marking is at dequeue) but memif had not
            # taken when the switch stopped (freed, counted in tx_flushed),
            # and on frames memif took after the receiver stopped reading
            # (its run ends before the switch's: the switch's tx_packets on
            # the port less the receiver's rx_packets; a CI run lost 2 marks
            # that way with tx_flushed 0).
            marked = rx_port["queues"][3]["ecn_marked"]
            unread = rx_port["tx_packets"] - g_on["ports"][2]["rx_packets"]
            self.assertGreaterEqual(unread, 0)
            self.assertLessEqual(tot["ce_rx"], marked)
            self.assertLessEqual(marked - tot["ce_rx"], rx_port["tx_flushed"] + unread,
                                 (marked, tot["ce_rx"], rx_port["tx_flushed"], unread))
            self.assertGreater(tot["cnp_tx"], 0)
            # Every CNP came back to its QP, except those in flight when the
            # run ended (a CI run lost 1 of 5234): the receiver sends CNPs
            # until its last poll, and the switch, which stops 500 ms after
            # the traffic, forwards them to the senders' ports, which the
            # generator no longer reads (its frames, PFC included, less what
            # those ports received), or frees one it had staged (tx_flushed).
            # Nothing else may account for a missing CNP: the switch dropped
            # nothing (above).
            unread_up = sum(s_on["ports"][i]["tx_packets"] + s_on["ports"][i]["tx_pfc_frames"] -
                            g_on["ports"][i]["rx_packets"] for i in (0, 1))
            flushed_up = sum(s_on["ports"][i]["tx_flushed"] for i in (0, 1))
            self.assertGreaterEqual(unread_up, 0)
            self.assertLessEqual(tot["cnp_rx"], tot["cnp_tx"])
            self.assertLessEqual(tot["cnp_tx"] - tot["cnp_rx"], unread_up + flushed_up,
                                 (tot["cnp_tx"], tot["cnp_rx"], unread_up, flushed_up))
            self.assertGreater(tot["rate_cuts"], 0)
            for f in g_on["flows"]:
                self.assertLess(f["rate_min_bps"], 0.9e9, f["name"])
            # With DCQCN off the receiver still counts CE, but sends no CNP.
            self.assertGreater(g_off["totals"]["ce_rx"], 0)
            self.assertEqual((g_off["totals"]["cnp_tx"], g_off["totals"]["rate_cuts"]), (0, 0))

            # PFC: pauses continue without DCQCN; with it they fall at least tenfold.
            pfc_on = sum(p["tx_pfc_frames"] for p in s_on["ports"])
            pfc_off = sum(p["tx_pfc_frames"] for p in s_off["ports"])
            print(f"\nPFC frames sent by the switch: DCQCN on {pfc_on}, off {pfc_off}")
            self.assertGreater(pfc_off, 100)
            self.assertLessEqual(pfc_on * 10, pfc_off)

            # Fair shares: each flow within 15 % of half of what the link
            # carries (the off run's total goodput: PFC keeps that link full).
            half = sum(late_goodput(os.path.join(d_off, "flows.csv")).values()) / 2
            on = late_goodput(os.path.join(d_on, "flows.csv"))
            print(f"goodput after 2s, DCQCN on: {on}, half the link: {half:.0f}")
            self.assertEqual(len(on), 2)
            for name, gp in on.items():
                self.assertLess(abs(gp - half), 0.15 * half, name)

            # The queue: with DCQCN off it stands high (above Kmax, at the PFC
            # level, much of the time); with DCQCN on it is rarely above Kmax.
            q_on = queue_samples(os.path.join(d_on, "queues.csv"))
            q_off = queue_samples(os.path.join(d_off, "queues.csv"))
            frac = lambda q, lo, hi: sum(lo < x <= hi for x in q) / len(q)  # noqa: E731
            print("queue 3 of Ethernet2 after 2s: on below/between/above Kmax "
                  f"{frac(q_on, -1, KMIN):.2f}/{frac(q_on, KMIN, KMAX):.2f}/{frac(q_on, KMAX, 1 << 40):.2f}, "
                  f"off {frac(q_off, -1, KMIN):.2f}/{frac(q_off, KMIN, KMAX):.2f}/{frac(q_off, KMAX, 1 << 40):.2f}")
            self.assertLess(frac(q_on, KMAX, 1 << 40), 0.05)
            self.assertGreater(frac(q_off, KMAX, 1 << 40), 0.2)
            self.assertGreater(frac(q_on, KMIN, KMAX), 0.05)

            # The trace and the plot (tools/plot_dcqcn.py) are produced.
            with open(os.path.join(d_on, "trace.csv")) as f:
                ev = collections.Counter(r["event"] for r in csv.DictReader(f))
            self.assertGreater(ev["cut"], 0)
            self.assertGreater(ev["cnp"], 0)
            png = os.path.join(tmp, "dcqcn.png")
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "plot_dcqcn.py"),
                            "--timeseries", os.path.join(d_on, "flows.csv"),
                            "--trace", os.path.join(d_on, "trace.csv"),
                            "--queue-csv", os.path.join(d_on, "queues.csv"), "--switch-report",
                            os.path.join(d_on, "sw.json"), "--port", "Ethernet2", "--queue", "3",
                            "--xoff", str(xoff_level(s_on, senders=2, dynamic_th=-3)),
                            "--out", png], check=True, capture_output=True)
            self.assertGreater(os.path.getsize(png), 10000)


class DemoLoopConfigs(unittest.TestCase):
    def test_the_demo_configs_load_and_mark_below_xoff(self):
        """tools/demo.sh's real-time pair: the switch file loads with its
        1 Gbps ECN thresholds below the four sender PGs' XOFF level, the
        generator file loads (its run is the 2:1 loop above, 4 senders)."""
        sw = subprocess.run([SWITCH, "--", "--check-config", "--config",
                             os.path.join(ROOT, "conf", "incast-4to1-ecn-1g.yaml")],
                            capture_output=True, text=True, timeout=60)
        self.assertEqual(sw.returncode, 0, sw.stdout + sw.stderr)
        self.assertIn("valid (5 ports, mode l2)", sw.stdout)
        with open(os.path.join(ROOT, "conf", "incast-4to1-ecn-1g.yaml")) as f:
            cfg = yaml.safe_load(f)
        w = cfg["WRED_PROFILE"]["DCQCN_1G"]
        kmax = int(w["green_max_threshold"].rstrip("KB")) * 1000
        # XOFF level: 4 senders x (alpha S / (1 + 4 alpha) + reserved), alpha = 1/8, S the shared pool.
        shared = 3033088  # the --check-config line above: "shared 3033088"
        self.assertIn(f"shared {shared}", sw.stdout)
        xoff = 4 * (shared / 8 / (1 + 4 / 8) + 18432)
        self.assertLess(kmax, xoff / 2)
        gen = subprocess.run([GEN, "--", "--check-config", "--config",
                              os.path.join(ROOT, "conf", "gen", "dcqcn-4to1-1g.yaml")],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(gen.returncode, 0, gen.stdout + gen.stderr)
        self.assertIn("valid (pattern incast", gen.stdout)


class DcqcnDefaults(unittest.TestCase):
    def test_ports_only_config_marks_ce_and_sends_pfc_on_priority_3(self):
        """A config with only PORT entries keeps the RoCE defaults
        (AZURE_LOSSLESS on queue 3, lossless PG 3 with computed headroom).
        Six QPs on two sender ports at 1Gbps with DCQCN off into a 1Gbps
        egress, windows large enough to fill the 12MiB pool: the queue passes
        Kmin = 1MiB, data frames arrive CE-marked, and the senders receive
        PFC XOFF for priority 3."""
        from scapy.all import rdpcap
        with tempfile.TemporaryDirectory(prefix="rocelab-dcqcn-") as tmp:
            conf = os.path.join(tmp, "ports.yaml")
            with open(conf, "w") as f:
                f.write("PORT:\n")
                for i in range(3):
                    f.write(f"  Ethernet{i}: {{port_id: {i}, speed: 1Gbps, mtu: 1500}}\n")
            cap = os.path.join(tmp, "cap")
            g, s = run_fabric(
                self, tmp, 3, ["--config", conf, "--duration", "6s"],
                ["--pattern", "incast", "--senders", "6", "--rate", "1Gbps", "--msg-size", "1MiB",
                 "--window", "2048", "--mbufs", "65536", "--dcqcn", "off", "--duration", "3s",
                 "--pcap-out", cap], "def")
            q3 = s["ports"][2]["queues"][3]
            self.assertGreater(q3["ecn_marked"], 0)
            self.assertEqual((q3["wred_kmin_bytes"], q3["wred_kmax_bytes"]), (1048576, 2097152))
            # On the wire at the receiver: CE-marked RoCE data (tshark decodes them).
            rx = os.path.join(cap, "net_memif2-rx.pcap")
            r = subprocess.run(["tshark", "-r", rx, "-Y", "ip.dsfield.ecn == 3 && infiniband", "-T", "fields",
                                "-e", "frame.number"], capture_output=True, text=True, check=True)
            ce = len(r.stdout.split())
            self.assertGreater(ce, 0)
            # Every CE frame the receiver counted is in the capture, less what
            # the bounded capture ring itself reports it dropped.
            self.assertLessEqual(ce, g["totals"]["ce_rx"])
            self.assertGreaterEqual(ce + g["capture_dropped"], g["totals"]["ce_rx"])
            # PFC XOFF for priority 3 reached the senders (scapy decodes the MAC Control frames).
            xoff3 = 0
            for i in (0, 1):
                mc = os.path.join(tmp, f"mac-control{i}.pcap")  # MAC Control frames only, for scapy
                subprocess.run(["tshark", "-r", os.path.join(cap, f"net_memif{i}-rx.pcap"), "-Y", "eth.type == 0x8808",
                                "-w", mc], check=True, capture_output=True)
                for p in rdpcap(mc):
                    raw = bytes(p)
                    if raw[12:14] == b"\x88\x08" and raw[14:16] == b"\x01\x01":
                        cev = int.from_bytes(raw[16:18], "big")
                        q3_quanta = int.from_bytes(raw[18 + 2 * 3:20 + 2 * 3], "big")
                        if cev & (1 << 3) and q3_quanta > 0:
                            xoff3 += 1
            self.assertGreater(xoff3, 0)
            self.assertGreater(sum(p["pfc"]["xoff_sent"][3] for p in s["ports"]), 0)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
