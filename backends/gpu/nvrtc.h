// NVRTC: generated CUDA C to PTX, with the flags that keep the interpreter's
// bits (no fused multiply-add, IEEE division and square root, no
// flush-to-zero). libnvrtc is loaded with dlopen at run time, like the driver
// API, so nothing in the build needs the CUDA toolkit: from $STAX_NVRTC (a
// file), the loader's path (libnvrtc.so.13, .12, libnvrtc.so; the toolkit of
// this kind of machine is in /usr/local/cuda), or the CUDA wheels that
// scripts/setup.sh installs from PyPI under $STAX_CUDA_PREFIX
// (/opt/stax-cuda by default) where there is no toolkit. Absent:
// compile_ptx says so.
#pragma once

#include <string>
#include <vector>

namespace stax::backends::gpu {

/// The options passed to NVRTC for `arch` (e.g. "compute_90").
std::vector<std::string> nvrtc_options(const std::string& arch);

struct PtxResult {
  bool ok = false;
  std::string ptx;
  std::string log;  ///< NVRTC's log, or why there is no PTX
};

PtxResult compile_ptx(const std::string& source, const std::string& arch = "compute_90");

/// Whether libnvrtc could be loaded (the reason otherwise in nvrtc_status()).
bool have_nvrtc();
/// The library loaded and its version ("libnvrtc ... 12.9"), or why none.
std::string nvrtc_status();

/// A ptxas to assemble PTX with, or "" when none is found: $STAX_PTXAS, then
/// the one beside the loaded NVRTC (same toolkit, so it reads that NVRTC's
/// PTX version), then ptxas on $PATH, then the CUDA wheels.
std::string find_ptxas();

}  // namespace stax::backends::gpu
