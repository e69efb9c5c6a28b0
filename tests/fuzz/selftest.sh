#!/usr/bin/env bash
# The wrong case of the fuzz smoke tests: the .stx target with a seeded
# printer bug (STAX_FUZZ_SELFTEST=1 appends a stray token to the printed
# program) must stop with the round-trip failure and save the input.
# Usage: selftest.sh STAX_FUZZ_STX CORPUS_DIR WORK_DIR
set -u
target=$1 corpus=$2 work=$3
rm -rf "$work" && mkdir -p "$work/new" && cd "$work"
if STAX_FUZZ_SELFTEST=1 "$target" -max_total_time=10 -seed=1 -artifact_prefix="$work/" "$work/new" "$corpus" \
     >log 2>&1; then
  echo "FAIL: the seeded printer bug was not detected"; cat log; exit 1
fi
grep -q "stax fuzz target: the printed program does not parse" log || { echo "FAIL: no round-trip report"; cat log; exit 1; }
ls "$work"/crash-* >/dev/null 2>&1 || { echo "FAIL: the failing input was not saved"; cat log; exit 1; }
echo "ok: the seeded printer bug is caught and its input saved"
