// §6.5 / docs/design.md §4: W interleaved accumulators, the core-language form of
// a W-wide SIMD reduction. Element j of the flattened reduction goes to lane
// j mod W; lane l folds its elements l, l+W, l+2W, ... from the identity:
//   L = red(op, ID, [T], P),  P over D ++ [W, T] reads j = W·t + l,
// T = ceil(n/W), padded with the identity (a masked vector tail). The W lane
// results are then combined in a stated order:
//   seq:  red(op, init, [W], L)                       (init ⊕ L0 ⊕ ... ⊕ L{W-1})
//   tree: log2(W) halving levels red(op, ID, [2], ·) with lane l (< h) taking
//         L[l] ⊕ L[l + h], h = W/2, ..., 1 (a shuffle tree: the upper half
//         onto the lower half), the root folding in init (reassoc.h).
// A C++ loop `acc[i % W] += x[i]` with acc[] = -0.0 followed by the same
// combine gives the same bits (tests/transforms/reassociation_test.cpp).
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

Result interleave_lanes(const Program& p, const InterleaveLanesOptions& opt, Context& ctx) {
  const int64_t w = opt.w;
  const bool seq = opt.combine == InterleaveLanesOptions::Combine::Seq;
  return reassoc::for_each_red(p, opt.binding, ctx, "interleave-lanes", [&](const reassoc::Site& s) {
    bool padded = false;
    Expr lanes = reassoc::interleaved_lanes(s, w, &padded);
    int64_t t = (s.n + w - 1) / w;
    Expr r = seq ? reassoc::mk_red(s.red->op, s.init, {w}, lanes) : reassoc::tree(s, lanes, /*adjacent=*/false, s.init);
    std::string what = std::to_string(w) + " lanes of " + std::to_string(t) + ", " + (seq ? "seq" : "tree") + " combine";
    if (padded) what += " (" + std::to_string(w * t - s.n) + " identity-padded)";
    return reassoc::Rewrite{reassoc::finish(s, r), what};
  });
}

}  // namespace stax::xform
