#!/usr/bin/python3
"""Real Linux hosts through rocelab-switch.

Two network namespaces, each with one end of a veth pair; the other end of
each pair (in the root namespace) is a switch port through DPDK's
net_af_packet PMD (`--vdev=net_af_packet0,iface=<veth>`). The kernels in the
namespaces are the hosts: their ARP, ICMP and TCP go through the switch.

  ns A: <p>ha 10.77.0.1 --veth-- <p>sa == net_af_packet0 (Ethernet0)
  ns B: <p>hb 10.77.0.2 --veth-- <p>sb == net_af_packet1 (Ethernet1)

Why af_packet: it attaches to an interface the test creates (a plain veth
end), so both hosts are ordinary kernel interfaces whose counters
(/sys/class/net/<if>/statistics) can be compared with the switch's. (net_tap
would create its own tap device in the root namespace, which the test would
then have to move into a namespace under the PMD.)

What keeps the counts exact:
  * IPv6 is disabled on all four veth ends (before they come up), so the
    kernels send no router solicitations, MLD reports or DAD probes, and the
    root-namespace ends have no address at all: af_packet also sees frames
    the root namespace itself would send out of <p>sa, and there are none.
  * TSO, GSO, GRO and TX checksum offload are off on all four ends
    (ethtool -K): otherwise a veth hands the af_packet socket one 64 KB
    "frame" for a whole TCP burst, and with TX checksum offload the TCP
    checksum is never filled in (the receiving kernel would drop the frames
    the switch forwards).
  * delay_first_probe_time is 1 s in both namespaces, and the test waits for
    the kernels to go quiet (the unicast ARP probe after an ICMP exchange)
    before it reads counters; it reads them again after the switch has
    stopped and requires both readings to be equal, so nothing was sent
    while the switch was stopping.
  * The af_packet RX ring (4096 frames) is larger than anything a host can
    have in flight (TCP receive buffers capped at 1 MiB, i.e. < 725 frames):
    DPDK 22.11's af_packet PMD does not count frames the kernel drops on a
    full ring (it has no imissed). With the default 512-frame ring one run
    under load came up 28 frames short at the switch with no drop counted
    anywhere (host tx_dropped 0), which is what a full ring looks like.
Then for each switch port: rx_packets = tx_packets of the namespace end,
tx_packets = the namespace end's rx_packets, and the same for bytes (both
count the Ethernet frame without FCS).

Two cases: the default L2 bridge (no config), and an L3 leaf with two
connected subnets and static NEIGH entries for the hosts (the switch answers
ARP for its own addresses; hosts route via it; TTL is decremented).

Needs root, iproute2, ethtool and ping (tools/setup.sh). Every namespace
and veth is removed in a finally block; the switch is stopped by its PID.

Run: /usr/bin/python3 tests/dpdk/test_linux_hosts.py -v
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import SWITCH  # noqa: E402

ROUTER_MAC = "02:00:00:00:01:00"
MAC_A, MAC_B = "02:77:00:00:00:0a", "02:77:00:00:00:0b"
# An L3 leaf on the two af_packet ports; INTERFACE entries follow.
L3_HEAD = f"""
ROCELAB: {{mode: l3}}
DEVICE_METADATA:
  localhost: {{mac: "{ROUTER_MAC}"}}
PORT:
  Ethernet0: {{device: net_af_packet0}}
  Ethernet1: {{device: net_af_packet1}}
INTERFACE:
"""

RECEIVER = r"""
import hashlib, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
s.settimeout(60)
print("ready", flush=True)
c, _ = s.accept()
c.settimeout(60)
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    h.update(b)
    n += len(b)
