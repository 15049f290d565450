#!/usr/bin/env bash
# sanitize.sh - the unit suite, three DPDK tests and the fabric engine over
# the scenario library under AddressSanitizer + UndefinedBehaviorSanitizer,
# in ./build-fuzz: the instrumented tree the fuzzers use (clang, ASan +
# UBSan + libFuzzer coverage hooks; tools/instrumented_tree.sh configures it
# once).
#
# -fno-sanitize-recover=undefined makes any UB report fatal, so it fails the
# test; LeakSanitizer runs at exit of every test (detect_leaks=1), with
# tools/lsan.supp for what Debian's (uninstrumented) DPDK libraries keep
# allocated after rte_eal_cleanup(). Only the executables those tests need
# are built (not the apps or benchmarks). Its DPDK test runs on the real TSC
# like the dpdk suite: only dpdk_pfc_watchdog by default, the one short test
# that stays reliable at ASan's speed on a loaded 2-core machine
# (dpdk_pfc_reaction misses its 1 ms / rate bounds there). SANITIZE_DPDK_TESTS
# overrides the list ("" = unit suite only). See docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
dpdk_tests="${SANITIZE_DPDK_TESTS-dpdk_pfc_watchdog dpdk_route_table vt_fabric}"

# shellcheck source=tools/instrumented_tree.sh
source tools/instrumented_tree.sh
configure_instrumented_tree

mapfile -t exes < <(meson introspect build-fuzz --tests | python3 -c '
import json, os, sys
want = set(sys.argv[1].split())
root = os.path.abspath("build-fuzz")
for t in json.load(sys.stdin):
    exe = os.path.abspath(t["cmd"][0])
    if not exe.startswith(root + os.sep):
        continue  # an interpreter (e.g. the layering check runs /usr/bin/python3): nothing to build
    if any(s.split(":")[-1] == "unit" for s in t["suite"]) or t["name"] in want:
        print(os.path.relpath(exe, root))
' "$dpdk_tests")
# The unit suite's config_docs runs rocelab-switch --config-schema.
quiet_ninja -C build-fuzz "${exes[@]}" app/rocelab-switch

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
meson test -C build-fuzz --no-rebuild --print-errorlogs --suite unit
if [[ -n "$dpdk_tests" ]]; then
  # shellcheck disable=SC2086
  meson test -C build-fuzz --no-rebuild --print-errorlogs $dpdk_tests
fi
# The fabric engine and the scenario library under ASan+UBSan (issue 19
# item 10): every library file but the cluster, cut to its first 1ms of
# fabric time (an expectation judged on the cut may fail: exit 3 is fine;
# any sanitizer report aborts the run and fails here).
quiet_ninja -C build-fuzz app/rocelab-fabric
scen_out="$(mktemp -d /tmp/rocelab-asan-scen.XXXXXX)"
trap 'rm -rf "$scen_out"' EXIT
# Two at a time (one per CPU): each run is single-threaded.
scen_one() {
  local f="$1" name rc=0
  name="$(basename "$f" .yaml)"
  build-fuzz/app/rocelab-fabric run "$f" --duration 1ms --out "$scen_out/$name" --no-plots --quiet \
    >"$scen_out/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$scen_out/$name.rc"
}
scens=()
for f in conf/scenarios/*.yaml; do
  [[ "$(basename "$f")" == cluster-* ]] && continue
  scens+=("$f")
  while (($(jobs -rp | wc -l) >= 2)); do wait -n || true; done
  scen_one "$f" &
done
wait
n=0
for f in "${scens[@]}"; do
  name="$(basename "$f" .yaml)"
  rc="$(cat "$scen_out/$name.rc" 2>/dev/null || echo missing)"
  if [[ "$rc" != 0 && "$rc" != 3 ]]; then
    echo "sanitize: rocelab-fabric $f (1ms) exited $rc under ASan+UBSan:"
    tail -40 "$scen_out/$name.log"
    exit 1
  fi
  n=$((n + 1))
done
echo "sanitize: the fabric engine ran $n library scenarios (1ms each) under ASan+UBSan"
echo "sanitize: unit suite${dpdk_tests:+ and $dpdk_tests} passed under ASan+UBSan"
