#include "backends/cpu/vecmath.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "backends/cpu/math_forms.h"
#include "mathlib/crmath.h"
#include "mathlib/f32_kernels.h"
#include "mathlib/f32_lanes.h"

namespace stax::backends::cpu {
namespace {

using math::Fn;

MathBinding binding_from_env() {
  const char* s = std::getenv("STAX_CPU_MATH");
  if (!s || !*s || std::strcmp(s, "vector") == 0) return MathBinding::Vector;
  if (std::strcmp(s, "vector-call") == 0) return MathBinding::VectorCall;
  if (std::strcmp(s, "scalar") == 0) return MathBinding::Scalar;
  if (std::strcmp(s, "libm") == 0) return MathBinding::HostLibm;
  throw std::invalid_argument(std::string("STAX_CPU_MATH must be vector, vector-call, scalar or libm, not ") + s);
}

std::atomic<MathBinding>& binding() {
  static std::atomic<MathBinding> b{binding_from_env()};
  return b;
}

// Scalar entry points: one per function and width.
template <Fn F>
float cr_f32(float x) {
  return math::eval_f32(F, x);
}
template <Fn F>
float cr2_f32(float x, float y) {
  return math::eval_f32(F, x, y);
}
template <Fn F>
double cr_f64(double x) {
  return math::eval_f64(F, x);
}
template <Fn F>
double cr2_f64(double x, double y) {
  return math::eval_f64(F, x, y);
}

#if defined(__x86_64__)
// Vector entry points. A GCC vector type is passed and returned in one
// register, as LLVM passes an <N x T> argument: xmm for 16 bytes (SSE2,
// baseline x86-64), ymm for 32 bytes, which needs the function compiled for
// AVX (target attribute) — otherwise GCC passes it in memory and the JIT's
// call would not match.
typedef float F32x4 __attribute__((vector_size(16)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef double F64x2 __attribute__((vector_size(16)));
typedef double F64x4 __attribute__((vector_size(32)));

// f32: one register's worth of lanes through f32::eval_lanes4/8, the fast
// path inlined over the lanes (no block loop); the 8-lane body uses AVX2.
template <Fn F>
F32x4 cr_f32x4(F32x4 x) {
  F32x4 r;
  math::f32::eval_lanes4<F>(reinterpret_cast<float*>(&r), reinterpret_cast<const float*>(&x), nullptr);
  return r;
}
template <Fn F>
F32x4 cr2_f32x4(F32x4 x, F32x4 y) {
  F32x4 r;
  math::f32::eval_lanes4<F>(reinterpret_cast<float*>(&r), reinterpret_cast<const float*>(&x),
                            reinterpret_cast<const float*>(&y));
  return r;
}
template <Fn F>
__attribute__((target("avx2"))) F32x8 cr_f32x8(F32x8 x) {
  F32x8 r;
  math::f32::eval_lanes8<F>(reinterpret_cast<float*>(&r), reinterpret_cast<const float*>(&x), nullptr);
  return r;
}
template <Fn F>
__attribute__((target("avx2"))) F32x8 cr2_f32x8(F32x8 x, F32x8 y) {
  F32x8 r;
  math::f32::eval_lanes8<F>(reinterpret_cast<float*>(&r), reinterpret_cast<const float*>(&x),
                            reinterpret_cast<const float*>(&y));
  return r;
}
// f64: the lanes go through memory to the block entry point.
template <Fn F>
F64x2 cr_f64x2(F64x2 x) {
  F64x2 r;
  math::eval_f64_n(F, 2, reinterpret_cast<double*>(&r), reinterpret_cast<const double*>(&x));
  return r;
}
template <Fn F>
F64x2 cr2_f64x2(F64x2 x, F64x2 y) {
  F64x2 r;
  math::eval_f64_n(F, 2, reinterpret_cast<double*>(&r), reinterpret_cast<const double*>(&x),
                   reinterpret_cast<const double*>(&y));
  return r;
}
template <Fn F>
__attribute__((target("avx"))) F64x4 cr_f64x4(F64x4 x) {
  F64x4 r;
  math::eval_f64_n(F, 4, reinterpret_cast<double*>(&r), reinterpret_cast<const double*>(&x));
  return r;
}
template <Fn F>
__attribute__((target("avx"))) F64x4 cr2_f64x4(F64x4 x, F64x4 y) {
  F64x4 r;
  math::eval_f64_n(F, 4, reinterpret_cast<double*>(&r), reinterpret_cast<const double*>(&x),
                   reinterpret_cast<const double*>(&y));
  return r;
}

bool host_has_avx() {
  static const bool avx = __builtin_cpu_supports("avx");
  return avx;
}
bool host_has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}
#endif

template <class T>
RuntimeSymbol sym(std::string name, T* f) {
  return {std::move(name), reinterpret_cast<void*>(f)};
}

#if defined(__x86_64__)
/// The 8-lane f32 entry point of a unary function: the 512-bit form where
/// there is one and the host has AVX-512, else the AVX2 one where there is
/// one and the host has AVX2 and FMA (mathlib's register-to-register
/// entries, bound directly: same argument and result registers).
template <Fn F>
void* f32x8_entry() {
  if constexpr (math::f32::has_vec_form(F))
    if (math::f32::host_has_avx512()) return reinterpret_cast<void*>(&math::f32::eval_v8_avx512<F>);
  if constexpr (math::f32::has_avx2_form(F))
    if (math::f32::host_has_avx2_fma()) return reinterpret_cast<void*>(&math::f32::eval_v8_avx2<F>);
  return reinterpret_cast<void*>(&cr_f32x8<F>);
}
#endif

/// The entry points of one function: scalar and vector, both widths.
template <Fn F>
void add_fn(std::vector<RuntimeSymbol>& out) {
  std::string f = "stax_cr_" + std::string(math::fn_name(F)) + "f", d = "stax_cr_" + std::string(math::fn_name(F));
  if constexpr (F == Fn::Pow) {
    out.push_back(sym(f, &cr2_f32<F>));
    out.push_back(sym(d, &cr2_f64<F>));
#if defined(__x86_64__)
    out.push_back(sym(f + "_v4", &cr2_f32x4<F>));
    out.push_back(sym(f + "_v8", &cr2_f32x8<F>));
    out.push_back(sym(d + "_v2", &cr2_f64x2<F>));
    out.push_back(sym(d + "_v4", &cr2_f64x4<F>));
#endif
  } else {
    out.push_back(sym(f, &cr_f32<F>));
    out.push_back(sym(d, &cr_f64<F>));
#if defined(__x86_64__)
    out.push_back(sym(f + "_v4", &cr_f32x4<F>));
    out.push_back({f + "_v8", f32x8_entry<F>()});
    if constexpr (math::f32::has_vec_form(F))
      if (math::f32::host_has_avx512()) out.push_back(sym(f + "_v16", &math::f32::eval_v16_avx512<F>));
    out.push_back(sym(d + "_v2", &cr_f64x2<F>));
    out.push_back(sym(d + "_v4", &cr_f64x4<F>));
#endif
  }
}

}  // namespace

std::string_view math_binding_name(MathBinding b) {
  switch (b) {
    case MathBinding::Vector: return "vector";
    case MathBinding::VectorCall: return "vector-call";
    case MathBinding::Scalar: return "scalar";
    case MathBinding::HostLibm: return "libm";
  }
  return "?";
}

MathBinding math_binding() { return binding().load(std::memory_order_relaxed); }
void set_math_binding(MathBinding b) { binding().store(b, std::memory_order_relaxed); }

std::string math_symbol(std::string_view base, bool f32, MathBinding b) {
  return (b == MathBinding::HostLibm ? "stax_libm_" : "stax_cr_") + std::string(base) + (f32 ? "f" : "");
}

#if defined(__x86_64__) && !defined(__clang__)
/// Whether the f32 entry point `scalar` has a 16-lane variant.
static bool has_v16(std::string_view scalar) {
  for (Fn f : {Fn::Exp, Fn::Expm1, Fn::Tanh, Fn::Erf}) {
    static_assert(math::f32::has_vec_form(Fn::Exp) && math::f32::has_vec_form(Fn::Expm1) &&
                  math::f32::has_vec_form(Fn::Tanh) && math::f32::has_vec_form(Fn::Erf));
    if (scalar == "stax_cr_" + std::string(math::fn_name(f)) + "f") return true;
  }
  return false;
}
#endif

std::vector<VectorVariant> vector_variants(std::string_view scalar, bool f32) {
  std::vector<VectorVariant> v;
#if defined(__x86_64__)
  if (scalar.rfind("stax_cr_", 0) != 0) return v;
  int narrow = f32 ? 4 : 2;
  v.push_back({narrow, std::string(scalar) + "_v" + std::to_string(narrow)});
#if !defined(__clang__)
  // Clang 14 passes a 32-byte vector argument in memory unless the whole
  // translation unit targets AVX (a target attribute is not enough, unlike
  // GCC), so the JIT's ymm call would not match: clang builds (the sanitizer
  // build) use the 16-byte entry points only. The bits are the same.
  if (f32 ? host_has_avx2() : host_has_avx()) v.push_back({2 * narrow, std::string(scalar) + "_v" + std::to_string(2 * narrow)});
  // 16 lanes in a zmm register: the f32 functions with AVX-512 forms.
  if (f32 && math::f32::host_has_avx512() && has_v16(scalar)) v.push_back({16, std::string(scalar) + "_v16"});
#endif
#else
  (void)scalar, (void)f32;
#endif
  return v;
}

std::vector<RuntimeSymbol> math_symbols() {
  std::vector<RuntimeSymbol> s;
  add_fn<Fn::Exp>(s);
  add_fn<Fn::Expm1>(s);
  add_fn<Fn::Log>(s);
  add_fn<Fn::Log2>(s);
  add_fn<Fn::Log10>(s);
  add_fn<Fn::Log1p>(s);
  add_fn<Fn::Tanh>(s);
  add_fn<Fn::Erf>(s);
  add_fn<Fn::Sin>(s);
  add_fn<Fn::Cos>(s);
  add_fn<Fn::Pow>(s);
  add_math_form_symbols(s);
  // The host's libm, for MathBinding::HostLibm only.
  auto f = [&](const char* n, float (*p)(float)) { s.push_back(sym(std::string("stax_libm_") + n + "f", p)); };
  auto d = [&](const char* n, double (*p)(double)) { s.push_back(sym(std::string("stax_libm_") + n, p)); };
  f("exp", &::expf), d("exp", &::exp);
  f("expm1", &::expm1f), d("expm1", &::expm1);
  f("log", &::logf), d("log", &::log);
  f("log2", &::log2f), d("log2", &::log2);
  f("log10", &::log10f), d("log10", &::log10);
  f("log1p", &::log1pf), d("log1p", &::log1p);
  f("tanh", &::tanhf), d("tanh", &::tanh);
  f("erf", &::erff), d("erf", &::erf);
  f("sin", &::sinf), d("sin", &::sin);
  f("cos", &::cosf), d("cos", &::cos);
  s.push_back(sym("stax_libm_powf", static_cast<float (*)(float, float)>(&::powf)));
  s.push_back(sym("stax_libm_pow", static_cast<double (*)(double, double)>(&::pow)));
  return s;
}

}  // namespace stax::backends::cpu
