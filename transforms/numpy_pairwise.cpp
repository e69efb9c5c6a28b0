// NumPy's float32/float64 `pairwise_sum` order (numpy/core/src/umath/
// loops_utils.h.src) for a contiguous 1-D sum, written in the core language
// so that its left-fold semantics is NumPy's exact order:
//   ps(a, n), n < 8:     -0.0 + a0 + ... + a{n-1}        red(sum, -0.0, [n], ·)
//   ps(a, n), n <= 128:  r[l] = a[l] + a[l+8] + ... over the first 8·(n div 8)
//                        elements: red(sum, -0.0, [n div 8], view(·, [8, n div 8]));
//                        ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)): three levels of
//                        red(sum, -0.0, [2], reshape(·, [h, 2]));
//                        then the n mod 8 tail added one by one: map(add, res, a_i)
//   ps(a, n), n > 128:   n2 = n/2 - (n/2) mod 8; ps(a, n2) + ps(a + n2, n - n2)
// numpy.sum does not hand the whole array to pairwise_sum: the ufunc's
// buffered iterator feeds it blocks of `bufsize` elements (np.getbufsize(),
// 8192 by default) and each block's ps is added to the output in turn, the
// output starting at the +0.0 identity:
//   out = ((init + ps(b0)) + ps(b1)) + ... + ps(b_last)
// = map(add, red(sum, init, [n div bufsize], ps of the full blocks), ps(tail)),
// with the red's own init (0.0 for NumPy). Measured against NumPy 1.24:
// without the blocking, lengths above 8192 differ. bufsize=0 gives the plain
// init + ps(x) over the whole range. (NumPy 1.24's C code starts the n < 8
// case from 0. where the formulas above say -0.0; once added into the +0.0 output the
// two are indistinguishable.)
//
// Equal halves (n2 = n - n2) have the same shape of computation, so they are
// computed together: a call handles a batch of segments at affine offsets
// off + Σ stride_k·i_k, an equal split adds a batch dim [2] (stride n2) and
// combines the halves with red(sum, -0.0, [2], ·) = A + B; only unequal
// splits become map(add, A, B). A power-of-two n thus takes O(log n) nodes
// instead of one subtree per 128-element leaf.
//
// A multi-dim reduction is flattened row-major (numpy.sum of a C-contiguous
// array over all its axes); each output element of D gets its own ps, like
// the rows of numpy.sum(x, axis=-1). Only f32/f64 sums; the source is
// let-bound once when it is not already a name, since several views read it.
#include "semantics/expr_util.h"
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

namespace {

using reassoc::BatchDim;

class NumpyTree {
 public:
  NumpyTree(const reassoc::Site& s, Expr x) : s_(s), x_(std::move(x)) {
  }

  // pairwise_sum of each segment of length n at off + Σ stride_k·i_k; the
  // result is over D ++ [count_k...].
  Expr ps(int64_t off, const std::vector<BatchDim>& batch, int64_t n) {
    int nb = int(s_.outer.size() + batch.size());  // the first within-segment var
    if (n < 8) {
      ++leaves_;
      return reassoc::mk_red(RedOp::Sum, s_.id, {n}, view(off, batch, {n}, ivar(nb)));
    }
    if (n <= 128) {
      ++leaves_;
      int64_t q = n / 8;
      // lane l, step t reads a[8t + l]
      Expr lanes = q == 1 ? view(off, batch, {8}, ivar(nb))
                          : reassoc::mk_red(RedOp::Sum, s_.id, {q},
                                            view(off, batch, {8, q}, iadd(imul(8, ivar(nb + 1)), ivar(nb))));
      Expr res = reassoc::tree(s_, lanes, /*adjacent=*/true, s_.id);
      for (int64_t i = 8 * q; i < n; ++i) res = add(res, view(off + i, batch, {}, iconst(0)));
      return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    if (n2 == n - n2) {
      std::vector<BatchDim> both = batch;
      both.push_back({2, n2});
      return reassoc::mk_red(RedOp::Sum, s_.id, {2}, ps(off, both, n2));
    }
    return add(ps(off, batch, n2), ps(off + n2, batch, n - n2));
  }

  int64_t leaves() const { return leaves_; }

  Expr add(const Expr& a, const Expr& b) {
    reassoc::LambdaBuilder f({"a0", "a1"}, {s_.acc, s_.acc});
    int32_t x = f.param(0);  // operands in order: the parser emits them left to right
    int32_t y = f.param(1);
    f.op(ScalarOp::Add, x, y);
    return make_expr(a->type, MapE{f.done(), {a, b}});
  }

 private:
  Expr view(int64_t off, const std::vector<BatchDim>& batch, const Shape& news, const IExpr& j) {
    return reassoc::batch_view(s_, x_, off, batch, news, j);
  }

  const reassoc::Site& s_;
  Expr x_;
  int64_t leaves_ = 0;
};

}  // namespace

Result numpy_pairwise(const Program& p, const NumpyPairwiseOptions& opt, Context& ctx) {
  const int64_t bufsize = opt.bufsize;
  int serial = 0;
  return reassoc::for_each_red(p, opt.binding, ctx, "numpy-pairwise", [&](const reassoc::Site& s) {
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
    int64_t full = bufsize > 0 ? s.n / bufsize : 0, rest = s.n - full * bufsize;
    Expr r;
    if (full == 0) {
      // One block: the output starts at init, then ps(x) is added to it.
      Shape one = s.outer;
      one.push_back(1);
      std::vector<IExpr> exprs;
      for (size_t k = 0; k < s.outer.size(); ++k) exprs.push_back(ivar(int(k)));
      r = reassoc::mk_red(RedOp::Sum, s.init, {1}, reassoc::mk_view(t.ps(0, {}, s.n), one, std::move(exprs)));
    } else {
      r = reassoc::mk_red(RedOp::Sum, s.init, {full}, t.ps(0, {{full, bufsize}}, bufsize));
      if (rest > 0) r = t.add(r, t.ps(full * bufsize, {}, rest));
    }
    if (let_name) r = make_expr(r->type, LetE{*let_name, src, r});
    return reassoc::Rewrite{r, "NumPy pairwise_sum order, " + std::to_string(t.leaves()) + " leaf kernels"};
  });
}

}  // namespace stax::xform
