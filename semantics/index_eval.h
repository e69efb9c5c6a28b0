// The generic evaluator of index expressions (DESIGN §1; seed 6.7: one
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

#include "semantics/diag.h"
#include "semantics/ir.h"

namespace stax::sem {

template <class D>
typename D::Value eval_iexpr(const IExpr& e, D& dom) {
  using K = IExprNode::Kind;
  const IExprNode& n = *e;
  switch (n.kind) {
    case K::Const: return dom.constant(n, n.value);
    case K::Var: return dom.var(n, n.value);
    case K::Add: {
      auto a = eval_iexpr(n.args[0], dom);
      return dom.add(n, std::move(a), eval_iexpr(n.args[1], dom));
    }
    case K::Sub: {
      auto a = eval_iexpr(n.args[0], dom);
      return dom.sub(n, std::move(a), eval_iexpr(n.args[1], dom));
    }
    case K::Mul: return dom.mul(n, n.value, eval_iexpr(n.args[0], dom));
    case K::FloorDiv: return dom.floordiv(n, eval_iexpr(n.args[0], dom), n.value);
    case K::Mod: return dom.mod(n, eval_iexpr(n.args[0], dom), n.value);
    case K::Load: return dom.load(n, [&](size_t k) { return eval_iexpr(n.args[k], dom); });
  }
  STAX_CHECK(false) << "unknown index expression kind";
  __builtin_unreachable();
}

}  // namespace stax::sem
