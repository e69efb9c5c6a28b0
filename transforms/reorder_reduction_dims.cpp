// Theorem 6.3 (any permutation of R_r): red(op, init, [r0..rq-1], x) becomes
// red(op, init, [r_perm0..], view(x, D ++ R', ...)), i.e. the reduced trailing
// dims are folded in another lexicographic order. perm=a/b/c lists, for each
// new reduced dim, which old one it is (default: reversed). Class real for
// float sum/prod, exact for max/min and integers; argmax/argmin are refused
// (their index is the row-major position, which the permutation changes).
#include <algorithm>
#include <numeric>

#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

Result reorder_reduction_dims(const Program& p, const ReorderReductionDimsOptions& opt, Context& ctx) {
  const auto& given = opt.perm;
  return reassoc::for_each_red(
      p, opt.binding, ctx, "reorder-reduction-dims", [&](const reassoc::Site& s) {
        const Shape& r = s.red->extents;
        size_t q = r.size(), nd = s.outer.size();
        if (q < 2) return reassoc::Rewrite{std::nullopt, "only one reduced dim"};
        std::vector<int64_t> perm(q);
        std::iota(perm.begin(), perm.end(), 0);
        std::reverse(perm.begin(), perm.end());
        if (given) {
          if (given->size() != q)
            return reassoc::Rewrite{std::nullopt, "perm has " + std::to_string(given->size()) + " entries but it reduces " +
                                                      std::to_string(q) + " dims"};
          perm = *given;
        }
        bool identity = true;
        for (size_t i = 0; i < q; ++i) identity &= perm[i] == int64_t(i);
        if (identity) return reassoc::Rewrite{std::nullopt, "identity permutation"};
        Shape rp(q), shape = s.outer;
        std::vector<IExpr> exprs;
        for (size_t k = 0; k < nd; ++k) exprs.push_back(ivar(int(k)));
        std::vector<IExpr> comp(q);
        for (size_t i = 0; i < q; ++i) {
          rp[i] = r[size_t(perm[i])];
          comp[size_t(perm[i])] = ivar(int(nd + i));
        }
        shape.insert(shape.end(), rp.begin(), rp.end());
        exprs.insert(exprs.end(), comp.begin(), comp.end());
        Expr v = reassoc::mk_view(s.red->src, shape, std::move(exprs));
        std::string what = "reduced dims in order (";
        for (size_t i = 0; i < q; ++i) what += (i ? ", " : "") + std::to_string(perm[i]);
        return reassoc::Rewrite{reassoc::mk_red(s.red->op, s.red->init, rp, v), what + ")"};
      });
}

}  // namespace stax::xform
