#!/usr/bin/env bash
# Configures build-sanitize/: clang with ASan, UBSan and LeakSanitizer, the
# fuzz targets with libFuzzer (used by test.sh --sanitize and fuzz_targets.sh).
# -gline-tables-only: reports name file:line; full debug info doubles the build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DSTAX_SANITIZE=ON -DSTAX_FUZZ=ON >/dev/null