c.close()
print(n, h.hexdigest(), flush=True)
"""

SENDER = r"""
import hashlib, os, socket, sys
data = os.urandom(int(sys.argv[3]))
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)  # IPv4 or IPv6
c.sendall(data)
c.shutdown(socket.SHUT_WR)
c.recv(1)  # returns at the receiver's close: everything was read
c.close()
print(len(data), hashlib.sha256(data).hexdigest(), flush=True)
"""

# The af_packet receive ring must hold everything a host can send while the
# switch's worker is not polling (descheduled on a busy machine): DPDK 22.11's
# af_packet PMD does not report frames the kernel drops when the ring is full
# (no imissed), so such a drop would only show as a count mismatch. A TCP
# sender has at most the receiver's window in flight: with tcp_rmem capped at
# 1 MiB that is < 1 MiB / 1448 B = 725 frames, well inside 4096 ring frames
# (the PMD's default is 512).
AF_PACKET_RING = "blocksz=4096,framesz=2048,framecnt=4096"
TCP_RMEM = "4096 131072 1048576"

_seq = [0]


def sh(*args, ns=None, check=True, timeout=30):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stdout}{r.stderr}")
    return r


class Topology:
    """Two namespaces, each holding one end of a veth pair; the root-namespace
    ends are the switch's ports. Names are unique per process and run."""

    def __init__(self):
        _seq[0] += 1
        p = f"rl{os.getpid() % 100000}x{_seq[0]}"
        self.ns = {"a": p + "a", "b": p + "b"}
        self.host_if = {"a": p + "ha", "b": p + "hb"}   # in the namespace
        self.sw_if = {"a": p + "sa", "b": p + "sb"}     # in the root namespace: switch ports
        self.made_ns, self.made_links = [], []

    def create(self, addrs, macs, gateways=None, addrs6=None, gateways6=None):
        """addrs6: also IPv6 in the namespaces (the root-namespace ends stay
        IPv6-free, so they send nothing), added without DAD."""
        for s in ("a", "b"):
            ns, hif, sif = self.ns[s], self.host_if[s], self.sw_if[s]
            sh("ip", "netns", "add", ns)
            self.made_ns.append(ns)
            sh("ip", "link", "add", sif, "type", "veth", "peer", "name", hif)
            self.made_links.append(sif)
            sh("ip", "link", "set", hif, "netns", ns)
            sh("sysctl", "-qw", f"net.ipv6.conf.{sif}.disable_ipv6=1")
            for i in (hif, "lo", "default", "all"):
                sh("sysctl", "-qw", f"net.ipv6.conf.{i}.disable_ipv6={0 if addrs6 else 1}", ns=ns)
            sh("sysctl", "-qw", f"net.ipv4.neigh.{hif}.delay_first_probe_time=1", ns=ns)
            sh("sysctl", "-qw", f"net.ipv4.tcp_rmem={TCP_RMEM}", ns=ns)
            sh("ip", "link", "set", hif, "address", macs[s], ns=ns)
            sh("ethtool", "-K", sif, "tx", "off", "tso", "off", "gso", "off", "gro", "off")
            sh("ethtool", "-K", hif, "tx", "off", "tso", "off", "gso", "off", "gro", "off", ns=ns)
            sh("ip", "addr", "add", addrs[s], "dev", hif, ns=ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
            sh("ip", "link", "set", sif, "up")
            sh("ip", "link", "set", hif, "up", ns=ns)
            if addrs6:
                sh("ip", "-6", "addr", "add", addrs6[s], "dev", hif, "nodad", ns=ns)
            if gateways:
                sh("ip", "route", "add", "default", "via", gateways[s], ns=ns)
            if gateways6:
                sh("ip", "-6", "route", "add", "default", "via", gateways6[s], ns=ns)

    def destroy(self):
        while self.made_links:
            subprocess.run(["ip", "link", "del", self.made_links.pop()], capture_output=True)  # and its peer
        while self.made_ns:
            subprocess.run(["ip", "netns", "del", self.made_ns.pop()], capture_output=True)

    def stats(self, s):
        """Kernel counters of host s's interface (in its namespace)."""
        base = f"/sys/class/net/{self.host_if[s]}/statistics"
        r = sh("sh", "-c", f"cat {base}/tx_packets {base}/rx_packets {base}/tx_bytes {base}/rx_bytes "
                           f"{base}/tx_dropped {base}/rx_dropped", ns=self.ns[s])
        v = [int(x) for x in r.stdout.split()]
        return dict(zip(("tx_packets", "rx_packets", "tx_bytes", "rx_bytes", "tx_dropped", "rx_dropped"), v))


@unittest.skipUnless(os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "ethtool", "ping")),
                     "needs root, ip, ethtool and ping (tools/setup.sh)")
