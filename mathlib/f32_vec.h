#pragma once
// Explicit AVX2 forms of binary32 fast paths (f32_kernels.h) whose
// auto-vectorised lane loop is slow: GCC keeps some of their lanes in scalar
// registers and loads the table entries one lane at a time. Each form runs
// exactly the binary64 operations of its scalar kernel, in the same order
// and with the same constants (GCC vector extensions, no FMA: the file is
// built with -ffp-contract=off), and a gather instead of the lane-by-lane
// table load — so every lane's candidate and rounding-test flag are the
// scalar kernel's bits, and the error bounds proven there hold unchanged.
// tests/mathlib/cr32_test.cpp checks the lanes against eval_f32.
//
// Host only (x86-64); the GPU compiles f32_kernels.h, never this header.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "mathlib/f32_kernels.h"

namespace stax::math::f32::vec {

typedef double D4 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
typedef int64_t L4 __attribute__((vector_size(32)));
typedef uint64_t U4 __attribute__((vector_size(32)));

/// k_exp (f32_kernels.h) on four lanes: out[i], slow[i] = k_exp(x[i]).
[[gnu::always_inline]] inline __attribute__((target("avx2"))) void exp4(const float* x, float* out, int32_t* slow,
                                                                         const Tables& T, double pert) {
  F4 xf;
  __builtin_memcpy(&xf, x, sizeof xf);
  const D4 xd = __builtin_convertvector(xf, D4);
  // clamp(x, -110, 91): x < lo ? lo : (x > hi ? hi : x); a NaN stays NaN.
  const D4 lo = D4{} - 110.0, hi = D4{} + 91.0;
  const D4 a = xd < lo ? lo : (xd > hi ? hi : xd);
  // exp_core
  const D4 s = a * T.inv_ln2_64 + kMagic;
  const D4 kd = s - kMagic;
  const U4 kb = __builtin_bit_cast(U4, s) - kMagicBits;
  const D4 r = (a - kd * T.ln2_64_hi) - kd * T.ln2_64_lo;
  const U4 j = kb & uint64_t(kExpTable - 1);
  const U4 m = ((kb + (uint64_t(1) << 20)) >> kExpBits) - (uint64_t(1) << (20 - kExpBits));
  const D4 scale = __builtin_bit_cast(D4, (m + 1023) << 52);
  const D4 tj = __builtin_bit_cast(D4, _mm256_i64gather_pd(T.exp2j, __builtin_bit_cast(__m256i, j), 8));
  const auto& c = T.exp_c;  // horner(exp_c, r), degree 5
  D4 p = r * c[5] + c[4];
  p = r * p + c[3];
  p = r * p + c[2];
  p = r * p + c[1];
  p = r * p + c[0];
  const D4 y = (scale * (tj * p)) * pert;
  // round_test(y, kErrExp): e = (rel + 2^-50) |y| + 0.
  const D4 ay = __builtin_bit_cast(D4, __builtin_bit_cast(U4, y) & 0x7fffffffffffffffULL);
  const D4 e = (kErrExp + 0x1p-50) * ay + 0.0;
  const F4 flo = __builtin_convertvector(y - e, F4), fhi = __builtin_convertvector(y + e, F4);
  const I4 differ = flo != fhi;  // -1 where the test failed
  // A NaN input: x + x (quieted, payload kept), never slow.
  const I4 nan = xf != xf;
  const F4 o = nan ? xf + xf : flo;
  const I4 sl = nan ? I4{} : -differ;
  __builtin_memcpy(out, &o, sizeof o);
  __builtin_memcpy(slow, &sl, sizeof sl);
}

typedef double D8 __attribute__((vector_size(64)));
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef uint64_t U8 __attribute__((vector_size(64)));

#define STAX_AVX512 "avx512f,avx512dq,avx512vl"

/// k_exp on eight lanes in one 512-bit register (AVX-512 hosts): the
/// operations of exp4.
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) void exp8(const float* x, float* out,
                                                                            int32_t* slow, const Tables& T,
                                                                            double pert) {
  F8 xf;
  __builtin_memcpy(&xf, x, sizeof xf);
  const D8 xd = __builtin_convertvector(xf, D8);
  const D8 lo = D8{} - 110.0, hi = D8{} + 91.0;
  const D8 a = xd < lo ? lo : (xd > hi ? hi : xd);
  const D8 s = a * T.inv_ln2_64 + kMagic;
  const D8 kd = s - kMagic;
  const U8 kb = __builtin_bit_cast(U8, s) - kMagicBits;
  const D8 r = (a - kd * T.ln2_64_hi) - kd * T.ln2_64_lo;
  const U8 j = kb & uint64_t(kExpTable - 1);
  const U8 m = ((kb + (uint64_t(1) << 20)) >> kExpBits) - (uint64_t(1) << (20 - kExpBits));
  const D8 scale = __builtin_bit_cast(D8, (m + 1023) << 52);
  const D8 tj = __builtin_bit_cast(D8, _mm512_mask_i64gather_pd(_mm512_setzero_pd(), __mmask8(0xff), __builtin_bit_cast(__m512i, j), T.exp2j, 8));
  const auto& c = T.exp_c;
  D8 p = r * c[5] + c[4];
  p = r * p + c[3];
  p = r * p + c[2];
  p = r * p + c[1];
  p = r * p + c[0];
  const D8 y = (scale * (tj * p)) * pert;
  const D8 ay = __builtin_bit_cast(D8, __builtin_bit_cast(U8, y) & 0x7fffffffffffffffULL);
  const D8 e = (kErrExp + 0x1p-50) * ay + 0.0;
  const F8 flo = __builtin_convertvector(y - e, F8), fhi = __builtin_convertvector(y + e, F8);
  const I8 differ = flo != fhi;
  const I8 nan = xf != xf;
  const F8 o = nan ? xf + xf : flo;
  const I8 sl = nan ? I8{} : -differ;
  __builtin_memcpy(out, &o, sizeof o);
  __builtin_memcpy(slow, &sl, sizeof sl);
}

}  // namespace stax::math::f32::vec
#endif
