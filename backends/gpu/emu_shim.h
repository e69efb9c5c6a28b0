// The head of every generated CUDA C source: under STAX_EMU, the
// CUDA execution model on the host — __global__/__device__ as plain
// functions, threadIdx/blockIdx/blockDim/gridDim as variables, and, for
// kernels with barriers or warp shuffles, each block's threads as fibers
// (ucontext) so that __syncthreads() waits for the block,
// __shfl_down_sync/__shfl_xor_sync exchange the values of the warp's lanes
// at that call, and `STAX_SHARED(T, name, N)` (a __shared__ array) detects
// races: a read of an element another thread wrote since the last barrier,
// a read of an element the block never wrote, two writers between barriers.
// The launch's first error is `stax_emu_error()` in the module (the host
// throws EmuError). Kernels without barriers keep the plain loop over the
// threads. Under NVRTC only STAX_SHARED is defined (as `__shared__ T name[N]`).
#pragma once

#include <string_view>

namespace stax::backends::gpu {

std::string_view cuda_emu_shim();

}  // namespace stax::backends::gpu
