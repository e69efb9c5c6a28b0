#!/usr/bin/env bash
# Set-up, build and the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build && ctest --output-on-failure -j "$(nproc)"
