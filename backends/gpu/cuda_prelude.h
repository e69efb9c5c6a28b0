// The text every generated CUDA C source starts with: the scalar semantics of
// the interpreter (docs/design.md §3) as device functions of their own — bit casts
// for exact constants, wrap-around integers, Python floor division and
// modulo, NumPy's float divmod, saturating float→int casts, IEEE
// maximum/minimum in ieee_scalar.h's branch-free form — and, under
// STAX_EMU, the shim that lets the host C++ compiler build the same text:
// __global__/__device__ as plain functions, threadIdx/blockIdx/blockDim/
// gridDim as variables the emulator's launcher sets (the shim itself is
// emu_shim.h, prepended).
#pragma once

#include <string_view>

namespace stax::backends::gpu {

/// The prelude text (no includes needed under NVRTC).
std::string_view cuda_prelude();

}  // namespace stax::backends::gpu
