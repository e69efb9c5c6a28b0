#pragma once
// binary64 fast paths of exp, expm1, log, log2, log10, log1p and pow, in
// double-double arithmetic (mathlib/dd.h), with the error bound of each
// derived below; u = 2^-53, so u^2 = 2^-106. The bounds of dd.h's operations
// are relative to the exact result of each operation. Inline, tables and
// fault settings passed in: the host library and the GPU backend's device
// code compile this same text (f64_kernels.h).
#include <bit>
#include <cmath>
#include <cstdint>

#include "mathlib/f64_kernels.h"

namespace stax::math::f64 {

// exp(x.hi + x.lo) = 2^m * y, |x.hi| <= 746, |x.lo| <= 2^-43: relative
// error of y at most 2^-100 (derivation at exp_core).
inline constexpr double kExpCoreErr = 0x1p-100;
// log(x.hi + x.lo) for x.hi positive and normal, |x.lo| <= ulp(x.hi)/2;
// relative error at most 2^-96 (with exact 0 at x == 1).
inline constexpr double kLogCoreErr = 0x1p-96;
// expm1(x) for 2^-54 <= |x| <= 709.7827: relative error at most 2^-94.
inline constexpr double kExpm1Err = 0x1p-94;

// exp_core. x = k ln2/64 + r, k = round(x.hi * 64/ln2), j = k mod 64,
// m = floor(k/64): exp(x) = 2^m * 2^(j/64) * exp(r).
//  - Reduction: |k| <= 746*64/ln2 < 2^16.1. k*l64[0] and k*l64[1] are exact
//    (36-bit pieces); x.hi - k*l64[0] is exact (both are multiples of
//    min(ulp(x.hi), 2^-42) and the difference is below 2^-7 while
//    |x.hi| >= 2^-8 whenever k != 0); the two_sum is exact. What is left:
//    the truncation of ln2/64 to three pieces, 2^16.1 * 2^-132; the rounding
//    of k*l64[2] (< 2^-62.9), 2^-116; two adds, 2 * 3u^2 * |r|. So
//    |r - r_exact| <= 2^-110.7, and |r| <= ln2/128 + 2^-42 < 2^-7.5.
//  - exp(r) by its Taylor polynomial of degree 10 (coefficients 1/i! as
//    double-doubles, each within u^2): truncation <= |r|^11/11! * 1.01 <
//    2^-107.7; Horner in double-double, 10 steps of mul (8u^2) and add
//    (3u^2), each step's error damped by |r|^i in the result: <= 11.1u^2;
//    coefficients: 1.01u^2. Together <= 2^-102.3.
//  - The product by 2^(j/64) (table within u^2): 9u^2 = 2^-102.8.
// Total relative error <= 2^-110.6 + 2^-102.3 + 2^-102.8 < 2^-101.5.
inline Scaled exp_core(dd::DD x, const Tables& T) {
  const double kd = std::nearbyint(x.hi * T.inv_l64);
  const int k = int(kd);
  dd::DD r = dd::two_sum(x.hi - kd * T.l64[0], -kd * T.l64[1]);
  r = dd::add(r, dd::DD{-kd * T.l64[2], 0});
  r = dd::add(r, dd::DD{x.lo, 0});
  dd::DD p = T.inv_fact[10];
  for (int i = 9; i >= 0; --i) p = dd::add(dd::mul(p, r), T.inv_fact[i]);
  return {dd::mul(T.exp2_j[k & 63], p), k >> 6};
}

// exp. x > 709.7828 overflows (ln DBL_MAX = 709.78271289338397, and the
// overflow threshold DBL_MAX + ulp/2 is only 2^-54 further), x < -745.2
// rounds to 0 (exp(-745.2) < 2^-1075). Normal results (x >= -708.3, so
// exp(x) >= 2^-1021.9): the rounding test runs on the unscaled y and the
// result is u * 2^m; scaling by 2^m commutes with rounding because every
// candidate is normal. Subnormal results (x < -708.3): round_subnormal. The
// band next to overflow, (709.7827, 709.7828], goes to the slow path.
// |x| <= 2^-53 is decided without evaluation, because 1 - 2^-54 (the
// midpoint below 1) is within reach: exp(x) = 1 + x + x^2/2 + ..., with
// x^2/2 <= 2^-107. For -2^-54 <= x < 2^-53 it lies in (1 - 2^-54, 1 + 2^-53)
// (x = -2^-54 gives 1 - 2^-54 + 2^-109 - ...): the result is 1. For
// -2^-53 <= x < -2^-54 (so x <= -2^-54 - 2^-106), it lies in
// (1 - 2^-53 - 2^-54, 1 - 2^-54 - 2^-106 + 2^-107): 1 - 2^-53.
inline bool exp_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  if (x >= -0x1p-54 && x < 0x1p-53) return *out = 1.0, true;
  if (x >= -0x1p-53 && x < -0x1p-54) return *out = 0x1.fffffffffffffp-1, true;
  if (x > 709.7828) return *out = HUGE_VAL, true;
  if (x < -745.2) return *out = 0.0, true;
  if (!(x <= 709.7827)) return false;
  return round_scaled(exp_core({x, 0}, T), x >= -708.3, kExpCoreErr, out, F);
}

