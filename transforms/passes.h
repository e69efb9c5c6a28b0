// Entry points of the transforms (one .cpp each; STYLE: one pass per
// file). Each is a pure function; the registry (transform.cpp) names them.
#pragma once

#include "transforms/transform.h"

namespace stax::xform {

/// Theorem 6.1, left to right: inline binding `name=X`, or every single-use one.
Result inline_bindings(const sem::Program& p, const Params& params, Context& ctx);
/// Theorem 6.1, right to left: bind subexpression `index=K` (pre-order) of
/// `binding=B`, or every proper subexpression of every binding.
Result realize(const sem::Program& p, const Params& params, Context& ctx);
/// Theorem 6.2.1: structural, hash-consed; never merges `rand` nodes.
Result cse(const sem::Program& p, const Params& params, Context& ctx);
/// Theorem 6.2.2: exact when the removed bindings cannot fail, else refines.
Result dce(const sem::Program& p, const Params& params, Context& ctx);
/// Prop. 6.2: folds nested views into one map and simplifies index expressions.
Result compose_views(const sem::Program& p, const Params& params, Context& ctx);
/// Cor. 6.1: map(g, view(map(f, x))) -> map(g∘f, view(x)), rounding half results.
Result fuse_maps(const sem::Program& p, const Params& params, Context& ctx);
/// Prop. 6.3: merges adjacent domain dims j, j+1 of a kernel when every access
/// satisfies a_j = s_{j+1}·a_{j+1}; refuses otherwise.
Result merge_loops(const sem::Program& p, const Params& params, Context& ctx);
/// The pipeline to kernel normal form red?(map(g, view(x1), ..., view(xr))).
Result normalize(const sem::Program& p, const Params& params, Context& ctx);

// Reduction reassociation (seed 6.5, Theorem 6.3, Listing 6.4; DESIGN §4),
// each written in the core language (reassoc.h): class real for float
// sum/prod, exact for max/min and integers; argmax/argmin are refused. Each
// rewrites every eligible red, or those of `binding=B` only.

/// Listing 6.4: k segments (default ceil(sqrt(n))), identity-padded, then a
/// red over the k partials from init.
Result split_reduction(const sem::Program& p, const Params& params, Context& ctx);
/// W interleaved lane accumulators (default 16), combined `seq` or by a
/// halving shuffle `tree` (default).
Result interleave_lanes(const sem::Program& p, const Params& params, Context& ctx);
/// Recursive halving down to blocks of `base` (default 1) folded sequentially.
Result pairwise(const sem::Program& p, const Params& params, Context& ctx);
/// Folds the reduced dims in another order, `perm=a/b/...` (default reversed).
Result reorder_reduction_dims(const sem::Program& p, const Params& params, Context& ctx);
/// numpy.sum's f32/f64 order: pairwise_sum over blocks of `bufsize` (8192).
Result numpy_pairwise(const sem::Program& p, const Params& params, Context& ctx);

/// Whether a binding's expression is in kernel normal form (DESIGN §2).
bool is_kernel_normal_form(const sem::Expr& e);

}  // namespace stax::xform
