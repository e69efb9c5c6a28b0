// Scalar semantics of the reference float domain (docs/design.md §3): IEEE-754 binary
// arithmetic, round to nearest even, no contraction, IEEE 754-2019
// maximum/minimum, correctly rounded transcendental functions (mathlib/), wrap-around
// integers, NumPy's divmod for float floordiv/mod, Python's for integers.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "mathlib/crmath.h"
#include "semantics/scalar_op.h"

namespace stax::sem::ieee {

template <class T>
inline T maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;  // quiet NaN, propagated
  if (a == b) return std::signbit(a) ? b : a;         // maximum(-0, +0) = +0
  return a > b ? a : b;
}
template <class T>
inline T minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;  // minimum(-0, +0) = -0
  return a < b ? a : b;
}

/// The same functions with float compares and selects only, so that loops
/// over them vectorise. z = a + b is NaN when an operand is NaN and, for two
/// zeros, +0 unless both are -0 (maximum); minimum uses -((-a) + (-b)).
template <class T>
inline T maximum_branchless(T a, T b) {
  T m = a > b ? a : b;
  T z = a + b;
  bool use_z = (a != a) | (b != b) | ((a == b) & (a == T(0)));
  return use_z ? z : m;
}
template <class T>
inline T minimum_branchless(T a, T b) {
  T m = a < b ? a : b;
  T z = -((-a) + (-b));
  bool use_z = (a != a) | (b != b) | ((a == b) & (a == T(0)));
  return use_z ? z : m;
}

/// NumPy's npy_divmod: returns floor division, sets `mod`.
template <class T>
inline T divmod(T a, T b, T& mod) {
  mod = std::fmod(a, b);
  if (b == T(0)) return a / b;
  T div = (a - mod) / b;
  if (mod != T(0)) {
    if ((b < T(0)) != (mod < T(0))) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div != T(0)) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  return floordiv;
}

// ---- transcendental functions: correctly rounded (mathlib/, docs/design.md §3) ----

/// The mathlib function of a transcendental op; nullopt for every other op.
inline std::optional<math::Fn> cr_fn(ScalarOp op) {
  switch (op) {
    case ScalarOp::Exp: return math::Fn::Exp;
    case ScalarOp::Expm1: return math::Fn::Expm1;
    case ScalarOp::Log: return math::Fn::Log;
    case ScalarOp::Log2: return math::Fn::Log2;
    case ScalarOp::Log10: return math::Fn::Log10;
    case ScalarOp::Log1p: return math::Fn::Log1p;
    case ScalarOp::Tanh: return math::Fn::Tanh;
    case ScalarOp::Erf: return math::Fn::Erf;
    case ScalarOp::Sin: return math::Fn::Sin;
    case ScalarOp::Cos: return math::Fn::Cos;
    case ScalarOp::Pow: return math::Fn::Pow;
    default: return std::nullopt;
  }
}
template <class T>
inline T cr(math::Fn f, T a, T b = T(0)) {
  if constexpr (std::is_same_v<T, float>) return math::eval_f32(f, a, b);
  else return math::eval_f64(f, a, b);
}
template <class T>
inline void cr_n(math::Fn f, size_t n, T* out, const T* a, const T* b = nullptr) {
  if constexpr (std::is_same_v<T, float>) math::eval_f32_n(f, n, out, a, b);
  else math::eval_f64_n(f, n, out, a, b);
}

/// Composite (docs/design.md §3): 1 / (1 + exp(-a)) over the correctly rounded exp.
template <class T>
inline T sigmoid(T a) {
  return T(1) / (T(1) + cr(math::Fn::Exp, T(-a)));
}
template <class T>
inline T rsqrt(T a) {
  return T(1) / std::sqrt(a);
}

// ---- integers: two's complement wrap-around; division by zero is ⊥ ----

template <class T>
using U = std::make_unsigned_t<T>;
template <class T>
inline T wrap_add(T a, T b) {
  return T(U<T>(a) + U<T>(b));
}
template <class T>
inline T wrap_sub(T a, T b) {
  return T(U<T>(a) - U<T>(b));
}
template <class T>
inline T wrap_mul(T a, T b) {
  return T(U<T>(a) * U<T>(b));
}
template <class T>
inline T wrap_neg(T a) {
  return T(U<T>(0) - U<T>(a));
}
/// Truncating division; caller checks b != 0. MIN / -1 wraps to MIN.
template <class T>
inline T trunc_div(T a, T b) {
  if (b == T(-1)) return wrap_neg(a);
  return a / b;
}
/// Python floor division; caller checks b != 0.
template <class T>
inline T floor_div(T a, T b) {
  if (b == T(-1)) return wrap_neg(a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
/// Python modulo (sign of the divisor); caller checks b != 0.
template <class T>
inline T py_mod(T a, T b) {
  if (b == T(-1)) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// Float to integer: truncation toward zero, NaN -> 0, saturating.
template <class I, class F>
inline I float_to_int(F x) {
  if (std::isnan(x)) return 0;
  if (x <= F(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (x >= F(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return I(x);
}

}  // namespace stax::sem::ieee
