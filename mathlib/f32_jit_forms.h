#pragma once
// The bitcode of f32_jit_forms.cpp for this host: the 16-lane AVX-512 forms
// of exp and erf (stax_cr_expf_v16, stax_cr_erff_v16) where it has AVX-512,
// else the 8-lane AVX2 ones (stax_cr_expf_v8, stax_cr_erff_v8), for the CPU
// backend's JIT to link into a kernel and inline. Their external symbols (stax_f32_tables,
// stax_f32_pert, stax_f32_resolve_expf_v8, stax_f32_resolve_erff_v8) are
// bound to the addresses below.
#include <string_view>

#include "mathlib/f32_lanes.h"

namespace stax::math::f32 {

/// The bitcode of this host's forms; empty when the build had no clang
/// (mathlib/CMakeLists.txt).
std::string_view jit_forms_bitcode();

#if defined(__x86_64__)
/// The test hook's factors (stax_f32_pert), indexed by Fn.
double* perturbation_factors();
/// The lanes of `fail` (bit i: lane i) of x through the slow path, the
/// others from o: what eval_v8_avx2<F> does after its fast path.
template <Fn F>
__attribute__((target("avx"))) F32x8 resolve_v8(F32x8 x, F32x8 o, unsigned fail);
#endif

}  // namespace stax::math::f32