class LinuxHosts(unittest.TestCase):
    # tearDown always runs: it stops the switch (by PID) before it removes
    # the veths and namespaces, also when a test fails half-way.
    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="rocelab-linux-hosts-")
        self.tmp = self._td.name
        self.topo = Topology()
        self.sw = None

    def tearDown(self):
        try:
            if self.sw is not None and self.sw.poll() is None:
                self.sw.kill()  # by PID
                self.sw.communicate()
        finally:
            self.topo.destroy()
            self._td.cleanup()

    def start_switch(self, config=None):
        _seq[0] += 1
        self.report = os.path.join(self.tmp, "sw.json")
        app = ["--quiet", "--report", self.report, "--duration", "120s"]  # stopped by SIGINT; 120s is a guard
        if config is not None:
            cfg = os.path.join(self.tmp, "sw.yaml")
            with open(cfg, "w") as f:
                f.write(config)
            app += ["--config", cfg]
        self.prefix = f"rllh{os.getpid()}_{_seq[0]}"
        cmd = [SWITCH, "--no-huge", "-m", "1024", "--no-pci", "-l", "0-1", "--file-prefix", self.prefix, "--log-level", "lib.eal:error",
               f"--vdev=net_af_packet0,iface={self.topo.sw_if['a']},{AF_PACKET_RING}",
               f"--vdev=net_af_packet1,iface={self.topo.sw_if['b']},{AF_PACKET_RING}", "--"] + app
        self.sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(20):  # the banner comes once every port has started
            line = self.sw.stdout.readline()
            if not line or line.startswith("rocelab-switch"):
                break
        self.assertTrue(line.startswith("rocelab-switch"), self.sw.stderr.read() if self.sw.poll() is not None else line)

    def stop_switch(self):
        self.sw.send_signal(signal.SIGINT)
        out, err = self.sw.communicate(timeout=30)
        self.assertEqual(self.sw.returncode, 0, err)
        with open(self.report) as f:
            rep = json.load(f)
        self.assertEqual(rep["mbufs_in_use_at_exit"], 0)
        return rep

    def ping(self, src, dst_ip, ttl=None):
        r = sh("ping", "-c", "5", "-i", "0.2", "-W", "2", dst_ip, ns=self.topo.ns[src], check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("5 received", r.stdout)
        if ttl is not None:
            self.assertIn(f"ttl={ttl} ", r.stdout)

    def ping6(self, src, dst_ip):
        r = sh("ping", "-6", "-c", "5", "-i", "0.2", "-W", "2", dst_ip, ns=self.topo.ns[src], check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("5 received", r.stdout)
        self.assertIn("ttl=63 ", r.stdout)  # iputils prints the hop limit as ttl=

    def tcp(self, src, dst, dst_ip, nbytes, port=5201):
        """A TCP transfer of nbytes random bytes from host src to host dst;
        both ends hash what they sent / received."""
        rx = subprocess.Popen(["ip", "netns", "exec", self.topo.ns[dst], "/usr/bin/python3", "-c",
                               RECEIVER.replace("socket.socket()", "socket.socket(socket.AF_INET6)" if ":" in dst_ip
                                                else "socket.socket()"),
                               dst_ip, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(rx.stdout.readline().strip(), "ready", rx.stderr.read() if rx.poll() else "")
            t0 = time.monotonic()
            tx = sh("/usr/bin/python3", "-c", SENDER, dst_ip, port, nbytes, ns=self.topo.ns[src], timeout=90)
            dt = time.monotonic() - t0
            out, err = rx.communicate(timeout=30)
        finally:
            if rx.poll() is None:
                rx.kill()
                rx.communicate()
        self.assertEqual(rx.returncode, 0, err)
        sent, recv = tx.stdout.split(), out.split()
        self.assertEqual(int(sent[0]), nbytes)
        self.assertEqual(recv, sent, "bytes received differ from bytes sent")
        print(f"  TCP {src}->{dst}: {nbytes} B in {dt:.2f}s ({nbytes * 8 / dt / 1e6:.0f} Mbps), "
              f"sha256 {sent[1][:16]}... both ends", file=sys.stderr)

    def quiet_counters(self):
        """Wait until neither kernel sends anything for 1.5 s (the unicast ARP
        probe that follows an ICMP exchange comes within ~1 s with
        delay_first_probe_time 1), then return both hosts' counters."""
        prev = None
        for _ in range(20):
            cur = {s: self.topo.stats(s) for s in ("a", "b")}
            if cur == prev:
                return cur
            prev = cur
            time.sleep(1.5)
        self.fail(f"the namespace interfaces never went quiet: {cur}")

    def check_counters(self, rep, before):
        after = {s: self.topo.stats(s) for s in ("a", "b")}
        self.assertEqual(before, after, "a kernel sent or received frames while the switch was stopping")
        for s, name in (("a", "Ethernet0"), ("b", "Ethernet1")):
            p = next(x for x in rep["ports"] if x["name"] == name)
            k = after[s]
            print(f"  {name}: switch rx {p['rx_packets']} tx {p['tx_packets']}"
                  f" | host {self.topo.host_if[s]} tx {k['tx_packets']} rx {k['rx_packets']} "
                  f"(dropped tx {k['tx_dropped']} rx {k['rx_dropped']})", file=sys.stderr)
            self.assertEqual(p["rx_packets"], k["tx_packets"], name)
            self.assertEqual(p["tx_packets"], k["rx_packets"], name)
            # Bytes too: the kernel counts the same Ethernet frame (no FCS) as DPDK.
            self.assertEqual(p["rx_bytes"], k["tx_bytes"], name)
            self.assertEqual(p["tx_bytes"], k["rx_bytes"], name)
            drops = {d: v for d, v in p["drops"].items() if v}
            self.assertEqual(drops, {}, name)
            self.assertEqual({m: v for m, v in p["malformed"].items() if v}, {}, name)
        return after

    def test_l2_bridge_arp_ping_tcp_counters(self):
        """Default L2 bridge (no config): ARP between the hosts, ping both
        ways, 8 MiB of TCP each way with matching SHA-256, exact counters."""
        self.topo.create({"a": "10.77.0.1/24", "b": "10.77.0.2/24"}, {"a": MAC_A, "b": MAC_B})
        self.start_switch()
        self.ping("a", "10.77.0.2", ttl=64)
        self.ping("b", "10.77.0.1", ttl=64)
        # ARP resolved through the switch: each host holds the other's MAC.
        for s, ip, mac in (("a", "10.77.0.2", MAC_B), ("b", "10.77.0.1", MAC_A)):
            r = sh("ip", "neigh", "show", ip, ns=self.topo.ns[s])
            self.assertIn(f"lladdr {mac}", r.stdout)
        self.tcp("a", "b", "10.77.0.2", 8 << 20)
        self.tcp("b", "a", "10.77.0.1", 8 << 20, port=5202)
        before = self.quiet_counters()
        rep = self.stop_switch()
        after = self.check_counters(rep, before)
        # 8 MiB each way is at least 8 MiB / 1448 B of MSS = 5793 full segments.
        self.assertGreater(after["a"]["tx_packets"], 5793)
        self.assertGreater(after["b"]["tx_packets"], 5793)

    def test_l3_leaf_arp_ping_tcp_counters(self):
        """L3 leaf: two connected /24s, static NEIGH entries for the hosts (so
        the switch sends no ARP of its own and the counts stay exact; the
        class below resolves them dynamically); the hosts ARP for their
        gateway (answered by the switch), ping each other with TTL 63, 8 MiB of
        TCP each way with matching SHA-256, exact counters."""
        cfg = L3_HEAD + """  "Ethernet0|10.78.1.1/24": {{}}
  "Ethernet1|10.78.2.1/24": {{}}
NEIGH:
  "Ethernet0|10.78.1.2": {{neigh: "{MAC_A}", family: IPv4}}
  "Ethernet1|10.78.2.2": {{neigh: "{MAC_B}", family: IPv4}}
""".format(MAC_A=MAC_A, MAC_B=MAC_B)
        self.topo.create({"a": "10.78.1.2/24", "b": "10.78.2.2/24"}, {"a": MAC_A, "b": MAC_B},
                         gateways={"a": "10.78.1.1", "b": "10.78.2.1"})
        self.start_switch(cfg)
        self.ping("a", "10.78.2.2", ttl=63)
        self.ping("b", "10.78.1.2", ttl=63)
        # Each host resolved its gateway to the router MAC (the switch answered).
        for s, gw in (("a", "10.78.1.1"), ("b", "10.78.2.1")):
            r = sh("ip", "neigh", "show", gw, ns=self.topo.ns[s])
            self.assertIn(f"lladdr {ROUTER_MAC}", r.stdout)
        self.tcp("a", "b", "10.78.2.2", 8 << 20)
        self.tcp("b", "a", "10.78.1.2", 8 << 20, port=5202)
        before = self.quiet_counters()
        rep = self.stop_switch()
        after = self.check_counters(rep, before)
        self.assertGreater(after["a"]["tx_packets"], 5793)
        self.assertGreater(after["b"]["tx_packets"], 5793)
        self.assertGreater(sum(p["arp_replies"] for p in rep["ports"]), 0)


@unittest.skipUnless(os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "ethtool", "ping", "traceroute")),
                     "needs root, ip, ethtool, ping and traceroute (tools/setup.sh)")
class L3DynamicNeighbours(LinuxHosts):
    """The L3 leaf with no NEIGH entry at all: it finds the hosts by ARP and
    IPv6 neighbour discovery, like a real leaf. IPv6 is on in the namespaces
    here, so the kernels also send router solicitations and MLD reports
    (the switch drops those by name): this class checks behaviour, not exact
    frame counts (the classes above do that)."""

    CFG = L3_HEAD + """  "Ethernet0|10.79.1.1/24": {}
  "Ethernet0|2001:db8:79:1::1/64": {}
  "Ethernet1|10.79.2.1/24": {}
  "Ethernet1|2001:db8:79:2::1/64": {}
"""
    test_l2_bridge_arp_ping_tcp_counters = None
    test_l3_leaf_arp_ping_tcp_counters = None

    def traceroute(self, src, dst_ip, hops, v6=False):
        """traceroute from host src: the hops, in order, must be `hops`."""
        cmd = ["traceroute"] + (["-6"] if v6 else []) + ["-n", "-q", "1", "-w", "3", "-m", "4", dst_ip]
        r = sh(*cmd, ns=self.topo.ns[src], check=False, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        got = []
        for line in r.stdout.splitlines()[1:]:
            f = line.split()
            got.append(f[1] if len(f) > 1 else "?")
        print(f"  traceroute{'6' if v6 else ''} {src} -> {dst_ip}:\n" + r.stdout, file=sys.stderr)
        self.assertEqual(got, hops, r.stdout)

    def test_tcp_both_ways_v4_v6_traceroute_and_neighbour_table(self):
        self.topo.create({"a": "10.79.1.2/24", "b": "10.79.2.2/24"}, {"a": MAC_A, "b": MAC_B},
                         gateways={"a": "10.79.1.1", "b": "10.79.2.1"},
                         addrs6={"a": "2001:db8:79:1::2/64", "b": "2001:db8:79:2::2/64"},
                         gateways6={"a": "2001:db8:79:1::1", "b": "2001:db8:79:2::1"})
        self.start_switch(self.CFG)
        self.ping("a", "10.79.2.2", ttl=63)
        self.ping("b", "10.79.1.2", ttl=63)
        self.ping6("a", "2001:db8:79:2::2")
        self.ping6("b", "2001:db8:79:1::2")
        # The gateway answers pings to its own addresses (both ports, both families).
        for s, gw in (("a", "10.79.1.1"), ("a", "10.79.2.1"), ("b", "2001:db8:79:2::1")):
            r = sh("ping", "-c", "2", "-i", "0.2", "-W", "2", gw, ns=self.topo.ns[s], check=False)
            self.assertIn("2 received", r.stdout, r.stdout + r.stderr)
        # A host that is not there: after 3 unanswered ARP requests / NS (1 s
        # apart) the leaf answers host / address unreachable.
        for dst, msg in (("10.79.2.99", "From 10.79.1.1 icmp_seq=1 Destination Host Unreachable"),
                         ("2001:db8:79:2::99", "From 2001:db8:79:1::1 icmp_seq=1 Destination unreachable: "
                                               "Address unreachable")):
            r = sh("ping", "-c", "1", "-W", "6", dst, ns=self.topo.ns["a"], check=False, timeout=20)
            self.assertIn(msg, r.stdout, r.stdout + r.stderr)
        self.tcp("a", "b", "10.79.2.2", 4 << 20)
        self.tcp("b", "a", "10.79.1.2", 4 << 20, port=5202)
        self.tcp("a", "b", "2001:db8:79:2::2", 4 << 20, port=5203)
        self.tcp("b", "a", "2001:db8:79:1::2", 4 << 20, port=5204)
        # The leaf is the first hop: it answers TTL / hop-limit expiry with
        # ICMP time exceeded from its address on the hosts' side.
        self.traceroute("a", "10.79.2.2", ["10.79.1.1", "10.79.2.2"])
        self.traceroute("b", "10.79.1.2", ["10.79.2.1", "10.79.1.2"])
        self.traceroute("a", "2001:db8:79:2::2", ["2001:db8:79:1::1", "2001:db8:79:2::2"], v6=True)
        # The neighbour table lists both hosts, both families, with their
        # MACs on their ports: live, through DPDK telemetry...
        from telemetry import Telemetry
        t = Telemetry(self.prefix)
        try:
            live = t.query("/rocelab/neigh")["/rocelab/neigh"]
        finally:
            t.close()
        print(f"  /rocelab/neigh: {json.dumps(live)}", file=sys.stderr)
        want = {"10.79.1.2": ("Ethernet0", MAC_A), "10.79.2.2": ("Ethernet1", MAC_B),
                "2001:db8:79:1::2": ("Ethernet0", MAC_A), "2001:db8:79:2::2": ("Ethernet1", MAC_B)}
        self.assertEqual(live["dynamic"], 1)
        rows = {v["address"]: v for k, v in live.items() if k.startswith("n") and isinstance(v, dict)}
        self.assertEqual(live["shown"], len(rows))
        for addr, (port, mac) in want.items():
            self.assertIn(addr, rows, live)
            self.assertEqual((rows[addr]["port"], rows[addr]["mac"]), (port, mac))
            self.assertIn(rows[addr]["state"], ("reachable", "stale", "probe"))
            self.assertGreater(rows[addr]["hits"], 0)
        # ... and in the report.
        rep = self.stop_switch()
        got = {e["address"]: (e["port"], e["mac"]) for e in rep["neighbors"]["entries"]}
        for addr, v in want.items():
            self.assertEqual(got.get(addr), v, rep["neighbors"])
        for p in rep["ports"]:
            d = p["drops"]
            self.assertEqual((d["drop_no_neighbor"], d["drop_neigh_queue_full"]), (0, 0))
        # Only the pings to the absent hosts waited in vain.
        self.assertEqual(sum(p["drops"]["drop_neigh_unresolved"] for p in rep["ports"]), 2)
        self.assertEqual(rep["neighbors"]["failed"], 2)
        self.assertGreaterEqual(sum(p["icmp_echo_replies"] for p in rep["ports"]), 6)
        self.assertGreater(sum(p["arp_requests"] for p in rep["ports"]), 0)
        self.assertGreater(sum(p["nd_solicits"] for p in rep["ports"]), 0)
        self.assertGreater(sum(p["icmp_errors"] for p in rep["ports"]), 2)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
