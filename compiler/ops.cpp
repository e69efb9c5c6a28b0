// Lowering rules of the basis operators (§6.2): a table from operator
// name to rule. Pointwise ops go through Listing 6.1's `pointwise` with the
// type promotion of 6.2 (pointwise.h); reductions run over any dims
// (permuted to the trailing position); views per 6.4 (index maps);
// concatenation as masked selects; gather as an indirect load unless the
// index folds into an index expression (Example 6.3, index_expr.cpp).
#include "compiler/ops.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/pointwise.h"
#include "semantics/expr_util.h"
#include "semantics/views.h"
#include "transforms/index_simplify.h"

namespace stax::compiler::detail {

using namespace sem;
using nlohmann::json;

namespace {

int64_t norm_dim(int64_t d, size_t rank) {
  int64_t r = int64_t(std::max<size_t>(rank, 1));
  if (d < -r || d >= r) fail("dim " + std::to_string(d) + " is out of range for rank " + std::to_string(rank));
  return d < 0 ? d + r : d;
}

Const red_init(RedOp op, DType t) {
  bool f = is_float(t);
  switch (op) {
    case RedOp::Sum: return const_of(0.0, t);
    case RedOp::Prod: return const_of(1.0, t);
    case RedOp::Max:
    case RedOp::ArgMax:
      return f ? const_of(-INFINITY, t) : Const::i64(t == DType::I32 ? INT32_MIN : INT64_MIN, t);
    case RedOp::Min:
    case RedOp::ArgMin:
      return f ? const_of(INFINITY, t) : Const::i64(t == DType::I32 ? INT32_MAX : INT64_MAX, t);
  }
  return const_of(0.0, t);
}

/// Reduces `dims` of x (all dims when empty): the reduced dims are permuted to
/// the end (red reduces trailing dims), keepdim reshapes size-1 dims back.
Expr reduce(const Expr& x0, std::vector<int64_t> dims, bool keepdim, RedOp op) {
  Expr x = x0;
  if (is_bool(x->type.dtype)) {
    if (op == RedOp::Sum || op == RedOp::Prod) x = cast_to(x, DType::I64);
    else fail("cannot reduce a bool tensor with " + std::string(red_name(op)));
  }
  if ((op == RedOp::Sum || op == RedOp::Prod) && x->type.dtype == DType::I32) x = cast_to(x, DType::I64);
  const Shape& s = x->type.shape;
  size_t rank = s.size();
  if (dims.empty())
    for (size_t d = 0; d < rank; ++d) dims.push_back(int64_t(d));
  for (int64_t& d : dims) d = norm_dim(d, rank);
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) fail("a dim is reduced twice");
  if (rank == 0) {
    if (red_is_arg(op)) return make_expr({DType::I64, {}}, FullE{Const::i64(0)});
    return x;
  }
  std::vector<int64_t> perm;
  Shape kept, ext, keep_shape;
  for (size_t d = 0; d < rank; ++d) {
    bool red = std::binary_search(dims.begin(), dims.end(), int64_t(d));
    if (!red) {
      perm.push_back(int64_t(d));
      kept.push_back(s[d]);
    }
    keep_shape.push_back(red ? 1 : s[d]);
  }
  for (int64_t d : dims) {
    perm.push_back(d);
    ext.push_back(s[size_t(d)]);
  }
  Expr src = view_of(x, expand_permute(s, perm));
  DType dt = red_is_arg(op) ? DType::I64 : x->type.dtype;
  Expr r = make_expr({dt, kept}, RedE{op, red_init(op, x->type.dtype), ext, src});
  if (keepdim && keep_shape != kept) r = view_of(r, expand_reshape(kept, keep_shape));
  return r;
}

// ---- argument access ----

/// A node's arguments as its rule reads them; `overload` is the part of the
/// op name after the '.' ("default" when there is none).
struct Args {
  const Node& n;
  const RuleEnv& env;
  std::string overload;
  size_t size() const { return n.args.size(); }
  bool has(size_t i) const { return i < n.args.size() && !n.args[i].is_null(); }
  const json& at(size_t i) const { return n.args[i]; }
  bool is_tensor(size_t i) const { return has(i) && at(i).is_string(); }
  Expr tensor(size_t i) const {
    if (!is_tensor(i)) fail("argument " + std::to_string(i) + " must be a tensor (a node or input name), got " + (has(i) ? at(i).dump() : "nothing"));
    return env.ref(at(i).get<std::string>());
  }
  Operand operand(size_t i) const {
    if (is_tensor(i)) return {tensor(i), {}};
    if (!has(i) || !(at(i).is_number() || at(i).is_boolean()))
      fail("argument " + std::to_string(i) + " must be a tensor or a number, got " + (has(i) ? at(i).dump() : "nothing"));
    return {nullptr, at(i)};
  }
  int64_t integer(size_t i, std::optional<int64_t> dflt = std::nullopt) const {
    if (!has(i)) {
      if (dflt) return *dflt;
      fail("argument " + std::to_string(i) + " (an integer) is missing");
    }
    if (!at(i).is_number_integer()) fail("argument " + std::to_string(i) + " must be an integer, got " + at(i).dump());
    return at(i).get<int64_t>();
  }
  bool boolean(size_t i, bool dflt) const {
    if (!has(i)) return dflt;
    if (!at(i).is_boolean()) fail("argument " + std::to_string(i) + " must be true or false, got " + at(i).dump());
    return at(i).get<bool>();
  }
  std::vector<int64_t> ints(size_t i, bool allow_scalar = true) const {
    if (!has(i)) return {};
    if (allow_scalar && at(i).is_number_integer()) return {at(i).get<int64_t>()};
    if (!at(i).is_array()) fail("argument " + std::to_string(i) + " must be a list of integers, got " + at(i).dump());
    std::vector<int64_t> v;
    for (const json& x : at(i)) {
      if (!x.is_number_integer()) fail("argument " + std::to_string(i) + " must be a list of integers, got " + at(i).dump());
      v.push_back(x.get<int64_t>());
    }
    return v;
  }
  std::optional<DType> dtype_kw(const char* key = "dtype") const {
    if (!n.kwargs.contains(key) || n.kwargs[key].is_null()) return std::nullopt;
    const json& v = n.kwargs[key];
    std::optional<DType> t = v.is_string() ? dtype_from_name(v.get<std::string>()) : std::nullopt;
    if (!t) fail("kwarg " + std::string(key) + ": unknown dtype " + v.dump() + " (expected f32, f64, f16, bf16, i32, i64 or bool)");
    return t;
  }
  json kw(const char* key, json dflt) const { return n.kwargs.contains(key) ? n.kwargs[key] : dflt; }
};

Shape sizes_arg(const Args& a, size_t i) {
  Shape s = a.ints(i, false);
  for (int64_t d : s)
    if (d < 0) fail("sizes must be non-negative, got " + std::to_string(d));
  return s;
}

/// reshape's size list with at most one -1.
Shape infer_reshape(const Shape& src, std::vector<int64_t> s) {
  int64_t known = 1, neg = -1;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == -1) {
      if (neg >= 0) fail("only one dimension can be -1");
      neg = int64_t(k);
    } else if (s[k] < 0) {
      fail("invalid size " + std::to_string(s[k]));
    } else {
      // Sizes from the graph: their product must not overflow (graph fuzz
      // target, UBSan: a signed overflow here on 2026-12-05).
      if (s[k] > 0 && known > kMaxElements / s[k]) fail("cannot reshape into " + shape_text(s) + ": too many elements");
      known *= s[k];
    }
  }
  int64_t n = num_elements(src);
  if (neg >= 0) {
    if (known == 0 || n % known != 0) fail("cannot reshape " + shape_text(src) + " into " + shape_text(s));
    s[size_t(neg)] = n / known;
  }
  if (num_elements(s) != n) fail("cannot reshape " + shape_text(src) + " into " + shape_text(s));
  return s;
}

