// Correctly rounded binary32 functions (crmath.h): the fast paths of
// f32_kernels.h over blocks, then, for the elements whose rounding test
// failed, a scalar resolve step (Payne-Hanek for sin/cos beyond 2^20, pow's
// NaN cases) and MPFR for the rest. The block loops are branch-free so GCC vectorises them; each is
// compiled twice (AVX2 and the baseline) and picked at load time. Which
// clone runs changes no bit: both compute the same binary64 operations
// (-ffp-contract=off forbids FMA contraction), and the result is the
// correctly rounded value either way.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "mathlib/crmath.h"
#include "mathlib/f32_jit_forms.h"
#include "mathlib/f32_kernels.h"
#include "mathlib/f32_lanes.h"
#include "mathlib/f32_testing.h"
#include "mathlib/f32_v8.h"
#include "mathlib/f32_vec.h"

namespace stax::math {

namespace {

using f32::Cand;
using f32::Tables;

/// Per-function factor on the fast path's result: exactly 1 except under
/// the test hook (multiplying by 1 changes no bit).
std::array<double, kNumFns> g_pert = [] {
  std::array<double, kNumFns> a{};
  a.fill(1.0);
  return a;
}();

using BlockFn = void (*)(size_t n, float* __restrict out, uint32_t* __restrict slow, const float* __restrict x,
                         const float* __restrict y, const Tables& T, double pert);

// One block loop per function: out[i], slow[i] = kernel(x[i] (, y[i])).
#define STAX_F32_BLOCK(name, call)                                                                        \
  __attribute__((target_clones("avx2", "default"))) void name(                                           \
      size_t n, float* __restrict out, uint32_t* __restrict slow, const float* __restrict x,              \
      [[maybe_unused]] const float* __restrict y, const Tables& T, double pert) {                         \
    for (size_t i = 0; i < n; ++i) {                                                                      \
      Cand c = call;                                                                                      \
      out[i] = c.out;                                                                                     \
      slow[i] = c.slow;                                                                                   \
    }                                                                                                     \
  }

STAX_F32_BLOCK(block_exp, f32::k_exp(x[i], T, pert))
STAX_F32_BLOCK(block_expm1, f32::k_expm1(x[i], T, pert))
STAX_F32_BLOCK(block_log, f32::k_log(x[i], T, pert))
STAX_F32_BLOCK(block_log2, f32::k_log2(x[i], T, pert))
STAX_F32_BLOCK(block_log10, f32::k_log10(x[i], T, pert))
STAX_F32_BLOCK(block_log1p, f32::k_log1p(x[i], T, pert))
STAX_F32_BLOCK(block_tanh, f32::k_tanh(x[i], T, pert))
STAX_F32_BLOCK(block_erf, f32::k_erf(x[i], T, pert))
STAX_F32_BLOCK(block_sin, f32::k_trig<false>(x[i], T, pert))
STAX_F32_BLOCK(block_cos, f32::k_trig<true>(x[i], T, pert))
STAX_F32_BLOCK(block_pow, f32::k_pow(x[i], y[i], T, pert))
#undef STAX_F32_BLOCK

constexpr std::array<BlockFn, kNumFns> kBlocks = {block_exp,  block_expm1, block_log, block_log2,
                                                  block_log10, block_log1p, block_tanh, block_erf,
                                                  block_sin,  block_cos,   block_pow};

/// One element through the same kernel as the block loops (so eval_f32 and
/// eval_f32_n agree bit for bit; both are correctly rounded anyway).
Cand kernel(Fn f, float x, float y, const Tables& T, double pert) {
  switch (f) {
    case Fn::Exp: return f32::k_exp(x, T, pert);
    case Fn::Expm1: return f32::k_expm1(x, T, pert);
    case Fn::Log: return f32::k_log(x, T, pert);
    case Fn::Log2: return f32::k_log2(x, T, pert);
    case Fn::Log10: return f32::k_log10(x, T, pert);
    case Fn::Log1p: return f32::k_log1p(x, T, pert);
    case Fn::Tanh: return f32::k_tanh(x, T, pert);
    case Fn::Erf: return f32::k_erf(x, T, pert);
    case Fn::Sin: return f32::k_trig<false>(x, T, pert);
    case Fn::Cos: return f32::k_trig<true>(x, T, pert);
    case Fn::Pow: return f32::k_pow(x, y, T, pert);
  }
  return {0.0f, true};
}

#if defined(__x86_64__)
// Block loops through the forms; the remainder through the scalar kernel.
#define STAX_F32_BLOCK_VEC(name, target_, lanes, form)                                                      \
  template <Fn F>                                                                                           \
  __attribute__((target(target_))) void name(size_t n, float* __restrict out, uint32_t* __restrict slow,   \
                                             const float* __restrict x, const float* __restrict,           \
                                             const Tables& T, double pert) {                              \
    size_t i = 0;                                                                                           \
    for (; i + lanes <= n; i += lanes)                                                                      \
      form<F>(x + i, out + i, reinterpret_cast<int32_t*>(slow + i), T, pert);                               \
    for (; i < n; ++i) {                                                                                    \
      Cand c = kernel(F, x[i], 0.0f, T, pert);                                                              \
      out[i] = c.out;                                                                                       \
      slow[i] = c.slow;                                                                                     \
    }                                                                                                       \
  }
STAX_F32_BLOCK_VEC(block_vec_avx512, STAX_AVX512, 8, f32::vec::avx512::form)
#undef STAX_F32_BLOCK_VEC

/// The eight-lane register forms the CPU backend's kernels run (f32_v8.h
/// inlined on AVX2 hosts; v8_avx512_regs through the 16-lane entry points
/// on AVX-512 ones), as the block loop of exp and erf: the interpreter and
/// the compiled kernels then run one text (exp's in-range form and erf's
/// polynomial form included).
#define STAX_F32_BLOCK_V8(name, target_, regs)                                                             \
  template <Fn F>                                                                                           \
  __attribute__((target(target_))) void name(size_t n, float* __restrict out, uint32_t* __restrict slow,   \
                                             const float* __restrict x, const float* __restrict,           \
                                             const Tables& T, double pert) {                              \
    size_t i = 0;                                                                                           \
    for (; i + 8 <= n; i += 8) {                                                                            \
      __m256 o;                                                                                             \
      const unsigned fail = regs<F>(_mm256_loadu_ps(x + i), o, T, pert);                                    \
      _mm256_storeu_ps(out + i, o);                                                                         \
      for (int j = 0; j < 8; ++j) slow[i + j] = fail >> j & 1u;                                             \
    }                                                                                                       \
    for (; i < n; ++i) {                                                                                    \
      Cand c = kernel(F, x[i], 0.0f, T, pert);                                                              \
      out[i] = c.out;                                                                                       \
      slow[i] = c.slow;                                                                                     \
    }                                                                                                       \
  }
STAX_F32_BLOCK_V8(block_v8_avx2, STAX_AVX2, f32::v8_avx2_regs)
STAX_F32_BLOCK_V8(block_v8_avx512, STAX_AVX512, f32::v8_avx512_regs)
#undef STAX_F32_BLOCK_V8

/// The block loop of exp and erf on AVX-512: sixteen lanes a step.
template <Fn F>
__attribute__((target(STAX_AVX512))) void block_v16_avx512(size_t n, float* __restrict out,
                                                            uint32_t* __restrict slow, const float* __restrict x,
                                                            const float* __restrict y, const Tables& T, double pert) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 o;
    const unsigned fail = f32::v16_avx512_regs<F>(_mm512_loadu_ps(x + i), o, T, pert);
    _mm512_storeu_ps(out + i, o);
    for (int j = 0; j < 16; ++j) slow[i + j] = fail >> j & 1u;
  }
  block_v8_avx512<F>(n - i, out + i, slow + i, x + i, y, T, pert);
}
#endif

