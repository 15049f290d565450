#!/usr/bin/env bash
# fuzz.sh [SECONDS_PER_TARGET] - build the libFuzzer targets (tests/fuzz) into
# ./build-fuzz (clang, -Dfuzz=true: ASan + UBSan; configured once by
# tools/instrumented_tree.sh, shared with tools/sanitize.sh) and run
# each for a bounded time, two at a time (FUZZ_JOBS), at nice 10.
#
# Each target starts from a copy of its seed corpus (tests/fuzz/corpus/<t>)
# in a temporary directory, so the repository's corpus never grows. Per
# target it prints the inputs executed and exec/s (libFuzzer's final stats),
# and ok or FAILED with the crashing input, which is kept in
# build-fuzz/artifacts/<target>/. The last line is
#   fuzz: N passed, M failed
# and the exit status is non-zero when any target crashed, leaked, timed
# out or hit the RSS limit. FUZZ_TARGETS="a b" runs only those targets.
# FUZZ_MERGE=1 grows the repository's corpus: after a clean run, the inputs
# that add coverage are merged (minimised, libFuzzer -merge=1) into
# tests/fuzz/corpus/<target>; commit them. A crash prints the command that
# keeps its input as a regression seed once the bug is fixed: every later
# run (CI included) executes the whole corpus first.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || ((secs < 1)); then
  echo "usage: tools/fuzz.sh [SECONDS_PER_TARGET]" >&2
  exit 2
fi
targets=(${FUZZ_TARGETS:-fuzz_parse_frame fuzz_switch_path fuzz_gen_rx fuzz_switch_config fuzz_gen_config fuzz_units fuzz_scenario})

# shellcheck source=tools/instrumented_tree.sh
source tools/instrumented_tree.sh
configure_instrumented_tree
quiet_ninja -C build-fuzz fuzz

work="$(mktemp -d /tmp/rocelab-fuzz.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# fuzz_one T: run target T; its report goes to $work/T.out, and $work/T.ok
# exists when it passed. Targets run FUZZ_JOBS at a time (default 2, one per
# CPU here: each libFuzzer process is single-threaded).
fuzz_one() {
  local t="$1" bin art extra log rc runs eps crash line before after
  bin="build-fuzz/tests/fuzz/$t"
  art="build-fuzz/artifacts/$t"
  mkdir -p "$work/$t" "$art"
  cp -r "tests/fuzz/corpus/$t/." "$work/$t/"
  extra=()
  case "$t" in
    fuzz_switch_config | fuzz_gen_config) extra+=(-dict=tests/fuzz/yaml.dict) ;;
  esac
  log="$work/$t.log"
  rc=0
  # -timeout: one input taking longer than 25 s is a hang; the outer timeout
  # only guards against libFuzzer itself not stopping.
  timeout $((secs + 120)) nice -n 10 "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 \
    -print_final_stats=1 -artifact_prefix="$art/" "${extra[@]}" "$work/$t" >"$log" 2>&1 || rc=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  eps="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  crash="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
  if ((rc == 0)) && [[ -z "$crash" ]]; then
    touch "$work/$t.ok"
    line="$t: ok, ${runs:-?} inputs in ${secs}s (${eps:-?} exec/s)"
    if [[ "${FUZZ_MERGE:-0}" == 1 ]]; then
      # Grow the repository's corpus with what this run found that adds
      # coverage (libFuzzer -merge=1 keeps the minimal set of new inputs).
      before=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
      nice -n 10 "$bin" -merge=1 "${extra[@]}" "tests/fuzz/corpus/$t" "$work/$t" >"$work/$t.merge.log" 2>&1 || {
        echo "$t: corpus merge failed:"; tail -20 "$work/$t.merge.log"; }
      after=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
      line+="; corpus $before -> $after inputs"
    fi
  else
    line="$t: FAILED (exit $rc) after ${runs:-?} inputs; input: ${crash:-none saved}"
    echo "---- $t: last lines of the libFuzzer log ----"
    grep -v -E '^#[0-9]+\s+(NEW|REDUCE|pulse)' "$log" | tail -40
    [[ -n "$crash" ]] && echo "reproduce: $bin $crash"
    [[ -n "$crash" ]] && echo "once fixed, keep it as a regression seed: cp $crash tests/fuzz/corpus/$t/"
  fi
  echo "$line"
}

jobs_max="${FUZZ_JOBS:-2}"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  fuzz_one "$t" >"$work/$t.out" 2>&1 &
done
wait
passed=0
failed=0
summary=()
for t in "${targets[@]}"; do
  cat "$work/$t.out"
  summary+=("$(tail -1 "$work/$t.out")")
  if [[ -f "$work/$t.ok" ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
# A crashed DPDK target cannot run its EAL cleanup: remove the runtime
# directories of fuzz processes that are gone (only our own prefixes).
for d in /var/run/dpdk/fuzz_sw_* /var/run/dpdk/fuzz_gen_*; do
  [[ -d "$d" ]] || continue
  pid="${d##*_}"
  [[ "$pid" =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && rm -rf "$d"
done
echo "---- fuzz summary (${secs}s per target) ----"
printf '%s\n' "${summary[@]}"
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
