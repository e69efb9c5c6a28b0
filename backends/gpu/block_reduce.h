// Block reductions: where a program computes a reduction in the
// order of `gpu-reduce:threads=M:warp=W` (transforms/gpu_reduce.cpp: M
// block-stride accumulators, a halving shuffle tree per warp of W lanes, a
// halving tree over the warp results), the GPU backend runs ONE kernel per
// such reduction — a block of M threads per output element, __shfl_down_sync
// within warps, the warp results through __shared__ memory and
// __syncthreads() — instead of one kernel per tree level.
//
// Recognition by re-derivation, never by a pattern alone: a candidate node
// gives the plain reduction red(op, init, R, x) it would come from (x, the
// operand the lanes read; M and W from the lanes' shapes); gpu-reduce is
// applied to that plain reduction and the result must print exactly as the
// candidate (x standing for itself). A match is then bound as the plain
// reduction, marked with its block shape; the program is normalised as
// usual, and the marked bindings must still be that reduction. Otherwise
// nothing is fused: the kernels of gpu_normal_form, as before. f16/bf16
// reductions accumulate in f32 and round once at the end, as the transform.
#pragma once

#include <map>
#include <string>

#include "backends/gpu/cuda_codegen.h"
#include "semantics/ir.h"

namespace stax::backends::gpu {

struct BlockPlan {
  sem::Program program;                     ///< the normal form the kernels compute
  std::map<std::string, BlockShape> blocks;  ///< bindings computed as block reductions
};

/// The normal form of `p` with its gpu-reduce orders as block reductions
/// (none when `fuse` is false). Throws cpu::CompileError as gpu_normal_form.
BlockPlan plan_block_reductions(const sem::Program& p, bool fuse = true);

}  // namespace stax::backends::gpu
