#!/usr/bin/env bash
# stax torch-check and stax fuzz --target torch-* against the live torch
# (skipped, exit 77, without it): re-trace two examples (eager and Inductor)
# and check them; a perturbed trace must be refuted; a 2-thread sum must
# give the bits of ATen's 2-thread split, and not pass as a 1-thread one; a short eager campaign
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
# Two threads: ATen splits a long sum between them, and torch-check models
# that split from trace.json's thread count. The wrong case: the same trace
# judged as a one-thread one.
mkdir -p "$tmp/sum2"
cat > "$tmp/sum2/bigsum.py" <<'PY'
import torch


def model(x):
    return x.sum(-1), x.sum()


g = torch.Generator().manual_seed(3)
example_inputs = (torch.randn(8, 1 << 17, generator=g),)
PY
PYTHONPATH="$src/python" "$py" -m stax_torch export "$tmp/sum2/bigsum.py" --out "$tmp/sum2/g" 2>/dev/null
PYTHONPATH="$src/python" "$py" -m stax_torch trace "$tmp/sum2/g" --threads 2 --no-compile 2>/dev/null
grep -q '"threads": 2' "$tmp/sum2/g/trace.json"
"$stax" torch-check "$tmp/sum2/g" > "$tmp/sum2.txt" || { cat "$tmp/sum2.txt"; echo "FAIL: the 2-thread sums refuted"; exit 1; }
grep -q "sum_2 (sum.dim_IntList) \[torch-sum\] 1 ok" "$tmp/sum2.txt"
sed -i 's/"threads": 2/"threads": 1/' "$tmp/sum2/g/trace.json"
if "$stax" torch-check "$tmp/sum2/g" > "$tmp/sum1.txt"; then cat "$tmp/sum1.txt"; echo "FAIL: a 2-thread sum passed as 1-thread"; exit 1; fi
grep -q "finding: node sum_2" "$tmp/sum1.txt"
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