/// Each function's block loop on this CPU, chosen once: the explicit forms
/// where the CPU has them (f32_lanes.h: all four on AVX-512, exp and erf on
/// AVX2 with FMA), else the compiler's loops.
const std::array<BlockFn, kNumFns>& host_blocks() {
  static const std::array<BlockFn, kNumFns> blocks = [] {
    std::array<BlockFn, kNumFns> b = kBlocks;
#if defined(__x86_64__)
    if (f32::host_has_avx512()) {
      b[size_t(Fn::Exp)] = block_v16_avx512<Fn::Exp>;
      b[size_t(Fn::Expm1)] = block_vec_avx512<Fn::Expm1>;
      b[size_t(Fn::Tanh)] = block_vec_avx512<Fn::Tanh>;
      b[size_t(Fn::Erf)] = block_v16_avx512<Fn::Erf>;
    } else if (f32::host_has_avx2_fma()) {
      b[size_t(Fn::Exp)] = block_v8_avx2<Fn::Exp>;
      b[size_t(Fn::Erf)] = block_v8_avx2<Fn::Erf>;
    }
#endif
    return b;
  }();
  return blocks;
}

/// An element whose fast path failed: sin and cos of 2^20 < |x| < inf try
/// the Payne-Hanek reduction first; then MPFR, counted. Two cases of pow's
/// special table are decided here, not counted: a finite x < 0 with a
/// finite non-integer y gives NaN; NaN inputs (other than pow(NaN, 0) and
/// pow(1, NaN), both 1) return the NaN operand quieted, the first one
/// first, as the host libm does (x + y on x86), where MPFR's NaN has no
/// payload.
[[gnu::noinline]] float resolve(Fn f, float x, float y, const Tables& T) {
  if ((f == Fn::Sin || f == Fn::Cos) && std::fabs(x) > f32::kTrigMax && std::isfinite(x)) {
    Cand c = f == Fn::Sin ? f32::k_trig_big<false>(x, T) : f32::k_trig_big<true>(x, T);
    if (!c.slow) return c.out;
  }
  if (f == Fn::Pow && x < 0.0f && std::isfinite(x) && std::isfinite(y) && std::trunc(y) != y)
    return std::numeric_limits<float>::quiet_NaN();
  if (f == Fn::Pow && x != 1.0f && y != 0.0f && (std::isnan(x) || std::isnan(y))) return x + y;
  note_fallback(f, Width::F32);
  return mpfr_f32(f, x, y);
}

