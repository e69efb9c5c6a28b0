#pragma once
// The register forms of exp and erf: eight binary32 lanes in a ymm register
// on AVX2 (f32_vec.h's avx2 set) and on AVX-512 (its avx512 set), sixteen in
// a zmm register on AVX-512. Shared by the library's entry points and block
// loops (f32.cpp: eval_v8_avx2, eval_v16_avx512) and the forms the CPU
// backend's JIT links into a kernel and inlines (f32_jit_forms.cpp): one
// text, so both compute the same candidates and the same rounding tests.
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

/// The flags of a form's `slow` output as bits (bit i: slow[i] != 0; the
/// forms write 1 or -1 there).
[[gnu::always_inline]] inline __attribute__((target("avx2"))) unsigned slow_bits(const int32_t* slow) {
  const __m256i zero = _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(slow)),
                                          _mm256_setzero_si256());
  return ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(zero))) & 0xffu;
}

// The eight lanes of xv through a set's memory forms, `lanes` a call: the
// candidates into o; returns the failed rounding tests as bits. (A macro:
// each set's body needs its own target attribute to inline its forms.)
#define STAX_F32_FORMS_V8(name, set, lanes, target_)                                                      \
  template <Fn F>                                                                                          \
  [[gnu::always_inline]] inline __attribute__((target(target_))) unsigned name(__m256 xv, __m256& o,      \
                                                                               const Tables& T, double pert) { \
    alignas(32) float xs[8], os[8];                                                                        \
    alignas(32) int32_t slow[8];                                                                           \
    _mm256_storeu_ps(xs, xv);                                                                              \
    for (int i = 0; i < 8; i += lanes) vec::set::form<F>(xs + i, os + i, slow + i, T, pert);               \
    o = _mm256_loadu_ps(os);                                                                               \
    return slow_bits(slow);                                                                                \
  }
STAX_F32_FORMS_V8(forms_v8_avx2, avx2, 4, STAX_AVX2)
STAX_F32_FORMS_V8(forms_v8_avx512, avx512, 8, STAX_AVX512)
#undef STAX_F32_FORMS_V8

/// AVX-512's register forms, as the kernels call them (v8_avx512) and the
/// interpreter's block loop runs them: exp_v; erf's polynomial form where
/// every lane allows it (erf_v8_small); else the set's memory forms.
template <Fn F>
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) unsigned v8_avx512_regs(__m256 xv, __m256& o,
                                                                                          const Tables& T,
                                                                                          double pert) {
  unsigned fail;
  if constexpr (F == Fn::Exp) {
    fail = vec::avx512::exp_v(xv, o, T, pert);
  } else {
    if (F == Fn::Erf && vec::avx512::erf_v8_small(xv, o, fail, pert)) return fail;
    fail = forms_v8_avx512<F>(xv, o, T, pert);
  }
  return fail;
}

/// The halves of a zmm register of binary32 and back (shuffles: GCC 12's
/// extract and cast intrinsics pass an undefined operand that
/// -Wmaybe-uninitialized reports).
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) __m256 lo8(__m512 v) {
  const F32x16 x = __builtin_bit_cast(F32x16, v);
  return __builtin_bit_cast(__m256, __builtin_shufflevector(x, x, 0, 1, 2, 3, 4, 5, 6, 7));
}
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) __m256 hi8(__m512 v) {
  const F32x16 x = __builtin_bit_cast(F32x16, v);
  return __builtin_bit_cast(__m256, __builtin_shufflevector(x, x, 8, 9, 10, 11, 12, 13, 14, 15));
}
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) __m512 cat16(__m256 lo, __m256 hi) {
  const F32x8 a = __builtin_bit_cast(F32x8, lo), b = __builtin_bit_cast(F32x8, hi);
  return __builtin_bit_cast(__m512, __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/// o with the lanes flagged in `fail` (bit i: lane i) taken from the slow
/// path, half by half: `resolve8(x, o, bits)` does it for eight lanes, and
/// is called only for a half with a flagged lane.
template <class Resolve8>
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) __m512 resolve_halves(__m512 x, __m512 o,
                                                                                        unsigned fail,
                                                                                        Resolve8 resolve8) {
  const __m256 lo = fail & 0xffu ? resolve8(lo8(x), lo8(o), fail & 0xffu) : lo8(o);
  const __m256 hi = fail >> 8 ? resolve8(hi8(x), hi8(o), fail >> 8) : hi8(o);
  return cat16(lo, hi);
}

/// Sixteen lanes in one zmm register, as the kernels call them
/// (eval_v16_avx512) and the interpreter's block loop runs them: exp's
/// sixteen-lane form where every lane is in its range, else each half
/// through v8_avx512_regs. Bit i of the result: lane i needs the slow path.
template <Fn F>
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) unsigned v16_avx512_regs(__m512 xv, __m512& o,
                                                                                           const Tables& T,
                                                                                           double pert) {
  if constexpr (F == Fn::Exp) {
    __mmask16 fail;
    if (vec::avx512::exp_v16_in_range(xv, o, fail, T, pert)) return fail;
  } else if constexpr (F == Fn::Erf) {
    __mmask16 fail;
    if (vec::avx512::erf_v16_small(xv, o, fail, pert)) return fail;
  }
  __m256 lo, hi;
  const unsigned fail = v8_avx512_regs<F>(lo8(xv), lo, T, pert) | v8_avx512_regs<F>(hi8(xv), hi, T, pert) << 8;
  o = cat16(lo, hi);
  return fail;
}

}  // namespace stax::math::f32
#endif
