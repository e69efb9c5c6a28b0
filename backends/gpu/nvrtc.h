// NVRTC: generated CUDA C to PTX, with the flags that keep the interpreter's
// bits (no fused multiply-add, IEEE division and square root, no
// flush-to-zero). Linked only when CMake finds the CUDA toolkit
// (STAX_HAVE_NVRTC); otherwise compile_ptx says so.
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

/// Whether this build links NVRTC.
bool have_nvrtc();

}  // namespace stax::backends::gpu
