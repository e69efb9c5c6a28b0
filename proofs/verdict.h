// Verdicts of the prover (docs/design.md §5: a check returns a verdict, never
// a bool). A refutation carries a concrete counterexample; an unknown carries
// the time spent and why (timeout, unsupported construct, solver error).
#pragma once

#include <string>
#include <string_view>

namespace stax::proofs {

struct ProofVerdict {
  enum Kind { Proved, Refuted, Unknown };
  Kind kind = Unknown;
  /// Refuted: index values, extents, loaded and input values, both results.
  std::string counterexample;
  double ms = 0;       ///< wall time of the solver call(s)
  std::string reason;  ///< Unknown: why; otherwise an optional note (e.g. looseness)
};

std::string_view verdict_name(ProofVerdict::Kind k);

}  // namespace stax::proofs
