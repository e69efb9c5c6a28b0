# Sourced by the live torch tests: sets $src (the repository) and $py (the
# python of ${STAX_TORCH_VENV:-/opt/stax-torch-venv}), or exits 77 (ctest:
# skipped) with a message when torch is not importable there. torch is
# optional (scripts/setup_torch.sh installs it); CI never needs it.
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${STAX_TORCH_VENV:-/opt/stax-torch-venv}"
py="$venv/bin/python"
if [ ! -x "$py" ] || ! "$py" -c "import torch" >/dev/null 2>&1; then
  echo "SKIPPED: torch is not importable from $py (run scripts/setup_torch.sh, or set STAX_TORCH_VENV)"
  exit 77
fi
