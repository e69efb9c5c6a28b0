#!/usr/bin/env bash
# ctest torch_export_live: `python -m stax_torch export` with the torch of
# ${STAX_TORCH_VENV:-/opt/stax-torch-venv} (tests/torch/export_test.py).
# Exits 77 (ctest: skipped) when torch is not importable there.
set -euo pipefail
source "$(dirname "$0")/torch_python.sh"
PYTHONPATH="$src/python" exec "$py" "$src/tests/torch/export_test.py" "$1"
