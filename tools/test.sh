#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test: the fuzzers
# and the sanitizer build first, then the unit and DPDK suites (their meson
# summary is the last thing printed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
# Hostile input (docs/testing.md): the libFuzzer targets for a bounded time
# (ROCELAB_FUZZ_SECONDS per target, default 20: ~3 min with the build), then
# the unit suite and one short DPDK test under ASan+UBSan.
bash tools/fuzz.sh "${ROCELAB_FUZZ_SECONDS:-20}"
bash tools/sanitize.sh
meson test -C build --print-errorlogs "$@"
