#!/usr/bin/env bash
# stage_cycles.sh - the bench build's per-stage counters (issue 22: "per-stage
# packet and cycle counters in a bench build"): rocelab-switch and
# rocelab-gen built in ./build-stages (release, -Dstage_cycles=true;
# configured once), then tests/dpdk/stage_cycles_test.py, which checks each
# stage's frames against the ports' counters and the stages' cycles against
# the worker's busy cycles (switch L2 and L3, generator tx-only and closed
# loop; 2 s each). A production build has no stage clock (stage_clock.hpp).
#
# For figures: run the bench build's binaries with --report and read
# workers[].stages (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build-stages/build.ninja ]]; then
  meson setup build-stages --buildtype=release -Dtests=false -Dbenchmarks=false -Dstage_cycles=true >/dev/null
fi
# shellcheck source=tools/instrumented_tree.sh
source tools/instrumented_tree.sh  # quiet_ninja
quiet_ninja -C build-stages app/rocelab-switch app/rocelab-gen
ROCELAB_BUILD="$PWD/build-stages" /usr/bin/python3 tests/dpdk/stage_cycles_test.py