Expr binary(const Args& a, ScalarOp op, Promo promo, std::optional<json> alpha = std::nullopt) {
  return pointwise({a.operand(0), a.operand(1)}, promo,
                   [op, alpha](BodyBuilder& lb, const std::vector<int32_t>& v, DType t) {
                     int32_t y = v[1];
                     if (alpha) y = lb.op(ScalarOp::Mul, {y, lb.konst(const_of(*alpha, t))});
                     return lb.op(op, {v[0], y});
                   });
}

/// a[M, K] @ b[K, N] (with an optional batch dim): a reduction over k of the
/// product, naive but exact to its own order.
Expr matmul_red(const Expr& a, const Expr& b, bool batched) {
  const Shape& sa = a->type.shape;
  const Shape& sb = b->type.shape;
  size_t want = batched ? 3 : 2;
  if (sa.size() != want || sb.size() != want)
    fail(std::string(batched ? "bmm" : "mm") + " expects rank-" + std::to_string(want) + " operands, got " +
         shape_text(sa) + " and " + shape_text(sb));
  size_t o = batched ? 1 : 0;
  if (sa[o + 1] != sb[o] || (batched && sa[0] != sb[0]))
    fail("matrix shapes " + shape_text(sa) + " and " + shape_text(sb) + " do not match");
  int64_t m = sa[o], k = sa[o + 1], n = sb[o + 1];
  Shape dom = batched ? Shape{sa[0], m, n, k} : Shape{m, n, k};
  int bi = 0, i = int(o), j = int(o + 1), kk = int(o + 2);
  std::vector<IExpr> ea = batched ? std::vector<IExpr>{ivar(bi), ivar(i), ivar(kk)} : std::vector<IExpr>{ivar(i), ivar(kk)};
  std::vector<IExpr> eb = batched ? std::vector<IExpr>{ivar(bi), ivar(kk), ivar(j)} : std::vector<IExpr>{ivar(kk), ivar(j)};
  Expr prod = pointwise({{view_of(a, dom, ea), {}}, {view_of(b, dom, eb), {}}}, Promo::Default,
                        [](BodyBuilder& lb, const std::vector<int32_t>& v, DType) { return lb.op(ScalarOp::Mul, {v[0], v[1]}); });
  Shape out(dom.begin(), dom.end() - 1);
  return make_expr({prod->type.dtype, out}, RedE{RedOp::Sum, red_init(RedOp::Sum, prod->type.dtype), {k}, prod});
}

