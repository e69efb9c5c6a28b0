// The generic evaluator of index expressions (docs/design.md §1; §6.7: one
// description, many interpretations), the companion of lambda_eval.h for the
// integer expressions of view maps. One walk; a domain gives each node kind
// its meaning: concrete int64 values (the interpreter, the error-bound
// analysis), intervals (Def. 6.4), Z3 terms, LLVM IR, CUDA C, text, linear
// forms (index simplification).
//
// A Domain provides (`e` is the node being evaluated, for domains that need
// its text, position or the tensor a load reads):
//   using Value = ...;
//   Value constant(const IExprNode& e, int64_t c);
//   Value var(const IExprNode& e, int64_t index);
//   Value add(const IExprNode& e, Value a, Value b);
//   Value sub(const IExprNode& e, Value a, Value b);
//   Value mul(const IExprNode& e, int64_t c, Value a);
//   Value floordiv(const IExprNode& e, Value a, int64_t c);
//   Value mod(const IExprNode& e, Value a, int64_t c);
//   Value load(const IExprNode& e, F&& arg);   // arg(k): evaluates index k
// Loads receive their indices lazily, in order, so a domain that checks each
// index before evaluating the next (the interpreter's ⊥ order) can.
#pragma once

#include <cstddef>
#include <string>

#include "semantics/diag.h"
#include "semantics/ieee_scalar.h"
#include "semantics/ir.h"

namespace stax::sem {

template <class D>
typename D::Value eval_iexpr(const IExprNode& n, D& dom) {
  using K = IExprNode::Kind;
  switch (n.kind) {
    case K::Const: return dom.constant(n, n.value);
    case K::Var: return dom.var(n, n.value);
    case K::Add: {
      auto a = eval_iexpr(*n.args[0], dom);
      return dom.add(n, std::move(a), eval_iexpr(*n.args[1], dom));
    }
    case K::Sub: {
      auto a = eval_iexpr(*n.args[0], dom);
      return dom.sub(n, std::move(a), eval_iexpr(*n.args[1], dom));
    }
    case K::Mul: return dom.mul(n, n.value, eval_iexpr(*n.args[0], dom));
    case K::FloorDiv: return dom.floordiv(n, eval_iexpr(*n.args[0], dom), n.value);
    case K::Mod: return dom.mod(n, eval_iexpr(*n.args[0], dom), n.value);
    case K::Load: return dom.load(n, [&](size_t k) { return eval_iexpr(*n.args[k], dom); });
  }
  STAX_CHECK(false) << "unknown index expression kind";
  __builtin_unreachable();
}

template <class D>
typename D::Value eval_iexpr(const IExpr& e, D& dom) {
  return eval_iexpr(*e, dom);
}

/// The concrete domain: int64 values with wrapping + - * and Python floor
/// division and modulo (docs/design.md §3), over index variables `idx`. `Env` gives
/// the loads and the failures:
///   int64_t Env::load_index(const IExprNode& e, F&& arg);  // arg(k): index k
///   [[noreturn]] void Env::fail_index(const IExprNode& e, std::string reason);
template <class Env>
struct ConcreteIndexDomain {
  using Value = int64_t;
  Env& env;
  const int64_t* idx;

  Value constant(const IExprNode&, int64_t c) { return c; }
  Value var(const IExprNode&, int64_t k) { return idx[k]; }
  Value add(const IExprNode&, Value a, Value b) { return ieee::wrap_add(a, b); }
  Value sub(const IExprNode&, Value a, Value b) { return ieee::wrap_sub(a, b); }
  Value mul(const IExprNode&, int64_t c, Value a) { return ieee::wrap_mul(c, a); }
  Value floordiv(const IExprNode& e, Value a, int64_t c) {
    if (c == 0) env.fail_index(e, "division by zero in an index expression");
    return ieee::floor_div(a, c);
  }
  Value mod(const IExprNode& e, Value a, int64_t c) {
    if (c == 0) env.fail_index(e, "modulo by zero in an index expression");
    return ieee::py_mod(a, c);
  }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    return env.load_index(e, arg);
  }
};

}  // namespace stax::sem
