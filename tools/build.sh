#!/usr/bin/env bash
# build.sh - configure (once) and build rocelab into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build/build.ninja ]]; then
  meson setup build --buildtype=release >/dev/null
fi
ninja -C build