Expr concat(const Args& a) {
  if (!a.has(0) || !a.at(0).is_array() || a.at(0).empty()) fail("cat expects a non-empty list of tensors");
  std::vector<Expr> xs;
  std::vector<DType> ts;
  for (const json& r : a.at(0)) {
    if (!r.is_string()) fail("cat expects a list of tensor names, got " + r.dump());
    xs.push_back(a.env.ref(r.get<std::string>()));
    ts.push_back(xs.back()->type.dtype);
  }
  DType t = promote(ts, {});
  size_t rank = xs[0]->type.shape.size();
  int64_t dim = norm_dim(a.integer(1, 0), rank);
  Shape out = xs[0]->type.shape;
  out[size_t(dim)] = 0;
  std::vector<int64_t> offs;
  for (const Expr& x : xs) {
    const Shape& s = x->type.shape;
    if (s.size() != rank) fail("cat: tensors of rank " + std::to_string(rank) + " and " + std::to_string(s.size()));
    for (size_t d = 0; d < rank; ++d)
      if (int64_t(d) != dim && s[d] != xs[0]->type.shape[d])
        fail("cat: shapes " + shape_text(xs[0]->type.shape) + " and " + shape_text(s) + " differ outside dim " + std::to_string(dim));
    offs.push_back(out[size_t(dim)]);
    out[size_t(dim)] += s[size_t(dim)];
  }
  // Each piece is read at (i_dim - o_k) mod s_k: always in range, and equal to
  // i_dim - o_k where its mask o_k <= i_dim < o_{k+1} holds.
  BodyBuilder lb;
  std::vector<Expr> args;
  args.push_back(make_expr({DType::I64, out}, IotaE{int(dim)}));
  int32_t i = lb.param(DType::I64);
  std::vector<int32_t> vals;
  std::vector<size_t> used;
  for (size_t k = 0; k < xs.size(); ++k) {
    int64_t sk = xs[k]->type.shape[size_t(dim)];
    if (sk == 0) continue;
    std::vector<IExpr> ex;
    for (size_t d = 0; d < rank; ++d) ex.push_back(ivar(int(d)));
    ex[size_t(dim)] = imod(isub(ivar(int(dim)), iconst(offs[k])), sk);
    IndexMap m = xform::simplify_map(IndexMap{var_names(rank), ex}, out);
    args.push_back(make_expr({xs[k]->type.dtype, out}, ViewE{xs[k], m}));
    vals.push_back(lb.cast(lb.param(xs[k]->type.dtype), t));
    used.push_back(k);
  }
  if (vals.empty()) return make_expr({t, out}, FullE{const_of(0.0, t)});
  int32_t v = vals.back();
  for (size_t q = vals.size() - 1; q-- > 0;) {
    int32_t bound = lb.konst(Const::i64(offs[used[q + 1]]));
    v = lb.op(ScalarOp::Select, {lb.op(ScalarOp::Lt, {i, bound}), vals[q], v});
  }
  v = lb.cast(v, t);
  DType rt = lb.tag(v);
  return make_expr({rt, out}, MapE{std::move(lb.lam), std::move(args)});
}

