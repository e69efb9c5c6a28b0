#!/usr/bin/env bash
# Long libFuzzer runs of the input-format targets (fuzz/README.md):
# each target N executions (default 10^7) from its seed corpus, built with
# clang, ASan, UBSan and LeakSanitizer in build-sanitize/ (as
# `scripts/test.sh --sanitize`). Targets run side by side, one per job.
#   scripts/fuzz_targets.sh [--runs N] [--jobs J] [--fork K] [--timeout S] [--fresh] [TARGET...]
# TARGET: stx npy graph rewrite campaign_db (default: all). Prints one line a
# target (executions, seconds, executions/s, coverage, corpus, verdict) and
# writes build-sanitize/fuzz-runs/TARGET.log; a crash, hang, leak or
# sanitizer report leaves its input as build-sanitize/fuzz-runs/TARGET-crash-*
# (add it to fuzz/corpus/TARGET/ as regress_* once fixed). Exit 1 on any.
# Resumable: N counts over the runs of a target. Each run appends a line to
# fuzz/ledgers/TARGET.ledger (start, commit, executions, seconds, verdict),
# kept in the repository so that a count outlives the machine (commit it
# after a run; the corpus and logs stay in build-sanitize/fuzz-runs/). A run
# that was stopped (SIGINT, SIGTERM, a kill, the machine's session ending) is
# credited on the next start with the executions of its log's last status
# line, and the next run goes on from the kept corpus for what is left of N.
# A `carried` line is a count recorded (docs/hardening.md) before the ledgers
# were kept here (its seconds are 0 and it is left out of the rate). --fresh
# starts the count again (after a fix: the old ledger is kept as
# TARGET.ledger.K; the corpus is kept). STAX_FUZZ_LEDGERS names another
# ledger folder.
# --fork K: each target as K worker processes (libFuzzer's -fork=K; its
# parent counts the workers' executions against N and stops them there, a
# crash in one stops all); for a target left alone on a machine of K cores.
# A stopped fork run is credited with the parent's last count, which lags
# its workers by the jobs in flight.
# --timeout: libFuzzer's limit on one input (default 60 s). The transformer
# block seed of `graph` lowers in 0.5 s in a release build and 2-4.3 s here
# (its mutants too), but libFuzzer's leak-check re-runs of it went past 20 s
# after ~50,000 executions on the loaded 2-core machine (three runs, each a
# timeout in Z3 under the lowering's proofs, none a hang).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=10000000 jobs=$(nproc) fork=0 timeout=60 fresh=0 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --fork) fork=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(stx npy graph rewrite campaign_db)
missing=0
for t in "${targets[@]}"; do [ -x "build-sanitize/fuzz/stax_fuzz_$t" ] || missing=1; done
if [ "$missing" = 1 ] || [ "${STAX_FUZZ_REBUILD:-1}" = 1 ]; then
  bash scripts/setup.sh >/dev/null
  bash scripts/configure_sanitize.sh
  ninja -C build-sanitize $(printf 'stax_fuzz_%s ' "${targets[@]}")
fi
out=build-sanitize/fuzz-runs
ledgers=${STAX_FUZZ_LEDGERS:-fuzz/ledgers}
mkdir -p "$out" "$ledgers"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# The executions of a log: libFuzzer's final count, else its last status line.
log_execs() {
  local n
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -1)
  [ -n "$n" ] || n=$(grep -aoE '^#[0-9]+' "$1" | tail -1 | tr -d '#')
  echo "${n:-0}"
}
# A run left behind by a stop: its marker names the log, the commit and the
# start; it goes into the ledger as stopped.
credit_stopped() {
  local t=$1 m="$out/$1.running"
  [ -f "$m" ] || return 0
  local log commit start
  read -r log commit start <"$m"
  local end
  end=$(stat -c %Y "$log" 2>/dev/null || echo "$start")
  printf '%s %s %s %s stopped\n' "$(date -u -d "@$start" +%FT%TZ)" "$commit" "$(log_execs "$log")" \
    "$((end - start))" >>"$ledgers/$t.ledger"
  rm -f "$m"
}
run_one() {
  local t=$1 work="$out/corpus-$1" ledger="$ledgers/$1.ledger"
  mkdir -p "$work"
  credit_stopped "$t"
  if [ "$fresh" = 1 ] && [ -f "$ledger" ]; then
    local k=0
    while [ -e "$ledger.$k" ]; do k=$((k + 1)); done
    mv "$ledger" "$ledger.$k"
  fi
  local before=0 secs_before=0 nruns=0
  if [ -f "$ledger" ]; then
    read -r before secs_before nruns < <(awk '{e += $3; s += $4; n++} END {print e + 0, s + 0, n + 0}' "$ledger")
  fi
  local left=$((runs - before)) rc=0 start log commit
  start=$(date +%s)
  log="$out/$t-$start.log"
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ "$left" -gt 0 ]; then
    echo "$log $commit $start" >"$out/$t.running"
    local forked=()
    [ "$fork" -gt 0 ] && forked=(-fork="$fork")
    "build-sanitize/fuzz/stax_fuzz_$t" "${forked[@]}" -runs="$left" -timeout="$timeout" -rss_limit_mb=4096 -max_len=8192 \
      -print_final_stats=1 -artifact_prefix="$out/$t-" "$work" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    local verdict=ok
    if [ "$rc" != 0 ]; then
      verdict="exit-$rc"
      # Interrupted or killed (libFuzzer says so on SIGINT, exit 72): a stop.
      if grep -aq 'run interrupted' "$log" || [ "$rc" -ge 128 ]; then verdict=stopped; fi
    fi
    printf '%s %s %s %s %s\n' "$(date -u -d "@$start" +%FT%TZ)" "$commit" "$(log_execs "$log")" \
      "$(($(date +%s) - start))" "$verdict" >>"$ledger"
    rm -f "$out/$t.running"
    ln -sf "$(basename "$log")" "$out/$t.log"
  fi
  # The rate counts the runs timed here, not carried records.
  local total secs n bad timed
  read -r total secs n bad timed < <(awk '{e += $3; s += $4; n++; if ($5 != "carried") t += $3
    if ($5 != "ok" && $5 != "stopped" && $5 != "carried") b++}
    END {print e + 0, s + 0, n + 0, b + 0, t + 0}' "$ledger" 2>/dev/null || echo "0 0 0 0 0")
  local last cov corp
  # A status line: libFuzzer's, or (-fork) its parent's "#N: cov: ...".
  last=$(grep -aE '^#[0-9]+(:|[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED))' "$out/$t.log" 2>/dev/null | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<<"$last")
  local verdict="0 crashes, hangs or sanitizer reports"
  [ "$bad" = 0 ] || verdict="FAILED in $bad run(s): see $ledger, $out/$t-*.log and $out/$t-crash-*"
  [ "$total" -ge "$runs" ] || verdict="$verdict so far (not yet $runs)"
  printf '%-12s %12s executions in %s run(s) %7s s %9s exec/s  cov %6s  corpus %6s  %s\n' "$t" "$total" "$n" \
    "$secs" "$((timed / (secs > 0 ? secs : 1)))" "${cov:-?}" "${corp:-?}" "$verdict"
  [ "$bad" = 0 ] && [ "$total" -ge "$runs" ]
}
export -f run_one log_execs credit_stopped
export out ledgers runs timeout fresh fork
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
