// The program a backend compiles (§6.6): the output of `normalize` when
// it is exact; when composition or fusion only refines P (it dropped a view
// or map that may fail), the realization-only normal form (`normalize:
// fuse=0`) instead, so that kernels compute exactly P, ⊥ included. Shared by
// the CPU and GPU backends.
#pragma once

#include <optional>
#include <string>

#include "semantics/ir.h"

namespace stax::backends {

/// Nullopt, with the reason in `why`, when no exact normal form exists (a
/// bug of the transforms).
std::optional<sem::Program> exact_normal_form(const sem::Program& p, std::string* why);

}  // namespace stax::backends
