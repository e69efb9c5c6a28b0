// The correctly rounded math of compiled kernels: the runtime
// entry points through which a kernel calls mathlib (crmath.h), the very
// functions the interpreter's Ieee domain calls, so compiled and interpreted
// bits agree by construction.
//
// Each function has a scalar entry point (`stax_cr_expf(float)`) and, on
// x86-64, vector variants of 4 and 8 lanes for f32 and 2 and 4 lanes for f64
// (`stax_cr_expf_v8(<8 x float>)`): f32 ones run the function's fast path
// inlined over the lanes (f32::eval_lanes4/8), f64 ones hand their lanes to
// eval_f64_n; the slow path then takes the lanes whose rounding test failed. Codegen (vecmath_ir.h)
// names the variants in the call's "vector-function-abi-variant" attribute,
// so LLVM's loop vectoriser calls them on whole vectors. A lane's result is
// the same function of that lane's input either way: the bits do not depend
// on which entry point the optimiser picked.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/runtime.h"

namespace stax::backends::cpu {

/// What a kernel's transcendental calls are bound to. The default is
/// Vector: the vector variants, with the forms of math_forms.h inlined into
/// the vectorised loop where the host has them. The others exist for
/// measurement: VectorCall calls every vector variant (nothing inlined; the
/// same bits), Scalar withholds the vector variants (one call per element),
/// and HostLibm binds the host's libm (glibc) instead of mathlib — NOT
/// correctly rounded, so its bits may differ from the interpreter's: the
/// benchmarks' baseline and the tests' deliberately wrong case, never a
/// user's setting.
enum class MathBinding { Vector, VectorCall, Scalar, HostLibm };

std::string_view math_binding_name(MathBinding b);

/// The process's binding: Vector, or what the environment variable
/// STAX_CPU_MATH (vector | vector-call | scalar | libm) says when the process starts. It
/// is part of every kernel's cache key (kernel_key), so changing it never
/// serves a kernel compiled under another binding.
MathBinding math_binding();
void set_math_binding(MathBinding b);

/// Sets the binding for a scope (tests, benchmarks).
class ScopedMathBinding {
 public:
  explicit ScopedMathBinding(MathBinding b) : previous_(math_binding()) { set_math_binding(b); }
  ~ScopedMathBinding() { set_math_binding(previous_); }
  ScopedMathBinding(const ScopedMathBinding&) = delete;
  ScopedMathBinding& operator=(const ScopedMathBinding&) = delete;

 private:
  MathBinding previous_;
};

/// The runtime name of function `base` ("exp", "pow", ...; a name of
/// stax::math::fn_name) at width f32 or f64 under `b`: "stax_cr_expf",
/// "stax_cr_exp", or "stax_libm_expf" under HostLibm.
std::string math_symbol(std::string_view base, bool f32, MathBinding b);

/// A vector variant of a scalar entry point: `lanes` elements per call.
struct VectorVariant {
  int lanes;
  std::string name;  ///< e.g. "stax_cr_expf_v8"
};

/// The vector variants of `scalar` (a name from math_symbol, of width f32
/// or f64) that this host
/// can call: the 4-lane f32 / 2-lane f64 ones (SSE2) on every x86-64 host,
/// the 8 / 4-lane ones (ymm registers) when the host has AVX2 (f32, whose
/// 8-lane body uses it) or AVX (f64) — the JIT
/// targets the host, so its calls pass them in ymm registers, as the
/// variants expect. None for HostLibm names and on other architectures.
std::vector<VectorVariant> vector_variants(std::string_view scalar, bool f32);

/// Every math entry point kernels may call (scalar, vector, host libm).
std::vector<RuntimeSymbol> math_symbols();

}  // namespace stax::backends::cpu
