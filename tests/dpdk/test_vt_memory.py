#!/usr/bin/python3
"""rocelab-fabric's memory grows with the scenario (issue 19 item 4;
docs/fabric.md, "Memory").

- The pool's capacity is the sizing rule, recomputed here from the scenario
  file itself (its switches' BUFFER_POOL size / cell, the cables' rings and
  in-flight frames, the generators' stocks), not read back from the runner:
  speed.json's mbufs_capacity must equal it.
- A 3-host scenario (hpcc-incast-2to1, a 32 MB switch pool that the old
  runner backed with 1.35M touched mbufs) peaks under 371 MB of RSS (half of
  the 742 MB it took before) and populates only a fraction of the capacity:
  the memory follows the frames held, not the capacity. Each run's peak RSS
  is in speed.json.
- --mbufs below the rule is refused with exit 2 and one line naming each
  term; nothing runs (no report folder).
- 40 L3 switches: the LPM tables are not written at exit (the process's
  peak RSS within 512 MiB of the run's).
- A scenario whose resident floor (plan_memory: per switch, L3 switch, host
  and flow) exceeds MemAvailable + SwapFree is refused with one line before
  EAL starts; the floor stays below the kernel's peak RSS (a floor, so it
  refuses nothing that runs) and is not trivially small.
- A flow's message table is sized by its message count: an alltoall with
  `messages: 2` takes at least 60 KiB less per flow than an unbounded one.
- The frames a 16:1 incast holds (pmtu 256, lossless, 12 MiB pool) are all
  backed: no drop anywhere, and the populated mbufs stay below the capacity
  the rule gave.

Run: /usr/bin/python3 tests/dpdk/test_vt_memory.py -v
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
UNITS = {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1000, "MB": 10**6, "GB": 10**9}
RATES = {"Gbps": 10**9, "Mbps": 10**6, "Kbps": 10**3, "bps": 1}
TIMES = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}


def quantity(text, units):
    t = str(text).strip().strip('"')
    for u in sorted(units, key=len, reverse=True):
        if t.endswith(u):
            return float(t[: -len(u)]) * units[u]
    return float(t)


def rule(path):
    """The sizing rule of docs/fabric.md, from the scenario file alone."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    total = 0
    ports = {}
    for sw in doc.get("switches", []):
        cfg = sw["config"]
        mode = cfg.get("ROCELAB", {}).get("mode", "l2")
        pools = cfg.get("BUFFER_POOL")
        assert pools != {}, "the test's scenarios keep a buffer pool"
        # No BUFFER_POOL: the built-in RoCE default, 12 MiB in 96 B cells.
        pool = next(iter(pools.values())) if pools else {"size": "12MiB", "cell": 96}
        size = quantity(pool["size"], UNITS)
        cell = quantity(pool.get("cell", 96), UNITS)
        frames = int(size // max(cell, 60))
        total += frames * (2 if mode == "l2" else 1)
        n = len(cfg["PORT"])
        total += n * (2 * 64 + 1)
        ports[sw["name"]] = n
    link = doc.get("link", {})
    h = doc.get("hosts", [])
    if isinstance(h, str):  # "h0..h2"
        lo, hi = (int("".join(c for c in x if c.isdigit())) for x in h.split(".."))
        hosts = hi - lo + 1
    else:
        hosts = len(h)
    for l in doc["links"]:
        rate = quantity(l.get("rate", link.get("rate", "100Gbps")), RATES)
        delay = quantity(l.get("delay", link.get("delay", "25ns")), TIMES)
        tx = int(l.get("tx_ring_size", link.get("tx_ring_size", 256)))
        rx = int(l.get("rx_ring_size", link.get("rx_ring_size", 1024)))
        in_flight = int(delay * rate / 1e9 / ((60 + 24) * 8)) + 1
        a, b = l["a"], l["b"]
        count = 1
        for end in (a, b):
            if ".." in end:
                lo, hi = end.split(":")[-1].split("..")
                lo = int("".join(c for c in lo if c.isdigit()))
                hi = int("".join(c for c in hi if c.isdigit()))
                count = hi - lo + 1
        total += count * 2 * (tx + rx + in_flight)
    # Scenario files give every host its own generator port on one
    # generator node ("hosts" + "traffic"): 256 + 4 x 64 per port.
    total += 256 + 4 * 64 * hosts
    return total


def run(args, **kw):
    return subprocess.run([FABRIC] + args, capture_output=True, text=True, timeout=600, **kw)


class Memory(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rocelab-mem-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def speed(self, scenario, extra=()):
        out = os.path.join(self.tmp, "out-" + os.path.basename(scenario))
        r = run(["run", scenario, "--out", out, "--no-plots", "--quiet"] + list(extra))
        self.assertIn(r.returncode, (0, 3), r.stdout + r.stderr)
        with open(os.path.join(out, "speed.json")) as f:
            return json.load(f), out

    def test_capacity_is_the_rule_and_rss_follows_use(self):
        path = os.path.join(ROOT, "conf", "scenarios", "hpcc-incast-2to1.yaml")
        sp, _ = self.speed(path, ["--duration", "2ms"])
        want = rule(path)
        print(f"hpcc-incast-2to1: capacity {sp['mbufs_capacity']} (rule {want}), populated {sp['mbufs_populated']}, "
              f"peak RSS {sp['peak_rss_bytes'] >> 20} MiB, set-up {sp['setup_s']:.3f} s")
        # Two pools (common + one prefilled for the scenario's pmtu), each of the rule's capacity.
        self.assertEqual(sp["mbufs_capacity"], 2 * want)
        self.assertLess(sp["peak_rss_bytes"], 371 * 10**6, "at most half of the 742 MB the runner took before")
        self.assertLess(sp["mbufs_populated"], sp["mbufs_capacity"] // 10)
        self.assertGreater(sp["peak_rss_bytes"], 0)

    def test_mbufs_below_the_rule_is_refused_naming_each_term(self):
        path = os.path.join(ROOT, "conf", "scenarios", "incast-8to1-pfc.yaml")
        out = os.path.join(self.tmp, "refused")
        r = run(["run", path, "--out", out, "--mbufs", "2000"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("--mbufs 2000 cannot back", lines[0])
        self.assertIn(f"at least {rule(path)} mbufs", lines[0])
        self.assertIn("BUFFER_POOL", lines[0])
        self.assertIn("cables", lines[0])
        self.assertFalse(os.path.exists(os.path.join(out, "summary.json")))

    def test_l3_switches_lpm_tables_are_not_written_at_exit(self):
        """Each L3 switch's rte_lpm has a 64 MiB first level that only its
        prefixes touch; rte_free zero-fills what it frees, so freeing the
        tables one by one at exit wrote all of it (200 L3 switches: 12.8 GB
        and a minute). Now they go with EAL's memory. The process's peak RSS,
        from the kernel's own accounting of the child (wait4), stays within
        512 MiB of the run's peak in speed.json (40 switches: 2.5 GB more
        before)."""
        n = 40
        doc = {"name": "many-l3", "duration": "100us", "link": {"rate": "100Gbps", "delay": "25ns"},
               "switches": [], "hosts": f"h0..h{n - 1}", "links": [],
               "traffic": {"seed": 1, "pattern": "incast", "senders": 1, "msg_size": "4KiB", "pmtu": 1024}}
        for i in range(n):
            doc["switches"].append({"name": f"leaf{i}", "config": {
                "ROCELAB": {"mode": "l3"},
                "DEVICE_METADATA": {"localhost": {"mac": "02:00:00:00:aa:00"}},
                "PORT": {"Ethernet0": {"speed": "100Gbps"}},
                "INTERFACE": {f"Ethernet0|10.0.{i}.254/24": {}}}})
            doc["links"].append({"a": f"h{i}", "b": f"leaf{i}:Ethernet0"})
        path = os.path.join(self.tmp, "many-l3.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f)
        out = os.path.join(self.tmp, "many-l3-out")
        p = subprocess.Popen([FABRIC, "run", path, "--out", out, "--no-plots", "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        text = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        self.assertIn(p.returncode, (0, 3), text)
        with open(os.path.join(out, "speed.json")) as f:
            run_peak = json.load(f)["peak_rss_bytes"]
        proc_peak = ru.ru_maxrss * 1024
        print(f"{n} L3 switches: peak RSS {run_peak >> 20} MiB at the end of the run, {proc_peak >> 20} MiB for the "
              f"whole process")
        self.assertGreater(run_peak, 100 << 20)
        self.assertLess(proc_peak, run_peak + (512 << 20))

    def test_too_large_for_memory_is_refused_before_eal(self):
        """More L3 switches than this machine can hold at the floor's 4 MiB
        each (1.5 + 2.5, docs/fabric.md "Memory"): exit 2, one line, before
        EAL starts (no EAL output, no report folder)."""
        avail = 0
        with open("/proc/meminfo") as f:
            for line in f:
                k, v = line.split(":", 1)
                if k in ("MemAvailable", "SwapFree"):
                    avail += int(v.split()[0]) * 1024
        n = avail // (4 << 20) + 256
        if n > 40000:
            self.skipTest(f"{avail >> 30} GiB available: the scenario would need {n} switches")
        doc = {"name": "too-large", "duration": "1us", "link": {"rate": "100Gbps", "delay": "25ns"},
               "switches": [], "hosts": "h0..h1",
               "links": [{"a": "h0", "b": "leaf0:Ethernet0"}, {"a": "h1", "b": "leaf1:Ethernet0"}],
               "traffic": {"seed": 1, "pattern": "incast", "senders": 1, "msg_size": "4KiB", "pmtu": 1024}}
        for i in range(n):
            doc["switches"].append({"name": f"leaf{i}", "config": {
                "ROCELAB": {"mode": "l3"}, "DEVICE_METADATA": {"localhost": {"mac": "02:00:00:00:aa:00"}},
                "PORT": {"Ethernet0": {"speed": "100Gbps"}},
                "INTERFACE": {f"Ethernet0|10.{i // 250}.{i % 250}.254/24": {}}}})
        path = os.path.join(self.tmp, "too-large.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f)
        out = os.path.join(self.tmp, "too-large-out")
        r = run(["run", path, "--out", out])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stdout + r.stderr)
        self.assertIn("too large for memory", lines[0])
        self.assertIn(f"switches {n} x 1.5MiB, L3 {n} x 2.5MiB more", lines[0])
        self.assertIn("nothing was started", lines[0])
        self.assertNotIn("EAL", lines[0])
        self.assertFalse(os.path.exists(out))

    def test_memory_floor_is_below_the_peak_and_not_trivial(self):
        """The floor the start-up check uses, against the kernel's peak RSS
        of the same run, on scenarios of different shapes: many QPs (the
        seed cluster's alltoall), L3, and a small incast."""
        for name in ("cluster-8x8-200g-alltoall", "l3-ring-allreduce", "hpcc-incast-2to1", "leaf-spine-ecmp"):
            path = os.path.join(ROOT, "conf", "scenarios", name + ".yaml")
            sp, _ = self.speed(path, ["--duration", "50us"])
            floor, peak = sp["memory_floor_bytes"], sp["peak_rss_bytes"]
            print(f"{name}: floor {floor >> 20} MiB, peak RSS {peak >> 20} MiB ({floor / peak:.2f})")
            self.assertLessEqual(floor, peak, name)
            self.assertGreater(floor, peak // 8, name)

    def test_message_tables_are_sized_by_the_message_count(self):
        """32 hosts, alltoall (992 flows): with `messages: 2` each flow's
        message table and completion ring have 2 slots, not 1024 (72 B each):
        the peak RSS is lower by at least 60 KiB per flow."""
        peaks = {}
        for msgs in (None, 2):
            ports = {f"Ethernet{i}": {"speed": "100Gbps"} for i in range(32)}
            tr = {"seed": 1, "pattern": "alltoall", "msg_size": "4KiB", "pmtu": 1024}
            if msgs:
                tr["messages"] = msgs
            doc = {"name": "a2a", "duration": "1us", "link": {"rate": "100Gbps", "delay": "25ns"},
                   "switches": [{"name": "leaf0", "config": {"PORT": ports}}], "hosts": "h0..h31",
                   "links": [{"a": f"h{i}", "b": f"leaf0:Ethernet{i}"} for i in range(32)], "traffic": tr}
            path = os.path.join(self.tmp, f"a2a-{msgs}.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(doc, f)
            sp, _ = self.speed(path)
            peaks[msgs] = sp["peak_rss_bytes"]
        print(f"alltoall 32 hosts: peak RSS {peaks[None] >> 20} MiB unbounded, {peaks[2] >> 20} MiB with 2 messages")
        self.assertGreater(peaks[None] - peaks[2], 992 * (60 << 10))

    def test_incast_16_to_1_small_frames_backed_and_lossless(self):
        ports = "\n".join(f"        Ethernet{i}: {{speed: 100Gbps}}" for i in range(17))
        topo = os.path.join(self.tmp, "inc16.yaml")
        with open(topo, "w") as f:
            f.write(f"""duration: 3ms
link: {{rate: 100Gbps, delay: 25ns}}
nodes:
  - name: leaf0
    switch:
      PORT:
{ports}
  - name: hosts
    gen: {{seed: 7, pattern: incast, senders: 16, msg_size: 4MiB, pmtu: 256, window: 8192, dcqcn: "off"}}
links:
  - {{a: hosts:0..16, b: leaf0:Ethernet0..Ethernet16}}
""")
        sp, out = self.speed(topo)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        with open(os.path.join(out, "fabric.json")) as f:
            fab = json.load(f)
        self.assertEqual(s["totals"]["lossless_drops"], 0)
        self.assertEqual(s["totals"]["drops"], 0)
        self.assertEqual(sum(l["rx_ring_full"] + l["lost"] for l in fab["links"]), 0)
        sw = next(n for n in fab["nodes"] if n["kind"] == "switch")
        peak = sw["buffer_pool"]["peak_shared_used_bytes"]
        print(f"16:1 pmtu 256: peak shared buffer {peak >> 10} KiB, populated {sp['mbufs_populated']} of "
              f"{sp['mbufs_capacity']}, peak RSS {sp['peak_rss_bytes'] >> 20} MiB")
        self.assertGreater(peak, 4 << 20, "the buffer really filled (the old 16384-slot queue dropped here)")
        self.assertLess(sp["mbufs_populated"], sp["mbufs_capacity"])


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