// expm1_dd.
//  - |x| < 2^-5: x * sum_{i=1..14} x^(i-1)/i!, Horner with mul_d (1.5u^2)
//    and add (3u^2): <= 5.2u^2 over the steps, 1.01u^2 from coefficients,
//    1.5u^2 for the final product, truncation |x|^14/15! < 2^-110: total
//    < 2^-102.9.
//  - otherwise exp_core(x) * 2^m - 1 (the scaling is exact: m >= -59 for
//    x >= -40, and lo parts stay normal; m <= 1024 for x <= 709.7827, where
//    k = round(64x/ln2) may reach 65536): exp_core's 2^-101.5 relative error
//    on e^x is magnified by e^x/|e^x - 1| <= 1/(1 - e^(-1/32)) < 32.5, plus
//    the add's 3u^2: < 2^-96.4.
inline dd::DD expm1_dd(double x, const Tables& T) {
  if (std::fabs(x) < 0x1p-5) {
    dd::DD q = T.inv_fact[14];
    for (int i = 13; i >= 1; --i) q = dd::add(dd::mul_d(q, x), T.inv_fact[i]);
    return dd::mul_d(q, x);
  }
  const Scaled s = exp_core({x, 0}, T);
  return dd::add(dd::DD{scale(s.y.hi, s.m), scale(s.y.lo, s.m)}, dd::DD{-1.0, 0});
}

// expm1. x < -40: e^x < 2^-57 is below half the spacing (2^-53) of the
// doubles just above -1, so the result is -1. |x| < 2^-54: expm1(x) = x +
// x^2/2 + ..., and x^2/2 < 2^-55 |x| is below half an ulp on either side of
// x (also when x is a power of two and the value moves towards zero, since
// 2^(2e-1) < 2^(e-54) for e < -53), so the result is x.
inline bool expm1_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  if (x > 709.7828) return *out = HUGE_VAL, true;
  if (x < -40) return *out = -1.0, true;
  if (std::fabs(x) < 0x1p-54) return *out = x, true;
  if (x > 709.7827) return false;
  return round_test(expm1_dd(x, T), kExpm1Err, out, F);
}

