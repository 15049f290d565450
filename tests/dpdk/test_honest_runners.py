#!/usr/bin/python3
"""The machinery that makes skips and failures visible (issue 19 items 7, 10c).

* testmain (tests/dpdk/testmain.py), the main() of every Python test here:
  a skipped case exits 77 (meson SKIP) and is named on stderr; a failure
  next to a skip still exits 1; a fixed known bug (unexpected success) and
  a run of no case at all exit 1; every Python test main uses it.
* skip_report.py reading a meson testlog.json: the skipped cases listed with
  reasons, a limit, a skip hidden behind OK, a stale log.
* tools/test.sh and .ci/run, run in a scratch copy of the repository where
  setup, build, fuzz and sanitize are stubs and `meson` is a stub on PATH
  that writes a chosen testlog.json: a fuzzer or sanitizer failure does not
  stop the meson tests and is named at the end; .ci/run fails when more
  than 2 cases skipped and lists them.
* lossless_verdict (tests/dpdk/test_fabric.py), which decides when a
  real-time run's loss may be blamed on the machine: only a headroom
  overflow or an ACK timeout, and only after a long enough poll gap.

Nothing here runs DPDK; it takes a few seconds.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class TestMain(unittest.TestCase):
    def run_script(self, body):
        with tempfile.TemporaryDirectory(prefix="rocelab-testmain-") as d:
            p = os.path.join(d, "t.py")
            write(p, textwrap.dedent(f"""\
                import sys, unittest
                sys.path.insert(0, {HERE!r})
                import testmain
                """) + textwrap.dedent(body) + "\nif __name__ == '__main__':\n    testmain.main()\n")
            return subprocess.run([PY, p, "-v"], capture_output=True, text=True, timeout=60)

    def test_a_skipped_case_exits_77_and_is_named(self):
        r = self.run_script("""
            class A(unittest.TestCase):
                def test_ok(self):
                    pass
            @unittest.skipUnless(False, "needs a thing")
            class B(unittest.TestCase):
                def test_one(self):
                    pass
            class C(unittest.TestCase):
                def test_two(self):
                    self.skipTest("machine too busy: 6.4 ms")
            """)
        self.assertEqual(r.returncode, 77, r.stderr)
        self.assertIn("SKIP B.test_one: needs a thing", r.stderr)
        self.assertIn("SKIP C.test_two: machine too busy: 6.4 ms", r.stderr)

    def test_a_failure_beside_a_skip_exits_1(self):
        r = self.run_script("""
            class A(unittest.TestCase):
                def test_bad(self):
                    self.assertEqual(1, 2)
                def test_skip(self):
                    self.skipTest("why")
            """)
        self.assertEqual(r.returncode, 1, r.stderr)

    def test_all_passing_exits_0(self):
        r = self.run_script("""
            class A(unittest.TestCase):
                def test_ok(self):
                    pass
                @unittest.expectedFailure
                def test_known_bug(self):
                    self.assertEqual(1, 2)
            """)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_fixed_known_bug_and_no_case_exit_1(self):
        r = self.run_script("""
            class A(unittest.TestCase):
                @unittest.expectedFailure
                def test_known_bug(self):
                    pass
            """)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("UNEXPECTED SUCCESS A.test_known_bug", r.stderr)
        r = self.run_script("""
            class A(unittest.TestCase):
                pass
            """)
        self.assertEqual(r.returncode, 1, r.stderr)

    def test_every_python_test_main_uses_it(self):
        files = sorted(glob.glob(os.path.join(HERE, "test_*.py")) + glob.glob(os.path.join(HERE, "gen", "test_*.py")))
        self.assertGreater(len(files), 10)
        for f in files:
            with open(f) as fh:
                src = fh.read()
            if "__main__" not in src:
                continue
            main = src[src.rindex("\nif __name__ == \"__main__\":"):]
            self.assertIn("testmain.main()", main, f"{f}: its main must be testmain.main() (exit 77 on a skip)")
            self.assertNotIn("unittest.main(", main, f)


def entry(name, result, stdout="", stderr=""):
    return {"name": f"rocelab:dpdk / {name}", "result": result, "stdout": stdout, "stderr": stderr,
            "returncode": {"OK": 0, "SKIP": 77, "FAIL": 1}[result]}


GT_SKIP = entry("dpdk_incast", "SKIP", "[  SKIPPED ] incast.a\n[  SKIPPED ] incast.b\n",
                "SKIP incast.a: stalled 9 ms\nSKIP incast.b: stalled 11 ms\n2 test(s) skipped, none failed: exit 77\n")
PY_SKIP = entry("dpdk_linux_hosts", "SKIP", "", "test_x (__main__.L.test_x) ... skipped 'needs root'\n"
                                                "SKIP L.test_x: needs root\n")
BARE_SKIP = entry("dpdk_other", "SKIP", "", "")
OK = entry("dpdk_fine", "OK", "", "Ran 3 tests\n\nOK\n")
HIDDEN_PY = entry("dpdk_hiding", "OK", "", "test_y (__main__.H.test_y) ... skipped 'why'\nRan 1 test\n\nOK (skipped=1)\n")


class LosslessVerdict(unittest.TestCase):
    """The excuse for a real-time loss cannot swallow the fabric's own."""

    @staticmethod
    def reports(gap_ms, drops=None, flow=(0, 0, 0)):
        f = {"name": "h0->h2#0", "naks_rx": flow[0], "retransmissions": flow[1], "timeouts": flow[2],
             "window": 1024, "pmtu": 1024, "ack_timeout_ns": 67_108_864}
        g = {"flows": [f, dict(f, name="h1->h2#1", naks_rx=0, retransmissions=0, timeouts=0)],
             "max_poll_gap_ns": int(gap_ms * 1e6)}
        pg = {"pg": 3, "lossless": True, "xoff": 1_052_672}
        s = {"max_poll_gap_ns": 0, "ports": [{"name": "Ethernet0", "drops": dict(drops or {}),
                                              "priority_groups": [pg]}]}
        return g, s

    def verdict(self, *a, **k):
        sys.path.insert(0, HERE)
        from test_fabric import lossless_verdict
        return lossless_verdict(*self.reports(*a, **k), 1e9)

    def test_clean_run(self):
        self.assertEqual(self.verdict(100)[0], [])

    def test_timeout_needs_a_gap_of_the_timeout_less_the_windows(self):
        # 67.1 ms less 2 x 1024 x (1024 + 98) B at 1 Gbps (18.4 ms) = 48.7 ms
        self.assertFalse(self.verdict(48.6, flow=(0, 5, 1))[1])
        self.assertTrue(self.verdict(48.8, flow=(0, 5, 1))[1])

    def test_a_nak_or_another_drop_is_never_excused(self):
        self.assertFalse(self.verdict(1000, flow=(1, 5, 0))[1])
        self.assertFalse(self.verdict(1000, drops={"drop_tail": 1})[1])
        self.assertFalse(self.verdict(1000, drops={"drop_headroom_overflow": 3, "drop_wd": 1})[1])

    def test_headroom_overflow_needs_a_gap_the_headroom_cannot_absorb(self):
        # 1052672 B at 1 Gbps: 8.42 ms; its drops explain NAKs and timeouts
        self.assertFalse(self.verdict(8.4, drops={"drop_headroom_overflow": 3}, flow=(1, 5, 1))[1])
        self.assertTrue(self.verdict(8.5, drops={"drop_headroom_overflow": 3}, flow=(1, 5, 1))[1])
        self.assertEqual(len(self.verdict(8.5, drops={"drop_headroom_overflow": 3}, flow=(1, 5, 1))[0]), 2)