constexpr size_t kChunk = 512;

// One register's worth of lanes, for the CPU backend's vector variants: the
// same kernel as the block loops, inlined over N lanes with no dispatch on
// Fn or on the CPU, and the flags reduced to one test, so a call costs about
// what N elements of the block loop do. The 8-lane body is compiled for
// AVX2 (callers offer it only where the host has AVX2) and the 4-lane one for
// the baseline; -ffp-contract=off holds in both, so every lane computes the
// binary64 operations of eval_f32 and gets its bits.
template <Fn F>
inline Cand lane_kernel(float x, [[maybe_unused]] float y, const Tables& T, double pert) {
  if constexpr (F == Fn::Exp) return f32::k_exp(x, T, pert);
  else if constexpr (F == Fn::Expm1) return f32::k_expm1(x, T, pert);
  else if constexpr (F == Fn::Log) return f32::k_log(x, T, pert);
  else if constexpr (F == Fn::Log2) return f32::k_log2(x, T, pert);
  else if constexpr (F == Fn::Log10) return f32::k_log10(x, T, pert);
  else if constexpr (F == Fn::Log1p) return f32::k_log1p(x, T, pert);
  else if constexpr (F == Fn::Tanh) return f32::k_tanh(x, T, pert);
  else if constexpr (F == Fn::Erf) return f32::k_erf(x, T, pert);
  else if constexpr (F == Fn::Sin) return f32::k_trig<false>(x, T, pert);
  else if constexpr (F == Fn::Cos) return f32::k_trig<true>(x, T, pert);
  else return f32::k_pow(x, y, T, pert);
}

/// The lanes whose rounding test failed go to the slow path; then out.
template <Fn F, int N>
[[gnu::always_inline]] inline void finish_lanes(float* out, const float* x, const float* y, float* o,
                                                const uint32_t* slow, const Tables& T) {
  constexpr bool kBinary = F == Fn::Pow;
  uint32_t any = 0;
  for (int i = 0; i < N; ++i) any |= slow[i];
  // x and y are read before out is written: out may alias them.
  if (__builtin_expect(any != 0, 0))
    for (int i = 0; i < N; ++i)
      if (slow[i]) o[i] = resolve(F, x[i], kBinary ? y[i] : 0.0f, T);
  for (int i = 0; i < N; ++i) out[i] = o[i];
}

template <Fn F, int N>
[[gnu::always_inline]] inline void lanes_body(float* out, const float* x, const float* y) {
  const Tables& T = f32::tables();
  const double pert = g_pert[size_t(F)];
  float o[N];
  uint32_t slow[N];
  constexpr bool kBinary = F == Fn::Pow;  // y is read only then (null otherwise)
  for (int i = 0; i < N; ++i) {
    Cand c = lane_kernel<F>(x[i], kBinary ? y[i] : 0.0f, T, pert);
    o[i] = c.out;
    slow[i] = c.slow;
  }
  finish_lanes<F, N>(out, x, y, o, slow, T);
}

}  // namespace

// flatten: inline the whole kernel (erf's and pow's are past GCC's size
// limits otherwise, and a call per lane would undo the point); resolve()
// stays a call.
template <Fn F>
[[gnu::flatten]] void f32::eval_lanes4(float* out, const float* x, const float* y) {
  lanes_body<F, 4>(out, x, y);
}

