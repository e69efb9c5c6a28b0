// PyTorch's CPU float32/float64 `torch.sum` order (ATen's cascade_sum; the
// order itself is written out in transforms/torch_order.h), built in the
// core language so that its left-fold semantics is PyTorch's exact order, as
// numpy-pairwise does for NumPy:
//   cascade over s rows of a [4, W] block of columns (k, lane l), row i at
//     off + 4W·i + W·k + l, step L: a3 = red over [s div L^3] of three nested
//     red over [L] (block sums, then L^2, then L^3 sums); a2, a1 the same for
//     the rows left after each boundary; a0 = red over the last s mod L rows;
//     the result ((a0 + a1) + a2) + a3 as map(add) (empty parts left out);
//   row_sum: column 0 of the cascade, the m mod 4 leftover vectors added with
//     map(add), then columns 1, 2, 3;
//   segment: the n mod W tail as red over [n mod W], then lanes 0..W-1 with
//     map(add) (red over [W] when there is no tail); n < W: row_sum of scalars;
//   output: red(sum, init, [1], segment), the `out = 0; out += sum` of ATen.
// Every inner red starts from -0.0, the exact identity; ATen's accumulators
// start from +0.0, which differs only in the sign of a zero, and the final
// `init + sum` of a +0.0 init makes both +0.0. All 4·W columns of a cascade
// are computed at once as dims of one view, so a segment costs O(1) nodes
// whatever its length.
//
// Rows (kept dims D with more than one element) are summed one segment per
// output element, with no dependence on the thread count. A full reduction
// (one output element) with threads=T > 1 and n >= 32,768 is split into
// per-thread chunks; the equal chunks are one batch dim of the segment
// builder, the shorter last one a segment of its own, and the buffer of T
// partials (zeros for unused threads) is summed by torch_order's order over
// Expr leaves (O(T) nodes; adding a zero slot is exact, so it is left out).
#include <functional>

#include "semantics/expr_util.h"
#include "semantics/views.h"
#include "transforms/passes.h"
#include "transforms/reassoc.h"
#include "transforms/torch_order.h"

namespace stax::xform {

using namespace sem;

namespace {

namespace to = torch_order;

using reassoc::BatchDim;

class TorchTree {
 public:
  using Fresh = std::function<std::string(const std::string&)>;
  TorchTree(const reassoc::Site& s, Expr x, int64_t lanes, int64_t min_power, Fresh fresh)
      : s_(s), x_(std::move(x)), lanes_(lanes), min_power_(min_power), fresh_(std::move(fresh)) {}

  /// The kernel's sum of each segment of n elements at off + Σ stride_k·b_k,
  /// over D ++ [count_k...].
  Expr segment(int64_t off, const std::vector<BatchDim>& batch, int64_t n) {
    const int nb = first_new(batch);
    if (n < lanes_) return row_sum(off, batch, n, false);
    const int64_t m = n / lanes_, tail = n - m * lanes_;
    Expr lanes = row_sum(off, batch, m, true);  // over D ++ batch ++ [W]
    if (tail == 0) return reassoc::mk_red(RedOp::Sum, s_.id, {lanes_}, lanes);
    return bind("l", lanes, [&](const Expr& lane) {
      Expr f = tail == 1 ? view(off + m * lanes_, batch, {}, iconst(0))
                         : reassoc::mk_red(RedOp::Sum, s_.id, {tail},
                                           view(off + m * lanes_, batch, {tail}, ivar(nb)));
      for (int64_t l = 0; l < lanes_; ++l) f = add(f, pick(lane, nb, {l}, false));
      return f;
    });
  }

  /// let NAME = value in body(NAME): a tensor read several times is computed
  /// once, and the printed program stays as small as the tree.
  Expr bind(const std::string& kind, const Expr& value, const std::function<Expr(const Expr&)>& body) {
    if (std::holds_alternative<NameE>(value->p)) return body(value);
    std::string name = fresh_(kind);
    Expr b = body(make_expr(value->type, NameE{name}));
    return make_expr(b->type, LetE{name, value, b});
  }

  Expr add(const Expr& a, const Expr& b) {
    if (!a) return b;
    if (!b) return a;
    ++adds_;
    reassoc::LambdaBuilder f({"a0", "a1"}, {s_.acc, s_.acc});
    int32_t x = f.param(0);  // operands in order: the parser emits them left to right
    int32_t y = f.param(1);
    f.op(ScalarOp::Add, x, y);
    return make_expr(a->type, MapE{f.done(), {a, b}});
  }

  int64_t reds() const { return reds_; }
  int64_t adds() const { return adds_; }

 private:
  int first_new(const std::vector<BatchDim>& batch) const { return int(s_.outer.size() + batch.size()); }

  /// row_sum over m items: vectors of W lanes (item i at off + W·i + l) when
  /// `vec`, else scalars (item i at off + i); over D ++ batch ++ ([W] | []).
  Expr row_sum(int64_t off, const std::vector<BatchDim>& batch, int64_t m, bool vec) {
    const int64_t s = m / to::kIlp;
    if (s > 0)  // the cascade's 4 columns, over D ++ batch ++ [4] ++ lanes
      return bind("c", cascade(off, batch, s, vec),
                  [&](const Expr& cols) { return finish_row_sum(off, batch, m, vec, cols); });
    return finish_row_sum(off, batch, m, vec, nullptr);
  }

