// Shrunk shapes: a program over the prover's size limit is proved
// at a family of smaller shapes where it is shape-generic. A program is
// shape-generic here when every extent can be replaced by a smaller one
// consistently — the same value everywhere it appears as an extent — and the
// result is still a well-typed program with no index-map or lambda constant
// that names one of the replaced extents (a reshape's `i floordiv 64` ties the
// program to its size). The family bounds every extent by k = 1, 2, 3, 4.
//
// What a shrunk proof means is stated as such: the pair is equivalent for all
// inputs at those shapes; at the original shapes the verdict stays "tested".
// Internal to oracle/.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "semantics/ir.h"
#include "transforms/transform.h"

namespace stax::oracle {

/// `p` with each extent e replaced by sigma[e] (extents not in sigma stay),
/// or nullopt with the reason in `why` when `p` is not shape-generic under
/// sigma or the shrunk text does not type-check.
std::optional<sem::Program> shrink_shapes(const sem::Program& p, const std::map<int64_t, int64_t>& sigma,
                                          std::string* why);

/// The extents of `p` (every integer of a shape or reduction-extent list).
std::vector<int64_t> extents_of(const sem::Program& p);

/// Rebuilds the target for a shrunk source (a transform pipeline re-applied);
/// nullopt when the transform does not apply at the shrunk shapes.
using Retarget = std::function<std::optional<sem::Program>(const sem::Program& shrunk_src)>;

/// Re-applies a transform pipeline; nullopt where it refuses the program.
Retarget retarget_by(const std::vector<xform::Step>& steps);

}  // namespace stax::oracle