Expr gather(const Args& a) {
  Expr x = a.tensor(0);
  if (!a.has(1) || !a.at(1).is_array()) fail("index.Tensor expects a list of index tensors (null for a kept dim)");
  const json& list = a.at(1);
  int64_t dim = -1;
  std::string idx;
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k].is_null()) continue;
    if (!list[k].is_string()) fail("index.Tensor: index entries must be tensor names or null, got " + list[k].dump());
    if (dim >= 0) fail("index.Tensor: only one index tensor is supported");
    dim = int64_t(k);
    idx = list[k].get<std::string>();
  }
  if (dim < 0) fail("index.Tensor: no index tensor given");
  const Shape& s = x->type.shape;
  if (size_t(dim) >= s.size()) fail("index.Tensor: too many indices for a tensor of rank " + std::to_string(s.size()));
  Expr ie = a.env.ref(idx);
  if (!is_int(ie->type.dtype)) fail("index.Tensor: index tensor '" + idx + "' must be i32 or i64, got " + type_str(ie->type));
  if (ie->type.shape.size() != 1) fail("index.Tensor: index tensor '" + idx + "' must be 1-D, got " + type_str(ie->type));
  Shape out = s;
  out[size_t(dim)] = ie->type.shape[0];
  if (!a.env.is_realized(idx)) {
    // Example 6.3 (g2): an index computed from loop variables folds into the
    // index expression; when its range is within [0, s) the load, its wrap
    // and its check disappear.
    if (auto f = as_index_expr(ie, {ivar(int(dim))}, out)) {
      IExpr fe = xform::simplify_index(*f, out);
      Interval r = iexpr_range(fe, out);
      if (r.lo >= 0 && r.hi < s[size_t(dim)]) {
        std::vector<IExpr> ex;
        for (size_t d = 0; d < s.size(); ++d) ex.push_back(ivar(int(d)));
        ex[size_t(dim)] = fe;
        return view_of(x, out, ex);
      }
    }
  }
  std::string name = a.env.in_memory(idx, "read as an indirect index by node '" + a.n.name + "'");
  return view_of(x, expand_gather(s, dim, name, ie->type.shape));
}

Expr arange(const Args& a) {
  int64_t start = 0, end, step = 1;
  if (a.overload == "default") {
    end = a.integer(0);
  } else {
    start = a.integer(0);
    end = a.integer(1);
    step = a.integer(2, 1);
  }
  if (step == 0) fail("arange: step must be nonzero");
  int64_t n = std::max<int64_t>(0, (end - start + step - (step > 0 ? 1 : -1)) / step);
  DType t = a.dtype_kw().value_or(DType::I64);
  Expr r = make_expr({DType::I64, {n}}, IotaE{0});
  if (start != 0 || step != 1) {
    BodyBuilder lb;
    int32_t i = lb.param(DType::I64);
    int32_t v = lb.op(ScalarOp::Mul, {i, lb.konst(Const::i64(step))});
    lb.op(ScalarOp::Add, {v, lb.konst(Const::i64(start))});
    r = make_expr({DType::I64, {n}}, MapE{std::move(lb.lam), {r}});
  }
  return cast_to(r, t);
}

Expr full(const Args& a, const Shape& shape, const json& value) {
  DType t = a.dtype_kw().value_or(value.is_boolean() ? DType::Bool : value.is_number_integer() ? DType::I64 : DType::F32);
  return make_expr({t, shape}, FullE{const_of(value, t)});
}

// ---- the rules, one per operator ----

using Rule = std::function<Expr(const Args&)>;

Rule unary_op(ScalarOp op, Promo promo) {
  return [op, promo](const Args& a) {
    return pointwise({a.operand(0)}, promo,
                     [op](BodyBuilder& lb, const std::vector<int32_t>& v, DType) { return lb.op(op, {v[0]}); });
  };
}