#if defined(__x86_64__)
template <Fn F>
[[gnu::flatten]] __attribute__((target("avx2"))) void f32::eval_lanes8(float* out, const float* x, const float* y) {
  lanes_body<F, 8>(out, x, y);
}
// The register-to-register entries: the kernels call them once per eight or
// sixteen lanes, so they keep the lanes in registers and test the flags with
// one instruction; the tables are looked up once per process.

/// o, with the lanes flagged in `fail` (bit i: lane i) from the slow path;
/// out of line, so that the common case needs no stack frame.
template <Fn F>
[[gnu::noinline, gnu::cold]] __attribute__((target("avx"))) __m256 resolve_lanes_cold(__m256 x, __m256 o,
                                                                                    unsigned fail) {
  const Tables& T = f32::tables();
  float xs[8], os[8];
  _mm256_storeu_ps(xs, x);
  _mm256_storeu_ps(os, o);
  for (int i = 0; i < 8; ++i)
    if (fail >> i & 1) os[i] = resolve(F, xs[i], 0.0f, T);
  return _mm256_loadu_ps(os);
}
template <Fn F>
[[gnu::always_inline]] inline __attribute__((target("avx"))) __m256 resolve_lanes(__m256 x, __m256 o, unsigned fail) {
  return __builtin_expect(fail == 0, 1) ? o : resolve_lanes_cold<F>(x, o, fail);
}

template <Fn F>
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX512))) f32::F32x8 v8_avx512(f32::F32x8 x) {
  static const Tables& T = f32::tables();
  const __m256 xv = __builtin_bit_cast(__m256, x);
  __m256 o;
  const unsigned fail = f32::v8_avx512_regs<F>(xv, o, T, g_pert[size_t(F)]);
  return __builtin_bit_cast(f32::F32x8, resolve_lanes<F>(xv, o, fail));
}

/// The same with AVX2 and FMA: two forms of four binary64 lanes; exp and
/// erf in registers throughout (f32_v8.h, the text the JIT inlines).
template <Fn F>
[[gnu::always_inline]] inline __attribute__((target(STAX_AVX2))) f32::F32x8 v8_avx2(f32::F32x8 x) {
  static const Tables& T = f32::tables();
  const __m256 xv = __builtin_bit_cast(__m256, x);
  const double pert = g_pert[size_t(F)];
  __m256 o;
  unsigned fail;
  if constexpr (f32::has_avx2_form(F)) fail = f32::v8_avx2_regs<F>(xv, o, T, pert);
  else fail = f32::forms_v8_avx2<F>(xv, o, T, pert);
  return __builtin_bit_cast(f32::F32x8, resolve_lanes<F>(xv, o, fail));
}

template <Fn F>
__attribute__((target(STAX_AVX2))) f32::F32x8 f32::eval_v8_avx2(F32x8 x) {
  return v8_avx2<F>(x);
}

// The functions with explicit forms on AVX2 (exp and erf: expm1's and
// tanh's AVX2 forms measured no faster than the compiler's lane loop; log's
// forms, with two gathers, were slower on both sets and are not kept) go
// through them where the host has FMA as well.
template <Fn F>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) void vec_lanes8(float* out, const float* x) {
  if (!f32::host_has_avx2_fma()) return lanes_body<F, 8>(out, x, nullptr);
  f32::F32x8 v;
  __builtin_memcpy(&v, x, sizeof v);
  v = f32::eval_v8_avx2<F>(v);
  __builtin_memcpy(out, &v, sizeof v);
}
template <>
__attribute__((target("avx2"))) void f32::eval_lanes8<Fn::Exp>(float* out, const float* x, const float*) {
  vec_lanes8<Fn::Exp>(out, x);
}
template <>
__attribute__((target("avx2"))) void f32::eval_lanes8<Fn::Erf>(float* out, const float* x, const float*) {
  vec_lanes8<Fn::Erf>(out, x);
}

template <Fn F>
__attribute__((target(STAX_AVX512))) f32::F32x8 f32::eval_v8_avx512(F32x8 x) {
  return v8_avx512<F>(x);
}

template <Fn F>
__attribute__((target(STAX_AVX512))) f32::F32x16 f32::eval_v16_avx512(F32x16 x) {
  static const Tables& T = f32::tables();
  const __m512 xv = __builtin_bit_cast(__m512, x);
  __m512 o;
  const unsigned fail = f32::v16_avx512_regs<F>(xv, o, T, g_pert[size_t(F)]);
  if (__builtin_expect(fail != 0, 0)) o = f32::resolve_halves(xv, o, fail, resolve_lanes_cold<F>);
  return __builtin_bit_cast(f32::F32x16, o);
}

