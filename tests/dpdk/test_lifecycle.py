#!/usr/bin/python3
"""Binary-level lifecycle: SIGINT in the middle of full load.

Each binary runs at full rate with every output it has switched on, gets
SIGINT after a few seconds, and must exit 0 with every output complete and
valid: the JSON report parses and says no mbuf was left in use, every
--pcap-out file reads to the end in capinfos (a file cut mid-record makes
it say "cut short" and fail; tshark, which dissects, takes a minute over the
millions of frames a few seconds capture), the generator's first and last
frames decode in tshark, and the CSV outputs have their header and rows
whose fields all parse.

  SwitchSigint  rocelab-switch, net_pcap infinite_rx of RoCEv2 frames into
                net_null (the built-in RoCE defaults: buffer accounting, WRED)
  GenSigint     rocelab-gen, --loopback-pairs 1, unpaced (the ring pair's
                driver speed), DCQCN on (the default)

Run one class: /usr/bin/python3 tests/dpdk/test_lifecycle.py SwitchSigint -v
"""
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, SWITCH, eal_args, mkpcap  # noqa: E402

GEN = os.path.join(BUILD, "app", "rocelab-gen")
RUN_S = 3.0
# Frames decoded by tshark at each end of a capture (capinfos reads the rest).
DECODE_EDGE = 20000


def capinfos_count(test, path):
    """Frames in a capture, read to its end by capinfos (no dissection: a
    second for millions of frames, where tshark takes a minute). A file cut
    mid-record makes capinfos exit non-zero and say "cut short"."""
    r = subprocess.run(["capinfos", "-c", "-M", path], capture_output=True, text=True, timeout=120)
    test.assertEqual(r.returncode, 0, f"{path}: {r.stderr}")
    test.assertNotIn("cut short", r.stderr, path)
    m = re.search(r"Number of packets:\s*(\d+)", r.stdout)
    test.assertIsNotNone(m, r.stdout)
    return int(m.group(1))


def tshark_rows(test, path, field="frame.number", edge=DECODE_EDGE):
    """Decode a capture's first and last `edge` frames with tshark (the last
    ones are where an exit at SIGINT would leave a damaged record); return one
    row per decoded frame: [frame.number, field]. The whole file is counted
    and checked complete by capinfos_count first."""
    n = capinfos_count(test, path)
    parts = [path] if n <= 2 * edge else []
    if not parts:
        for name, lo, hi in (("head", 1, edge), ("tail", n - edge + 1, n)):
            part = f"{path}.{name}"
            r = subprocess.run(["editcap", "-r", path, part, f"{lo}-{hi}"], capture_output=True, text=True,
                               timeout=120)
            test.assertEqual(r.returncode, 0, f"{path}: {r.stderr}")
            parts.append(part)
    rows = []
    for part in parts:
        r = subprocess.run(["tshark", "-r", part, "-T", "fields", "-e", "frame.number", "-e", field],
                           capture_output=True, text=True, timeout=120)
        test.assertEqual(r.returncode, 0, f"{part}: {r.stderr}")
        test.assertNotIn("cut short", r.stderr, part)
        test.assertNotIn("appears to be damaged", r.stderr, part)
        rows += [line.split("\t") for line in r.stdout.splitlines() if line]
        if part != path:
            os.remove(part)
    test.assertEqual(len(rows), min(n, 2 * edge), path)
    return rows


def read_csv(test, path, header):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    test.assertGreater(len(rows), 1, f"{path}: no rows")
    test.assertEqual(rows[0], header, path)
    for i, row in enumerate(rows[1:], 2):
        test.assertEqual(len(row), len(header), f"{path}:{i}: {row}")
    return rows[1:]


