// Entry points of the exact transforms (one .cpp each; STYLE: one pass per
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

/// Whether a binding's expression is in kernel normal form (DESIGN §2).
bool is_kernel_normal_form(const sem::Expr& e);

}  // namespace stax::xform
