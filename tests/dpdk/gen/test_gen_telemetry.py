#!/usr/bin/python3
"""DPDK test of rocelab-gen's telemetry commands (/rocelab_gen/...).

Starts the real binary on --no-huge with a back-to-back ring pair (one
process holds both ends), reads its telemetry socket twice while traffic
runs, through tools/telemetry.py and once through dpdk-telemetry.py, then
stops it by its PID with SIGTERM and expects exit code 0.

Run: ROCELAB_BUILD=build /usr/bin/python3 tests/dpdk/gen/test_gen_telemetry.py -v
"""
import os
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build"))
GEN = os.path.join(BUILD, "app", "rocelab-gen")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from telemetry import Telemetry, socket_path  # noqa: E402

PFC_QUANTA = 2000  # at 1Gbps: 1.024 ms per frame


def connect(prefix, proc, timeout=20):
    """A Telemetry client once the process has registered its commands (the
    socket opens at EAL start, the /rocelab_gen commands come after the ports)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"rocelab-gen exited early (rc {proc.returncode})")
        if os.path.exists(socket_path(prefix)):
            try:
                t = Telemetry(prefix)
            except OSError:  # socket file there, not yet listening
                t = None
            if t is not None:
                if t.query("/rocelab_gen/info")["/rocelab_gen/info"] is not None:
                    return t
                t.close()
        if time.monotonic() > deadline:
            raise AssertionError(f"no /rocelab_gen/info on the telemetry socket of {prefix} within {timeout}s")
        time.sleep(0.2)


class GenTelemetry(unittest.TestCase):
    def setUp(self):
        self.prefix = f"rlgtel{os.getpid()}"
        # One QP port 0 -> port 1 at 1Gbps; port 1 also sends PFC for priority 3
        # (the QP's) every 20 ms, so port 0 sees PFC frames and paused time.
        args = [GEN, "--no-huge", "-m", "512", "--no-pci", "-l", "0-1", "--file-prefix", self.prefix,
                "--log-level", "lib.eal:error", "--",
                "--loopback-pairs", "1", "--rate", "1Gbps", "--quiet",
                "--pfc-tx", f"port=1,prio=3,quanta={PFC_QUANTA},interval=20ms,count=0"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.t0 = time.monotonic()

    def tearDown(self):
        if self.proc.poll() is None:  # the test failed before stopping it
            self.proc.kill()  # by PID
            self.proc.communicate()

    def stop(self):
        """SIGTERM by PID; returns (rc, stdout, stderr)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise AssertionError(f"rocelab-gen (pid {self.proc.pid}) ignored SIGTERM for 30s")
        return self.proc.returncode, out, err

    def test_counters_grow_and_sigterm_exits_cleanly(self):
        t = connect(self.prefix, self.proc)
        try:
            time.sleep(1.0)  # traffic and a few PFC frames
            info = t.query("/rocelab_gen/info")["/rocelab_gen/info"]
            self.assertEqual((info["pattern"], info["ports"], info["flows"], info["seed"]), ("one-to-one", 2, 1, 1))
            self.assertEqual(info["config"], "(defaults)")
            ports = t.query("/rocelab_gen/ports")["/rocelab_gen/ports"]
            self.assertEqual(ports, ["net_ring_lb0a", "net_ring_lb0b"])
            flows = t.query("/rocelab_gen/flows")["/rocelab_gen/flows"]
            self.assertEqual(flows["0"]["src_port"], "net_ring_lb0a")
            self.assertEqual(flows["0"]["dst_port"], "net_ring_lb0b")

            p1 = t.query("/rocelab_gen/port,0")["/rocelab_gen/port"]
            f1 = t.query("/rocelab_gen/flow,0")["/rocelab_gen/flow"]
            time.sleep(0.5)
            p2 = t.query("/rocelab_gen/port,net_ring_lb0a")["/rocelab_gen/port"]
            f2 = t.query("/rocelab_gen/flow,0")["/rocelab_gen/flow"]
            elapsed = time.monotonic() - self.t0
            # Unknown port: an error reply (null), not a crash.
            self.assertIsNone(t.query("/rocelab_gen/port,nope")["/rocelab_gen/port"])
        finally:
            t.close()

        self.assertEqual(p1["name"], "net_ring_lb0a")
        self.assertGreater(p1["tx_packets"], 0)
        self.assertGreater(p1["tx_bytes"], p1["tx_packets"] * 64)
        self.assertGreater(p1["rx_packets"], 0)  # ACKs
        for k, v in p1.items():
            if isinstance(v, int):
                self.assertGreaterEqual(p2[k], v, k)  # counters never go back
        self.assertGreater(p2["tx_packets"], p1["tx_packets"], "no traffic between the two reads")
        self.assertEqual((p2["rx_bad_icrc"], p2["rx_malformed"], p2["tx_alloc_fail"]), (0, 0, 0))
        self.assertNotIn("ok", p2["malformed"])  # one counter per parse error
        self.assertEqual(sum(p2["malformed"].values()), 0)
        self.assertEqual((p2["rx_nd"], p2["nd_replies"]), (0, 0))  # IPv4 hosts
        # PFC from port 1: received on port 0 and paused priority 3 only, for
        # about 1 ms per frame (never more than the frames can account for).
        self.assertGreater(p2["rx_pfc"], 0)
        self.assertGreater(p2["xoff_frames"][3], 0)
        self.assertEqual(p2["paused_ns"][:3] + p2["paused_ns"][4:], [0] * 7)
        pause_ns = PFC_QUANTA * 512  # bit times at 1Gbps = ns
        self.assertGreater(p2["paused_ns"][3], 0)
        self.assertGreaterEqual(p2["paused_ns"][3], p1["paused_ns"][3])
        # +1: a frame may arrive between reading xoff_frames and paused_ns.
        self.assertLessEqual(p2["paused_ns"][3], (p2["xoff_frames"][3] + 1) * pause_ns)
        self.assertLessEqual(p2["paused_ns"][3], elapsed * 1e9)

        self.assertEqual(f1["name"], f2["name"])
        for k in ("tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "messages_posted", "messages_completed",
                  "messages_rx", "acks_rx", "acks_tx"):
            self.assertGreater(f1[k], 0, k)
            self.assertGreaterEqual(f2[k], f1[k], k)
        self.assertGreater(f2["messages_completed"], f1["messages_completed"])
        # One read is not a snapshot (the worker runs between two counters),
        # so compare what was received by the first read with what had been
        # sent by the second.
        self.assertLessEqual(f1["messages_completed"], f2["messages_posted"])
        self.assertLessEqual(f1["rx_bytes"], f2["tx_bytes"])
        self.assertEqual((f2["naks_rx"], f2["retransmissions"], f2["timeouts"]), (0, 0, 0))

        # dpdk-telemetry.py itself reads the same commands.
        r = subprocess.run(["dpdk-telemetry.py", "-f", self.prefix],
                           input="/rocelab_gen/ports\n/rocelab_gen/port,0\n/rocelab_gen/flow,0\n",
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("net_ring_lb0b", r.stdout)
        self.assertIn('"tx_prefilled"', r.stdout)
        self.assertIn('"messages_completed"', r.stdout)

        rc, out, err = self.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("==== rocelab-gen final", out)
        self.assertIn("mbufs in use at exit: 0 ", out)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
