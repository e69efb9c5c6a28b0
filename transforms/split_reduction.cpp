// Listing 6.4 / §6.5: red(op, init, R, x) over domain D becomes
//   red(op, init, [k], red(op, ID, [m], P)),   m = ceil(n/k),
// where P over D ++ [k, m] reads segment s, offset r at flat reduction index
// j = m·s + r (R flattened row-major), padded with the identity ID when
// k·m > n (reassoc.h). The inner red is the per-segment sum, the outer one
// combines the k partials from `init`: init goes into exactly one place, so
// the real semantics is unchanged (Theorem 6.3). Class real for float
// sum/prod, exact for max/min (IEEE maximum/minimum are associative).
#include <cmath>

#include "semantics/mutants.h"
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

Result split_reduction(const Program& p, const SplitReductionOptions& opt, Context& ctx) {
  return reassoc::for_each_red(p, opt.binding, ctx, "split-reduction", [&](const reassoc::Site& s) {
    // k: the number of segments; default ceil(sqrt(n)) for each reduction.
    int64_t kk = opt.k.value_or(0);
    if (!opt.k) {
      kk = int64_t(std::sqrt(double(s.n)));
      while (kk * kk < s.n) ++kk;
    }
    int64_t m = (s.n + kk - 1) / kk;
    bool padded = kk * m != s.n;
    int nd = int(s.outer.size());
    IExpr j = iadd(imul(m, ivar(nd)), ivar(nd + 1));
    reassoc::Site site = s;
    // Seeded bug (semantics/mutants.h): +0.0 is not the identity of a float sum.
    if (mutant_active("split-pos-zero-pad") && s.red->op == RedOp::Sum && is_float(s.acc))
      site.id = std::get<Const>(const_from_literal("0.0", s.acc));
    Expr segs = reassoc::segmented(site, s.red->src, {kk, m}, j, padded);
    Expr partials = reassoc::mk_red(s.red->op, site.id, {m}, segs);
    Expr r = reassoc::mk_red(s.red->op, s.init, {kk}, partials);
    std::string what = "split into " + std::to_string(kk) + " segments of " + std::to_string(m);
    if (padded) what += " (" + std::to_string(kk * m - s.n) + " identity-padded)";
    return reassoc::Rewrite{reassoc::finish(s, r), what};
  });
}

}  // namespace stax::xform
