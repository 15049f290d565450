#!/usr/bin/python3
"""Frames the switch makes take the same admission as frames it forwards
(issue 22 item 1: one admission path).

An L3 leaf resolves a host by ARP. The host storms PFC on priority 7, the
priority of the switch's own ARP requests, and the leaf's PFC watchdog
watches queue 7 (action drop). In virtual time, with --pcap:

  - every ARP request the leaf makes (neigh_probes = 3) is lost to the
    watchdog and counted as drop_pfcwd on the host's port; the leaf's TX
    capture of that port holds no ARP frame and the host's RX capture none
    either (read with tests/dpdk/wire.py's pcap reader, nothing from rocelab);
  - the first request, made before the storm is detected, waits in the
    paused queue and is discarded when the watchdog trips (the watchdog's
    tx_dropped); the two retransmissions, made while the watchdog holds the
    queue in drop, are refused at admission (rx_dropped), as a forwarded
    frame would be. Before the admission paths were one, ARP requests
    skipped the watchdog check and all three were counted tx_dropped;
  - resolution fails: the 8 frames that waited are dropped
    (drop_neigh_unresolved) and answered with ICMP host unreachable, at
    the time the timers give: 3 requests 10 ms apart from the first frame
    (0.5 ms), so between 30.5 ms and one neighbour poll (1 ms) later, in
    the default 4096-entry table (whose aging sweep takes 64 ms: requests
    and failures must not wait for it).

A control run without the storm shows that the drops are the watchdog's:
one ARP request goes out on the wire, the host answers, the frames that
waited are released, and nothing is dropped as pfcwd.

Run: /usr/bin/python3 tests/dpdk/test_vt_neigh_admission.py -v
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD  # noqa: E402
from wire import read_pcap  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")

SCENARIO = """name: arp-into-stormed-queue
description: the leaf's ARP requests into a queue its PFC watchdog holds in drop
duration: 35ms
link: {rate: 100Gbps, delay: 25ns}
switches:
  - name: leaf0
    config:
      ROCELAB: {mode: l3, seed: 7, neigh_queue: 8, neigh_retrans_time: 10ms}
      DEVICE_METADATA: {localhost: {mac: "02:00:00:00:aa:00"}}
      PORT:
        Ethernet0: {speed: 100Gbps}
        Ethernet1: {speed: 100Gbps}
      INTERFACE:
        "Ethernet0|10.0.0.254/24": {}
        "Ethernet1|10.1.0.254/24": {}
      PORT_QOS_MAP:
        Ethernet1: {pfc_enable: "3,4,7", pfcwd_sw_enable: "7"}
      PFC_WD:
        global: {detection_time: 1ms, restoration_time: 100ms, action: drop}
        GLOBAL: {POLL_INTERVAL: 1ms}
hosts: h0..h1
links:
  - {a: h0..h1, b: leaf0:Ethernet0..Ethernet1}
traffic:
  seed: 7
  msg_size: 64KiB
  pmtu: 1024
  window: 64
  start: 500us                          # after the storm has paused priority 7
  gateway_mac: "02:00:00:00:aa:00"
  flows:
    - {name: f, src: h0, dst: h1}
STORM"""

STORM = """  pfc_tx:
    - port=1,prio=7,quanta=65535,interval=100us,count=0,start=0us
"""

ETH_ARP = b"\x08\x06"


def arp_requests_in(path):
    """ARP requests (EtherType 0x0806, opcode 1) in a capture."""
    return [d for _, _, d in read_pcap(path) if d[12:14] == ETH_ARP and d[20:22] == b"\x00\x01"]


class NeighAdmission(unittest.TestCase):
    def run_scenario(self, storm):
        d = tempfile.mkdtemp(prefix="rocelab-test-neighadm-")
        self.addCleanup(subprocess.run, ["rm", "-rf", d])
        path = os.path.join(d, "s.yaml")
        with open(path, "w") as f:
            f.write(SCENARIO.replace("STORM", STORM if storm else ""))
        out = os.path.join(d, "out")
        r = subprocess.run([FABRIC, "run", path, "--out", out, "--pcap", "--quiet"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(out, "leaf0.json")) as f:
            leaf = json.load(f)
        ports = {p["name"]: p for p in leaf["ports"]}
        return out, leaf, ports

    def test_arp_requests_into_a_stormed_queue_are_dropped_by_the_watchdog_at_admission(self):
        out, leaf, ports = self.run_scenario(storm=True)
        e0, e1 = ports["Ethernet0"], ports["Ethernet1"]
        # The wire: no ARP request leaves the leaf, none reaches the host.
        self.assertEqual(arp_requests_in(os.path.join(out, "leaf0-Ethernet1-tx.pcap")), [])
        self.assertEqual(arp_requests_in(os.path.join(out, "hosts-port1-rx.pcap")), [])
        # ... while the leaf made three (neigh_probes' default) and the storm was detected.
        self.assertEqual(e1["arp_requests"], 3)
        self.assertEqual(leaf["neighbors"]["requests"], 3)
        wd = e1["pfc"]["watchdog"]
        self.assertEqual(len(wd), 1, wd)
        self.assertEqual((wd[0]["queue"], wd[0]["storms"], wd[0]["stormed"]), (7, 1, True))
        # Every request is a named drop: one discarded from the paused queue
        # when the watchdog tripped, two refused at admission after it.
        self.assertEqual(e1["drops"]["drop_pfcwd"], 3)
        self.assertEqual((wd[0]["tx_dropped"], wd[0]["rx_dropped"]), (1, 2))
        self.assertEqual(e1["tx_packets"], 0)
        # Resolution failed: the frames that waited are dropped and answered.
        self.assertEqual(leaf["neighbors"]["failed"], 1)
        self.assertEqual(e0["neigh_held"], 8)
        self.assertEqual(e0["drops"]["drop_neigh_unresolved"], 8)
        self.assertEqual(e0["icmp_errors"], 8)
        icmp = [(t, d) for t, _, d in read_pcap(os.path.join(out, "hosts-port0-rx.pcap"))
                if d[12:14] == b"\x08\x00" and d[23] == 1]
        self.assertEqual(len(icmp), 8)
        self.assertEqual({(d[34], d[35]) for _, d in icmp}, {(3, 1)})  # destination / host unreachable
        first = min(t for t, _ in icmp)
        self.assertGreaterEqual(first, 30_500_000)
        self.assertLess(first, 31_600_000)

    def test_control_without_storm_resolves_and_releases(self):
        out, leaf, ports = self.run_scenario(storm=False)
        e0, e1 = ports["Ethernet0"], ports["Ethernet1"]
        reqs = arp_requests_in(os.path.join(out, "leaf0-Ethernet1-tx.pcap"))
        self.assertEqual(len(reqs), 1)
        self.assertEqual(reqs[0][0:6], b"\xff" * 6)                      # broadcast
        self.assertEqual(reqs[0][38:42], bytes([10, 1, 0, 2]))           # target: h1's address
        self.assertEqual(arp_requests_in(os.path.join(out, "hosts-port1-rx.pcap")), reqs)
        self.assertEqual(e1["arp_requests"], 1)
        self.assertEqual(e1["drops"]["drop_pfcwd"], 0)
        self.assertEqual(leaf["neighbors"]["failed"], 0)
        self.assertEqual(e0["neigh_released"], e0["neigh_held"])
        self.assertGreater(e0["neigh_held"], 0)
        self.assertEqual(e0["drops"]["drop_neigh_unresolved"], 0)


if __name__ == "__main__":
    import testmain
    testmain.main()
