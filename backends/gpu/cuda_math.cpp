#include "backends/gpu/cuda_math.h"

#include <sstream>

#include "backends/gpu/cuda_math_tables.h"
#include "mathlib/crmath.h"
#include "mathlib/f64_impl.h"
#include "semantics/ieee_scalar.h"

namespace stax::backends::gpu {

namespace {

// NVRTC has no <bit>, <cmath>, <cstdint> or <utility>: these are the names
// the embedded headers use (f32_kernels.h, the binary64 fast paths,
// rand_bits.h), with the same meaning: CUDA's nearbyint, trunc and ldexp
// are exact and round to nearest even, as the host's in the default
// rounding mode. The emulator includes the real headers instead.
constexpr std::string_view kShim = R"CUDA(
#ifdef STAX_EMU
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#else
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef int int32_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
namespace std {
template <class To, class From> __device__ __forceinline__ To bit_cast(const From& f) {
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}
__device__ __forceinline__ double fabs(double x) { return ::fabs(x); }
__device__ __forceinline__ float fabs(float x) { return ::fabsf(x); }
__device__ __forceinline__ double copysign(double a, double b) { return ::copysign(a, b); }
__device__ __forceinline__ bool isnan(float x) { return x != x; }
__device__ __forceinline__ bool isnan(double x) { return x != x; }
__device__ __forceinline__ bool isinf(float x) { return ::fabsf(x) == INFINITY; }
__device__ __forceinline__ bool isinf(double x) { return ::fabs(x) == HUGE_VAL; }
__device__ __forceinline__ double nearbyint(double x) { return ::nearbyint(x); }
__device__ __forceinline__ double trunc(double x) { return ::trunc(x); }
__device__ __forceinline__ double ldexp(double x, int e) { return ::ldexp(x, e); }
__device__ __forceinline__ bool isfinite(float x) { return ::fabsf(x) < INFINITY; }
template <size_t... I> struct index_sequence {};
template <size_t N, size_t... I> struct stax_make_iseq : stax_make_iseq<N - 1, N - 1, I...> {};
template <size_t... I> struct stax_make_iseq<0, I...> { using type = index_sequence<I...>; };
template <size_t N> using make_index_sequence = typename stax_make_iseq<N>::type;
}  // namespace std
#endif
)CUDA";

// The table global and the wrappers. A lane whose rounding test failed
// counts itself; its candidate (binary32) or a NaN (binary64, whose fast
// paths give none) is used until the host recomputes the binding.
constexpr std::string_view kWrappers = R"CUDA(
extern "C" { __device__ stax::backends::gpu::MathTables stax_T; }
#ifdef STAX_EMU
extern "C" void* stax_tables_addr() { return &stax_T; }
STAX_DEV void stax_note_slow(StaxFail* f) { ++f->slow; }
#else
STAX_DEV void stax_note_slow(StaxFail* f) { atomicAdd((unsigned long long*)&f->slow, 1ull); }
#endif
STAX_DEV float stax_cr_done(stax::math::f32::Cand c, StaxFail* f) {
  if (c.slow) stax_note_slow(f);
  return c.out;
}
STAX_DEV double stax_cr64_done(bool ok, double r, StaxFail* f) {
  if (ok) return r;
  stax_note_slow(f);
  return stax_f64(0x7ff8000000000000ull);
}
// rand(key) at a flat index (semantics/rand_bits.h): 24 random bits in the
// compute type, scaled by 2^-24 (exact); the caller rounds f16/bf16.
STAX_DEV float stax_rand_f32(u64 key, i64 flat) {
  return float(stax::sem::rand_bits24(key, flat)) * stax_f32(0x33800000u);
}
STAX_DEV double stax_rand_f64(u64 key, i64 flat) {
  return double(stax::sem::rand_bits24(key, flat)) * stax_f64(0x3e70000000000000ull);
}
)CUDA";

struct Wrapper {
  math::Fn fn;
  const char* call;  // the kernel call, x (and y) named so
};
constexpr Wrapper kCalls[] = {
    {math::Fn::Exp, "k_exp(x, stax_T.f32, 1.0)"},
    {math::Fn::Expm1, "k_expm1(x, stax_T.f32, 1.0)"},
    {math::Fn::Log, "k_log(x, stax_T.f32, 1.0)"},
    {math::Fn::Log2, "k_log2(x, stax_T.f32, 1.0)"},
    {math::Fn::Log10, "k_log10(x, stax_T.f32, 1.0)"},
    {math::Fn::Log1p, "k_log1p(x, stax_T.f32, 1.0)"},
    {math::Fn::Tanh, "k_tanh(x, stax_T.f32, 1.0)"},
    {math::Fn::Erf, "k_erf(x, stax_T.f32, 1.0)"},
    {math::Fn::Sin, "k_trig<false>(x, stax_T.f32, 1.0)"},
    {math::Fn::Cos, "k_trig<true>(x, stax_T.f32, 1.0)"},
    {math::Fn::Pow, "k_pow(x, y, stax_T.f32, 1.0)"},
};

/// The headers without their #include and #pragma lines (the shim stands
/// in for the standard headers; the headers come in include order) and
/// without their comment lines (the derivations are in the repository; the
/// module's text stays small, and says nothing of contraction or fma but
/// what it does).
std::string strip_directives(std::string_view text) {
  std::string out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line.compare(first, 2, "//") == 0) continue;
    if (line.rfind("#include", 0) == 0 || line.rfind("#pragma once", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string cuda_math_source() {
  std::string s =
      "\n// ---- correctly rounded functions (mathlib/f32_kernels.h, f64_exp_log.h, f64_trig.h), rand's hash\n";
  s += kShim;
  s += strip_directives(cuda_math_headers());
  s += kWrappers;
  for (const Wrapper& w : kCalls) {
    std::string name(math::fn_name(w.fn));
    bool binary = math::is_binary(w.fn);
    s += "STAX_DEV float stax_cr_" + name + "(float x, " + (binary ? "float y, " : "") +
         "StaxFail* f) { return stax_cr_done(stax::math::f32::" + w.call + ", f); }\n";
    // binary64: the same name, overloaded.
    s += "STAX_DEV double stax_cr_" + name + "(double x, " + (binary ? "double y, " : "") + "StaxFail* f) {\n";
    s += "  const stax::math::f64::Fault F{stax_T.f64_bound_scale, stax_T.f64_inject_rel};\n";
    s += "  double r = 0.0;\n";
    s += "  const bool ok = stax::math::f64::" + name + "_fast(x, " + (binary ? "y, " : "") + "&r, stax_T.f64, F);\n";
    s += "  return stax_cr64_done(ok, r, f);\n}\n";
  }
  return s;
}

const void* cuda_math_tables() {
  // The host's tables as they are at the first call (MPFR, once), and the
  // tests' fault settings as they are now (a copy per thread: the caller
  // copies it at once).
  static const MathTables base{math::f32::tables(), math::f64::tables(), 1.0, 0.0};
  thread_local MathTables t;
  t = base;
  t.f64_bound_scale = math::f64::g_fault.bound_scale;
  t.f64_inject_rel = math::f64::g_fault.inject_rel;
  return &t;
}
size_t cuda_math_tables_size() { return sizeof(MathTables); }

std::optional<std::string> cuda_math_function(sem::ScalarOp op) {
  auto f = sem::ieee::cr_fn(op);
  if (!f) return std::nullopt;
  return "stax_cr_" + std::string(math::fn_name(*f));
}

}  // namespace stax::backends::gpu
