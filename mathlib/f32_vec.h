#pragma once
// Explicit vector forms of binary32 fast paths (f32_kernels.h) whose
// auto-vectorised lane loops are slow: GCC keeps some lanes in scalar
// registers and loads table entries one lane at a time.
//
// Two instruction sets, from one text (f32_vec_impl.inc): vec::avx2 (AVX2
// and FMA, 4 binary64 lanes in a ymm register) and vec::avx512 (8 lanes in a
// zmm register). Both fuse each a*b + c the scalar kernel rounds twice into
// one fused multiply-add (explicit intrinsics: the library is built with
// -ffp-contract=off, nothing is fused implicitly), and have an exp core of
// their own (a 16-entry table, read by a permute from two registers on
// AVX-512 and by a gather on AVX2) and a rounding test on the bits for exp,
// each with its proof in f32_vec_impl.inc.
// In both, the error bounds proven in f32_kernels.h hold (erf may take a
// polynomial with the same bound, kErfPoly below), so where a rounding test passes the
// result is the correctly rounded one, whatever the path.
// tests/mathlib/cr32_test.cpp checks every form against eval_f32 and MPFR.
// Host only (x86-64); the GPU compiles f32_kernels.h, never this.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "mathlib/crmath.h"
#include "mathlib/f32_kernels.h"

