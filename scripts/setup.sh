#!/usr/bin/env bash
# Installs the Debian packages Stax Verify builds against. Idempotent: installs
# only what is missing, so a warm machine pays one dpkg query.
set -euo pipefail
pkgs=(
  cmake ninja-build g++ pkg-config
  llvm-15-dev libz3-dev libboost-graph-dev libeigen3-dev
  libmpfr-dev libmpfi-dev libgmp-dev catch2 libsqlite3-dev nlohmann-json3-dev libcli11-dev
  python3-numpy python3-scipy python3-venv gnuplot-nox graphviz
  clang libclang-rt-14-dev
)
source "$(dirname "$0")/apt_install_missing.sh"
apt_install_missing setup "${pkgs[@]}"

# NVRTC and ptxas for the GPU backend, from NVIDIA's wheels on PyPI
# where the machine has no CUDA toolkit (this kind of machine has one in
# /usr/local/cuda; Debian main has none), in a virtual environment of their own
# under $STAX_CUDA_PREFIX (/opt/stax-cuda). The backend loads libnvrtc with
# dlopen and finds ptxas there at run time (backends/gpu/nvrtc.h); without
# them the GPU code generator is still built and tested, only PTX is not.
# Optional: a failure here is a warning. STAX_NO_CUDA_WHEELS=1 skips it.
cuda_prefix="${STAX_CUDA_PREFIX:-/opt/stax-cuda}"
if [ "${STAX_NO_CUDA_WHEELS:-0}" != 1 ] && ! command -v ptxas >/dev/null && [ ! -x /usr/local/cuda/bin/ptxas ] &&
   ! ls "$cuda_prefix"/venv/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas >/dev/null 2>&1; then
  echo "setup: installing NVRTC and ptxas (nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12) under $cuda_prefix"
  if ! { mkdir -p "$cuda_prefix" && python3 -m venv "$cuda_prefix/venv" &&
         "$cuda_prefix/venv/bin/pip" install -q --disable-pip-version-check \
           nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12; }; then
    echo "setup: warning: the CUDA wheels could not be installed; NVRTC/ptxas checks will be skipped" >&2
  fi
fi
