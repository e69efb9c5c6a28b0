#pragma once
// A test hook into the binary32 fast paths (f32.cpp): multiplies a
// function's fast-path approximation by (1 + rel) before the rounding test,
// a deliberately wrong fast path that cr32_test must catch by comparing with
// MPFR. Not thread-safe; rel = 0 restores the proven path.
#include <cstdint>

#include "mathlib/crmath.h"

namespace stax::math::testing {

void set_f32_perturbation(Fn f, double rel);

/// Binary32 inputs whose rounding test fails, in the scalar kernels or in the
/// AVX2 forms (found by scanning bit patterns with the fallback counter; the
/// AVX-512 forms have others): tests put them in vector lanes, so that the
/// entry points' slow-path step runs.
struct HardInput {
  Fn f;
  uint32_t bits;
};
inline constexpr HardInput kHardInputs[] = {
    {Fn::Erf, 0x3e09737d},   {Fn::Erf, 0x3e1cd895},   {Fn::Erf, 0x3e463219},   {Fn::Erf, 0xbf4a82f1},
    {Fn::Exp, 0x3c608a0e},   {Fn::Exp, 0xbc2a461a},   {Fn::Exp, 0xbcb8f40f},   {Fn::Exp, 0x3c5dc4c8},
    {Fn::Exp, 0xbda7d6c2},   {Fn::Tanh, 0x3c0eb4b4},  {Fn::Tanh, 0x3c15f90e},  {Fn::Tanh, 0x3c262fd3},
    {Fn::Expm1, 0x3c35b1c8}, {Fn::Expm1, 0x3c3f8970}, {Fn::Expm1, 0x3cbc3c2a},
};

}  // namespace stax::math::testing