namespace stax::math::f32::vec {

/// erf(x) = x G(x^2) with G(t) = 2/sqrt(pi) sum_n (-1)^n t^n / (n! (2n+1)),
/// and kErfPoly a polynomial p of degree 16 in t close to G on [0, 4] (the
/// vector forms' erf where every lane of a register has |x| <= 2): its
/// coefficients are a Chebyshev interpolant of G rounded to binary64
/// (tools/erf_poly.py). Error of y = fl(|x| p~(t)), p~ p evaluated by
/// estrin() with fused nodes (the AVX2 forms) or horner() with fused steps
/// (the AVX-512 tiers, erf_v8_poly), t = x^2 exact, relative to erf(|x|):
///  * |p - G| <= 2^-51 |G| on [0, 4] (G decreases, G(4) = erf(2)/2;
///    poly_bounds_test proves the bound for every real t in [0, 4] from G's
///    Taylor series and a subdivision: erf_poly_bound);
///  * the evaluation: each coefficient passes at most 16 roundings (Estrin,
///    c_15: the powers t^2, t^4, t^8 (1 + 3 + 7) and five nodes; c_16: t^16
///    (15) and the top node; Horner, c_i: i + 1 fused steps, c_16: 16), so
///    |p~ - p| <= gamma_16 sum |c_i| t^i, and
///    sum |c_i| t^i / G(t) increases with t: at most 18.66 (t = 4), so
///    298.6u (poly_bounds_test: erf_poly_bound again);
///  * the product by |x|: u.
/// Sum 299.6u + 2^-51 < 2^-44.7, within kErrErf = 2^-44.
inline constexpr double kErfPoly[17] = {
    0x1.20dd750429b6dp+0,  -0x1.812746b037993p-2, 0x1.ce2f21a040c88p-4,  -0x1.b82ce3123dfa0p-6,
    0x1.565bcd088b905p-8,  -0x1.c02db370bc7f3p-11, 0x1.f9a31deabf547p-14, -0x1.f4d1f6364f7adp-17,
    0x1.b9e38c1d13220p-20, -0x1.5f60b531f4a21p-23, 0x1.fc16141b24738p-27, -0x1.4f836d318453dp-30,
    0x1.927d96adf2450p-34, -0x1.aa708a4c6fcc0p-38, 0x1.74357eb20bdefp-42, -0x1.d0f90cace87fdp-47,
    0x1.2e0d4bc0fd152p-52};

/// The first tier of erf_v8_small on AVX-512: the Chebyshev interpolant of
/// degree 12 of the same G on [0, 4] (tools/erf_poly.py 12). |p - G| <=
/// 2^-36.71 G(4) <= 2^-36.71 G (poly_bounds_test proves it as kErfPoly's:
/// erf_poly_bound, which bounds the absolute error over G's least value;
/// sampled, the largest |p - G| / G is 2^-37.89); with the evaluation (13
/// terms, Horner: at most 12 roundings a coefficient, times sum |c_i| t^i /
/// G <= 18.62) and the product by |x|, within 2^-36.70 =: E1 relative.
/// kErfPoly (the second tier) recomputes a register with a lane in the
/// first tier's window.
inline constexpr double kErfPoly12[13] = {
    0x1.20dd750426e96p+0,  -0x1.812746ac838f8p-2, 0x1.ce2f20cff5e8cp-4,  -0x1.b82cd10681c13p-6,
    0x1.565afc39f66aap-8,  -0x1.c022693a729f1p-11, 0x1.f93e2707c6035p-14, -0x1.f26f6a99cd61ap-17,
    0x1.afe2577d434fbp-20, -0x1.41f1f52c853fdp-23, 0x1.82d449c6f2864p-27, -0x1.45b4ec7d4ca02p-31,
    0x1.1723854c43f3cp-36};
/// Half the first tier's window, in bit patterns of y: the candidates within
/// E1 y of erf(|x|) lie within 2^53 E1 < 2^16.3 patterns of y, 2^17.3 where
/// the interval reaches into the binade below (half the ulp); the window
/// 2^18 a side holds them, a fraction 2^-10 of the patterns.
inline constexpr int64_t kErfTier1Half = int64_t(1) << 18;

/// erf(x) for |x| in [2, 4] on AVX-512 (erf_v8_small): y = p(min(|x|, 4) -
/// 3), p the Chebyshev interpolant of degree 15 of erf(3 + u) on [-1, 1]
/// (tools/erf_poly.py big 15). |p - erf(3 + u)| <= 2^-39.95 for every real
/// u in [-1, 1] (poly_bounds_test proves it from erf's Taylor series at 3:
/// erf_big_poly_bound; sampled, 2^-40.04, at u = -1). u = |x| - 3 is exact
/// (Sterbenz); the evaluation (estrin, fused nodes) adds at most 15u
/// sum |c_i| < 2^-48.9, so |y - erf(|x|)| < 2^-39.9 where erf(|x|) >= 0.995:
/// 2^13.1 bit patterns of y (in [1/2, 1)), inside the first tier's window.
/// Beyond 4, y approximates erf(4) = 1 - 2^-25.95, which, like erf(|x|),
/// rounds to 1 (1 - 2^-25 is the midpoint below 1).
inline constexpr double kErfBigPoly[16] = {
    0x1.fffd1ac412af3p-1,  0x1.2408e9ca89ecbp-13, -0x1.b60d5bd807f58p-12, 0x1.9db749123b2afp-11,
    -0x1.11c8694e9cb69p-10, 0x1.0a7b6abb15cd3p-10, -0x1.82f15a0984cc3p-11, 0x1.998898bf4c69bp-12,
    -0x1.1ab299e38676ep-13, 0x1.d3f4f7c7e45bcp-17, 0x1.06c230c8dcd43p-16,  -0x1.6cfdf557614fcp-17,
    0x1.910f10622899bp-19,  0x1.de70107d015d7p-23, -0x1.d99e24cf9d515p-22, 0x1.c139bfad168a4p-24};

/// exp(r) for |r| <= 0.021664 (the reduced argument of exp_v16_in_range):
/// the Chebyshev interpolant of degree 4 on [-0.021661, 0.021661], each
/// coefficient rounded to binary64 (tools/exp_poly.py). |p - exp| <=
/// 2^-38.50 exp on [-0.021664, 0.021664] (poly_bounds_test proves it from exp's
/// Taylor series and a subdivision: exp_poly_bound; sampled, the largest
/// error is 2^-38.52, at the ends). The first tier of
/// exp_v16_in_range; the degree-6 Taylor polynomial (Tables::exp16_c) is
/// the second.
inline constexpr double kExpPoly4[5] = {0x1.0000000000000p+0, 0x1.fffffffb1347bp-1, 0x1.fffffffe5bc2fp-2,
                                        0x1.5557e5540b62bp-3, 0x1.55570aa97ea7fp-5};

}  // namespace stax::math::f32::vec

#define STAX_AVX512 "avx512f,avx512dq,avx512vl"
#define STAX_AVX2 "avx2,fma"

#define STAX_VEC_NS avx2
#define STAX_VEC_TARGET STAX_AVX2
#define STAX_VEC_N 4
#include "mathlib/f32_vec_impl.inc"
#undef STAX_VEC_NS
#undef STAX_VEC_TARGET
#undef STAX_VEC_N

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_pd() (a self-initialised
// variable) as the unused merge operand, which -Wuninitialized reports.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define STAX_VEC_NS avx512
#define STAX_VEC_TARGET STAX_AVX512
#define STAX_VEC_N 8
#include "mathlib/f32_vec_impl.inc"
#undef STAX_VEC_NS
#undef STAX_VEC_TARGET
#undef STAX_VEC_N
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif
