#!/usr/bin/env bash
# stax torch-check and stax fuzz --target torch-* against the live torch
# (skipped, exit 77, without it): re-trace two examples (eager and Inductor)
# and check them; a perturbed trace must be refuted; a short eager campaign
# and a short Inductor campaign must run, and every reproducer they write must
# reproduce with torch alone.
set -euo pipefail
source "$(dirname "$0")/torch_python.sh"
stax="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ex in example_1_1 mlp; do
  cp -r "$src/examples/torch/exported/$ex" "$tmp/$ex"
  rm -rf "$tmp/$ex/eager" "$tmp/$ex/compiled"
  PYTHONPATH="$src/python" "$py" -m stax_torch trace "$tmp/$ex" 2>/dev/null
  "$stax" torch-check "$tmp/$ex" > "$tmp/$ex.txt" || { cat "$tmp/$ex.txt"; echo "FAIL: $ex refuted"; exit 1; }
  grep -q "0 findings" "$tmp/$ex.txt"
done
# The deliberately wrong case: one compiled element off by 1 %.
"$py" - "$tmp/mlp/compiled/addmm_1.npy" <<'PY'
import sys, numpy as np
a = np.load(sys.argv[1]); a.flat[3] *= np.float32(1.01); np.save(sys.argv[1], a)
PY
if "$stax" torch-check "$tmp/mlp" > "$tmp/bad.txt"; then cat "$tmp/bad.txt"; echo "FAIL: a perturbed compiled output passed"; exit 1; fi
grep -q "finding: output addmm_1" "$tmp/bad.txt"
for target in eager inductor; do
  n=$([ $target = eager ] && echo 60 || echo 6)
  set +e
  STAX_PYTHONPATH="$src/python" "$stax" fuzz --target torch-$target --seed 7 --count $n --batch 20 \
    --torch-python "$py" --out "$tmp/fz-$target" --quiet > "$tmp/fz-$target.txt"
  rc=$?
  set -e
  cat "$tmp/fz-$target.txt"
  [ $rc -le 1 ] || { echo "FAIL: campaign exit $rc"; exit 1; }
  grep -q "graphs" "$tmp/fz-$target.txt"
  for r in "$tmp"/fz-$target/finding-*/repro.py; do
    [ -e "$r" ] || continue
    if "$py" "$r" > /dev/null 2>&1; then echo "FAIL: $r does not reproduce"; exit 1; fi
  done
done
echo "PASS"
