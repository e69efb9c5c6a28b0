// The Count domain of the generic evaluator (docs/design.md §1, §6.7): what a
// scalar lambda costs, as an op count and the set of ops it uses. The
// realization policy (6.6) reads it for its thresholds and its "expensive
// op" rule; the cost of Theorem 5.1 is the same count.
#pragma once

#include <set>
#include <vector>

#include "semantics/lambda_eval.h"

namespace stax::sem {

/// The cost of a lambda body: every op and cast instruction counts once,
/// however many times its result is used (a register is computed once).
struct OpCount {
  int64_t ops = 0;
  std::set<ScalarOp> used;  ///< the scalar ops that occur (casts excluded)
};

/// The cost accumulates in the domain as the walk visits each instruction;
/// values carry nothing, since a count does not flow along operands.
struct CountDomain {
  struct Value {};
  OpCount count;
  Value param(size_t, size_t, const Value&) { return {}; }
  Value constant(size_t, const Const&, DType) { return {}; }
  Value apply(size_t, ScalarOp op, DType, DType, std::span<const Value>) {
    ++count.ops;
    count.used.insert(op);
    return {};
  }
  Value cast(size_t, const Value&, DType, DType) {
    ++count.ops;
    return {};
  }
};

/// The Count interpretation of `f`.
inline OpCount count_ops(const Lambda& f) {
  if (f.code.empty()) return {};
  CountDomain dom;
  std::vector<CountDomain::Value> params(f.param_types.size()), regs;
  eval_lambda(f, dom, std::span<const CountDomain::Value>(params), regs);
  return dom.count;
}

}  // namespace stax::sem
