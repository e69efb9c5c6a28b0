// NumPy's float32/float64 `pairwise_sum` order (numpy/core/src/umath/
// loops_utils.h.src) for a contiguous 1-D sum, written in the core language
// so that its left-fold semantics is NumPy's exact order:
//   ps(a, n), n < 8:     -0.0 + a0 + ... + a{n-1}        red(sum, -0.0, [n], ·)
//   ps(a, n), n <= 128:  r[l] = a[l] + a[l+8] + ..., for the first 8·(n div 8)
//                        elements: red(sum, -0.0, [n div 8], view(·, [8, n div 8]));
//                        ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)): three levels of
//                        red(sum, -0.0, [2], reshape(·, [h, 2]));
//                        then the n mod 8 tail added one by one: map(add, res, a_i)
//   ps(a, n), n > 128:   n2 = n/2 - (n/2) mod 8; map(add, ps(a, n2), ps(a+n2, n-n2))
// and numpy.sum adds the result to its output, which starts at the +0.0
// identity: red(sum, init, [1], ps) with the red's own init (0.0 for NumPy).
// (NumPy 1.24's C code starts the n < 8 case from 0. where the issue says
// -0.0; after the final 0.0 + ps the two are indistinguishable.)
// A multi-dim reduction is flattened row-major (numpy.sum of a C-contiguous
// array over all its axes); each output element of D gets its own ps, like
// numpy.sum(x, axis=-1) rows. Only f32/f64 sums; the source is let-bound
// once when it is not already a name, since every leaf views it.
#include "transforms/expr_util.h"
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

namespace {

class NumpyTree {
 public:
  NumpyTree(const reassoc::Site& s, Expr x) : s_(s), x_(std::move(x)) {
    r_.assign(x_->type.shape.begin() + std::ptrdiff_t(s.outer.size()), x_->type.shape.end());
  }

  Expr ps(int64_t off, int64_t n) {
    size_t nd = s_.outer.size();
    if (n < 8) {
      ++leaves_;
      return reassoc::mk_red(RedOp::Sum, s_.id, {n}, view(off, {n}, ivar(int(nd))));
    }
    if (n <= 128) {
      ++leaves_;
      int64_t q = n / 8;
      // lanes: (d, l, t) reads a[8t + l]
      Expr lanes = q == 1 ? view(off, {8}, ivar(int(nd)))
                          : reassoc::mk_red(RedOp::Sum, s_.id, {q},
                                            view(off, {8, q}, iadd(imul(8, ivar(int(nd + 1))), ivar(int(nd)))));
      Expr res = reassoc::tree(s_, lanes, /*adjacent=*/true, s_.id);
      for (int64_t i = 8 * q; i < n; ++i) res = add(res, view(off + i, {}, iconst(0)));
      return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return add(ps(off, n2), ps(off + n2, n - n2));
  }

  int64_t leaves() const { return leaves_; }

 private:
  // x at flat reduction index off + j, over D ++ news (j over the new vars).
  Expr view(int64_t off, const Shape& news, const IExpr& j) {
    size_t nd = s_.outer.size();
    Shape shape = s_.outer;
    shape.insert(shape.end(), news.begin(), news.end());
    std::vector<IExpr> exprs;
    for (size_t k = 0; k < nd; ++k) exprs.push_back(ivar(int(k)));
    for (IExpr& c : reassoc::unflatten_index(iadd(iconst(off), j), r_)) exprs.push_back(c);
    return reassoc::mk_view(x_, shape, std::move(exprs));
  }

  Expr add(const Expr& a, const Expr& b) {
    reassoc::LambdaBuilder f({"a0", "a1"}, {s_.acc, s_.acc});
    int32_t x = f.param(0);  // operands in order: the parser emits them left to right
    int32_t y = f.param(1);
    f.op(ScalarOp::Add, x, y);
    return make_expr(a->type, MapE{f.done(), {a, b}});
  }

  const reassoc::Site& s_;
  Expr x_;
  Shape r_;
  int64_t leaves_ = 0;
};

}  // namespace

Result numpy_pairwise(const Program& p, const Params& params, Context& ctx) {
  int serial = 0;
  return reassoc::for_each_red(p, params, ctx, "numpy-pairwise", [&](const reassoc::Site& s, const std::string&) {
    if (s.red->op != RedOp::Sum || (s.dtype != DType::F32 && s.dtype != DType::F64))
      return reassoc::Rewrite{std::nullopt, "NumPy's pairwise_sum order is for f32/f64 sums only"};
    Expr src = s.red->src;
    std::optional<std::string> let_name;
    Expr x = src;
    if (!std::holds_alternative<NameE>(src->p)) {
      let_name = fresh_name(p, "np" + std::to_string(serial++) + "_");
      x = make_expr(src->type, NameE{*let_name});
    }
    NumpyTree t(s, x);
    Expr r = t.ps(0, s.n);
    if (!(s.init == s.id)) {
      std::vector<IExpr> exprs;
      for (size_t k = 0; k < s.outer.size(); ++k) exprs.push_back(ivar(int(k)));
      Shape one = s.outer;
      one.push_back(1);
      r = reassoc::mk_red(RedOp::Sum, s.init, {1}, reassoc::mk_view(r, one, std::move(exprs)));
    }
    if (let_name) r = make_expr(r->type, LetE{*let_name, src, r});
    return reassoc::Rewrite{r, "NumPy pairwise_sum order, " + std::to_string(t.leaves()) + " leaves"};
  });
}

}  // namespace stax::xform
