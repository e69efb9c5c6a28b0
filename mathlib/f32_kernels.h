#pragma once
// The binary32 fast paths: one inline kernel per function, evaluated in
// binary64 with a proven error bound, then Ziv's rounding test (crmath.h).
// Every kernel is branch-free (selects, table loads, no calls) so that the
// block loops of f32.cpp vectorise; it returns the candidate float and a
// "needs the slow path" flag.
//
// The GPU backend compiles this header and f32_tables.h as device code too
// (backends/gpu/cuda_math.cpp embeds their text; NVRTC gets a small shim of
// the std names used here): keep to <bit>, <cmath>, <cstdint> and <utility>,
// with no builtins outside those names.
//
// Notation: u = 2^-53 (binary64 unit roundoff); a Horner evaluation of a
// degree-n polynomial has relative error at most gamma_2n * cond <= 2n u *
// cond (Higham, Accuracy and Stability, §5.1), cond = sum |c_i x^i| /
// |sum c_i x^i|; table entries and constants are within u relative of their
// real values (f32_tables.h). Each bound below is the sum of the argument
// reduction's error, the truncation of the series (its first omitted term,
// the series being alternating or dominated by a geometric one), and the
// evaluation's rounding; the figure claimed (kErr*) rounds that sum up with
// a margin of at least 2x.
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

#include "mathlib/f32_tables.h"