  /// Column 0 (or nothing), the leftover items, then columns 1, 2, 3.
  Expr finish_row_sum(int64_t off, const std::vector<BatchDim>& batch, int64_t m, bool vec, const Expr& cols) {
    const int nb = first_new(batch);
    const int64_t w = vec ? lanes_ : 1, s = m / to::kIlp, left = m - s * to::kIlp;
    Shape lanes = vec ? Shape{lanes_} : Shape{};
    Expr acc = cols ? pick(cols, nb, {0}, vec) : nullptr;
    if (!acc && left > 1) {
      Shape news = lanes;
      news.push_back(left);
      IExpr j = imul(w, ivar(nb + int(vec)));
      if (vec) j = iadd(j, ivar(nb));
      ++reds_;
      acc = reassoc::mk_red(RedOp::Sum, s_.id, {left}, view(off + w * s * to::kIlp, batch, news, j));
    } else {
      for (int64_t i = s * to::kIlp; i < m; ++i)
        acc = add(acc, view(off + w * i, batch, lanes, vec ? ivar(nb) : iconst(0)));
    }
    for (int64_t k = 1; cols && k < to::kIlp; ++k) acc = add(acc, pick(cols, nb, {k}, vec));
    return acc;
  }

  /// The cascade over s rows of 4 columns (× W lanes): over D ++ batch ++ [4] ++ lanes.
  Expr cascade(int64_t off, const std::vector<BatchDim>& batch, int64_t s, bool vec) {
    const int64_t L = int64_t(1) << to::level_power(s, min_power_);
    const int64_t L2 = L * L, L3 = L2 * L;
    const int64_t n3 = s / L3, n2 = s / L2, n1 = s / L;
    Expr a3 = n3 > 0 ? piece(off, batch, 0, {n3, L, L, L}, vec) : nullptr;
    Expr a2 = n2 > n3 * L ? piece(off, batch, n3 * L3, {n2 - n3 * L, L, L}, vec) : nullptr;
    Expr a1 = n1 > n2 * L ? piece(off, batch, n2 * L2, {n1 - n2 * L, L}, vec) : nullptr;
    Expr a0 = s > n1 * L ? piece(off, batch, n1 * L, {s - n1 * L}, vec) : nullptr;
    return add(add(add(a0, a1), a2), a3);
  }

  /// Rows [row0, row0 + Π dims) of the cascade as nested reds, the last dim
  /// innermost (the rows of one block).
  Expr piece(int64_t off, const std::vector<BatchDim>& batch, int64_t row0, const Shape& dims, bool vec) {
    const int nb = first_new(batch);
    const int64_t w = vec ? lanes_ : 1, row_elems = to::kIlp * w;
    Shape news{to::kIlp};
    if (vec) news.push_back(lanes_);
    news.insert(news.end(), dims.begin(), dims.end());
    // element (k, l, d0, d1, ...) = off + row_elems·(row0 + row(d)) + w·k + l
    IExpr j = imul(w, ivar(nb));
    if (vec) j = iadd(j, ivar(nb + 1));
    int64_t weight = row_elems;
    for (size_t q = dims.size(); q-- > 0;) {
      if (dims[q] > 1) j = iadd(j, imul(weight, ivar(nb + 1 + int(vec) + int(q))));
      weight *= dims[q];
    }
    Expr e = view(off + row_elems * row0, batch, news, j);
    for (size_t q = dims.size(); q-- > 0;) {
      ++reds_;
      e = reassoc::mk_red(RedOp::Sum, s_.id, {dims[q]}, e);
    }
    return e;
  }

  /// t[..., k, (l)] over D ++ batch ++ ([W] | []): fixes the dims after the
  /// first `nb` to `fixed`, keeping a trailing lane dim when `keep_lane`.
  Expr pick(const Expr& t, int nb, const std::vector<int64_t>& fixed, bool keep_lane) {
    Shape shape(t->type.shape.begin(), t->type.shape.begin() + nb);
    std::vector<IExpr> exprs;
    for (int k = 0; k < nb; ++k) exprs.push_back(ivar(k));
    for (int64_t c : fixed) exprs.push_back(iconst(c));
    if (keep_lane) {
      shape.push_back(lanes_);
      exprs.push_back(ivar(nb));
    }
    return reassoc::mk_view(t, shape, std::move(exprs));
  }

  Expr view(int64_t off, const std::vector<BatchDim>& batch, const Shape& news, const IExpr& j) {
    return reassoc::batch_view(s_, x_, off, batch, news, j);
  }

