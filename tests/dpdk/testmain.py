"""The main() of every Python test in tests/dpdk (and tests/dpdk/gen).

meson judges a test by its exit code, and unittest exits 0 when cases were
skipped ("OK (skipped=1)"), so a skipped check would show as OK. This runner
(the Python twin of tests/gtest_main_skip77.cpp) runs unittest as usual
(same command line: a class or case name, -v) and then:

  * exits 1 when any case failed or raised, when an expectedFailure case
    passed (a known bug that is fixed must lose its marker), or when no case
    ran at all (a mistyped class name);
  * otherwise exits 77 (the GNU "skipped" code, meson: SKIP) when any case
    was skipped, after printing one line per skipped case on stderr:
        SKIP <Class>.<case>: <reason>
    (tests/dpdk/skip_report.py collects these lines from meson's test log);
  * otherwise exits 0.

Use:  if __name__ == "__main__": testmain.main()
"""
import sys
import unittest

SKIP_EXIT = 77


def case_name(test):
    """Class.method of a test case (or the description unittest gives a
    skipped class or module fixture)."""
    tid = test.id() if hasattr(test, "id") else str(test)
    parts = tid.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else tid


def verdict(result):
    """(exit code, lines for stderr) for a finished unittest result."""
    lines = []
    bad = len(result.failures) + len(result.errors) + len(getattr(result, "unexpectedSuccesses", []))
    if bad or result.testsRun == 0:
        if result.testsRun == 0:
            lines.append("no test case ran: exit 1")
        for t in getattr(result, "unexpectedSuccesses", []):
            lines.append(f"UNEXPECTED SUCCESS {case_name(t)}: a known-bug marker on a case that passes")
        return 1, lines
    if result.skipped:
        for t, why in result.skipped:
            lines.append(f"SKIP {case_name(t)}: {' '.join(str(why).split())}")
        lines.append(f"{len(result.skipped)} case(s) skipped, none failed: exit {SKIP_EXIT} (meson SKIP)")
        return SKIP_EXIT, lines
    return 0, lines


def main(module="__main__", argv=None):
    prog = unittest.main(module=module, argv=argv, exit=False)
    rc, lines = verdict(prog.result)
    sys.stdout.flush()
    for line in lines:
        print(line, file=sys.stderr)
    sys.stderr.flush()
    sys.exit(rc)
