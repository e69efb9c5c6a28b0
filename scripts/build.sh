#!/usr/bin/env bash
# Installs what is missing, configures and builds Stax Verify into build/.
# Usage: scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAX_WERROR=ON "$@" >/dev/null
ninja -C build -j "$(nproc)"
