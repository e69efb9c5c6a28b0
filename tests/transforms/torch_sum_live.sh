#!/usr/bin/env bash
# ctest transforms_torch_sum_live: reruns the torch.sum golden generator
# (python/stax_torch) with the torch of ${STAX_TORCH_VENV:-/opt/stax-torch-venv}
# and compares every .npy it writes with tests/golden/torch_sum/ byte for byte.
# Exits 77 (ctest: skipped) with a message when torch is not importable there:
# torch is optional (scripts/setup_torch.sh installs it), CI never needs it.
set -euo pipefail
source "$(dirname "$0")/../torch/torch_python.sh"
out="$(mktemp -d "${TMPDIR:-/tmp}/stax_torch_sum_live.XXXXXX")"
trap 'rm -rf "$out"' EXIT
PYTHONPATH="$src/python" "$py" -m stax_torch torch-sum-golden --out "$out"
want="$(cd "$src/tests/golden/torch_sum" && ls *.npy)"
got="$(cd "$out" && ls *.npy)"
if [ "$want" != "$got" ]; then
  echo "FAIL: the generator wrote other files than tests/golden/torch_sum holds"
  diff <(echo "$want") <(echo "$got") || true
  exit 1
fi
bad=0
for f in $want; do
  if ! cmp -s "$out/$f" "$src/tests/golden/torch_sum/$f"; then
    echo "DIFFERS: $f"
    bad=$((bad + 1))
  fi
done
recorded="$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['torch'])" "$src/tests/golden/torch_sum/meta.json")"
live="$("$py" -c "import torch; print(torch.__version__)")"
echo "torch $live (goldens from torch $recorded): $(echo "$want" | wc -w) files, $bad differ"
[ "$bad" -eq 0 ]
