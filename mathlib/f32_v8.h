#pragma once
// The AVX2 forms of exp and erf on eight binary32 lanes in registers
// (f32_vec.h's avx2 set), shared by the library's 8-lane entry points
// (f32.cpp: eval_v8_avx2) and the forms the CPU backend's JIT links into a
// kernel and inlines (f32_jit_forms.cpp): one text, so both compute the same
// candidates and the same rounding tests.
#if defined(__x86_64__)
#include <immintrin.h>

#include "mathlib/f32_lanes.h"
#include "mathlib/f32_vec.h"

namespace stax::math::f32 {

/// The candidates of xv's eight lanes into o; returns the lanes whose
/// rounding test failed, as bits (bit i: lane i needs resolve_v8).
template <Fn F>
[[gnu::always_inline]] inline __attribute__((target("avx2,fma"))) unsigned v8_avx2_regs(__m256 xv, __m256& o,
                                                                                        const Tables& T,
                                                                                        double pert) {
  static_assert(has_avx2_form(F));
  if constexpr (F == Fn::Exp) {
    unsigned fail;
    // Every lane in range: the same bits, fewer operations.
    if (vec::avx2::exp_v8_in_range(xv, o, fail, T, pert)) return fail;
    __m128 lo, hi;
    fail = unsigned(vec::avx2::exp_v(_mm256_castps256_ps128(xv), lo, T, pert)) |
                          unsigned(vec::avx2::exp_v(_mm256_extractf128_ps(xv, 1), hi, T, pert)) << 4;
    o = _mm256_set_m128(hi, lo);
    return fail;
  } else {
    unsigned fail;
    if (vec::avx2::erf_v8_small(xv, o, fail, pert)) return fail;
    return vec::avx2::erf_v(xv, o, T, pert);
  }
}

}  // namespace stax::math::f32
#endif
