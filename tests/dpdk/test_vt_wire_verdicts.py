#!/usr/bin/python3
"""Scenario verdicts recomputed from the wire (issue 19 item 9).

rocelab-fabric judges a scenario's `expect` lines from its own counters.
Here the incast, the PFC storm (with and without the watchdog), DCQCN
fairness and the HPCC 2:1 incast run with --pcap, and every expectation
term that the wire can show is recomputed from the captures with an
independent reader (tests/dpdk/wire.py: the pcap, IPv4/UDP, BTH/AETH/RETH
and MAC Control bytes, nothing from rocelab):

  pfc_tx(N) / pfc_rx(N)      MAC Control frames in N's TX / RX captures
  ecn_marked(N:P:3)          CE-marked DSCP-26 frames in N-P's TX capture
  cnp_tx(f) / cnp_rx(f)      CNPs (opcode 0x81) on the receiver's TX / the
                             sender's RX wire between f's two hosts
  goodput(f)                 RC payload bytes of f delivered to the
                             receiver's port, x 8 / the flow's time (its
                             configured start to the end of the run)
  busy(N:P)                  wire time of N-P's TX capture / the run
  naks(f)                    ACKs with a NAK syndrome to f's sender
  messages(f)                last/only packets of a message at the receiver

Each such term must agree with the runner: counts exactly, goodput within
one window of data (a receiver's RX ring may hold frames the runner has not
read at the end), busy within 0.1 %. The expectation, evaluated on the
wire's figures, must pass as it did for the runner. Terms the wire cannot
show (lossless_drops, drops, rate_*, fct_*, pfcwd_*) are listed, not judged.

Run: /usr/bin/python3 tests/dpdk/test_vt_wire_verdicts.py -v
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, ROOT  # noqa: E402
from wire import OP_CNP, RC_LAST, WIRE_OVERHEAD, frames  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
SCEN = os.path.join(ROOT, "conf", "scenarios")
WIRE_TERMS = {"pfc_tx", "pfc_rx", "ecn_marked", "cnp_tx", "cnp_rx", "goodput", "busy", "naks", "messages"}
CALL = re.compile(r"([a-z_]+)\(([^()]*)\)")
UNITS = [("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("bps", 1.0), ("ms", 1e6), ("us", 1e3),
         ("ns", 1.0), ("s", 1e9), ("%", 0.01), ("MiB", 2**20), ("KiB", 2**10), ("MB", 1e6), ("KB", 1e3)]
NUM_UNIT = re.compile(r"(\d+(?:\.\d+)?)(" + "|".join(re.escape(u) for u, _ in UNITS) + r")\b|(\d+(?:\.\d+)?)%")


def with_units(text):
    def sub(m):
        if m.group(3) is not None:
            return repr(float(m.group(3)) * 0.01)
        return repr(float(m.group(1)) * dict(UNITS)[m.group(2)])
    return NUM_UNIT.sub(sub, text)


class Wire:
    """Every capture of one run, indexed by (node, port) name as the files are."""

    def __init__(self, out, scenario):
        self.out = out
        with open(scenario) as f:
            self.doc = yaml.safe_load(f)
        with open(os.path.join(out, "summary.json")) as f:
            self.summary = json.load(f)
        self.t = self.summary["fabric_time_ns"]
        self.rate = float(str(self.doc.get("link", {}).get("rate", "100Gbps")).replace("Gbps", "")) * 1e9
        self._cache = {}
        # hosts: h0..hN are the generator node "hosts", port i.
        self.ip = {}
        for name in os.listdir(out):
            m = re.match(r"hosts-port(\d+)-tx\.pcap$", name)
            if m:
                src = {f.src for f in self.cap(f"hosts-port{m.group(1)}", "tx") if f.kind == "roce"}
                assert len(src) == 1, (name, src)
                self.ip[f"h{m.group(1)}"] = src.pop()
        self.flows, self.start = {}, {}
        for fl in self.doc.get("traffic", {}).get("flows", []) or []:
            self.flows[fl["name"]] = (fl["src"], fl["dst"])
            self.start[fl["name"]] = eval(with_units(str(fl.get("start", "0"))), {"__builtins__": {}})

    def cap(self, port, direction):
        key = (port, direction)
        if key not in self._cache:
            self._cache[key] = frames(os.path.join(self.out, f"{port}-{direction}.pcap"))
        return self._cache[key]

    def ports_of(self, node):
        """Capture names for a node ("leaf0") or a node port ("leaf0:Ethernet1", "h0")."""
        if re.fullmatch(r"h\d+", node):
            return [f"hosts-port{node[1:]}"]
        if ":" in node:
            n, p = node.split(":", 1)
            return [f"{n}-{p}"]
        return sorted({f[:-len("-tx.pcap")] for f in os.listdir(self.out)
                       if f.startswith(node + "-") and f.endswith("-tx.pcap")})

    def flow(self, name):
        if name in self.flows:
            return self.flows[name]
        m = re.fullmatch(r"(h\d+)->(h\d+)(#\d+)?", name)
        assert m, f"flow {name}: not named in the scenario"
        return m.group(1), m.group(2)

    def value(self, fn, arg):
        if fn in ("pfc_tx", "pfc_rx"):
            d = fn[-2:]
            return sum(1 for p in self.ports_of(arg) for f in self.cap(p, d) if f.kind == "mac_control")
        if fn == "ecn_marked":
            node, port, q = arg.split(":")
            assert q == "3", "DSCP 26 is queue 3 under the default maps"
            return sum(1 for f in self.cap(f"{node}-{port}", "tx") if f.kind == "roce" and f.dscp == 26 and f.ecn == 3)
        if fn == "busy":
            return sum((f.length + WIRE_OVERHEAD) * 8 / self.rate * 1e9 for f in self.cap(self.ports_of(arg)[0], "tx")) / self.t
        s, d = self.flow(arg)
        sip, dip = self.ip[s], self.ip[d]
        if fn == "cnp_tx":
            return sum(1 for f in self.cap(self.ports_of(d)[0], "tx") if f.kind == "roce" and f.opcode == OP_CNP and
                       f.dst == sip)
        if fn == "cnp_rx":
            return sum(1 for f in self.cap(self.ports_of(s)[0], "rx") if f.kind == "roce" and f.opcode == OP_CNP and
                       f.src == dip)
        if fn == "naks":
            return sum(1 for f in self.cap(self.ports_of(s)[0], "rx") if f.kind == "roce" and f.src == dip and f.is_nak)
        rx = [f for f in self.cap(self.ports_of(d)[0], "rx") if f.is_data and f.src == sip]
        if fn == "goodput":  # over the flow's life: from its configured start to the end of the run
            return sum(f.payload for f in rx) * 8 / ((self.t - self.start.get(arg, 0)) / 1e9)
        if fn == "messages":
            return sum(1 for f in rx if f.opcode in RC_LAST)
        raise AssertionError(fn)


def split_expect(text):
    """(lhs, op, rhs) of an expect line; op 'within' carries the tolerance."""
    text = text.strip()  # (YAML took the comments; '#' is part of a flow name: h0->h8#0)
    m = re.fullmatch(r"(.+?)\s+within\s+([\d.]+%)\s+of\s+(.+)", text)
    if m:
        return m.group(1), ("within", float(m.group(2)[:-1]) / 100), m.group(3)
    if re.fullmatch(r"(.+?)\s+within\s+([\d.]+%)", text):
        m = re.fullmatch(r"(.+?)\s+within\s+([\d.]+%)", text)
        return m.group(1), ("ratio_within", float(m.group(2)[:-1]) / 100), None
    m = re.fullmatch(r"(.+?)\s+(==|!=|>=|<=|>|<)\s+(.+)", text)  # spaced: h0->h8 is a flow name
    assert m, text
    return m.group(1), m.group(2), m.group(3)


class WireVerdicts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rocelab-vt-wire-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def judge(self, scenario, must_cover, extra=()):
        path = os.path.join(SCEN, scenario + ".yaml")
        out = os.path.join(self.tmp, scenario)
        r = subprocess.run([FABRIC, "run", path, "--out", out, "--pcap", "--snaplen", "64B", "--no-plots", "--quiet",
                            *extra], capture_output=True, text=True, timeout=900)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        w = Wire(out, path)
        window = int(w.doc.get("traffic", {}).get("window", 8192)) * 1024  # bytes one QP may have in flight, at most
        covered, not_wire = set(), set()
        lines = []
        for e in w.summary["expectations"]:
            lhs, op, rhs = split_expect(e["expect"])
            calls = CALL.findall(e["expect"])
            fns = {fn for fn, _ in calls}
            if not fns or not fns <= WIRE_TERMS:
                not_wire |= fns - WIRE_TERMS
                continue

            def ev(side):
                if side is None:
                    return None
                expr = CALL.sub(lambda m: repr(float(w.value(m.group(1), m.group(2)))), side)
                return eval(with_units(expr), {"__builtins__": {}})  # arithmetic on numbers only
            wl, wr = ev(lhs), ev(rhs)
            # The runner's figure and the wire's: counts exactly, rates and shares within what the
            # receivers' RX rings may hold unread at the end (one window per flow) or 0.1 %.
            for side, wv, rv in (("lhs", wl, e["lhs"]), ("rhs", wr, e["rhs"])):
                if wv is None or side == "rhs" and not CALL.search(rhs or ""):
                    continue
                text = lhs if side == "lhs" else rhs
                if all(fn in ("pfc_tx", "pfc_rx", "ecn_marked", "cnp_tx", "cnp_rx", "naks", "messages")
                       for fn, _ in CALL.findall(text)) and "/" not in text:
                    self.assertEqual(wv, rv, f"{scenario}: {e['expect']}: wire {wv} runner {rv}")
                elif "goodput" in text and "/" not in text:
                    slack = len(CALL.findall(text)) * window * 8 / (w.t / 1e9)
                    self.assertLessEqual(abs(wv - rv), slack, f"{scenario}: {e['expect']}: wire {wv} runner {rv}")
                else:
                    self.assertAlmostEqual(wv, rv, delta=abs(rv) * 1e-3 + 1e-9,
                                           msg=f"{scenario}: {e['expect']}: wire {wv} runner {rv}")
            # The expectation itself, judged on the wire's figures.
            if op == "==":
                ok = wl == wr
            elif op == "!=":
                ok = wl != wr
            elif op in (">", "<", ">=", "<="):
                ok = eval(f"{wl!r} {op} {wr!r}")
            elif op[0] == "within":
                ok = abs(wl - wr) <= op[1] * abs(wr)
            else:
                ok = abs(wl - 1) <= op[1]
            self.assertTrue(ok, f"{scenario}: {e['expect']} fails on the wire: {wl} vs {wr}")
            self.assertTrue(e["passed"], e)
            covered |= fns
            lines.append(f"  {e['expect']:58s} wire {wl:.6g}  runner {e['lhs']:.6g}")
        print(f"\n{scenario}: recomputed from the wire:\n" + "\n".join(lines) +
              f"\n  not from the wire: {', '.join(sorted(not_wire)) or '-'}")
        self.assertTrue(set(must_cover) <= covered, f"{scenario}: only {sorted(covered)} checked on the wire")
        return w

    def test_incast(self):
        self.judge("incast-8to1-pfc", {"pfc_tx", "pfc_rx", "goodput", "busy", "naks"})

    def test_pfc_storm(self):
        self.judge("pfc-storm", {"pfc_rx", "goodput"})

    def test_pfc_storm_watchdog(self):
        self.judge("pfc-storm-watchdog", {"goodput"})

    def test_dcqcn_fairness(self):
        self.judge("dcqcn-fairness", {"goodput", "ecn_marked", "cnp_rx", "pfc_tx"})

    def test_hpcc_2to1(self):
        self.judge("hpcc-incast-2to1", {"messages", "ecn_marked", "cnp_tx", "cnp_rx", "pfc_tx"})


if __name__ == "__main__":
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
