#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test (unit + DPDK),
# then the fuzzers and the sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
meson test -C build --print-errorlogs "$@"
# Hostile input (docs/testing.md): the libFuzzer targets for a bounded time
# (ROCELAB_FUZZ_SECONDS per target, default 20: ~3 min with the build), then
# the unit suite and one short DPDK test under ASan+UBSan.
bash tools/fuzz.sh "${ROCELAB_FUZZ_SECONDS:-20}"
bash tools/sanitize.sh
