// Folding an integer tensor expression into an index expression (Example
// 6.3: arange(128)*3 % 128 is `(3*i) % 128`), so that a gather through it
// becomes a direct view. A map's lambda is read by the generic evaluator
// (lambda_eval.h) in the IndexExpr domain below.
#include <climits>

#include "compiler/ops.h"
#include "semantics/expr_util.h"
#include "semantics/lambda_eval.h"
#include "semantics/views.h"

namespace stax::compiler::detail {

using namespace sem;

namespace {

/// Whether `x` stays well inside dtype `t` over the box, so that the integer
/// op that computed it did not wrap (i64: a margin of 4 for the sums the
/// index simplifier may form).
bool fits(const IExpr& x, DType t, const Shape& box) {
  Interval r = iexpr_range(x, box);
  int64_t lo = t == DType::I32 ? INT32_MIN : INT64_MIN / 4, hi = t == DType::I32 ? INT32_MAX : INT64_MAX / 4;
  return r.lo >= lo && r.hi <= hi;
}

/// A register's meaning as an index expression: the expression when the
/// value is one (integer, built from +, -, neg, *c, //c, %c with c > 0,
/// never wrapping), and the constant when the register is an integer literal
/// (the c of *c, //c, %c).
struct IndexValue {
  std::optional<IExpr> expr;
  std::optional<int64_t> literal;
};

struct IndexExprDomain {
  using Value = IndexValue;
  const Shape& box;

  Value param(size_t, size_t, const Value& arg) { return {arg.expr, std::nullopt}; }
  Value constant(size_t, const Const& c, DType tag) {
    if (!is_int(tag)) return {};
    return {iconst(c.as_int()), c.as_int()};
  }
  Value cast(size_t, const Value& v, DType, DType to) {
    if (is_int(to) && v.expr && fits(*v.expr, to, box)) return {v.expr, std::nullopt};
    return {};
  }
  Value apply(size_t, ScalarOp op, DType tag, DType, std::span<const Value> args) {
    if (!is_int(tag)) return {};
    std::optional<IExpr> r = combine(op, args);
    if (r && !fits(*r, tag, box)) return {};  // it would wrap: not an index identity
    return {r, std::nullopt};
  }

 private:
  static std::optional<IExpr> combine(ScalarOp op, std::span<const Value> args) {
    const Value& a = args[0];
    switch (op) {
      case ScalarOp::Add:
        if (a.expr && args[1].expr) return iadd(*a.expr, *args[1].expr);
        return std::nullopt;
      case ScalarOp::Sub:
        if (a.expr && args[1].expr) return isub(*a.expr, *args[1].expr);
        return std::nullopt;
      case ScalarOp::Neg:
        if (a.expr) return imul(-1, *a.expr);
        return std::nullopt;
      case ScalarOp::Mul:
        if (args[1].literal && a.expr) return imul(*args[1].literal, *a.expr);
        if (a.literal && args[1].expr) return imul(*a.literal, *args[1].expr);
        return std::nullopt;
      case ScalarOp::FloorDiv:
        if (args[1].literal && *args[1].literal > 0 && a.expr) return ifloordiv(*a.expr, *args[1].literal);
        return std::nullopt;
      case ScalarOp::Mod:
        if (args[1].literal && *args[1].literal > 0 && a.expr) return imod(*a.expr, *args[1].literal);
        return std::nullopt;
      default: return std::nullopt;
    }
  }
};

}  // namespace

std::optional<IExpr> as_index_expr(const Expr& e, const std::vector<IExpr>& vars, const Shape& box) {
  if (!is_int(e->type.dtype)) return std::nullopt;
  std::optional<IExpr> out = std::visit(
      [&](const auto& p) -> std::optional<IExpr> {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, IotaE>) {
          return size_t(p.dim) < vars.size() ? std::optional<IExpr>(vars[size_t(p.dim)]) : std::nullopt;
        } else if constexpr (std::is_same_v<T, FullE>) {
          return iconst(p.value.as_int());
        } else if constexpr (std::is_same_v<T, ViewE>) {
          for (const IExpr& x : p.map.exprs)
            if (iexpr_has_load(x)) return std::nullopt;
          std::vector<IExpr> inner;
          for (const IExpr& x : p.map.exprs) inner.push_back(sem::substitute_vars(x, vars));
          return as_index_expr(p.src, inner, box);
        } else if constexpr (std::is_same_v<T, MapE>) {
          if (p.fn.code.empty()) return std::nullopt;
          std::vector<IndexValue> params, regs;
          for (const Expr& a : p.args) params.push_back({as_index_expr(a, vars, box), std::nullopt});
          IndexExprDomain dom{box};
          return eval_lambda(p.fn, dom, std::span<const IndexValue>(params), regs).expr;
        } else {
          return std::nullopt;
        }
      },
      e->p);
  if (out && !fits(*out, e->type.dtype, box)) return std::nullopt;
  return out;
}

}  // namespace stax::compiler::detail