class SkipReport(unittest.TestCase):
    def report(self, entries, *args, mtime=None):
        with tempfile.TemporaryDirectory(prefix="rocelab-skips-") as d:
            log = os.path.join(d, "testlog.json")
            with open(log, "w") as f:
                for e in entries:
                    f.write(json.dumps(e) + "\n")
            if mtime is not None:
                os.utime(log, (mtime, mtime))
            return subprocess.run([PY, os.path.join(HERE, "skip_report.py"), log] + list(args),
                                  capture_output=True, text=True, timeout=60)

    def test_cases_listed_with_reasons_and_limit(self):
        r = self.report([OK, GT_SKIP, PY_SKIP], "--max", "2")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("skipped test cases: 3", r.stdout)
        self.assertIn("SKIP dpdk_incast / incast.a: stalled 9 ms", r.stdout)
        self.assertIn("SKIP dpdk_incast / incast.b: stalled 11 ms", r.stdout)
        self.assertIn("SKIP dpdk_linux_hosts / L.test_x: needs root", r.stdout)
        self.assertIn("more than the 2 allowed", r.stdout)
        r = self.report([OK, GT_SKIP], "--max", "2")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("skipped test cases: 2", r.stdout)
        r = self.report([OK, GT_SKIP, PY_SKIP])  # no limit: listed only
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_skip_without_a_named_case_counts_as_one(self):
        r = self.report([BARE_SKIP, OK], "--max", "0")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("SKIP dpdk_other / (whole test)", r.stdout)

    def test_a_skip_hidden_behind_ok_fails(self):
        r = self.report([OK, HIDDEN_PY])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("HIDDEN SKIP dpdk_hiding", r.stdout)
        hidden_gt = entry("dpdk_gt", "OK", "[  SKIPPED ] a.b\n[  PASSED  ] 0 tests.\n")
        self.assertEqual(self.report([hidden_gt]).returncode, 1)

    def test_a_stale_or_missing_log_fails(self):
        r = self.report([OK], "--newer-than", "2000000000", mtime=1000000000)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("earlier run", r.stdout)
        r = subprocess.run([PY, os.path.join(HERE, "skip_report.py"), "/nonexistent/testlog.json"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout)


STUB_MESON = """#!/usr/bin/env bash
# stub meson: records that it ran, writes the chosen test log, exits as told
echo "meson $*" >> "$STUB_DIR/ran"
mkdir -p build/meson-logs
if [[ -n "${STUB_TESTLOG:-}" ]]; then cp "$STUB_TESTLOG" build/meson-logs/testlog.json; fi
exit "${STUB_MESON_RC:-0}"
"""


class Scripts(unittest.TestCase):
    """tools/test.sh and .ci/run in a scratch copy with stubs for the heavy parts."""

    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="rocelab-ci-")
        d = self.d = self._td.name
        self.repo = os.path.join(d, "repo")
        for rel in ("tools/test.sh", ".ci/run", "tests/dpdk/skip_report.py"):
            os.makedirs(os.path.dirname(os.path.join(self.repo, rel)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, rel), os.path.join(self.repo, rel))
        for name, var in (("setup", None), ("build", None), ("fuzz", "STUB_FUZZ_RC"), ("sanitize", "STUB_SAN_RC"),
                          ("tsan", "STUB_TSAN_RC"), ("stage_cycles", "STUB_STAGES_RC")):
            code = f'exit "${{{var}:-0}}"' if var else "exit 0"
            write(os.path.join(self.repo, "tools", name + ".sh"),
                  f'#!/usr/bin/env bash\necho "{name} $*" >> "$STUB_DIR/ran"\n{code}\n', 0o755)
        write(os.path.join(self.repo, "tools", "host_stalls.py"),
              'import os, sys\nopen(os.path.join(os.environ["STUB_DIR"], "ran"), "a").write("host_stalls\\n")\n'
              'sys.exit(int(os.environ.get("STUB_HOST_RC", "0")))\n', 0o644)
        write(os.path.join(d, "bin", "meson"), STUB_MESON, 0o755)

    def tearDown(self):
        self._td.cleanup()

    def run_script(self, script, entries, **env):
        log = os.path.join(self.d, "log.json")
        with open(log, "w") as f:
            for e in entries or []:
                f.write(json.dumps(e) + "\n")
        e = dict(os.environ, PATH=os.path.join(self.d, "bin") + ":" + os.environ["PATH"], STUB_DIR=self.d,
                 STUB_TESTLOG=log if entries is not None else "")
        e.pop("ROCELAB_MAX_SKIPS", None)
        e.update(env)
        open(os.path.join(self.d, "ran"), "w").close()
        r = subprocess.run(["bash", os.path.join(self.repo, script)], capture_output=True, text=True, timeout=60,
                           env=e)
        with open(os.path.join(self.d, "ran")) as f:
            ran = [x.split()[0] for x in f if x.strip()]
        return r, ran

    def test_all_passing(self):
        r, ran = self.run_script("tools/test.sh", [OK, GT_SKIP])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(ran, self.ALL_PARTS)
        self.assertIn("SKIP dpdk_incast / incast.a: stalled 9 ms", r.stdout)

    ALL_PARTS = ["setup", "build", "host_stalls", "meson", "fuzz", "sanitize", "tsan", "stage_cycles"]

    def assert_part_fails(self, stub_var, label, not_in):
        """One part's script exits 1 (stub_var): every part still runs,
        test.sh exits 1, and its closing line names that part (label) and
        none of the parts in not_in."""
        r, ran = self.run_script("tools/test.sh", [OK], **{stub_var: "1"})
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(ran, self.ALL_PARTS)
        tail = r.stdout[r.stdout.index("test.sh: FAILED"):]
        self.assertIn(label, tail)
        for other in not_in:
            self.assertNotIn(other, tail)

    def test_fuzz_failure_runs_meson_and_fails_at_the_end(self):
        self.assert_part_fails("STUB_FUZZ_RC", "fuzzing (tools/fuzz.sh: exit 1)", ["sanitizers", "meson tests"])

    def test_sanitizer_and_meson_failures_are_both_named(self):
        fail = entry("dpdk_broken", "FAIL", "", "boom")
        r, ran = self.run_script("tools/test.sh", [OK, fail], STUB_SAN_RC="1", STUB_MESON_RC="1")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(ran, self.ALL_PARTS)
        tail = r.stdout[r.stdout.index("test.sh: FAILED"):]
        self.assertIn("sanitizers (tools/sanitize.sh: exit 1)", tail)
        self.assertIn("meson tests (exit 1", tail)
        self.assertNotIn("fuzzing", tail)
        self.assertNotIn("thread sanitizer", tail)

    def test_thread_sanitizer_failure_runs_meson_and_fails_at_the_end(self):
        self.assert_part_fails("STUB_TSAN_RC", "thread sanitizer (tools/tsan.sh: exit 1)", ["meson tests"])

    def test_stage_cycles_failure_runs_meson_and_fails_at_the_end(self):
        self.assert_part_fails("STUB_STAGES_RC", "stage cycles (tools/stage_cycles.sh: exit 1)",
                               ["meson tests", "thread sanitizer"])

    def test_the_host_check_reports_and_never_fails_the_run(self):
        r, ran = self.run_script("tools/test.sh", [OK], STUB_HOST_RC="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(ran, self.ALL_PARTS)
        self.assertIn("test.sh: host check:", r.stdout)

    def test_ci_run_allows_two_skipped_cases_not_three(self):
        r, _ = self.run_script(".ci/run", [OK, GT_SKIP])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("skipped test cases: 2", r.stdout)
        r, _ = self.run_script(".ci/run", [OK, GT_SKIP, PY_SKIP])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("skipped test cases: 3", r.stdout)
        self.assertIn("SKIP dpdk_linux_hosts / L.test_x: needs root", r.stdout)
        self.assertIn("skips (tests/dpdk/skip_report.py, at most 2 allowed)", r.stdout)

    def test_ci_run_fails_on_a_hidden_skip_or_a_stale_log(self):
        r, _ = self.run_script(".ci/run", [OK, HIDDEN_PY])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("HIDDEN SKIP dpdk_hiding", r.stdout)
        # meson wrote no log this time; an old one is left from an earlier run.
        log = os.path.join(self.repo, "build", "meson-logs", "testlog.json")
        write(log, json.dumps(OK) + "\n")
        os.utime(log, (1000000000, 1000000000))
        r, _ = self.run_script(".ci/run", None)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("earlier run", r.stdout)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
