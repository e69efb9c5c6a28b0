#pragma once
// A test hook into the binary32 fast paths (f32.cpp): multiplies a
// function's fast-path approximation by (1 + rel) before the rounding test,
// a deliberately wrong fast path that cr32_test must catch by comparing with
// MPFR. Not thread-safe; rel = 0 restores the proven path.
#include "mathlib/crmath.h"

namespace stax::math::testing {

void set_f32_perturbation(Fn f, double rel);

}  // namespace stax::math::testing
