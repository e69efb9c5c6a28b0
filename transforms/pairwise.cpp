// §6.5 / Higham ch. 4: pairwise summation as nested splits by 2. The
// flattened reduction (length n) is padded with the identity to B·P elements,
// P = the next power of two >= ceil(n/B); blocks of B are folded sequentially
// from the identity (no block red when B = 1), then log2(P) levels
// red(op, ID, [2], reshape(·, D ++ [h, 2])) add adjacent blocks (2l, 2l+1):
// the recursive halving of the padded range, the root folding in init
// (reassoc.h). With the default B = 1 every summand is at depth ceil(log2 n),
// the bound docs/design.md §4 quotes.
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

Result pairwise(const Program& p, const PairwiseOptions& opt, Context& ctx) {
  const int64_t base = opt.base;
  return reassoc::for_each_red(p, opt.binding, ctx, "pairwise", [&](const reassoc::Site& s) {
    int64_t blocks = (s.n + base - 1) / base, pw = 1;
    while (pw < blocks) pw *= 2;
    if (pw == 1) return reassoc::Rewrite{std::nullopt, "n <= base: a single sequential block already"};
    bool padded = pw * base != s.n;
    int nd = int(s.outer.size());
    Expr leaves;
    if (base == 1) {
      leaves = reassoc::segmented(s, s.red->src, {pw}, ivar(nd), padded);
    } else {
      IExpr j = iadd(imul(base, ivar(nd)), ivar(nd + 1));
      leaves = reassoc::mk_red(s.red->op, s.id, {base}, reassoc::segmented(s, s.red->src, {pw, base}, j, padded));
    }
    Expr r = reassoc::tree(s, leaves, /*adjacent=*/true, s.init);
    std::string what = std::to_string(pw) + " blocks of " + std::to_string(base);
    if (padded) what += " (" + std::to_string(pw * base - s.n) + " identity-padded)";
    return reassoc::Rewrite{reassoc::finish(s, r), what};
  });
}

}  // namespace stax::xform
