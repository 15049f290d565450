#!/usr/bin/python3
"""vt_identity.py - are two rocelab-fabric builds the same on the wire, byte for byte?

Issue 22 item 5: a change to the data path must not change what goes on the
wire. In virtual time the same topology gives the same run, byte for byte,
so two builds (the commit before a change and after it) can be compared
exactly: this runs each scenario with both, with full-frame wire captures
(--pcap --snaplen 9216), and compares every output file but speed.json
(wall-clock figures): the captures of every port in both directions, the
reports, FCTs, queues and plots.

  tools/vt_identity.py --before /tmp/before-fabric                  # every scenario but the 64-host clusters
  tools/vt_identity.py --before B --after A loss-gbn-1e-2.yaml pfc-storm.yaml
  tools/vt_identity.py --before B --no-pcap                         # reports only (fast, small)
  tools/vt_identity.py --before B --wire-only                       # captures only (a report field was added)

Exit status 0 when every scenario is identical, 1 when one differs (named
with the first differing file), 2 when a run fails.
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCEN = os.path.join(ROOT, "conf", "scenarios")


def first_difference(a, b, wire_only=False):
    """The first path (relative) that differs between directories a and b, or None (wire_only: *.pcap only)."""
    cmp = filecmp.dircmp(a, b, ignore=["speed.json"])
    stack = [("", cmp)]
    while stack:
        rel, c = stack.pop()
        for name in sorted(c.left_only + c.right_only):
            if not wire_only or name.endswith(".pcap"):
                return os.path.join(rel, name) + " (only on one side)"
        for name in sorted(c.common_files):
            if wire_only and not name.endswith(".pcap"):
                continue
            if not filecmp.cmp(os.path.join(c.left, name), os.path.join(c.right, name), shallow=False):
                return os.path.join(rel, name)
        for name, sub in sorted(c.subdirs.items()):
            stack.append((os.path.join(rel, name), sub))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="rocelab-fabric of the build before the change")
    ap.add_argument("--after", default=os.path.join(ROOT, "build", "app", "rocelab-fabric"))
    ap.add_argument("--no-pcap", action="store_true", help="compare the reports only, no wire captures")
    ap.add_argument("--wire-only", action="store_true", help="compare the captures only (for builds whose reports "
                                                                 "differ by design, e.g. a new report field)")
    ap.add_argument("--workdir", default=None, help="where the two runs' outputs go (removed after each scenario)")
    ap.add_argument("scenarios", nargs="*", help="file names in conf/scenarios (default: all but cluster-*)")
    a = ap.parse_args()
    if a.no_pcap and a.wire_only:
        ap.error("--no-pcap and --wire-only together compare nothing")
    names = a.scenarios or sorted(n for n in os.listdir(SCEN) if n.endswith(".yaml") and not n.startswith("cluster-"))
    work = a.workdir or tempfile.mkdtemp(prefix="vt-identity-")
    extra = [] if a.no_pcap else ["--pcap", "--snaplen", "9216"]
    differ = failed = 0
    for n in names:
        outs = {}
        for side, binary in (("before", a.before), ("after", a.after)):
            out = os.path.join(work, side)
            shutil.rmtree(out, ignore_errors=True)
            r = subprocess.run([binary, "run", os.path.join(SCEN, n), "--out", out, "--quiet"] + extra,
                               capture_output=True, text=True, timeout=1800)
            if r.returncode not in (0, 3):  # 3: an expectation failed (still a run to compare)
                print(f"{n}: {side} exited {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
                failed += 1
            outs[side] = out
        d = first_difference(outs["before"], outs["after"], a.wire_only)
        files = sum(1 for _, _, f in os.walk(outs["after"]) for x in f if not a.wire_only or x.endswith(".pcap"))
        if d is None:
            print(f"{n}: identical ({files} files)")
        else:
            print(f"{n}: DIFFERENT, first at {d}")
            differ += 1
        for o in outs.values():
            shutil.rmtree(o, ignore_errors=True)
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(names)} scenario(s): {len(names) - differ} identical, {differ} different, {failed} failed run(s)")
    sys.exit(2 if failed else 1 if differ else 0)


if __name__ == "__main__":
    main()