Rule binary_op(ScalarOp op, Promo promo) {
  return [op, promo](const Args& a) { return binary(a, op, promo); };
}

/// add/sub with PyTorch's `alpha` kwarg scaling the second operand.
Rule add_sub(ScalarOp op) {
  return [op](const Args& a) {
    json alpha = a.kw("alpha", 1);
    std::optional<json> al;
    if (!(alpha.is_number() && alpha.get<double>() == 1.0)) al = alpha;
    return binary(a, op, Promo::Default, al);
  };
}

Expr divide(const Args& a) {
  json mode = a.kw("rounding_mode", json());
  if (mode.is_null()) return binary(a, ScalarOp::Div, Promo::IntToFloat);
  if (mode != "floor") fail("div: rounding_mode " + mode.dump() + " is not supported (null or \"floor\")");
  return pointwise({a.operand(0), a.operand(1)}, Promo::Default, [](BodyBuilder& lb, const std::vector<int32_t>& v, DType t) {
    if (is_int(t)) return lb.op(ScalarOp::FloorDiv, {v[0], v[1]});
    return lb.op(ScalarOp::Floor, {lb.op(ScalarOp::Div, {v[0], v[1]})});
  });
}

Expr where(const Args& a) {
  Expr c = a.tensor(0);
  if (!is_bool(c->type.dtype)) fail("where: the condition must be a bool tensor, got " + type_str(c->type));
  std::vector<Operand> ops = {a.operand(1), a.operand(2)};
  std::vector<DType> tds;
  std::vector<json> lits;
  for (auto& o : ops) {
    if (o.tensor) tds.push_back(o.tensor->type.dtype);
    else lits.push_back(o.literal);
  }
  DType t = promote(tds, lits);
  Shape shape = c->type.shape;
  for (auto& o : ops)
    if (o.tensor) shape = broadcast_shapes(shape, o.tensor->type.shape);
  BodyBuilder lb;
  std::vector<Expr> args = {broadcast_to(c, shape)};
  int32_t cv = lb.param(DType::Bool);
  std::vector<int32_t> v;
  for (auto& o : ops) {
    if (o.tensor) {
      args.push_back(broadcast_to(o.tensor, shape));
      v.push_back(lb.cast(lb.param(o.tensor->type.dtype), t));
    } else {
      v.push_back(lb.konst(const_of(o.literal, t)));
    }
  }
  int32_t r = lb.op(ScalarOp::Select, {cv, v[0], v[1]});
  DType rt = lb.tag(r);
  return make_expr({rt, shape}, MapE{std::move(lb.lam), std::move(args)});
}

/// sum/prod/amax/amin over dims (arg 1), keepdim (arg 2); `whole` ops (sum,
/// prod) reduce every dim in their `default` overload.
Rule reduction(RedOp op, bool whole) {
  return [op, whole](const Args& a) {
    Expr x = a.tensor(0);
    if (auto t = a.dtype_kw()) x = cast_to(x, *t);
    if (whole && a.overload == "default") return reduce(x, {}, false, op);
    return reduce(x, a.ints(1), a.boolean(2, false), op);
  };
}

/// argmax/argmin over one dim, or over the flattened tensor.
Rule arg_reduction(RedOp op) {
  return [op](const Args& a) {
    Expr x = a.tensor(0);
    if (!a.has(1)) {
      Shape flat = {num_elements(x->type.shape)};
      return reduce(view_of(x, expand_reshape(x->type.shape, flat)), {0}, false, op);
    }
    return reduce(x, {a.integer(1)}, a.boolean(2, false), op);
  };
}

/// Whether `e` computes anything (a map, a reduction, a draw), not only
/// reads memory through views, constants and iotas.
bool computes(const Expr& e) {
  if (std::holds_alternative<MapE>(e->p) || std::holds_alternative<RedE>(e->p) ||
      std::holds_alternative<RandE>(e->p) || std::holds_alternative<LetE>(e->p))
    return true;
  for (const Expr& c : sem::children(e))
    if (computes(c)) return true;
  return false;
}

