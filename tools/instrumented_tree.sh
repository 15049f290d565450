# instrumented_tree.sh - sourced by tools/fuzz.sh and tools/sanitize.sh.
#
# ./build-fuzz is the one instrumented build tree: clang, every object with
# ASan + UBSan (-fno-sanitize-recover=undefined: any UB report is fatal) and
# libFuzzer's coverage hooks (-Dfuzz=true, see meson.build). fuzz.sh builds
# the libFuzzer targets in it; sanitize.sh builds the unit and DPDK test
# executables and rocelab-fabric in the same tree, so the libraries are
# compiled once for both (a separate gcc ASan tree cost ~8 minutes of CI).
#
# configure_instrumented_tree: configure it once (idempotent); a tree
# configured before the tests were part of it (-Dtests=false) is switched on.
# Debug info is line tables only (instrumented_debug_args): the sanitizers'
# and libFuzzer's reports name file and line from them, and full -g made
# these builds about a fifth slower (TSan tree: 131 s against 104 s).
# MPI is off in it (-Dmpi=disabled): its tests run through mpirun, which
# sanitize.sh does not build for, and Open MPI's own allocations would be
# LeakSanitizer reports; the MPI transport is tested in ./build.
instrumented_debug_args=(-Dc_args=-gline-tables-only -Dcpp_args=-gline-tables-only)
configure_instrumented_tree() {
  if [[ ! -f build-fuzz/build.ninja ]]; then
    CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=true -Dbenchmarks=false -Dmpi=disabled \
      --buildtype=debugoptimized "${instrumented_debug_args[@]}" >/dev/null
  elif meson introspect build-fuzz --buildoptions |
      python3 -c 'import json, sys; sys.exit(0 if any(o["name"] == "tests" and o["value"] is False for o in json.load(sys.stdin)) else 1)'; then
    meson configure build-fuzz -Dtests=true >/dev/null
  fi
  if meson introspect build-fuzz --buildoptions |
      python3 -c 'import json, sys; sys.exit(0 if any(o["name"] == "mpi" and o["value"] != "disabled" for o in json.load(sys.stdin)) else 1)'; then
    meson configure build-fuzz -Dmpi=disabled >/dev/null
  fi
}

# quiet_ninja ARGS...: ninja without its progress lines; on failure its
# output (ninja prints compiler errors on stdout) is shown, then exit 1.
quiet_ninja() {
  local out
  if ! out="$(nice -n 10 ninja "$@" 2>&1)"; then
    printf '%s\n' "$out" | grep -v '^\[[0-9]*/[0-9]*\] ' | tail -60
    echo "$(basename "$0"): build failed: ninja $*"
    exit 1
  fi
}