def sigint_after(test, cmd, seconds):
    """Start cmd, wait for its banner, let it run `seconds`, send SIGINT and
    wait for it (killed by PID if it does not stop). Returns (rc, out, err,
    seconds from SIGINT to exit)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = ""
        for _ in range(20):
            line = p.stdout.readline()
            if not line or line.startswith("rocelab-"):
                banner = line
                break
        test.assertTrue(banner.startswith("rocelab-"), p.stderr.read() if p.poll() is not None else banner)
        time.sleep(seconds)
        test.assertIsNone(p.poll(), "exited before SIGINT")
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        return p.returncode, banner + out, err, time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


class Base(unittest.TestCase):
    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="rocelab-lifecycle-")
        self.tmp = self._td.name

    def tearDown(self):
        self._td.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)


class SwitchSigint(Base):
    def test_sigint_at_full_load_leaves_complete_outputs(self):
        inp = self.path("in.pcap")
        mkpcap("roce", inp, "--count", "256", "--qps", "8", "--dscp", "26,0,48", "--payload", "1000")
        cap = self.path("cap")
        report, qcsv = self.path("sw.json"), self.path("q.csv")
        eal, _ = eal_args([f"net_pcap0,rx_pcap={inp},infinite_rx=1", "net_null1,no-rx=1"])
        # --duration is only a guard: SIGINT comes long before.
        rc, out, err, stop_s = sigint_after(
            self, [SWITCH] + eal + ["--", "--report", report, "--queue-csv", qcsv, "--pcap-out", cap,
                                    "--duration", "60s", "--quiet"], RUN_S)
        self.assertEqual(rc, 0, err)
        self.assertIn("final counters", out)
        self.assertLess(stop_s, 20)
        with open(report) as f:
            rep = json.load(f)
        self.assertEqual(rep["mbufs_in_use_at_exit"], 0)
        self.assertLess(rep["elapsed_s"], 30)
        p0 = next(p for p in rep["ports"] if p["name"] == "Ethernet0")
        p1 = next(p for p in rep["ports"] if p["name"] == "Ethernet1")
        self.assertGreater(p0["rx_packets"], 100000, "not under load")
        self.assertGreater(p1["tx_packets"], 100000)
        # Every capture file is complete, and holds exactly what the report
        # says was captured.
        n = {name: capinfos_count(self, os.path.join(cap, name)) for name in sorted(os.listdir(cap))}
        self.assertEqual(sorted(n), ["Ethernet0-rx.pcap", "Ethernet0-tx.pcap", "Ethernet1-rx.pcap",
                                     "Ethernet1-tx.pcap"])
        self.assertGreater(n["Ethernet0-rx.pcap"], 1000)
        self.assertGreater(n["Ethernet1-tx.pcap"], 1000)
        self.assertEqual(sum(n.values()), rep["capture_frames"], (n, rep["capture_dropped"]))
        rows = read_csv(self, qcsv, ["time_s", "port", "queue", "depth_bytes", "paused", "pfc_tx"])
        self.assertGreater(len(rows), 10)
        for r in rows:
            float(r[0]), int(r[2]), int(r[3]), int(r[4]), int(r[5])  # every row complete, even at SIGINT
        print(f"  switch: rx {p0['rx_packets']} tx {p1['tx_packets']}, captured {rep['capture_frames']} "
              f"(dropped {rep['capture_dropped']}), {len(rows)} queue samples, exit {stop_s:.2f}s after SIGINT",
              file=sys.stderr)


class GenSigint(Base):
    def test_sigint_at_full_load_leaves_complete_outputs(self):
        cap = self.path("cap")
        report, ts = self.path("gen.json"), self.path("ts.csv")
        eal, _ = eal_args([])
        rc, out, err, stop_s = sigint_after(
            self, [GEN] + eal + ["--", "--loopback-pairs", "1", "--report", report, "--timeseries", ts,
                                 "--pcap-out", cap, "--duration", "60s", "--quiet"], RUN_S)
        self.assertEqual(rc, 0, err)
        self.assertLess(stop_s, 20)
        with open(report) as f:
            rep = json.load(f)
        self.assertEqual(rep["mbufs_in_use_at_exit"], 0)
        f0 = rep["flows"][0]
        self.assertGreater(f0["tx_packets"], 50000, "not under load")
        self.assertGreater(f0["messages_completed"], 100)
        # Every file reads to its end (capinfos), and its first and last
        # DECODE_EDGE frames decode as InfiniBand (BTH opcode present): a
        # record cut short at the end would not.
        n = {}
        for name in sorted(os.listdir(cap)):
            path = os.path.join(cap, name)
            rs = tshark_rows(self, path, "infiniband.bth.opcode")
            self.assertTrue(all(len(r) == 2 and r[1] for r in rs), name)
            n[name] = capinfos_count(self, path)
        self.assertEqual(sorted(n), ["net_ring_lb0a-rx.pcap", "net_ring_lb0a-tx.pcap", "net_ring_lb0b-rx.pcap",
                                     "net_ring_lb0b-tx.pcap"])
        self.assertGreater(n["net_ring_lb0a-tx.pcap"], 1000)
        self.assertGreater(n["net_ring_lb0b-tx.pcap"], 100)  # ACKs
        self.assertEqual(sum(n.values()), rep["capture_frames"], (n, rep["capture_dropped"]))
        header = ["time_s", "flow", "tx_bps", "goodput_bps", "tx_bytes", "rx_bytes", "messages_completed",
                  "retransmissions", "naks", "rate_bps", "cnp_rx", "cnp_tx"]
        rows = read_csv(self, ts, header)
        self.assertGreaterEqual(len(rows), 10)  # 100 ms interval, 3 s
        for r in rows:
            float(r[0])
            [float(x) for x in r[2:]]
        print(f"  gen: tx {f0['tx_packets']} pkts, {f0['messages_completed']} messages, captured "
              f"{sum(n.values())}, {len(rows)} time-series rows, exit {stop_s:.2f}s after SIGINT", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