/// Whether a view reads its last dimension with a stride (a transposed
/// matrix): the last result index is not the viewed tensor's innermost one.
bool last_dim_strided(const Expr& e) {
  const auto* v = std::get_if<ViewE>(&e->p);
  if (!v) return false;
  size_t r = e->type.shape.size();
  if (r == 0) return false;
  std::optional<Affine> f = as_affine(v->map, int(r));
  if (!f) return true;
  for (size_t j = 0; j < f->a.size(); ++j)
    if (f->a[j][r - 1] != (j + 1 == f->a.size() ? 1 : 0)) return true;
  return false;
}

/// Rows of a product from which its strided second operand is copied first.
constexpr int64_t kMinRowsToCopy = 16;

/// Operand i of a matrix product over `fold` terms, each of whose elements
/// the product reads `reuse` times. Beyond the text's rules (6.6 decides by
/// the number of users, not by how often one user reads an element): an
/// operand that computes anything is realized, so that its work (a GELU's
/// erf, a gradient's sums) is done once per element rather than once per
/// term of the product; inlined, a [64, 256] GELU under a 64-column product
/// ran its erf 64 times an element. Exact either way (Prop. 6.1).
Expr product_operand(const Args& a, size_t i, int64_t reuse, int64_t fold) {
  Expr e = a.tensor(i);
  const std::string& name = a.at(i).get<std::string>();
  if (reuse >= 2 && computes(e))
    return a.env.ref(a.env.in_memory(name, "beyond 6.6: an operand of the matrix product '" + a.n.name +
                                               "', which reads each element " + std::to_string(reuse) + " times"));
  // The second operand's columns are the lanes of the product's
  // accumulators (the CPU backend's blocked lanes): read through a
  // transpose, each lane is a gather; a contiguous copy is one pass. Not
  // where the code generator packs the operand itself (RuleEnv::
  // max_packed_fold): the copy would be a pass over it for nothing (the
  // transformer block's forward and backward at 256x256x1024: 10 copies,
  // 1.3-2 ms of 28).
  const bool packed =
      a.env.max_packed_fold > 0 && fold >= kMinPackedFold && fold <= a.env.max_packed_fold && reuse % 2 == 0;
  if (i == 1 && reuse >= kMinRowsToCopy && !packed && last_dim_strided(e))
    return a.env.ref(a.env.in_memory(name, "beyond 6.6: the second operand of the matrix product '" + a.n.name +
                                               "', read along its rows with a stride by " + std::to_string(reuse) +
                                               " rows, copied contiguous"));
  return e;
}

Rule matmul(bool batched) {
  return [batched](const Args& a) {
    Expr x = a.tensor(0), y = a.tensor(1);
    // a[.., M, K] @ b[.., K, N]: a's elements are read N times, b's M times
    // (the shapes are checked by matmul_red).
    const Shape& sx = x->type.shape;
    const Shape& sy = y->type.shape;
    int64_t n = sy.empty() ? 1 : sy.back(), m = sx.size() < 2 ? 1 : sx[sx.size() - 2];
    const int64_t k = sx.empty() ? 1 : sx.back();
    return matmul_red(product_operand(a, 0, n, k), product_operand(a, 1, m, k), batched);
  };
}

Expr matrix_transpose(const Args& a) {
  Expr x = a.tensor(0);
  size_t r = x->type.shape.size();
  if (r > 2) fail("t expects a tensor of rank <= 2, got " + type_str(x->type));
  return r < 2 ? x : view_of(x, expand_permute(x->type.shape, {1, 0}));
}

Expr transpose(const Args& a) {
  Expr x = a.tensor(0);
  size_t r = x->type.shape.size();
  int64_t d0 = norm_dim(a.integer(1), r), d1 = norm_dim(a.integer(2), r);
  if (r == 0) return x;
  std::vector<int64_t> perm;
  for (size_t d = 0; d < r; ++d) perm.push_back(int64_t(d));
  std::swap(perm[size_t(d0)], perm[size_t(d1)]);
  return view_of(x, expand_permute(x->type.shape, perm));
}

Expr permute(const Args& a) {
  Expr x = a.tensor(0);
  std::vector<int64_t> p = a.ints(1, false);
  if (p.size() != x->type.shape.size())
    fail("permute: " + std::to_string(p.size()) + " dims for a tensor of rank " + std::to_string(x->type.shape.size()));
  for (int64_t& d : p) d = norm_dim(d, x->type.shape.size());
  return view_of(x, expand_permute(x->type.shape, p));
}

