"""What the rocelab-fabric tests share (test_vt_fabric.py,
test_report_render.py, test_vt_credit.py, test_vt_multiplane.py): the binary, a runner that kills it when it hangs,
and the small scenario both run, a 2:1 RoCE incast at 100 Gbps through one
leaf whose 1MiB pool makes PFC act within the run and whose congested
egress queue marks ECN early."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchtest import BUILD, run_to_end  # noqa: E402

FABRIC = os.path.join(BUILD, "app", "rocelab-fabric")
PLOTS = ("throughput.png", "fct.png", "queues.png", "pfc.png")


def run(args, timeout=300):
    """rocelab-fabric `args`: (exit status, stdout, stderr); killed, and an
    AssertionError, if it does not finish in `timeout` seconds."""
    return run_to_end([FABRIC] + args, timeout)


def assert_refused(tc, yaml_text, *want, extra=()):
    """Bad input: `rocelab-fabric run` on the scenario `yaml_text` (with
    `extra` arguments) exits 2 with one line (EAL's aside) that holds each
    of `want`, and writes no report."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bad.yaml")
        with open(path, "w") as f:
            f.write(yaml_text)
        out = os.path.join(d, "out")
        rc, so, se = run(["run", path, "--out", out, "--quiet", *extra])
        tc.assertEqual(rc, 2, so + se)
        lines = [ln for ln in se.splitlines() if ln.strip() and not ln.startswith("EAL:")]
        tc.assertEqual(len(lines), 1, se)
        for w in want:
            tc.assertIn(w, lines[0])
        tc.assertFalse(os.path.exists(os.path.join(out, "summary.json")))


def incast_2to1(msg_size):
    """The scenario's link, nodes and links (YAML), each sender writing
    `msg_size` messages; the caller adds its name, duration and expect."""
    return """link: {rate: 100Gbps, delay: 25ns}
nodes:
  - name: leaf0
    switch:
      PORT:
        Ethernet0: {speed: 100Gbps}
        Ethernet1: {speed: 100Gbps}
        Ethernet2: {speed: 100Gbps}
      WRED_PROFILE:
        ECN_LOW: {wred_green_enable: "true", ecn: ecn_all, green_min_threshold: 20000, green_max_threshold: 100000,
                  green_drop_probability: 10}
      QUEUE:
        Ethernet2|3: {wred_profile: ECN_LOW}
      BUFFER_POOL:                      # the default set-up with a 1MiB pool, so that PFC acts within the run
        ingress_lossless_pool: {size: 1MiB, type: ingress, mode: dynamic, cell: 96}
      BUFFER_PROFILE:
        pg_lossless_auto_profile: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto}
        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}
      BUFFER_PG:
        "global|3-4": {profile: pg_lossless_auto_profile}
        "global|0": {profile: ingress_lossy_profile}
  - name: hosts
    gen: {seed: 3, pattern: incast, senders: 2, msg_size: MSG_SIZE, pmtu: 1024, window: 4096}
links:
  - {a: hosts:0..2, b: leaf0:Ethernet0..Ethernet2}
""".replace("MSG_SIZE", msg_size)
