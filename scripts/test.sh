#!/usr/bin/env bash
# Set-up, build and the whole test suite through ctest.
#   scripts/test.sh              the build in build/ (RelWithDebInfo, GCC)
#   scripts/test.sh --sanitize   clang with AddressSanitizer, UndefinedBehavior-
#                                Sanitizer and LeakSanitizer into build-sanitize/,
#                                the fuzz targets with libFuzzer; the whole suite
#                                (docs/testing.md for what runs and the times)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --sanitize ]; then
  bash scripts/setup.sh
  bash scripts/configure_sanitize.sh
  ninja -C build-sanitize -j "$(nproc)"
  # Every report is an error; leaks are reported at exit. The JIT's code and
  # the Python/torch/Slurm processes the tests start are not instrumented.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:${LSAN_OPTIONS:-}"
  export STAX_SANITIZED=1
  cd build-sanitize && ctest --output-on-failure -j "$(nproc)" --timeout 1800
  exit
fi
bash scripts/build.sh
cd build && ctest --output-on-failure -j "$(nproc)"