Expr expand(const Args& a) {
  Expr x = a.tensor(0);
  Shape s = a.ints(1, false);
  const Shape& xs = x->type.shape;
  if (s.size() < xs.size()) fail("expand: the new shape " + shape_text(s) + " has fewer dims than " + shape_text(xs));
  for (size_t k = 0; k < s.size(); ++k) {
    size_t off = s.size() - xs.size();
    if (s[k] == -1) {
      if (k < off) fail("expand: -1 is not allowed for a new leading dim");
      s[k] = xs[k - off];
    }
    if (s[k] < 0) fail("expand: invalid size " + std::to_string(s[k]));
  }
  return view_of(x, expand_expand(xs, s));
}

Expr reshape(const Args& a) {
  Expr x = a.tensor(0);
  Shape s = infer_reshape(x->type.shape, a.ints(1, false));
  return view_of(x, expand_reshape(x->type.shape, s));
}

Expr unsqueeze(const Args& a) {
  Expr x = a.tensor(0);
  int64_t d = a.integer(1);
  int64_t r = int64_t(x->type.shape.size()) + 1;
  if (d < -r || d >= r) fail("unsqueeze: dim " + std::to_string(d) + " out of range for rank " + std::to_string(r - 1));
  return view_of(x, expand_unsqueeze(x->type.shape, d < 0 ? d + r : d));
}

Expr squeeze(const Args& a) {
  Expr x = a.tensor(0);
  std::vector<int64_t> dims = a.ints(1);
  if (!a.has(1))
    for (size_t d = 0; d < x->type.shape.size(); ++d) dims.push_back(int64_t(d));
  for (int64_t& d : dims) d = norm_dim(d, x->type.shape.size());
  std::sort(dims.rbegin(), dims.rend());
  for (int64_t d : dims)
    if (size_t(d) < x->type.shape.size() && x->type.shape[size_t(d)] == 1) x = view_of(x, expand_squeeze(x->type.shape, d));
  return x;
}

Expr slice(const Args& a) {
  Expr x = a.tensor(0);
  const Shape& s = x->type.shape;
  int64_t d = norm_dim(a.integer(1, 0), s.size());
  int64_t n = s.empty() ? 1 : s[size_t(d)];
  int64_t start = a.integer(2, 0), stop = a.integer(3, INT64_MAX), step = a.integer(4, 1);
  if (step < 1) fail("slice: step must be positive, got " + std::to_string(step));
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  start = std::clamp<int64_t>(start, 0, n);
  stop = std::clamp<int64_t>(stop, start, n);
  return view_of(x, expand_slice(s, d, start, stop, step));
}

Expr select_index(const Args& a) {
  Expr x = a.tensor(0);
  const Shape& s = x->type.shape;
  if (s.empty()) fail("select: cannot index a rank-0 tensor");
  int64_t d = norm_dim(a.integer(1), s.size());
  int64_t i = a.integer(2);
  if (i < -s[size_t(d)] || i >= s[size_t(d)])
    fail("select: index " + std::to_string(i) + " out of range for size " + std::to_string(s[size_t(d)]));
  if (i < 0) i += s[size_t(d)];
  Expr sl = view_of(x, expand_slice(s, d, i, i + 1, 1));
  return view_of(sl, expand_squeeze(sl->type.shape, d));
}

Expr full_rule(const Args& a) { return full(a, sizes_arg(a, 0), a.has(1) ? a.at(1) : json()); }

/// zeros/ones: a constant tensor of the sizes in arg 0 (f32 unless dtype=).
Rule fill(double value) {
  return [value](const Args& a) {
    Shape s = sizes_arg(a, 0);
    DType t = a.dtype_kw().value_or(DType::F32);
    return make_expr({t, s}, FullE{const_of(value, t)});
  };
}

Expr identity(const Args& a) { return a.tensor(0); }

/// _to_copy/to/type_as: a cast to the dtype kwarg (or a dtype name in arg 1).
Expr convert(const Args& a) {
  Expr x = a.tensor(0);
  std::optional<DType> t = a.dtype_kw();
  if (!t && a.has(1) && a.at(1).is_string()) t = dtype_from_name(a.at(1).get<std::string>());
  if (!t) fail(a.n.op + " needs a dtype kwarg (f32, f64, f16, bf16, i32, i64 or bool)");
  return cast_to(x, *t);
}

