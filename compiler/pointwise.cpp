// Listing 6.1's pointwise and its pieces (§6.2): promotion, constants,
// the lambda builder, broadcast loaders, views and casts.
#include "compiler/pointwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stax::compiler::detail {

using namespace sem;
using nlohmann::json;

void fail(const std::string& message) { throw NodeError{message}; }

namespace {

int category(DType t) { return is_bool(t) ? 0 : is_int(t) ? 1 : 2; }
int json_category(const json& j) { return j.is_boolean() ? 0 : j.is_number_integer() ? 1 : 2; }

DType wider(DType a, DType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (is_int(a)) return (a == DType::I64 || b == DType::I64) ? DType::I64 : DType::I32;
  if (a == DType::F64 || b == DType::F64) return DType::F64;
  return DType::F32;  // f32 with a half, or f16 with bf16
}

}  // namespace

std::vector<std::string> var_names(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back("i" + std::to_string(i));
  return v;
}

Expr view_of(const Expr& src, const Shape& shape, std::vector<IExpr> exprs) {
  IndexMap m{var_names(shape.size()), std::move(exprs)};
  return make_expr({src->type.dtype, shape}, ViewE{src, std::move(m)});
}
Expr view_of(const Expr& src, const ViewResult& r) {
  if (const auto* err = std::get_if<std::string>(&r)) fail(*err);
  const ViewShape& v = std::get<ViewShape>(r);
  if (v.shape == src->type.shape) {
    bool ident = true;
    for (size_t k = 0; k < v.map.exprs.size(); ++k)
      ident = ident && v.map.exprs[k]->kind == IExprNode::Kind::Var && v.map.exprs[k]->value == int64_t(k);
    if (ident && v.map.exprs.size() == v.shape.size()) return src;
  }
  return make_expr({src->type.dtype, v.shape}, ViewE{src, v.map});
}

DType promote(const std::vector<DType>& tensors, const std::vector<json>& scalars) {
  DType t = tensors.empty() ? DType::Bool : tensors[0];
  for (DType d : tensors) t = wider(t, d);
  int c = category(t);
  for (const json& s : scalars)
    if (json_category(s) > c) {
      c = json_category(s);
      t = c == 2 ? DType::F32 : DType::I64;
    }
  return t;
}

Const const_of(double v, DType tag) {
  if (is_bool(tag)) return Const::boolean(v != 0);
  if (is_int(tag)) return Const::i64(int64_t(v), tag);
  char buf[64];
  if (std::isnan(v)) std::snprintf(buf, sizeof buf, "nan");
  else if (std::isinf(v)) std::snprintf(buf, sizeof buf, v > 0 ? "inf" : "-inf");
  else std::snprintf(buf, sizeof buf, "%.17g", v);
  auto r = const_from_literal(buf, tag);
  if (auto* e = std::get_if<std::string>(&r)) fail("constant " + std::string(buf) + ": " + *e);
  return std::get<Const>(r);
}
Const const_of(const json& j, DType tag) {
  if (j.is_boolean()) return const_of(j.get<bool>() ? 1.0 : 0.0, tag);
  if (j.is_number_integer() && is_int(tag)) return Const::i64(j.get<int64_t>(), tag);
  if (j.is_number()) return const_of(j.get<double>(), tag);
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == "inf" || s == "-inf" || s == "nan") return const_of(s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY, tag);
  }
  fail("expected a number, got " + j.dump());
}

int32_t BodyBuilder::push(Instr in) {
  lam.code.push_back(in);
  return int32_t(lam.code.size() - 1);
}

int32_t BodyBuilder::param(DType t) {
  int32_t k = int32_t(lam.params.size());
  lam.params.push_back(std::string(1, char('a' + k % 26)) + (k >= 26 ? std::to_string(k / 26) : ""));
  lam.param_types.push_back(t);
  return push({Instr::Kind::Param, ScalarOp::Add, t, k, -1, -1, {}});
}

int32_t BodyBuilder::konst(const Const& c) { return push({Instr::Kind::Const, ScalarOp::Add, c.dtype, -1, -1, -1, c}); }

int32_t BodyBuilder::op(ScalarOp o, std::vector<int32_t> xs) {
  std::vector<DType> ts;
  for (int32_t x : xs) ts.push_back(tag(x));
  OpTyping ty = type_op(o, ts);
  if (!ty.result) fail(ty.error);
  Instr in{Instr::Kind::Op, o, *ty.result, -1, -1, -1, {}};
  in.a = xs.size() > 0 ? xs[0] : -1;
  in.b = xs.size() > 1 ? xs[1] : -1;
  in.c = xs.size() > 2 ? xs[2] : -1;
  return push(in);
}

int32_t BodyBuilder::cast(int32_t x, DType to) {
  if (tag(x) == to) return x;
  return push({Instr::Kind::Cast, ScalarOp::Add, to, x, -1, -1, {}});
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape r(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < r.size(); ++k) {
    int64_t x = k < r.size() - a.size() ? 1 : a[k - (r.size() - a.size())];
    int64_t y = k < r.size() - b.size() ? 1 : b[k - (r.size() - b.size())];
    if (x != y && x != 1 && y != 1) fail("shapes " + shape_text(a) + " and " + shape_text(b) + " do not broadcast");
    r[k] = x == 1 ? y : x;
  }
  return r;
}

Expr broadcast_to(const Expr& x, const Shape& target) {
  const Shape& s = x->type.shape;
  if (s == target) return x;
  std::vector<IExpr> ex;
  size_t off = target.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    ex.push_back(s[d] == 1 && target[d + off] != 1 ? iconst(0) : ivar(int(d + off)));
  return view_of(x, target, ex);
}

Expr pointwise(const std::vector<Operand>& ops, Promo promo, const Body& body) {
  std::vector<DType> tds;
  std::vector<json> lits;
  Shape shape;
  bool any = false;
  for (const Operand& o : ops) {
    if (o.tensor) {
      tds.push_back(o.tensor->type.dtype);
      shape = any ? broadcast_shapes(shape, o.tensor->type.shape) : o.tensor->type.shape;
      any = true;
    } else {
      lits.push_back(o.literal);
    }
  }
  if (!any) fail("needs at least one tensor operand");
  DType common = promote(tds, lits);
  if (promo == Promo::IntToFloat && !is_float(common)) common = DType::F32;
  BodyBuilder lb;
  std::vector<int32_t> vals;
  std::vector<Expr> args;
  for (const Operand& o : ops) {
    if (o.tensor) {
      args.push_back(broadcast_to(o.tensor, shape));
      vals.push_back(lb.cast(lb.param(o.tensor->type.dtype), common));
    } else {
      vals.push_back(lb.konst(const_of(o.literal, common)));
    }
  }
  int32_t r = body(lb, vals, common);
  if (promo != Promo::Compare) r = lb.cast(r, common);
  DType out = lb.tag(r);
  return make_expr({out, shape}, MapE{std::move(lb.lam), std::move(args)});
}

Expr cast_to(const Expr& x, DType t) {
  if (x->type.dtype == t) return x;
  BodyBuilder lb;
  lb.cast(lb.param(x->type.dtype), t);
  return make_expr({t, x->type.shape}, MapE{std::move(lb.lam), {x}});
}

}  // namespace stax::compiler::detail