  const reassoc::Site& s_;
  Expr x_;
  int64_t lanes_, min_power_;
  Fresh fresh_;
  int64_t reds_ = 0, adds_ = 0;
};

/// torch_order's operations on Expr leaves over D: a null Expr is a +0.0
/// slot, which an add leaves out (x + 0.0 = x up to the sign of a zero).
struct ExprOps {
  TorchTree& t;
  Expr zero() const { return nullptr; }
  Expr add(const Expr& a, const Expr& b) const { return t.add(a, b); }
};

/// Why PyTorch's order for this operand is not the contiguous kernel's, or
/// nullopt. A view other than a reshape/unsqueeze/squeeze reads a strided or
/// permuted tensor, which ATen sums with its outer or scalar kernels.
std::optional<std::string> layout_refusal(const Expr& src) {
  const auto* v = std::get_if<ViewE>(&src->p);
  if (!v) return std::nullopt;
  auto sugar = recognise_view_sugar(v->src->type.shape, src->type.shape, v->map,
                                    [](const std::string&) -> const Shape* { return nullptr; });
  if (sugar && (sugar->keyword == "reshape" || sugar->keyword == "unsqueeze" || sugar->keyword == "squeeze"))
    return std::nullopt;
  return "the operand is a " + (sugar ? sugar->keyword : std::string("general")) +
         " view, not a contiguous tensor: torch.sum of a strided or permuted tensor runs other kernels "
         "(materialize it first, e.g. realize)";
}

}  // namespace

Result torch_sum(const Program& p, const TorchSumOptions& opt, Context& ctx) {
  int serial = 0;
  return reassoc::for_each_red(p, opt.binding, ctx, "torch-sum", [&](const reassoc::Site& s) {
    if (s.red->op != RedOp::Sum) return reassoc::Rewrite{std::nullopt, "PyTorch's cascade order is for sums only"};
    if (s.dtype != DType::F32 && s.dtype != DType::F64)
      return reassoc::Rewrite{std::nullopt, "modelled for f32/f64 sums only (halves load 16 lanes into 8 f32 ones)"};
    if (auto why = layout_refusal(s.red->src)) return reassoc::Rewrite{std::nullopt, *why};
    const int64_t lanes = opt.lanes > 0 ? opt.lanes : to::lanes_for(s.dtype == DType::F32 ? 4 : 8);
    Expr src = s.red->src;
    std::optional<std::string> let_name;
    Expr x = src;
    if (!std::holds_alternative<NameE>(src->p)) {
      let_name = fresh_name(p, "ts" + std::to_string(serial++) + "_");
      x = make_expr(src->type, NameE{*let_name});
    }
    int64_t lets = 0;
    const std::string base = let_name ? *let_name : fresh_name(p, "ts" + std::to_string(serial++) + "_");
    TorchTree t(s, x, lanes, opt.min_level_power, [&](const std::string& kind) {
      return fresh_name(p, base + kind + std::to_string(lets++) + "_");
    });
    // One output element: TensorIterator's two-pass reduction splits it.
    const bool split = num_elements(s.outer) == 1 && opt.threads > 1 && s.n >= to::kGrain;
    Expr sum;
    std::string what;
    if (!split) {
      sum = t.segment(0, {}, s.n);
    } else {
      std::vector<to::Chunk> chunks = to::thread_chunks(s.n, opt.threads);
      // Equal chunks first (one batch dim), then possibly a shorter last one.
      const int64_t c = chunks[0].end - chunks[0].begin;
      int64_t full = 0;
      while (full < int64_t(chunks.size()) && chunks[size_t(full)].end - chunks[size_t(full)].begin == c) ++full;
      Expr last = full < int64_t(chunks.size()) ? t.segment(full * c, {}, s.n - full * c) : nullptr;
      const int nd = int(s.outer.size());
      sum = t.bind("p", t.segment(0, {{full, c}}, c), [&](const Expr& a) {  // a over D ++ [full]
        std::vector<Expr> buffer(size_t(opt.threads), nullptr);
        for (int64_t k = 0; k < full; ++k) {
          std::vector<IExpr> exprs;
          for (int d = 0; d < nd; ++d) exprs.push_back(ivar(d));
          exprs.push_back(iconst(k));
          buffer[size_t(k)] = reassoc::mk_view(a, s.outer, std::move(exprs));
        }
        if (last) buffer[size_t(full)] = last;
        ExprOps ops{t};
        return to::segment_sum<Expr>(opt.threads, lanes, [&](int64_t i) { return buffer[size_t(i)]; }, ops,
                                     opt.min_level_power);
      });
      what = ", " + std::to_string(chunks.size()) + " thread chunks of " + std::to_string(c) + " summed over " +
             std::to_string(opt.threads) + " buffer slots";
    }
    Shape one = s.outer;
    one.push_back(1);
    std::vector<IExpr> exprs;
    for (size_t k = 0; k < s.outer.size(); ++k) exprs.push_back(ivar(int(k)));
    Expr r = reassoc::mk_red(RedOp::Sum, s.init, {1}, reassoc::mk_view(sum, one, std::move(exprs)));
    if (let_name) r = make_expr(r->type, LetE{*let_name, src, r});
    return reassoc::Rewrite{r, "PyTorch cascade_sum order (" + std::to_string(lanes) + " lanes" + what + "), " +
                                   std::to_string(t.reds()) + " cascade reds, " + std::to_string(t.adds()) +
                                   " adds"};
  });
}

}  // namespace stax::xform