/// The lowering table: an operator's name (its overload stripped) to its rule.
const std::map<std::string, Rule, std::less<>>& rules() {
  static const std::map<std::string, Rule, std::less<>> table = {
      {"neg", unary_op(ScalarOp::Neg, Promo::Default)},
      {"abs", unary_op(ScalarOp::Abs, Promo::Default)},
      {"relu", unary_op(ScalarOp::Relu, Promo::Default)},
      {"sigmoid", unary_op(ScalarOp::Sigmoid, Promo::IntToFloat)},
      {"tanh", unary_op(ScalarOp::Tanh, Promo::IntToFloat)},
      {"exp", unary_op(ScalarOp::Exp, Promo::IntToFloat)},
      {"log", unary_op(ScalarOp::Log, Promo::IntToFloat)},
      {"sqrt", unary_op(ScalarOp::Sqrt, Promo::IntToFloat)},
      {"rsqrt", unary_op(ScalarOp::Rsqrt, Promo::IntToFloat)},
      {"erf", unary_op(ScalarOp::Erf, Promo::IntToFloat)},
      {"log1p", unary_op(ScalarOp::Log1p, Promo::IntToFloat)},
      {"log2", unary_op(ScalarOp::Log2, Promo::IntToFloat)},
      {"log10", unary_op(ScalarOp::Log10, Promo::IntToFloat)},
      {"expm1", unary_op(ScalarOp::Expm1, Promo::IntToFloat)},
      {"sin", unary_op(ScalarOp::Sin, Promo::IntToFloat)},
      {"cos", unary_op(ScalarOp::Cos, Promo::IntToFloat)},
      {"floor", unary_op(ScalarOp::Floor, Promo::IntToFloat)},
      {"add", add_sub(ScalarOp::Add)},
      {"sub", add_sub(ScalarOp::Sub)},
      {"mul", binary_op(ScalarOp::Mul, Promo::Default)},
      {"div", divide},
      {"pow", binary_op(ScalarOp::Pow, Promo::IntToFloat)},
      {"remainder", binary_op(ScalarOp::Mod, Promo::Default)},
      {"floor_divide", binary_op(ScalarOp::FloorDiv, Promo::Default)},
      {"maximum", binary_op(ScalarOp::Maximum, Promo::Default)},
      {"minimum", binary_op(ScalarOp::Minimum, Promo::Default)},
      {"eq", binary_op(ScalarOp::Eq, Promo::Compare)},
      {"ne", binary_op(ScalarOp::Ne, Promo::Compare)},
      {"lt", binary_op(ScalarOp::Lt, Promo::Compare)},
      {"le", binary_op(ScalarOp::Le, Promo::Compare)},
      {"gt", binary_op(ScalarOp::Gt, Promo::Compare)},
      {"ge", binary_op(ScalarOp::Ge, Promo::Compare)},
      {"where", where},
      {"sum", reduction(RedOp::Sum, true)},
      {"prod", reduction(RedOp::Prod, true)},
      {"amax", reduction(RedOp::Max, false)},
      {"amin", reduction(RedOp::Min, false)},
      {"argmax", arg_reduction(RedOp::ArgMax)},
      {"argmin", arg_reduction(RedOp::ArgMin)},
      {"mm", matmul(false)},
      {"bmm", matmul(true)},
      {"t", matrix_transpose},
      {"transpose", transpose},
      {"permute", permute},
      {"expand", expand},
      {"view", reshape},
      {"reshape", reshape},
      {"_unsafe_view", reshape},
      {"unsqueeze", unsqueeze},
      {"squeeze", squeeze},
      {"slice", slice},
      {"select", select_index},
      {"cat", concat},
      {"index", gather},
      {"arange", arange},
      {"full", full_rule},
      {"zeros", fill(0.0)},
      {"ones", fill(1.0)},
      {"clone", identity},
      {"alias", identity},
      {"contiguous", identity},
      {"_to_copy", convert},
      {"to", convert},
      {"type_as", convert},
  };
  return table;
}

}  // namespace

Expr lower_node(const Node& n, const RuleEnv& env) {
  size_t dot = n.op.find('.');
  auto rule = rules().find(std::string_view(n.op).substr(0, dot));
  if (rule == rules().end()) fail("unknown operator '" + n.op + "'");
  return rule->second(Args{n, env, dot == std::string::npos ? "default" : n.op.substr(dot + 1)});
}

}  // namespace stax::compiler::detail
