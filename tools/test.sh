#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test (unit + DPDK).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
meson test -C build --print-errorlogs "$@"
