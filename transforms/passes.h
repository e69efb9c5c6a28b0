// Entry points of the transforms (one pass per .cpp file),
// each with its typed options. Each is a pure function; the registry
// (transform.cpp) names them and is the one place where the `NAME:key=val`
// text of a pipeline is parsed and validated into these options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "transforms/transform.h"

namespace stax::xform {

/// Theorem 6.1, left to right: inline binding `name`, or every single-use one.
struct InlineOptions {
  std::optional<std::string> name;  ///< name=X
};
Result inline_bindings(const sem::Program& p, const InlineOptions& opt, Context& ctx);

/// Theorem 6.1, right to left: bind subexpression `index` (pre-order) of
/// `binding`, or every proper subexpression of every binding.
struct RealizeOptions {
  std::optional<std::string> binding;  ///< binding=B
  int64_t index = 0;                   ///< index=K, used with binding=B
};
Result realize(const sem::Program& p, const RealizeOptions& opt, Context& ctx);

/// Theorem 6.2.1: structural, hash-consed; never merges `rand` nodes.
Result cse(const sem::Program& p, Context& ctx);
/// Theorem 6.2.2: exact when the removed bindings cannot fail, else refines.
Result dce(const sem::Program& p, Context& ctx);
/// Prop. 6.2: folds nested views into one map and simplifies index
/// expressions. It takes no options; the parameter is the raw text map,
/// always empty (the registry rejects any key).
Result compose_views(const sem::Program& p, Context& ctx);
/// Cor. 6.1: map(g, view(map(f, x))) -> map(g∘f, view(x)), rounding half results.
Result fuse_maps(const sem::Program& p, Context& ctx);

/// Prop. 6.3: merges adjacent domain dims j, j+1 of a kernel when every access
/// satisfies a_j = s_{j+1}·a_{j+1}; refuses otherwise.
struct MergeLoopsOptions {
  std::optional<std::string> binding;  ///< binding=B: that binding only
  int64_t dim = -1;                    ///< dim=J: dims J, J+1 only (negative: every pair)
};
Result merge_loops(const sem::Program& p, const MergeLoopsOptions& opt, Context& ctx);

/// The pipeline to kernel normal form red?(map(g, view(x1), ..., view(xr))).
struct NormalizeOptions {
  /// fuse=0: realization only, never composition or fusion (which may only
  /// refine: they drop a view or a map that may fail), so always exact.
  bool fuse = true;
};
Result normalize(const sem::Program& p, const NormalizeOptions& opt, Context& ctx);

// Reduction reassociation (§6.5, Theorem 6.3, Listing 6.4; docs/design.md §4),
// each written in the core language (reassoc.h): class real for float
// sum/prod, exact for max/min and integers; argmax/argmin are refused. Each
// rewrites every eligible red, or those of `binding=B` only.
struct ReductionOptions {
  std::optional<std::string> binding;  ///< binding=B
};

/// Listing 6.4: k segments (default ceil(sqrt(n))), identity-padded, then a
/// red over the k partials from init.
struct SplitReductionOptions : ReductionOptions {
  std::optional<int64_t> k;  ///< k=K >= 1; unset: ceil(sqrt(n)) for each red
};
Result split_reduction(const sem::Program& p, const SplitReductionOptions& opt, Context& ctx);

/// W interleaved lane accumulators, combined sequentially or by a halving
/// shuffle tree (which needs a power-of-two W).
struct InterleaveLanesOptions : ReductionOptions {
  enum class Combine { Seq, Tree };
  int64_t w = 16;                   ///< w=W >= 1
  Combine combine = Combine::Tree;  ///< combine=seq|tree
};
Result interleave_lanes(const sem::Program& p, const InterleaveLanesOptions& opt, Context& ctx);

/// One CUDA thread block's order (gpu_reduce.cpp): `threads` block-stride
/// accumulators, a shuffle tree per warp of `warp` lanes, then a halving tree
/// over the warp results. Both powers of two, warp <= threads.
struct GpuReduceOptions : ReductionOptions {
  int64_t threads = 256;  ///< threads=M
  int64_t warp = 32;      ///< warp=W
};
Result gpu_reduce(const sem::Program& p, const GpuReduceOptions& opt, Context& ctx);

/// Recursive halving down to blocks of `base` folded sequentially.
struct PairwiseOptions : ReductionOptions {
  int64_t base = 1;  ///< base=B >= 1
};
Result pairwise(const sem::Program& p, const PairwiseOptions& opt, Context& ctx);

/// Folds the reduced dims in another order.
struct ReorderReductionDimsOptions : ReductionOptions {
  /// perm=a/b/...: for each new reduced dim, the old one (a permutation of
  /// 0..q-1, q >= 2); unset: reversed.
  std::optional<std::vector<int64_t>> perm;
};
Result reorder_reduction_dims(const sem::Program& p, const ReorderReductionDimsOptions& opt, Context& ctx);

/// numpy.sum's f32/f64 order: pairwise_sum over blocks of `bufsize`.
struct NumpyPairwiseOptions : ReductionOptions {
  int64_t bufsize = 8192;  ///< bufsize=N >= 0 (0: no blocking)
};
Result numpy_pairwise(const sem::Program& p, const NumpyPairwiseOptions& opt, Context& ctx);

/// torch.sum's CPU f32/f64 order (ATen cascade_sum, transforms/torch_order.h)
/// for a contiguous operand: rows one segment each, a full reduction split
/// over `threads` as ATen's two-pass reduction does.
struct TorchSumOptions : ReductionOptions {
  int64_t threads = 1;          ///< threads=T in [1, 1024]: torch.set_num_threads(T)
  int64_t lanes = 0;            ///< lanes=W >= 1; 0: 8 for f32, 4 for f64 (PyTorch's)
  int64_t min_level_power = 4;  ///< minlevel=P in [1, 16]: the cascade step is 2^max(P, ...); PyTorch's is 4
};
Result torch_sum(const sem::Program& p, const TorchSumOptions& opt, Context& ctx);

/// Whether a binding's expression is in kernel normal form (docs/design.md §2).
bool is_kernel_normal_form(const sem::Expr& e);

}  // namespace stax::xform
