// Simplification of index expressions (§6.4: "index expressions are kept
// symbolic and simplified at construction"). Every rule is an identity on
// the integers or holds for every index of the box, so simplification is an
// exact rewrite.
#pragma once

#include "semantics/ir.h"

namespace stax::xform {

/// Canonical form over the box [0, extents): a sum of `c*atom` terms in a
/// fixed order (variables by index, then floor-divisions, mods and loads)
/// plus a constant. Folds (c*q + r) // c = q + r // c and (c*q + r) % c = r % c,
/// drops r // c and keeps r when 0 <= r < c over the box, and merges
/// s*b*(e // s) + b*(e % s) into b*e.
sem::IExpr simplify_index(const sem::IExpr& e, const sem::Shape& extents);
sem::IndexMap simplify_map(const sem::IndexMap& m, const sem::Shape& extents);

}  // namespace stax::xform
