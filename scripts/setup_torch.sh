#!/usr/bin/env bash
# Creates the PyTorch environment that regenerates tests/golden/torch_sum/ and
# runs the live torch.sum comparison. Idempotent: a venv whose `import torch`
# works is left as it is.
#   venv: ${STAX_TORCH_VENV:-/opt/stax-torch-venv}, made from Debian's python3
#   with --system-site-packages so Debian's numpy (python3-numpy) is seen.
#   torch: `pip install torch` from PyPI (several GB with its CUDA wheels),
#   only when `import torch` fails in the venv.
# Nothing in the build or the C++ tests needs it: the goldens are committed.
set -euo pipefail
venv="${STAX_TORCH_VENV:-/opt/stax-torch-venv}"
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup_torch: creating venv $venv"
  "$py" -m venv --system-site-packages "$venv"
fi
if "$venv/bin/python" -c "import torch, numpy" >/dev/null 2>&1; then
  echo "setup_torch: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') already in $venv"
  exit 0
fi
if ! "$venv/bin/python" -c "import numpy" >/dev/null 2>&1; then
  echo "setup_torch: numpy missing (install python3-numpy: scripts/setup.sh); installing numpy into the venv"
  "$venv/bin/python" -m pip install --quiet numpy
fi
echo "setup_torch: pip install torch into $venv (several GB; takes minutes)"
"$venv/bin/python" -m pip install --quiet torch
"$venv/bin/python" -c "import torch; print('setup_torch: torch', torch.__version__, 'in', '$venv')"
