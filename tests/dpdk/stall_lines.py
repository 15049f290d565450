"""stall_lines.py - the final output's line per worker lcore of rocelab-gen and
rocelab-switch (app/runtime/report_common.hpp, print_worker_stalls) held to
the report's "workers": ports, stalled time, stall count, share of the run,
longest gap between polls, and the note from 1 % of the run."""
import re

STALL_LINE = re.compile(r"^worker (\d+) \(([^)]*)\): stalled ([\d.]+)(ms|us) in (\d+) stalls, ([\d.]+)% of the run; "
                        r"longest gap between polls ([\d.]+)(ms|us)( \(the host took this time from the worker.*\))?$")


def check_stall_lines(out, rep):
    """The final output's line per worker (report_common.hpp,
    print_worker_stalls) says what the report's "workers" say: its ports,
    stalled time, stall count, share of the run and longest gap, with the
    note from 1 % of the run."""
    lines = [STALL_LINE.match(x) for x in out.splitlines() if x.startswith("worker ")]
    assert len(lines) == len(rep["workers"]) and all(lines), out
    for w, m in zip(rep["workers"], lines):
        ms = lambda v, u: float(v) * (1e6 if u == "ms" else 1e3)  # noqa: E731
        assert int(m.group(1)) == w["worker"] and m.group(2) == ", ".join(w["ports"]), (m.group(0), w)
        assert int(m.group(5)) == w["stalls"], (m.group(0), w)
        assert abs(ms(m.group(3), m.group(4)) - w["stalled_ns"]) <= 50001, (m.group(0), w)
        assert abs(ms(m.group(7), m.group(8)) - w["max_poll_gap_ns"]) <= 50001, (m.group(0), w)
        share = w["stalled_ns"] / (rep["elapsed_s"] * 1e9)
        assert abs(float(m.group(6)) - 100 * share) <= 0.051, (m.group(0), w, rep["elapsed_s"])
        if abs(share - 0.01) > 1e-4:
            assert (m.group(9) is not None) == (share >= 0.01), (m.group(0), share)
