#!/usr/bin/env bash
# ctest torch_export_live: `python -m stax_torch export` with the torch of
# ${STAX_TORCH_VENV:-/opt/stax-torch-venv} (tests/torch/export_test.py).
# Exits 77 (ctest: skipped) when torch is not importable there.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${STAX_TORCH_VENV:-/opt/stax-torch-venv}"
py="$venv/bin/python"
if [ ! -x "$py" ] || ! "$py" -c "import torch" >/dev/null 2>&1; then
  echo "SKIPPED: torch is not importable from $py (run scripts/setup_torch.sh, or set STAX_TORCH_VENV)"
  exit 77
fi
PYTHONPATH="$src/python" exec "$py" "$src/tests/torch/export_test.py" "$1"
