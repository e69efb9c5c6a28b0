#pragma once
// Correctly rounded elementary functions: the reference semantics of every
// transcendental op of the core language (docs/design.md §3). A correctly rounded
// result is the real function value rounded once to nearest-even in the
// result format; it is defined by the real number alone, so it is the same
// on every machine and every backend.
//
// Method (Ziv): a fast path computes an approximation y with a proven error
// bound e; if both ends of [y - e, y + e] round to the same value in the
// result format, that value is the correctly rounded result. Otherwise the
// slow path (MPFR, correctly rounded by construction) decides, and the
// fallback is counted.
//
// This library sits below semantics/ and depends on MPFR only.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace stax::math {

enum class Fn : uint8_t { Exp, Expm1, Log, Log2, Log10, Log1p, Tanh, Erf, Sin, Cos, Pow };
inline constexpr int kNumFns = 11;

std::string_view fn_name(Fn f);
std::optional<Fn> fn_from_name(std::string_view name);
inline bool is_binary(Fn f) { return f == Fn::Pow; }

// Correctly rounded to nearest-even, full IEEE special-value semantics
// (C23 Annex F, as MPFR implements it). `y` is used by Pow only.
float eval_f32(Fn f, float x, float y = 0.0f);
double eval_f64(Fn f, double x, double y = 0.0);

// The same on arrays: out[i] = f(x[i], y[i]) for i < n (y may be null for
// unary functions). Runs the fast path over the whole block (vectorised),
// then the slow path on the elements whose rounding test failed. `out` may
// alias `x` or `y`. The interpreter and the CPU backend's vector kernels
// call these.
void eval_f32_n(Fn f, size_t n, float* out, const float* x, const float* y = nullptr);
void eval_f64_n(Fn f, size_t n, double* out, const double* x, const double* y = nullptr);

// The slow path: MPFR at the target precision with the target's exponent
// range and subnormals, correctly rounded by construction. Also the
// reference the tests and `stax mathcheck` compare against.
float mpfr_f32(Fn f, float x, float y = 0.0f);
double mpfr_f64(Fn f, double x, double y = 0.0);

// Fallbacks taken by eval_* (and by the vector kernels) since the last
// reset, per function and width. Relaxed atomics; counted only on the slow
// path, so the fast path carries no counter.
enum class Width : uint8_t { F32, F64 };
uint64_t fallback_count(Fn f, Width w);
/// The same, counting only the calling thread's fallbacks (never reset): a
/// worker's own share, exact while other threads fall back too.
uint64_t thread_fallback_count(Fn f, Width w);
void reset_fallback_counts();
void note_fallback(Fn f, Width w);

}  // namespace stax::math