// log_core. x = 2^e m, m in [sqrt(1/2), sqrt(2)); idx = round(128 m),
// c = log_c[idx] ~ 128/idx; r = m c - 1 + tail*c formed exactly (two_prod;
// m c - 1 is exact by Sterbenz; with a tail, one add: 3u^2 |r|), |r| <=
// (1/256)/(91/128) + 2^-51 < 2^-7.54. log x = e ln2 + (-log c) + log1p(r).
//  - log1p(r) = r * sum_{i=0..13} (-r)^i/(i+1): truncation < 2^-109.5
//    relative; Horner 11.2u^2, coefficients 1.01u^2, final mul 8u^2, the
//    error of r 3.1u^2: L within 23.4u^2 of log1p(r).
//  - A = e*ln2: 2.5u^2 |A|; B = -log c: u^2 |B|, |B| <= 0.3411; two adds,
//    3u^2 of their results.
//  Cases: e = 0 and idx = 128 (x within 2^-8 of 1): A = B = 0 exactly and
//  the result is L: 23.4u^2. e = 0, idx != 128: |log x| >= 0.003899, and
//  the absolute error <= u^2 (0.3411 + 23.4 * 0.00537 + 3 * 0.3411 + 3|res|)
//  is < 385u^2 relative. e != 0: |log x| >= |e| ln2 / 2, absolute error <=
//  u^2 (5 + 1 + 0.4 + 3.06 + 3)|res|. So the relative error is < 2^-97.4.
inline dd::DD log_core(dd::DD x, const Tables& T) {
  int e = 0;
  if (x.hi < 0x1p-1022) {  // subnormal input (log only; exact scaling)
    x.hi *= 0x1p54;
    e = -54;
  }
  uint64_t bits = std::bit_cast<uint64_t>(x.hi);
  e += int(bits >> 52) - 1023;
  bits = (bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1023) << 52);
  double m = std::bit_cast<double>(bits);
  if (m > 0x1.6a09e667f3bcdp+0) {
    m *= 0.5;
    ++e;
  }
  const int idx = int(m * 128.0 + 0.5);
  const double c = T.log_c[idx];
  const dd::DD p = dd::two_prod(m, c);
  dd::DD r = dd::two_sum(p.hi - 1.0, p.lo);
  if (x.lo != 0) r = dd::add(r, dd::two_prod(std::ldexp(x.lo, -e), c));
  dd::DD q = T.log1p_coef[13];
  for (int i = 12; i >= 0; --i) q = dd::add(dd::mul(q, r), T.log1p_coef[i]);
  const dd::DD l = dd::mul(q, r);
  const dd::DD a = dd::mul_d(T.ln2, double(e));
  return dd::add(dd::add(a, T.log_negc[idx]), l);
}

// The bound to claim for log_core({s, t}): in the central bucket (e = 0,
// idx = 128, i.e. s in [127.5/128, 128.5/128)) the result is L alone, within
// 23.4u^2 < 2^-101.5, and 2^-100 leaves room for log2/log10's 9u^2; the
// tighter claim lets more inputs next to 1 pass the rounding test.
inline double log_bound(double s) { return s >= 0x1.fep-1 && s < 0x1.01p0 ? 0x1p-100 : kLogCoreErr; }

// Specials shared by log, log2, log10 (C23 F.10.3): log(1) = +0 exactly.
inline bool log_special(double x, double* out) {
  if (std::isnan(x)) return *out = x + x, true;
  if (x < 0) return *out = invalid_nan(), true;
  if (x == 0) return *out = -HUGE_VAL, true;
  if (std::isinf(x)) return *out = x, true;
  if (x == 1) return *out = 0.0, true;
  return false;
}

inline bool log_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (log_special(x, out)) return true;
  return round_test(log_core({x, 0}, T), log_bound(x), out, F);
}

// log2, log10: log_core times 1/ln2 or 1/ln10 (mul 8u^2, constant u^2):
// < 2^-97.4 + 2^-102.8 < 2^-97.2, claimed 2^-96 (2^-100 next to 1:
// 32.4u^2 < 2^-101). Exact results (log2 of a
// power of two, log10 of 10^k) are doubles far from any rounding boundary,
// so the test passes on them.
inline bool log2_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (log_special(x, out)) return true;
  return round_test(dd::mul(log_core({x, 0}, T), T.inv_ln2), log_bound(x), out, F);
}

inline bool log10_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (log_special(x, out)) return true;
  return round_test(dd::mul(log_core({x, 0}, T), T.inv_ln10), log_bound(x), out, F);
}

