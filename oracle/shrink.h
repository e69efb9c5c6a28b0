// Delta debugging on programs (Zeller's ddmin, C-Reduce style
// passes): while a failure persists, drop outputs and bindings, replace a
// subexpression by an operand of the same type or a constant, shrink
// extents and integer literals, simplify lambdas and simplify input values.
// Every candidate is printed and parsed back, so the parser is the type
// checker: an ill-typed candidate is simply rejected.
#pragma once

#include <functional>
#include <vector>

#include "semantics/evaluator.h"

namespace stax::oracle {

struct ShrinkTarget {
  /// True when the failure persists on exactly these inputs.
  std::function<bool(const sem::Program&, const sem::Inputs&)> fails;
  /// Fresh input sets to try for a candidate whose inputs changed type.
  std::function<std::vector<sem::Inputs>(const sem::Program&)> fresh_inputs;
};

struct ShrinkOptions {
  double max_seconds = 10;
  int max_tests = 4000;
};

struct ShrinkResult {
  sem::Program program;
  sem::Inputs inputs;
  int tests = 0;     ///< predicate evaluations
  int accepted = 0;  ///< candidates kept
};

/// The size the shrinker minimises: printed length plus the elements of
/// every input and binding.
int64_t program_size(const sem::Program& p);

/// Shrinks (p, in), on which target.fails must hold, to a local minimum
/// (or until the budget is spent). The result still fails.
ShrinkResult shrink(const sem::Program& p, const sem::Inputs& in, const ShrinkTarget& target,
                    const ShrinkOptions& opt = {});

}  // namespace stax::oracle
