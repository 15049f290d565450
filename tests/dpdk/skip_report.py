#!/usr/bin/python3
"""List the test cases a meson run skipped, from its log (testlog.json).

    skip_report.py build/meson-logs/testlog.json [--max N] [--newer-than EPOCH]

meson writes one JSON object per test to build/meson-logs/testlog.json with
its result and its output. A test that exits 77 is a SKIP; the runners name
each skipped case on stderr as one line

    SKIP <case>: <reason>

(tests/gtest_main_skip77.cpp for GoogleTest, tests/dpdk/testmain.py for
Python). This script prints every skipped case as "<meson test> / <case>:
<reason>"; a SKIP test that names no case counts as one case with an
unknown reason. It also looks for skips that did not reach meson: a test
that passed (OK) although its output shows a skipped case (unittest's
"skipped '...'" / "OK (skipped=N)", GoogleTest's "[  SKIPPED ]"). Such a
hidden skip is an error: a skip must show as SKIP, never as OK.

Exit status: 0; 1 when more than --max cases skipped (no limit without
--max), when a skip was hidden, or when the log is missing, unreadable or
older than --newer-than (a log of an earlier run says nothing about this
one). tools/test.sh runs it after the meson suites (with --max from
ROCELAB_MAX_SKIPS, which .ci/run sets to 2).
"""
import argparse
import json
import os
import re
import sys

SKIP_LINE = re.compile(r"^SKIP (\S.*?): (.*)$")
HIDDEN = (re.compile(r"\.\.\. skipped '"), re.compile(r"^OK \(.*skipped=\d+"), re.compile(r"^\[  SKIPPED \] \S"))


def short(name):
    """'rocelab:dpdk / dpdk_pfc_reaction' -> 'dpdk_pfc_reaction'."""
    return name.split(" / ", 1)[-1]


def scan(entries):
    """(skipped cases [(test, case, reason)], hidden [(test, evidence line)])."""
    skipped, hidden = [], []
    for e in entries:
        out = (e.get("stdout") or "") + "\n" + (e.get("stderr") or "")
        name = short(e.get("name", "?"))
        if e.get("result") == "SKIP":
            cases = [m.groups() for m in map(SKIP_LINE.match, out.splitlines()) if m]
            if not cases:
                cases = [("(whole test)", "exit 77 without a 'SKIP <case>: <reason>' line")]
            skipped += [(name, c, r) for c, r in cases]
        elif e.get("result") == "OK":
            for line in out.splitlines():
                if any(p.search(line) for p in HIDDEN):
                    hidden.append((name, line.strip()))
                    break
    return skipped, hidden


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("testlog", help="meson's testlog.json (build/meson-logs/testlog.json)")
    ap.add_argument("--max", type=int, default=None, help="fail when more cases than this skipped")
    ap.add_argument("--newer-than", type=float, default=None, help="fail when the log is older (epoch seconds)")
    a = ap.parse_args(argv)
    try:
        if a.newer_than is not None and os.path.getmtime(a.testlog) < a.newer_than:
            print(f"skips: {a.testlog} is from an earlier run (meson did not run its tests now)")
            return 1
        with open(a.testlog) as f:
            entries = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        print(f"skips: cannot read meson's test log: {e}")
        return 1
    skipped, hidden = scan(entries)
    rc = 0
    print(f"skipped test cases: {len(skipped)} (of {len(entries)} meson tests)")
    for test, case, why in skipped:
        print(f"  SKIP {test} / {case}: {why}")
    for test, line in hidden:
        print(f"  HIDDEN SKIP {test}: passed (OK) although it skipped a case: {line}")
    if hidden:
        print(f"skips: {len(hidden)} test(s) skipped a case yet reported OK: make its main exit 77 "
              "(tests/dpdk/testmain.py, tests/gtest_main_skip77.cpp)")
        rc = 1
    if a.max is not None and len(skipped) > a.max:
        print(f"skips: {len(skipped)} test cases skipped, more than the {a.max} allowed")
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
