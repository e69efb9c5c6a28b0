// The policies applied after realization (§6.4, 6.5, 6.8): kernel normal
// form, flexible layouts, the GPU split of Algorithm 6.1, loop
// canonicalisation and value ranges with their obligations. Internal.
#pragma once

#include "compiler/lower.h"

namespace stax::compiler {

/// Runs the policies on a realized program, filling notes, kernels, the
/// canonical program and the class.
void run_policies(Lowered& l, const Device& d);

}  // namespace stax::compiler
