#!/usr/bin/env bash
# stage_cycles.sh - the bench build's per-stage counters (issue 22: "per-stage
# packet and cycle counters in a bench build"): rocelab-switch-stages and
# rocelab-gen-stages, the two binaries with -DROCELAB_STAGE_CYCLES=1 in their
# pipelines and runtime, built on demand in ./build (release) over the same
# lib/ objects as the normal binaries (pipelines/meson.build), then
# tests/dpdk/stage_cycles_test.py, which checks each stage's frames against
# the ports' counters and the stages' cycles against the worker's busy cycles
# (switch L2 and L3, generator tx-only and closed loop; 2 s each). The
# normal binaries have no stage clock (stage_clock.hpp).
#
# For figures: run the stage binaries with --report and read
# workers[].stages (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build/build.ninja ]]; then
  meson setup build --buildtype=release >/dev/null
fi
# shellcheck source=tools/instrumented_tree.sh
source tools/instrumented_tree.sh  # quiet_ninja
quiet_ninja -C build app/rocelab-switch-stages app/rocelab-gen-stages
ROCELAB_BUILD="$PWD/build" /usr/bin/python3 tests/dpdk/stage_cycles_test.py
