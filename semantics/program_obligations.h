// The obligations of a program and of the transforms (docs/design.md §5): builders
// that turn IR into Obligation data. No Z3 here.
#pragma once

#include <string>
#include <vector>

#include "semantics/ir.h"
#include "semantics/obligation.h"

namespace stax::sem {

/// Every obligation of a program: for each view (and each indirect load)
/// in-bounds per component, interval soundness per non-trivial component,
/// int32 addresses per view and per binding's domain, and affinity of every
/// outermost view chain that uses floor/mod. Indirect loads assume the value
/// range of their index tensor (value_range.h).
std::vector<Obligation> program_obligations(const sem::Program& p);

/// Prop. 6.2 as compose-views applies it: `composed` equals inner∘outer.
/// `symbolic` quantifies over every extent of the outer domain as well.
Obligation composition_obligation(const std::string& binding, const sem::IndexMap& inner, const sem::Shape& base,
                                  const sem::IndexMap& outer, const sem::Shape& middle, const sem::Shape& out,
                                  const sem::IndexMap& composed, bool symbolic = false);

/// Prop. 6.3 as merge-loops applies it to one access of x (shape `src`):
/// `before` over `domain`, `after` over the domain with dims j, j+1 merged.
Obligation loop_merge_obligation(const std::string& binding, const std::string& site, const sem::IndexMap& before,
                                 const sem::IndexMap& after, const sem::Shape& src, const sem::Shape& domain,
                                 size_t j);

/// The merge rule itself (Prop. 6.3), for concrete or symbolic extents.
Obligation merge_rule_obligation(const MergeRuleGoal& g);

}  // namespace stax::sem
