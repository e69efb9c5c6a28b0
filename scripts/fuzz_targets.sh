#!/usr/bin/env bash
# Long libFuzzer runs of the input-format targets (fuzz/README.md; issue 20):
# each target N executions (default 10^7) from its seed corpus, built with
# clang, ASan, UBSan and LeakSanitizer in build-sanitize/ (as
# `scripts/test.sh --sanitize`). Targets run side by side, one per job.
#   scripts/fuzz_targets.sh [--runs N] [--jobs J] [--timeout S] [TARGET...]
# TARGET: stx npy graph rewrite campaign_db (default: all). Prints one line a
# target (executions, seconds, executions/s, coverage, corpus, verdict) and
# writes build-sanitize/fuzz-runs/TARGET.log; a crash, hang, leak or
# sanitizer report leaves its input as build-sanitize/fuzz-runs/TARGET-crash-*
# (add it to fuzz/corpus/TARGET/ as regress_* once fixed). Exit 1 on any.
# --timeout: libFuzzer's limit on one input (default 60 s). The transformer
# block seed of `graph` lowers in 0.5 s in a release build and 2-4.3 s here
# (its mutants too), but libFuzzer's leak-check re-runs of it went past 20 s
# after ~50,000 executions on the loaded 2-core machine (three runs, each a
# timeout in Z3 under the lowering's proofs, none a hang).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=10000000 jobs=$(nproc) timeout=60 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(stx npy graph rewrite campaign_db)
if [ ! -x build-sanitize/fuzz/stax_fuzz_stx ] || [ "${STAX_FUZZ_REBUILD:-1}" = 1 ]; then
  bash scripts/setup.sh >/dev/null
  bash scripts/configure_sanitize.sh
  ninja -C build-sanitize $(printf 'stax_fuzz_%s ' "${targets[@]}")
fi
out=build-sanitize/fuzz-runs
mkdir -p "$out"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
run_one() {
  local t=$1 work="$out/corpus-$1"
  mkdir -p "$work"
  local t0=$SECONDS rc=0
  "build-sanitize/fuzz/stax_fuzz_$t" -runs="$runs" -timeout="$timeout" -rss_limit_mb=4096 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$out/$t-" "$work" "fuzz/corpus/$t" >"$out/$t.log" 2>&1 || rc=$?
  local secs=$((SECONDS - t0))
  local done_line cov corp
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out/$t.log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<<"$done_line")
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  local verdict="0 crashes, hangs or sanitizer reports"
  [ "$rc" = 0 ] || verdict="FAILED (exit $rc): see $out/$t.log and $out/$t-*"
  printf '%-12s %12s executions %7s s %9s exec/s  cov %6s  corpus %6s  %s\n' "$t" "${execs:-?}" "$secs" \
    "$(( ${execs:-0} / (secs > 0 ? secs : 1) ))" "${cov:-?}" "${corp:-?}" "$verdict"
  [ "$rc" = 0 ]
}
export -f run_one
export out runs
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