namespace stax::math::f32 {

inline constexpr double kMagic = 0x1.8p52;  // x + kMagic - kMagic rounds x to an integer (|x| < 2^51)
inline constexpr uint64_t kMagicBits = 0x4338000000000000ULL;

/// The fast path's result: candidate and whether the rounding test failed.
struct Cand {
  float out;
  bool slow;
};

/// Ziv's rounding test. `y` approximates f(x) with |y - f(x)| <= rel*|y| +
/// abs. The bound used is inflated by 2^-50 |y| (8u), which covers the
/// rounding of rel*|y| and of y -+ e in binary64 (3u), so the computed lo
/// and hi enclose f(x). Rounding to nearest is monotone: when lo and hi
/// round to the same float, so does f(x). lo is the candidate so that an
/// exact zero keeps its sign (y = -0, e = 0 gives lo = -0).
inline Cand round_test(double y, double rel, double abs = 0.0) {
  double e = (rel + 0x1p-50) * std::fabs(y) + abs;
  float lo = float(y - e), hi = float(y + e);
  return {lo, !(lo == hi)};
}

template <int N, size_t... I>
inline double horner_steps(const double (&c)[N], double x, std::index_sequence<I...>) {
  double p = c[N - 1];
  ((p = c[N - 2 - I] + x * p), ...);
  return p;
}

/// sum c_i x^i by Horner's rule, unrolled at compile time (a loop here would
/// keep the block loops from vectorising).
template <int N>
inline double horner(const double (&c)[N], double x) {
  return horner_steps(c, x, std::make_index_sequence<N - 1>());
}

constexpr int floor_log2(int n) { return n > 1 ? 1 + floor_log2(n / 2) : 0; }

template <int Lo, int N>
[[gnu::always_inline]] inline double estrin_steps(const double* c, const double* pw) {
  if constexpr (N == 1) {
    return c[Lo];
  } else {
    constexpr int kLog = floor_log2(N - 1);  // 2^kLog: the largest power of two < N
    constexpr int kH = 1 << kLog;
    return estrin_steps<Lo, kH>(c, pw) + pw[kLog] * estrin_steps<Lo + kH, N - kH>(c, pw);
  }
}

/// sum c_i t^i by Estrin's scheme: p(lo..lo+N) = p(lo..lo+H) + t^H p(lo+H..),
/// H the largest power of two below N, t^(2^k) by repeated squaring. The
/// same operations as Horner's rule, but a dependency chain of depth
/// O(log N) instead of N, so a long series is bound by throughput, not by
/// latency (erf's 61 terms: 3-4x faster per element here).
/// Error, for c_i >= 0 and t >= 0 only (every intermediate is a sum of
/// non-negative terms, so relative errors do not grow by cancellation):
/// t^(2^k) is within (2^k - 1)u relative (squaring doubles a relative error
/// and adds u); a node A + P B is within max(e_A, e_P + e_B + u) + u; along
/// the highest coefficient's path of a 64-term tree that is
/// (31 + 15 + 7 + 3 + 1)u for the powers, 2u per level (6 levels) and u for
/// the coefficient: 70u (first order; the second-order terms are below
/// 2^-90). Callers with mixed signs must use horner().
template <int N>
[[gnu::always_inline]] inline double estrin_nonneg(const double (&c)[N], double t) {
  static_assert(N <= 64, "the bound above is for at most 64 terms");
  double pw[6];
  pw[0] = t;
  for (int k = 1; k < 6; ++k) pw[k] = pw[k - 1] * pw[k - 1];
  return estrin_steps<0, N>(c, pw);
}

// ---- exp ---------------------------------------------------------------
// exp(a) for |a| <= 110 (callers clamp). a = k ln2/64 + r, k = round(a 64/ln2),
// exp(a) = 2^(k div 64) * 2^((k mod 64)/64) * exp(r).
//  * Reduction: |k| < 2^14 and ln2_64_hi has 32 bits, so k*hi is exact; a and
//    k*hi are within a factor 2 when k != 0 (Sterbenz), so a - k*hi is exact;
//    the rest costs u|r| + |k| (u |lo| + |ln2/64 - hi - lo|) < u|r| + 2^-90.
//    |r| <= ln2/128 + 2^-40 < 0.00542.
//  * exp(r), degree 5 Taylor: truncation r^6/6! e^|r| < 2^-54.6; Horner with
//    cond < 1.011: 10.2u.
//  * Table u, product u, the power of two exact; error of r: u.
//  Sum < 13.3u + 2^-54.6 < 2^-49.2.
inline constexpr double kErrExp = 0x1p-48;

inline double exp_core(double a, const Tables& T) {
  double s = a * T.inv_ln2_64 + kMagic;
  double kd = s - kMagic;
  uint64_t kb = std::bit_cast<uint64_t>(s) - kMagicBits;  // k, two's complement
  double r = (a - kd * T.ln2_64_hi) - kd * T.ln2_64_lo;
  uint64_t j = kb & (kExpTable - 1);
  uint64_t m = ((kb + (uint64_t(1) << 20)) >> kExpBits) - (uint64_t(1) << (20 - kExpBits));  // floor(k/64)
  double scale = std::bit_cast<double>((m + 1023) << 52);
  return scale * (T.exp2j[j] * horner(T.exp_c, r));
}

inline double clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

inline Cand k_exp(float x, const Tables& T, double pert) {
  // Beyond the clamps the result is +inf (exp(91) > 2^128) or +0
  // (exp(-110) < 2^-150); exp(+-inf) follows.
  double y = exp_core(clamp(x, -110, 91), T) * pert;
  Cand c = round_test(y, kErrExp);
  return std::isnan(x) ? Cand{x + x, false} : c;
}

// ---- expm1 ---------------------------------------------------------------
// |x| <= 1/4: x * sum_{n<13} x^n/(n+1)!; truncation (1/4)^13/14! e^(1/4) <
// 2^-62; Horner: cond < 1.29, 24 * 1.29 u = 31u; the final product u.
// |x| > 1/4: exp(x) - 1, relative error amplified by e^x/|e^x - 1| <= 4.53:
// 4.53 kErrExp + u < 2^-45.7.
inline constexpr double kErrExpm1 = 0x1p-45;

inline double expm1_core(double a, const Tables& T) {
  double small = a * horner(T.expm1_c, a);
  double big = exp_core(a, T) - 1.0;
  return std::fabs(a) <= 0.25 ? small : big;
}

inline Cand k_expm1(float x, const Tables& T, double pert) {
  // Beyond the clamps: +inf, or -1 (expm1(-110) = -1 + 2^-159).
  double y = expm1_core(clamp(x, -110, 91), T) * pert;
  Cand c = round_test(y, kErrExpm1);
  return std::isnan(x) ? Cand{x + x, false} : c;
}

// ---- log family ------------------------------------------------------------
// z > 0 normal binary64 = 2^k * w, w in [0.7036, 1.4072); w lies in one of
// 128 subintervals i with inv_i ~ 1/centre (28 bits) and t_i = -log(inv_i);
// log z = k ln2 + t_i + log1p(r), r = w inv_i - 1, |r| <= 2^-8 + 2^-14.
//  * r: w = wh + wl, wh the top 25 bits; wh*inv_i is exact (53 bits), and
//    within a factor 2 of 1, so wh*inv_i - 1 is exact; wl*inv_i < 2^-24 costs
//    u 2^-24; the sum u|r|. (A float input has wl = 0: r is exact up to the
//    final u|r|.) In subinterval kLogOne (1 inside), inv = 1 and t = 0.
//  * log1p(r), degree 7: truncation |r|^7/8 < 2^-58; Horner: 14u * 1.01.
//  * k = 0 outside kLogOne: |log z| >= 2^-9.1, |t_i| <= 3.1 |log z|,
//    |p| <= 2.1 |log z|: u (3.1 + 2.1 * 15.2 + 1 + 1) < 37u. k = 0 inside
//    kLogOne: 16u. |k| >= 1: |log z| >= 0.34, a few u.
// So log (and log1p, whose 1 + x is exact unless |x| >= 2^52 where the u it
// costs is divided by log(x) > 36) is within 37u < 2^-47.7; log2 and log10
// multiply by a constant: +2u.
inline constexpr double kErrLog = 0x1p-46;

struct LogParts {
  double k;  // the exponent, exact
  double t;  // t_i
  double p;  // log1p(r)
};

inline LogParts log_parts(double z, const Tables& T) {
  uint64_t iz = std::bit_cast<uint64_t>(z);
  uint64_t tmp = iz - kLogOff;
  uint64_t i = (tmp >> 45) & (kLogTable - 1);
  uint64_t kb = (tmp + (uint64_t(1) << 63)) >> 52;  // k + 2048
  double k = (std::bit_cast<double>(kMagicBits + kb) - kMagic) - 2048.0;
  uint64_t iw = iz - (tmp & (uint64_t(0xfff) << 52));
  double w = std::bit_cast<double>(iw);
  double wh = std::bit_cast<double>(iw & ~((uint64_t(1) << 28) - 1));
  double wl = w - wh;
  double inv = T.log_inv[i];
  double r = (wh * inv - 1.0) + wl * inv;
  double p = r * horner(T.log_c_r, r);
  return {k, T.log_t[i], p};
}

inline double log_core(double z, const Tables& T) {
  LogParts l = log_parts(z, T);
  return (l.k * T.ln2_hi + l.t) + (l.p + l.k * T.ln2_lo);
}

/// The log family's special values: NaN -> NaN (payload kept), x < 0 ->
/// NaN, +-0 -> -inf, +inf -> +inf; `at` is the argument of log (x or 1 + x).
inline Cand log_specials(float x, float at, double y, double rel) {
  Cand c = round_test(y, rel);
  c.slow = c.slow && at > 0.0f && at != INFINITY;
  c.out = at == 0.0f ? -INFINITY : c.out;
  c.out = at < 0.0f ? NAN : c.out;
  c.out = at == INFINITY ? INFINITY : c.out;
  c.out = std::isnan(x) ? x + x : c.out;
  return c;
}

/// A positive finite binary64 standing in for a special argument, so the
/// kernel computes garbage but no trap or out-of-range index.
inline double safe_arg(double z) { return (z > 0.0 && z < INFINITY) ? z : 1.0; }

inline Cand k_log(float x, const Tables& T, double pert) {
  double y = log_core(safe_arg(x), T) * pert;
  return log_specials(x, x, y, kErrLog);
}

inline Cand k_log2(float x, const Tables& T, double pert) {
  LogParts l = log_parts(safe_arg(x), T);
  double y = (l.k + (l.t + l.p) * T.inv_ln2) * pert;
  return log_specials(x, x, y, kErrLog);
}

inline Cand k_log10(float x, const Tables& T, double pert) {
  double y = log_core(safe_arg(x), T) * T.inv_ln10 * pert;
  return log_specials(x, x, y, kErrLog);
}

inline Cand k_log1p(float x, const Tables& T, double pert) {
  double xd = x;
  // |x| <= 2^-9 is within the polynomial's range: log1p(x) directly.
  double small = xd * horner(T.log_c_r, xd);
  double big = log_core(safe_arg(1.0 + xd), T);
  double y = (std::fabs(xd) <= 0x1p-9 ? small : big) * pert;
  // 1 + x as a float only decides the specials: x < -1, x = -1, +inf.
  float at = x < -1.0f ? -1.0f : (x == -1.0f ? 0.0f : (x == INFINITY ? INFINITY : 1.0f));
  return log_specials(x, at, y, kErrLog);
}

// ---- tanh -----------------------------------------------------------------
// tanh|x| = E/(E + 2), E = expm1(2|x|) (2|x| exact). E's relative error
// kErrExpm1 becomes 2 kErrExpm1/(E + 2) <= kErrExpm1; + u (sum) + u
// (quotient). |x| >= 10: tanh rounds to 1 (1 - tanh 10 < 2^-57).
inline constexpr double kErrTanh = 0x1p-44;

inline Cand k_tanh(float x, const Tables& T, double pert) {
  double a = clamp(std::fabs(double(x)), 0.0, 10.0);
  double e = expm1_core(2.0 * a, T);
  double y = std::copysign(e / (e + 2.0), double(x)) * pert;
  Cand c = round_test(y, kErrTanh);
  return std::isnan(x) ? Cand{x + x, false} : c;
}

// ---- erf ------------------------------------------------------------------
// erf(x) = 2/sqrt(pi) x e^(-x^2) sum_n 2^n x^2n / (2n+1)!!  (all terms
// positive). |x| <= 4: t = x^2 exact (24-bit x); 61 terms, the first omitted
// one and the geometric tail (ratio 2t/(2n+3) < 1/3) below 2^-55 of the sum
// (checked by cr32_test's audit); Estrin's scheme with positive terms and
// t >= 0 (estrin_nonneg): 70u, coefficients included; e^(-t): kErrExp;
// four products: 4u. Sum < 2^-45.5.
// |x| >= 4: erf rounds to +-1 (1 - erf 4 < 2^-26).
inline constexpr double kErrErf = 0x1p-44;
// For t <= kErfSmallT (|x| <= 2) the vector forms (f32_vec_impl.inc) take
// a polynomial in t without the exponential instead, when every lane of a
// register allows it (f32_vec.h: kErfPoly, its bound also within kErrErf).
inline constexpr double kErfSmallT = 4.0;

[[gnu::always_inline]] inline Cand k_erf(float x, const Tables& T, double pert) {
  double a = clamp(std::fabs(double(x)), 0.0, 4.0);
  double t = a * a;
  double y = T.two_over_sqrt_pi * a * exp_core(-t, T) * estrin_nonneg(T.erf_c, t);
  Cand c = round_test(std::copysign(y, double(x)) * pert, kErrErf);
  return std::isnan(x) ? Cand{x + x, false} : c;
}

// ---- sin, cos ---------------------------------------------------------------
// |x| <= 2^20 (beyond: the slow path). k = round(x 2/pi), r = x - k pi/2 with
// pi/2 = p1 + p2 + p3: k*p1 and k*p2 are exact (|k| < 2^20, 30-bit parts);
// x - k p1 is exact (both are multiples of 2^-29 and the difference is
// below 2^21); the next two steps cost u|r| each, k p3 costs u 2^-40 and the
// split's own error |k| 2^-112: |error of r| < 2u|r| + 2^-90 when k != 0,
// and r = x exactly when k = 0. |r| <= pi/4 + 2^-32.
//  * sin r = r sum (-1)^n r^2n/(2n+1)!, n <= 8: truncation < 2^-62; Horner,
//    cond <= sinh/sin <= 1.23: 22u, r^2: 9u. cos, n <= 8: truncation < 2^-58,
//    cond <= cosh/cos <= 1.88: 34u, r^2: u.
//  * r's error through sin/cos (derivatives <= 1): relative <= 2.2u, absolute
//    2^-90 (k != 0).
// Sum: relative 38u < 2^-47.7, absolute 2^-90.
inline constexpr double kErrTrig = 0x1p-46;
inline constexpr double kErrTrigAbs = 0x1p-88;
inline constexpr double kTrigMax = 0x1p20;

template <bool kCos>
inline Cand k_trig(float x, const Tables& T, double pert) {
  double xd = std::fabs(double(x)) <= kTrigMax ? double(x) : 0.0;
  double s = xd * T.two_over_pi + kMagic;
  double kd = s - kMagic;
  uint64_t q = (std::bit_cast<uint64_t>(s) + (kCos ? 1 : 0)) & 3;  // cos x = sin(x + pi/2)
  double r = ((xd - kd * T.pio2_1) - kd * T.pio2_2) - kd * T.pio2_3;
  r = kd == 0.0 ? xd : r;  // keeps -0 (p3 < 0 would make -0 - (0 * p3) = +0)
  double r2 = r * r;
  double sn = r * horner(T.sin_c, r2), cs = horner(T.cos_c, r2);
  double v = (q & 1) ? cs : sn;
  double y = ((q & 2) ? -v : v) * pert;
  Cand c = round_test(y, kErrTrig, kd != 0.0 ? kErrTrigAbs : 0.0);
  bool special = std::isinf(x) || std::isnan(x);
  c.slow = special ? false : (c.slow || !(std::fabs(double(x)) <= kTrigMax));
  c.out = std::isinf(x) ? x - x : c.out;  // sin(+-inf) = NaN
  c.out = std::isnan(x) ? x + x : c.out;
  return c;
}

/// sin or cos for 2^20 < |x| < 2^128 (finite), by Payne-Hanek, scalar:
/// |x| = m 2^e (m < 2^24 an integer, e >= -3). In x 2/pi mod 4 the bits of
/// 2/pi of weight 2^-j with j <= e - 2 contribute multiples of 4; the next
/// 128 bits, w (j = e-1 .. e+126), give x 2/pi = m w 2^-126 + tail mod 4,
/// tail < m 2^e 2^-(e+126) < 2^-102. m w mod 2^128 is exact in 128-bit
/// integers; k = its nearest multiple of 2^126, rf = the rest, |rf| <= 2^125;
/// r = rf 2^-126 pi/2: relative 3u (conversion, constant, product),
/// absolute 2^-101 from the tail. Through sin/cos as in k_trig: relative
/// 42u < kErrTrig, absolute < 2^-100.
inline constexpr double kErrTrigBigAbs = 0x1p-100;

inline uint64_t two_over_pi_window(const Tables& T, unsigned t) {
  unsigned w = t / 64, b = t % 64;
  return b ? (T.two_over_pi_bits[w] << b) | (T.two_over_pi_bits[w + 1] >> (64 - b)) : T.two_over_pi_bits[w];
}

template <bool kCos>
inline Cand k_trig_big(float x, const Tables& T) {
  using u128 = unsigned __int128;
  uint32_t b = std::bit_cast<uint32_t>(x) & 0x7fffffffu;
  uint64_t m = (b & 0x7fffffu) | 0x800000u;  // |x| > 2^20 is normal
  int e = int(b >> 23) - 150;                 // |x| = m 2^e
  unsigned t0 = unsigned(e - 1 + 6);          // table position of j = e - 1
  u128 p = (u128(m) * two_over_pi_window(T, t0) << 64) + u128(m) * two_over_pi_window(T, t0 + 64);
  u128 k = (p + (u128(1) << 125)) >> 126;
  __int128 rf = __int128(p - (k << 126));
  double r = double(rf) * 0x1p-126 * T.pio2;
  double r2 = r * r;
  double sn = r * horner(T.sin_c, r2), cs = horner(T.cos_c, r2);
  unsigned q = unsigned(k & 3) + (kCos ? 1 : 0);
  double v = (q & 1) ? cs : sn;
  v = (q & 2) ? -v : v;
  if (!kCos && x < 0) v = -v;  // sin(-x) = -sin x; cos is even
  return round_test(v, kErrTrig, kErrTrigBigAbs);
}

// ---- pow ------------------------------------------------------------------
// Regular inputs only: x, y finite and non-zero, x > 0 or y an integer (the
// rest, Annex F's table, goes to the slow path). pow = +-2^t,
// t = y log2|x| = y k + y f, f = (t_i + log1p(r))/ln2, |f| < 0.51:
//  * f: as log with k = 0, plus the constant and the product: 40u relative.
//  * y k is exact (24 x 9 bits); |y f| <= 1.04 |t| (|f| <= 0.51 |k| when
//    k != 0); the product and the sum: u each. |error of t| <= 42u |t|.
//  * t is clamped to [-152, 130]: beyond, the result is 0 or inf either way,
//    so 42u * 152 < 2^-40.3 absolute; 2^t = exp(t ln2): times ln2, plus the
//    product t*ln2 (u * 105) and kErrExp: < 2^-40.8 relative.
inline constexpr double kErrPow = 0x1p-39;

[[gnu::always_inline]] inline Cand k_pow(float x, float y, const Tables& T, double pert) {
  // Every test is on double lanes and uses & and |: GCC's vectoriser gives
  // up on branches, on masks of mixed widths, and on its own rewrite of
  // isfinite into unsigned 64-bit compares (AVX2 has none); a - a is 0
  // exactly when a is finite.
  double xd = x, yd = y, ax = std::fabs(xd), ay = std::fabs(yd);
  bool y_int = (ay >= 0x1p23) | ((ay + kMagic) - kMagic == ay);
  bool regular = (ax != 0.0) & (ax - ax == 0.0) & (ay != 0.0) & (ay - ay == 0.0) & ((xd > 0.0) | y_int);
  // For an irregular x the parts are garbage (every table index is masked
  // into range) and the result is replaced below.
  LogParts l = log_parts(ax, T);
  double f = (l.t + l.p) * T.inv_ln2;
  double t = clamp(yd * l.k + yd * f, -152.0, 130.0);
  double v = exp_core(t * T.ln2, T);
  // x < 0 (so y is an integer): the sign is y's parity. |y|/2 is exact; it
  // is not an integer (rounding it moves it) exactly when y is odd; floats
  // of 2^24 and more are even.
  double half = ay * 0.5;
  bool y_odd = (ay < 0x1p24) & ((half + kMagic) - kMagic != half);
  double res = (((xd < 0.0) & y_odd) ? -v : v) * pert;
  // A NaN fails the rounding test: the irregular inputs go to resolve()
  // in f32.cpp (Annex F's table).
  return round_test(regular ? res : NAN, kErrPow);
}

}  // namespace stax::math::f32
