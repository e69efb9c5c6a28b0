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
// shorter series with the same bound), so where a rounding test passes the
// result is the correctly rounded one, whatever the path.
// tests/mathlib/cr32_test.cpp checks every form against eval_f32 and MPFR.
// Host only (x86-64); the GPU compiles f32_kernels.h, never this.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "mathlib/crmath.h"
#include "mathlib/f32_kernels.h"

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
