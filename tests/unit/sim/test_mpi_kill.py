#!/usr/bin/python3
"""A rank killed mid-run ends the whole job, promptly, with a line naming it.

Runs mpi_kill_test (mpi_kill_test.cpp) under mpirun with 2 ranks: rank 1 is
killed (SIGKILL) after a first run, while rank 0 waits in the second run's
collectives. Passes when the job exits non-zero within 30 s (a hang would
reach the 60 s bound and fail), rank 0 had reached the second run, never
finished it, and mpirun's output names rank 1 and the signal.

  test_mpi_kill.py MPIRUN MPI_KILL_TEST
"""
import subprocess
import sys
import time
import unittest

MPIRUN, EXE = sys.argv[1], sys.argv[2]


class KilledRank(unittest.TestCase):
    def test_a_killed_rank_ends_the_job_within_a_bounded_time(self):
        t0 = time.monotonic()
        p = subprocess.Popen([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", "2", EXE],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            import os
            import signal
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            self.fail("the job still ran 60 s after rank 1 was killed (a hang):\n" + out)
        took = time.monotonic() - t0
        print(out)
        print(f"exit {p.returncode} after {took:.1f} s")
        self.assertNotEqual(p.returncode, 0, out)
        self.assertLess(took, 30.0, out)
        self.assertIn("first run done on both ranks", out)
        self.assertIn("rank 0 in the second run's collectives", out)
        self.assertNotIn("finished a run without rank 1", out)
        self.assertRegex(out, r"process rank 1 .*exited on signal 9", out)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