// log1p: log_core of the exact sum 1 + x = s + t (two_sum). |x| < 2^-54:
// log1p(x) = x - x^2/2 + ..., within half an ulp of x on either side (as for
// expm1), so the result is x.
inline bool log1p_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  if (x < -1) return *out = invalid_nan(), true;
  if (x == -1) return *out = -HUGE_VAL, true;
  if (std::isinf(x)) return *out = x, true;
  if (std::fabs(x) < 0x1p-54) return *out = x, true;
  const dd::DD s = dd::two_sum(1.0, x);
  return round_test(log_core(s, T), log_bound(s.hi), out, F);
}

inline bool is_odd_integer(double y) {
  return std::fabs(y) < 0x1p53 && y == std::trunc(y) && (int64_t(y) & 1) != 0;
}

// C23 F.10.4.4, as MPFR implements it. Returns false for the regular case:
// x finite, nonzero and != ±1, y finite and nonzero, and x > 0 or y an
// integer.
inline bool pow_special(double x, double y, double* out) {
  if (y == 0 || x == 1) return *out = 1.0, true;
  if (std::isnan(x) || std::isnan(y)) return *out = x + y, true;
  const bool y_odd = is_odd_integer(y);
  if (x == -1 && y == std::trunc(y)) return *out = y_odd ? -1.0 : 1.0, true;
  if (std::isinf(y)) {
    const double ax = std::fabs(x);
    if (ax == 1) return *out = 1.0, true;
    return *out = (ax < 1) == (y < 0) ? HUGE_VAL : 0.0, true;
  }
  if (x == 0) {
    if (y < 0) return *out = y_odd ? std::copysign(HUGE_VAL, x) : HUGE_VAL, true;
    return *out = y_odd ? x : 0.0, true;
  }
  if (std::isinf(x)) {
    if (x > 0) return *out = y < 0 ? 0.0 : HUGE_VAL, true;
    if (y < 0) return *out = y_odd ? -0.0 : 0.0, true;
    return *out = y_odd ? -HUGE_VAL : HUGE_VAL, true;
  }
  if (x < 0 && y != std::trunc(y)) return *out = invalid_nan(), true;
  return false;
}

// pow(x, y) = ±exp(y log|x|). z = y * log_core(|x|): relative error
// <= 2^-97.4 + 1.5u^2 < 2^-97.3, so |z - y log|x|| <= 746 * 2^-97.3 <
// 2^-87.7 whenever |z| <= 746; exp turns that absolute error into a relative
// one, plus exp_core's 2^-101.5: < 2^-87.6, claimed 2^-86. Overflow and
// underflow are decided on z, whose relative error is far below the 2^-23
// margins used (z > 709.7828: inf; z < -746: 0; fast up to 709.7827);
// subnormal results as in exp; the band next to overflow goes to the slow
// path. |y| > 2^900 with |x| != 1: |log|x|| >= 2^-54, so |z| > 2^846 (and
// y's split would overflow).
inline bool pow_fast(double x, double y, double* out, const Tables& T, const Fault& F) {
  if (pow_special(x, y, out)) return true;
  const bool negate = x < 0 && is_odd_integer(y);
  const double sign = negate ? -1.0 : 1.0;
  const dd::DD l = log_core({std::fabs(x), 0}, T);
  double zhi;
  dd::DD z{};
  if (std::fabs(y) > 0x1p900) {
    zhi = (l.hi > 0) == (y > 0) ? HUGE_VAL : -HUGE_VAL;
  } else {
    z = dd::mul_d(l, y);
    zhi = z.hi;
  }
  if (zhi > 709.7828) return *out = sign * HUGE_VAL, true;
  if (zhi < -746) return *out = sign * 0.0, true;
  if (!(zhi <= 709.7827)) return false;
  double r;
  if (!round_scaled(exp_core(z, T), zhi >= -708.3, 0x1p-86, &r, F)) return false;
  *out = sign * r;
  return true;
}

}  // namespace stax::math::f64