template <Fn F>
__attribute__((target(STAX_AVX512))) void f32::eval_lanes8_avx512(float* out, const float* x) {
  F32x8 v;
  __builtin_memcpy(&v, x, sizeof v);
  v = eval_v8_avx512<F>(v);
  __builtin_memcpy(out, &v, sizeof v);
}
#define STAX_F32_V8_AVX512(F)                                                  \
  template f32::F32x8 f32::eval_v8_avx512<F>(F32x8);                          \
  template f32::F32x16 f32::eval_v16_avx512<F>(F32x16);                       \
  template void f32::eval_lanes8_avx512<F>(float*, const float*);
STAX_F32_V8_AVX512(Fn::Exp)
STAX_F32_V8_AVX512(Fn::Erf)
STAX_F32_V8_AVX512(Fn::Expm1)
STAX_F32_V8_AVX512(Fn::Tanh)
#undef STAX_F32_V8_AVX512

template f32::F32x8 f32::eval_v8_avx2<Fn::Exp>(F32x8);
template f32::F32x8 f32::eval_v8_avx2<Fn::Erf>(F32x8);

double* f32::perturbation_factors() { return g_pert.data(); }

template <Fn F>
__attribute__((target("avx"))) f32::F32x8 f32::resolve_v8(F32x8 x, F32x8 o, unsigned fail) {
  const __m256 r = resolve_lanes_cold<F>(__builtin_bit_cast(__m256, x), __builtin_bit_cast(__m256, o), fail);
  return __builtin_bit_cast(F32x8, r);
}
template f32::F32x8 f32::resolve_v8<Fn::Exp>(F32x8, F32x8, unsigned);
template f32::F32x8 f32::resolve_v8<Fn::Erf>(F32x8, F32x8, unsigned);

bool f32::host_has_avx2_fma() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

bool f32::isa_capped_at_avx2() {
  static const bool capped = [] {
    const char* v = std::getenv("STAX_CPU_ISA");
    if (!v || !*v || std::string_view(v) == "native") return false;
    if (std::string_view(v) == "avx2") return true;
    std::fprintf(stderr, "stax: warning: STAX_CPU_ISA=%s is neither 'avx2' nor 'native'; using the host's features\n", v);
    return false;
  }();
  return capped;
}

bool f32::host_has_avx512() {
  static const bool yes = !isa_capped_at_avx2() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return yes;
}
#define STAX_F32_LANES8(F) template void f32::eval_lanes8<F>(float*, const float*, const float*);
#else
#define STAX_F32_LANES8(F)
#endif

#define STAX_F32_LANES(F)                                                        \
  template void f32::eval_lanes4<F>(float*, const float*, const float*); \
  STAX_F32_LANES8(F)
template void f32::eval_lanes4<Fn::Exp>(float*, const float*, const float*);
STAX_F32_LANES(Fn::Expm1)
STAX_F32_LANES(Fn::Log)
STAX_F32_LANES(Fn::Log2)
STAX_F32_LANES(Fn::Log10)
STAX_F32_LANES(Fn::Log1p)
STAX_F32_LANES(Fn::Tanh)
template void f32::eval_lanes4<Fn::Erf>(float*, const float*, const float*);
STAX_F32_LANES(Fn::Sin)
STAX_F32_LANES(Fn::Cos)
STAX_F32_LANES(Fn::Pow)
#undef STAX_F32_LANES
#undef STAX_F32_LANES8

void eval_f32_n(Fn f, size_t n, float* out, const float* x, const float* y) {
  const Tables& T = f32::tables();
  const BlockFn block = host_blocks()[size_t(f)];
  const double pert = g_pert[size_t(f)];
  float xs[kChunk], ys[kChunk];
  uint32_t slow[kChunk];
  for (size_t base = 0; base < n; base += kChunk) {
    const size_t m = std::min(kChunk, n - base);
    // Copies: `out` may alias x or y, and the slow path needs the inputs.
    std::copy_n(x + base, m, xs);
    if (y) std::copy_n(y + base, m, ys);
    else std::fill_n(ys, m, 0.0f);
    block(m, out + base, slow, xs, ys, T, pert);
    for (size_t i = 0; i < m; ++i)
      if (slow[i]) out[base + i] = resolve(f, xs[i], ys[i], T);
  }
}

float eval_f32(Fn f, float x, float y) {
  const Tables& T = f32::tables();
  Cand c = kernel(f, x, y, T, g_pert[size_t(f)]);
  return c.slow ? resolve(f, x, y, T) : c.out;
}

void testing::set_f32_perturbation(Fn f, double rel) { g_pert[size_t(f)] = 1.0 + rel; }

}  // namespace stax::math
