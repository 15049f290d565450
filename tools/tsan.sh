#!/usr/bin/env bash
# tsan.sh [--full] - ThreadSanitizer over the multi-worker code (issue 19
# item 10): rocelab-switch, rocelab-gen and rocelab-fabric built in
# ./build-tsan (clang, -Db_sanitize=thread; configured once), then the tests
# that run several workers or threads, with the workers on both CPUs so that
# they really run at the same time:
#
#   switch  test_switch.py L2Tests, 2 workers on CPUs 1 and 0 (hand-over
#           between workers, flooding, per-flow order); --full adds L3Tests
#   telemetry  telemetry_under_load.py: every /rocelab/* command, 10 times,
#           while the switch forwards on 2 workers (CPUs 1 and 0) into a 1Gbps
#           port (queues, PGs, XOFF, headroom all moving): what telemetry, the
#           status line and reports read while the workers write must be
#           relaxed atomics (core/counter.hpp). Judges no speed.
#   rss     test_switch.py RssTests: one port's two RX queues on 2 workers
#           (CPUs 1 and 0), its PGs charged from credit between them
#   incast  test_rt_incast.py with 3 switch workers (CPUs 1, 0, 1): 16:1 at
#           MTU 256 over memif, PFC, mbufs recycled across workers
#   gen     test_gen.py GenBasic, 2 generator workers on a loopback pair
#   gen-telemetry  gen_telemetry_under_load.py: every /rocelab_gen/* command,
#           10 times, while 2 generator workers (CPUs 1 and 0) run closed
#           loop with 1 % loss and PFC pausing one port
#   fabric  test_vt_threads.py: rocelab-fabric on 2 threads (--full only;
#           ~65 s under TSan)
#
# Any TSan report makes the process exit 66 (halt_on_error), which fails its
# test. First a canary - two threads incrementing one int - must be reported,
# so a toolchain or option that silently stops TSan fails this script.
#
# Debian's DPDK is not instrumented. ignore_noninstrumented_modules=1 keeps
# TSan from reporting DPDK's own libc calls; hand-overs between our threads
# that go through DPDK (mempool, net_ring/memif bursts, rte_ring, EAL launch
# and wait) are annotated per object in lib/dpdk/tsan.hpp; EAL runs with
# --no-shconf under TSan (lib/dpdk/eal.cpp). See docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
[[ "${1:-}" == "--full" ]] && full=1

# shellcheck source=tools/instrumented_tree.sh
source tools/instrumented_tree.sh  # quiet_ninja, instrumented_debug_args
if [[ ! -f build-tsan/build.ninja ]]; then
  CC=clang CXX=clang++ meson setup build-tsan -Db_sanitize=thread -Dtests=false -Dbenchmarks=false \
    --buildtype=debugoptimized "${instrumented_debug_args[@]}" >/dev/null
fi
# rocelab-fabric only for --full (its one test, test_vt_threads.py, is not
# in the CI set): it and the virtual-time libraries took 30 s of the tree's
# 104 s here.
targets=(app/rocelab-switch app/rocelab-gen)
((full)) && targets+=(app/rocelab-fabric)
quiet_ninja -C build-tsan "${targets[@]}"

export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0 ignore_noninstrumented_modules=1"
work="$(mktemp -d /tmp/rocelab-tsan.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cat >"$work/canary.cpp" <<'CPP'
#include <thread>
int shared = 0;
int main() {
    std::thread a([] { for (int i = 0; i < 100000; ++i) { ++shared; } });
    std::thread b([] { for (int i = 0; i < 100000; ++i) { ++shared; } });
    a.join();
    b.join();
    return shared == 0;
}
CPP
clang++ -std=c++20 -fsanitize=thread -O1 -g -pthread "$work/canary.cpp" -o "$work/canary"
rc=0
"$work/canary" >"$work/canary.log" 2>&1 || rc=$?
if ((rc != 66)) || ! grep -q "WARNING: ThreadSanitizer: data race" "$work/canary.log"; then
  echo "tsan: the canary's data race was not reported (exit $rc): TSan is not working"
  exit 1
fi
echo "tsan: canary race reported (exit 66)"

failed=()
run() {
  local name="$1"
  shift
  local rc=0 t0=$SECONDS
  env ROCELAB_BUILD="$PWD/build-tsan" "$@" >"$work/$name.log" 2>&1 || rc=$?
  echo "tsan: $name ($((SECONDS - t0)) s)"
  if grep -q "ThreadSanitizer" "$work/$name.log" || ((rc != 0 && rc != 77)); then
    # The report's head (the two accesses and their stacks) first: a
    # tail alone shows only where the memory came from.
    if grep -q "WARNING: ThreadSanitizer" "$work/$name.log"; then
      grep -m1 -A60 "WARNING: ThreadSanitizer" "$work/$name.log" | cut -c1-300
      echo "..."
    fi
    tail -20 "$work/$name.log"
    failed+=("$name (exit $rc)")
  elif ((rc == 77)); then
    grep -h "SKIP" "$work/$name.log" | tail -3
    echo "tsan: $name SKIPPED (see above)"
  fi
}
run switch ROCELAB_TEST_WORKERS=2 ROCELAB_TEST_SPREAD_WORKERS=1 /usr/bin/python3 tests/dpdk/test_switch.py L2Tests
run telemetry /usr/bin/python3 tests/dpdk/telemetry_under_load.py 10
run rss ROCELAB_TEST_SPREAD_WORKERS=1 /usr/bin/python3 tests/dpdk/test_switch.py RssTests
run incast ROCELAB_TEST_WORKERS=3 /usr/bin/python3 tests/dpdk/test_rt_incast.py
run gen ROCELAB_TEST_WORKERS=2 /usr/bin/python3 tests/dpdk/gen/test_gen.py GenBasic
run gen-telemetry /usr/bin/python3 tests/dpdk/gen/gen_telemetry_under_load.py 10
if ((full)); then
  run switch-l3 ROCELAB_TEST_WORKERS=2 ROCELAB_TEST_SPREAD_WORKERS=1 /usr/bin/python3 tests/dpdk/test_switch.py L3Tests
  run fabric /usr/bin/python3 tests/dpdk/test_vt_threads.py
  # CliTests' cases judge things a TSan build is too slow for (a 1Gbps port
  # oversubscribed enough to overflow headroom within seconds: 2 runs in 3
  # did not), so they are here only.
  run cli ROCELAB_TEST_WORKERS=2 ROCELAB_TEST_SPREAD_WORKERS=1 /usr/bin/python3 tests/dpdk/test_switch.py CliTests
fi
if ((${#failed[@]})); then
  echo "tsan: FAILED: ${failed[*]}"
  exit 1
fi
echo "tsan: no data race in the multi-worker tests$( ((full)) || echo ' (CI set; --full for all)')"
