#include "transforms/reassoc.h"

#include <limits>

#include "semantics/expr_util.h"
#include "semantics/mutants.h"
#include "transforms/index_simplify.h"

namespace stax::xform::reassoc {

using namespace sem;

namespace {

Const float_const(std::string_view text, DType t) {
  auto c = const_from_literal(text, t);
  STAX_CHECK(std::holds_alternative<Const>(c)) << "literal " << text << " for " << dtype_name(t);
  return std::get<Const>(c);
}

}  // namespace

Const identity(RedOp op, DType t) {
  STAX_CHECK(!red_is_arg(op) && !is_bool(t)) << "no identity for " << red_name(op) << " on " << dtype_name(t);
  if (is_int(t)) {
    bool i32 = t == DType::I32;
    int64_t lo = i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
    int64_t hi = i32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
    switch (op) {
      case RedOp::Sum: return Const::i64(0, t);
      case RedOp::Prod: return Const::i64(1, t);
      case RedOp::Max: return Const::i64(lo, t);
      default: return Const::i64(hi, t);
    }
  }
  switch (op) {
    case RedOp::Sum: return float_const("-0.0", t);
    case RedOp::Prod: return float_const("1.0", t);
    case RedOp::Max: return float_const("-inf", t);
    default: return float_const("inf", t);
  }
}

SemClass class_of(RedOp op, DType t) {
  // Seeded bug (semantics/mutants.h): float reassociation claimed exact.
  if (sem::mutant_active("sum-reassoc-exact")) return SemClass::Exact;
  if (op == RedOp::Max || op == RedOp::Min || is_int(t)) return SemClass::Exact;
  return SemClass::Real;
}

bool init_foldable(RedOp op, const Const& init) {
  if (is_int(init.dtype) || op == RedOp::Max || op == RedOp::Min) return true;
  if (init == identity(op, init.dtype)) return true;
  return op == RedOp::Sum && init == float_const("0.0", init.dtype);
}

Site site_of(const Expr& red_node) {
  Site s;
  s.red = &std::get<RedE>(red_node->p);
  s.node = red_node;
  s.outer = red_node->type.shape;
  s.n = num_elements(s.red->extents);
  s.dtype = red_node->type.dtype;
  s.acc = compute_type(s.dtype);
  s.id = identity(s.red->op, s.acc);
  s.init = s.acc == s.dtype ? s.red->init : Const::f32(float(s.red->init.as_double()));
  return s;
}

Expr mk_red(RedOp op, const Const& init, const Shape& extents, const Expr& src) {
  const Shape& ss = src->type.shape;
  STAX_CHECK(ss.size() >= extents.size()) << "red extents exceed the operand's rank";
  Shape out(ss.begin(), ss.end() - std::ptrdiff_t(extents.size()));
  return make_expr({src->type.dtype, out}, RedE{op, init, extents, src});
}

std::vector<std::string> var_names(size_t rank) {
  std::vector<std::string> v;
  for (size_t i = 0; i < rank; ++i) v.push_back("i" + std::to_string(i));
  return v;
}

Expr mk_view(const Expr& src, const Shape& shape, std::vector<IExpr> exprs) {
  IndexMap m{var_names(shape.size()), std::move(exprs)};
  m = simplify_map(m, shape);
  bool identity_map = shape == src->type.shape;
  for (size_t k = 0; identity_map && k < m.exprs.size(); ++k)
    identity_map = m.exprs[k]->kind == IExprNode::Kind::Var && m.exprs[k]->value == int64_t(k);
  if (identity_map) return src;
  return make_expr({src->type.dtype, shape}, ViewE{src, std::move(m)});
}

std::vector<IExpr> unflatten_index(const IExpr& j, const Shape& r) {
  std::vector<IExpr> out;
  int64_t stride = num_elements(r);
  for (size_t k = 0; k < r.size(); ++k) {
    stride /= r[k];
    IExpr c = stride == 1 ? j : ifloordiv(j, stride);
    if (k > 0) c = imod(c, r[k]);
    out.push_back(c);
  }
  return out;
}

LambdaBuilder::LambdaBuilder(std::vector<std::string> names, std::vector<DType> types) {
  lam_.params = std::move(names);
  lam_.param_types = std::move(types);
}

int32_t LambdaBuilder::param(int i) {
  for (size_t k = 0; k < lam_.code.size(); ++k)
    if (lam_.code[k].kind == Instr::Kind::Param && lam_.code[k].a == i) return int32_t(k);
  Instr in{};
  in.kind = Instr::Kind::Param;
  in.type = lam_.param_types[size_t(i)];
  in.a = i;
  lam_.code.push_back(in);
  return int32_t(lam_.code.size() - 1);
}

int32_t LambdaBuilder::constant(const Const& c) {
  Instr in{};
  in.kind = Instr::Kind::Const;
  in.type = c.dtype;
  in.value = c;
  lam_.code.push_back(in);
  return int32_t(lam_.code.size() - 1);
}

int32_t LambdaBuilder::op(ScalarOp o, int32_t a, int32_t b, int32_t c) {
  std::vector<DType> ts;
  for (int32_t x : {a, b, c})
    if (x >= 0) ts.push_back(lam_.code[size_t(x)].type);
  auto ty = type_op(o, ts);
  STAX_CHECK(ty.result.has_value()) << "lambda builder: " << ty.error;
  Instr in{};
  in.kind = Instr::Kind::Op;
  in.op = o;
  in.type = *ty.result;
  in.a = a;
  in.b = b;
  in.c = c;
  lam_.code.push_back(in);
  return int32_t(lam_.code.size() - 1);
}

int32_t LambdaBuilder::cast(int32_t a, DType to) {
  Instr in{};
  in.kind = Instr::Kind::Cast;
  in.type = to;
  in.a = a;
  lam_.code.push_back(in);
  return int32_t(lam_.code.size() - 1);
}

Expr segmented(const Site& s, const Expr& x, const Shape& news, const IExpr& jflat, bool padded) {
  size_t nd = s.outer.size();
  Shape shape = s.outer;
  shape.insert(shape.end(), news.begin(), news.end());
  Shape r(x->type.shape.begin() + std::ptrdiff_t(nd), x->type.shape.end());
  std::vector<IExpr> exprs;
  for (size_t k = 0; k < nd; ++k) exprs.push_back(ivar(int(k)));
  for (IExpr& c : unflatten_index(padded ? imod(jflat, s.n) : jflat, r)) exprs.push_back(c);
  Expr xv = mk_view(x, shape, std::move(exprs));
  if (!padded) {
    if (s.acc == s.dtype) return xv;
    LambdaBuilder f({"x"}, {s.dtype});
    f.cast(f.param(0), s.acc);
    return make_expr({s.acc, shape}, MapE{f.done(), {xv}});
  }
  // fn(j, x) => select(lt(j, n), x, ID), in the parser's instruction order.
  LambdaBuilder f({"j", "x"}, {DType::I64, s.dtype});
  // Operands are emitted left to right (never inside one call's argument list,
  // whose evaluation order is unspecified).
  int32_t j = f.param(0);
  int32_t n = f.constant(Const::i64(s.n));
  int32_t in_range = f.op(ScalarOp::Lt, j, n);
  int32_t v = f.param(1);
  if (s.acc != s.dtype) v = f.cast(v, s.acc);
  int32_t id = f.constant(s.id);
  f.op(ScalarOp::Select, in_range, v, id);
  Expr iota = make_expr({DType::I64, {num_elements(news)}}, IotaE{0});
  Expr mask = mk_view(iota, shape, {jflat});
  return make_expr({s.acc, shape}, MapE{f.done(), {mask, xv}});
}

Expr batch_view(const Site& s, const Expr& x, int64_t off, const std::vector<BatchDim>& batch, const Shape& news,
                const IExpr& j) {
  size_t nd = s.outer.size();
  Shape r(x->type.shape.begin() + std::ptrdiff_t(nd), x->type.shape.end());
  Shape shape = s.outer;
  IExpr flat = iadd(iconst(off), j);
  for (size_t k = 0; k < batch.size(); ++k) {
    shape.push_back(batch[k].count);
    if (batch[k].count > 1) flat = iadd(flat, imul(batch[k].stride, ivar(int(nd + k))));
  }
  shape.insert(shape.end(), news.begin(), news.end());
  std::vector<IExpr> exprs;
  for (size_t k = 0; k < nd; ++k) exprs.push_back(ivar(int(k)));
  for (IExpr& c : unflatten_index(flat, r)) exprs.push_back(c);
  return mk_view(x, shape, std::move(exprs));
}

Expr interleaved_lanes(const Site& s, int64_t w, bool* padded) {
  int64_t t = (s.n + w - 1) / w;
  *padded = w * t != s.n;
  int nd = int(s.outer.size());
  IExpr j = iadd(imul(w, ivar(nd + 1)), ivar(nd));  // lane l, step k reads j = w·k + l
  return mk_red(s.red->op, s.id, {t}, segmented(s, s.red->src, {w, t}, j, *padded));
}

Expr tree(const Site& s, Expr t, bool adjacent, const Const& root_init) {
  Shape outer = t->type.shape;
  int64_t p = outer.back();
  outer.pop_back();
  size_t nd = outer.size();
  RedOp op = s.red->op;
  STAX_CHECK((p & (p - 1)) == 0 && p >= 1) << "tree over a non-power-of-two extent " << p;
  bool fold = init_foldable(op, root_init);
  while (p > 1) {
    int64_t h = p / 2;
    if (h == 1 && fold) return mk_red(op, root_init, {2}, t);
    Shape sh = outer;
    sh.push_back(h);
    sh.push_back(2);
    std::vector<IExpr> exprs;
    for (size_t k = 0; k < nd; ++k) exprs.push_back(ivar(int(k)));
    IExpr l = ivar(int(nd)), c = ivar(int(nd + 1));
    exprs.push_back(adjacent ? iadd(imul(2, l), c) : iadd(l, imul(h, c)));
    t = mk_red(op, s.id, {2}, mk_view(t, sh, std::move(exprs)));
    p = h;
  }
  return mk_red(op, root_init, {1}, t);
}

Expr finish(const Site& s, const Expr& r) {
  if (s.acc == s.dtype) return r;
  LambdaBuilder f({"x"}, {s.acc});
  f.cast(f.param(0), s.dtype);
  return make_expr({s.dtype, r->type.shape}, MapE{f.done(), {r}});
}

Result for_each_red(const Program& p, const std::optional<std::string>& binding, Context& ctx, const std::string& pass,
                    const std::function<Rewrite(const Site&)>& rewrite) {
  const auto& only = binding;
  if (only && !p.type_of(*only)) throw TransformError{pass + ": no binding named '" + *only + "'"};
  if (only) {
    bool is_binding = false;
    for (const Binding& b : p.bindings) is_binding |= b.name == *only;
    if (!is_binding) throw TransformError{pass + ": '" + *only + "' is an input, not a binding"};
  }
  Result r{p, SemClass::Exact};
  for (Binding& b : r.program.bindings) {
    if (only && b.name != *only) continue;
    // A rewrite deepens its red by a few levels; repeated reassociations of
    // nested reds compound (gpu-reduce twice, then interleave-lanes, nested a
    // 4-level binding 259 deep: campaign seed 5000777934). A rewrite whose
    // red would pass kMaxExprDepth is refused; a binding that still passes it
    // is left as it was, its rewrites undone (count and log), so the result
    // always reads back.
    const Expr before = b.expr;
    const int64_t count0 = ctx.count;
    const size_t log0 = ctx.log.size();
    const SemClass cls0 = r.cls;
    b.expr = rewrite_bottom_up(b.expr, [&](const Expr& e) -> std::optional<Expr> {
      const auto* red = std::get_if<RedE>(&e->p);
      if (!red) return std::nullopt;
      auto refuse = [&](const std::string& why) {
        ctx.log.push_back(pass + ": refused a red(" + std::string(red_name(red->op)) + ") in " + b.name + ": " + why);
        return std::nullopt;
      };
      if (red_is_arg(red->op)) return refuse("it carries an index (ties go to the first index), not reassociable");
      int64_t n = num_elements(red->extents);
      if (n < 2) return refuse("fewer than 2 elements, nothing to reorder");
      if (!ctx.allow()) return std::nullopt;
      Site s = site_of(e);
      Rewrite w = rewrite(s);
      if (!w.expr) return refuse(w.what);
      if (int d = expr_depth(*w.expr); d > kMaxExprDepth)
        return refuse("rewritten, it would nest " + std::to_string(d) + " levels, deeper than " +
                      std::to_string(kMaxExprDepth));
      ctx.note(pass + ": " + b.name + ": red(" + std::string(red_name(red->op)) + ") over " + std::to_string(n) +
               " elements: " + w.what);
      r.cls = weaker(r.cls, class_of(red->op, s.dtype));
      return w.expr;
    });
    if (int d = expr_depth(b.expr); d > kMaxExprDepth) {
      b.expr = before;
      ctx.count = count0;
      ctx.log.resize(log0);
      r.cls = cls0;
      ctx.log.push_back(pass + ": left " + b.name + " as it was: rewritten, it would nest " + std::to_string(d) +
                        " levels, deeper than " + std::to_string(kMaxExprDepth));
    }
  }
  return r;
}

}  // namespace stax::xform::reassoc
