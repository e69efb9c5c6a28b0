#!/usr/bin/env bash
# Runs a test binary with the instruction sets capped at AVX2
# (STAX_CPU_ISA=avx2: the math library's entry points and the CPU backend's
# JIT use no AVX-512), so an AVX-512 host tests the AVX2 paths too. On a host
# without AVX-512 the plain run already tests them: skipped (exit 77).
set -euo pipefail
if ! grep -qw avx512f /proc/cpuinfo; then
  echo "skipped: this host has no AVX-512; the plain run tests the AVX2 paths"
  exit 77
fi
STAX_CPU_ISA=avx2 exec "$@"
