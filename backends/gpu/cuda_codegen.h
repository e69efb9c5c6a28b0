// CUDA C code generation: one kernel per binding of a normal-form program,
// one thread per output element over a grid-stride loop of the flat output
// index (64-bit index arithmetic), or one block per output element for a
// block reduction (below). Lambdas are
// emitted through the Cuda domain of the generic evaluator
// (semantics/lambda_eval.h) and index maps through a domain of the index
// evaluator (semantics/index_eval.h) — the same walks as the interpreter's,
// no second tree walker.
//
// Exactness as the interpreter (docs/design.md §3): the scalar semantics live in the
// prelude (cuda_prelude.h) — wrap-around integers, Python floor division and
// modulo, NumPy's float divmod, branch-free IEEE maximum/minimum; float
// constants by their bits; no contraction (the compile flags forbid it and
// the source never names fma except for the program's own fma op).
// Reductions are a sequential left fold per output element in the
// program's order, so the bits are the interpreter's; the GPU's parallel
// reduction orders are transforms (gpu-reduce), and a binding marked as a
// block reduction (block_reduce.h) is emitted as one kernel in that order:
// warp shuffles, __shared__ memory, barriers. Indirect loads wrap negatives and
// check bounds; the first failure (⊥) is the least failing output position.
//
// Transcendental ops run mathlib's correctly rounded fast paths as device
// code (binary32 and binary64, cuda_math.h; libdevice's are not the
// reference), rand the interpreter's hash (semantics/rand_bits.h). f16/bf16
// compute in f32 and round as the interpreter (the prelude's bit-level
// conversions).
// `gpu_unsupported` would name a feature the backend refuses (none now).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/codegen.h"
#include "semantics/ir.h"

namespace stax::backends::gpu {

/// A reduction computed in gpu-reduce's block order (block_reduce.h): M
/// threads per output element, warps of W lanes.
struct BlockShape {
  int64_t threads = 0, warp = 0;  ///< M, W
  sem::Const id;                  ///< the op's exact identity (the lanes' start, the tree levels' init)
  bool fold_init = false;         ///< the root level takes init (reassoc::init_foldable), else init ⊕ root
};

/// One generated kernel: `extern "C" __global__ void <name>(T0* out, const
/// T1* in1, ..., i64 begin, i64 end, StaxFail* fail, int record)` computes
/// the output elements with flat index in [begin, end).
struct GpuKernel {
  std::string name;
  cpu::KernelSpec spec;             ///< buffer 0 the output, then the tensors read
  std::vector<std::string> reasons;  ///< failure reasons by id
  /// 0: one thread per output element, any block size. Else a block
  /// reduction: launched with exactly this many threads per block, one block
  /// per output element over a grid-stride loop (barriers, shuffles, shared
  /// memory: the emulator runs its threads as fibers).
  unsigned threads = 0;
};

struct GpuSource {
  std::string text;  ///< prelude + kernels (+ emulator launchers under STAX_EMU)
  std::vector<GpuKernel> kernels;
};

/// The first feature of `p` the backend cannot compile exactly, or nullopt
/// (always nullopt now: every op of the core language compiles).
std::optional<std::string> gpu_unsupported(const sem::Program& p);

/// Emits every binding of the normal-form program `p` as one kernel. Throws
/// CompileError when a binding is not one kernel or uses an unsupported
/// feature.
/// `blocks` names the bindings (plain reductions) to emit as one block
/// reduction kernel each, in gpu-reduce's order.
GpuSource emit_cuda(const sem::Program& p, const std::map<std::string, BlockShape>& blocks = {});

}  // namespace stax::backends::gpu
