#pragma once
// binary64 fast paths of sin, cos, tanh and erf in double-double arithmetic
// (mathlib/dd.h), with the error bound of each derived below; u = 2^-53.
// Inline, tables and fault settings passed in: the host library and the GPU
// backend's device code compile this same text (f64_kernels.h).
#include <bit>
#include <cmath>
#include <cstdint>

#include "mathlib/f64_exp_log.h"

namespace stax::math::f64 {

using dd::DD;

// Cody-Waite reduction for |x| < 2^20: x = k pi/2 + r, q = k mod 4.
// k*pio2[0], k*pio2[1] are exact (33-bit pieces, |k| < 2^20); x - k*pio2[0]
// is exact (multiples of 2^-53 below 1 in magnitude, since |x| >= pi/4 when
// k != 0); the two_sum and both two_prods are exact. What is left: three
// adds, each within 3u^2 of its exact result, which is r plus at most
// |k| * 2^-118 (the pieces not yet subtracted); the rounding of k*pio2[4]
// and the truncation of pi/2 after five pieces, < 2^-204. So the absolute
// error is <= 9u^2 |r| + 2^-202. Above 2^20 (reduce_large), and when
// |r| < 2^-60 (not reached by any double, whose worst case is about 2^-61 at
// 6381956970095103 * 2^797; kept as a guard), the reduction is refused; so
// r's relative error is <= 9u^2 + 2^-142.
inline bool reduce(double x, DD* r, int* q, const Tables& T) {
  const double kd = std::nearbyint(x * T.two_over_pi);
  *q = int(int64_t(kd) & 3);
  if (kd == 0) {
    *r = {x, 0};
    return true;
  }
  DD s = dd::two_sum(x - kd * T.pio2[0], -kd * T.pio2[1]);
  s = dd::add(s, dd::neg(dd::two_prod(kd, T.pio2[2])));
  s = dd::add(s, dd::neg(dd::two_prod(kd, T.pio2[3])));
  s = dd::add(s, DD{-kd * T.pio2[4], 0});
  if (!(std::fabs(s.hi) >= 0x1p-60)) return false;
  *r = s;
  return true;
}

// Payne-Hanek reduction for 2^20 <= |x| < inf, in integer arithmetic.
// |x| = M 2^E (M < 2^53 an integer, E >= -32). Bits of 2/pi of weight
// 2^(-j) with E - j >= 2 contribute multiples of 4 to |x| 2/pi and are
// skipped: with j0 = max(1, E - 1), the 256-bit window W of bits j0 ..
// j0+255 gives P = M W (320 bits, exact) and |x| 2/pi = P 2^-F (mod 4),
// F = j0 + 255 - E in [254, 288], up to the bits beyond the window:
// < 2^53 2^(E - j0 - 255) <= 2^-200. The two bits above F are the quadrant;
// the F below, the fraction f, taken in (-1/2, 1/2] (negating P when f >=
// 1/2). From f's leading one, 117 bits become a double-double (within
// 2^-104.9 relative: 53 exact bits, the next 64 rounded once to a double,
// the rest truncated, < 2^-116); f < 2^-64 is refused (as in reduce; no
// double comes that close, see there). r = f * pi/2 (mul 8u^2, constant
// u^2): relative error < 11.1u^2 + 2^-136.
inline bool reduce_large(double x, DD* r, int* q, const Tables& T) {
  const uint64_t xb = std::bit_cast<uint64_t>(x);
  const int biased = int((xb >> 52) & 0x7ff);
  const uint64_t m = (xb & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);
  const int e = biased - 1075;
  const int j0 = e - 1 > 1 ? e - 1 : 1;
  // W: bits j0 .. j0+255 of 2/pi, as 4 words, least significant first.
  const int s = j0 - 1, w0 = s / 64, sh = s % 64;
  uint64_t wv[4];
  for (int k = 0; k < 4; ++k) {
    const uint64_t a = T.two_over_pi_bits[w0 + k], b = T.two_over_pi_bits[w0 + k + 1];
    wv[3 - k] = sh == 0 ? a : (a << sh) | (b >> (64 - sh));
  }
  uint64_t p[5];  // M W, least significant first
  unsigned __int128 carry = 0;
  for (int k = 0; k < 4; ++k) {
    carry += static_cast<unsigned __int128>(m) * wv[k];
    p[k] = uint64_t(carry);
    carry >>= 64;
  }
  p[4] = uint64_t(carry);
  const auto bit = [&](int i) { return (p[i / 64] >> (i % 64)) & 1; };
  const auto bits64 = [&](int i) {  // bits i .. i+63 (i >= 0, i + 63 < 320)
    const int w = i / 64, b = i % 64;
    return b == 0 ? p[w] : (p[w] >> b) | (p[w + 1] << (64 - b));
  };
  const int f = j0 + 255 - e;
  int quadrant = int(bit(f) | (bit(f + 1) << 1));
  const bool negative = bit(f - 1);
  if (negative) {  // P := -P (mod 2^320): its low F bits become 2^F - frac
    ++quadrant;
    uint64_t c = 1;
    for (uint64_t& w : p) {
      w = ~w + c;
      c = c && w == 0;
    }
  }
  int top = f - 1;  // leading one of the fraction
  while (top >= f - 64 && !bit(top)) --top;
  if (top < f - 64) return false;  // f < 2^-64, or exactly 0
  const uint64_t t_hi = bits64(top - 63), t_lo = bits64(top - 127);
  const double hi = std::ldexp(double(t_hi >> 11), top - 52 - f);
  const uint64_t rest = ((t_hi & 0x7ff) << 53) | (t_lo >> 11);  // 64 of the 75 bits after hi's 53
  const double lo = std::ldexp(double(rest), top - 116 - f);
  DD fr = dd::fast_two_sum(hi, lo);
  if (negative) fr = dd::neg(fr);
  *r = dd::mul(fr, T.pio2_dd);
  *q = quadrant & 3;
  if (x < 0) {
    *r = dd::neg(*r);
    *q = (4 - *q) & 3;
  }
  return true;
}

// sin(r) and cos(r) for |r| <= pi/4 + 2^-30. r = a + t with a = j/64 exact
// (j = round(64|r|) <= 51) and |t| <= 1/128 (r.hi - a is exact by Sterbenz).
//  - sin t = t * sum_{i<6} (-t^2)^i/(2i+1)!: truncation t^12/13! < 2^-116;
//    z = t^2 8u^2 (damped by z/6), Horner 11.2u^2, coefficients 1.01u^2,
//    final mul 8u^2: < 21u^2. cos t = sum_{i<7} (-t^2)^i/(2i)!: < 13u^2.
//  - j > 0: sin r = sin a cos t + cos a sin t, cos r = cos a cos t -
//    sin a sin t (table within u^2; mul 8u^2; add 3u^2). For j >= 1,
//    tan a >= 2 tan|t|, so the terms' magnitudes add up to at most 3 |sin r|
//    (1.03 |cos r| for cos): sin within 3 * 30u^2 + 3u^2 = 93u^2, cos within
//    34u^2.
// With r's own error (relative 9u^2 + 2^-142 from reduce, 11.1u^2 + 2^-136
// from reduce_large, which sin and cos do not magnify for |r| <= pi/4 +
// 2^-30) the total is < 105u^2 < 2^-99.2.
inline void sincos_kernel(DD r, DD* s, DD* c, const Tables& T) {
  const bool neg = r.hi < 0;
  if (neg) r = dd::neg(r);
  const int j = int(r.hi * 64.0 + 0.5);
  const DD t = dd::two_sum(r.hi - j / 64.0, r.lo);
  const DD z = dd::mul(t, t);
  DD ps = T.sin_coef[5];
  for (int i = 4; i >= 0; --i) ps = dd::add(dd::mul(ps, z), T.sin_coef[i]);
  const DD st = dd::mul(ps, t);
  DD ct = T.cos_coef[6];
  for (int i = 5; i >= 0; --i) ct = dd::add(dd::mul(ct, z), T.cos_coef[i]);
  if (j == 0) {
    *s = st;
    *c = ct;
  } else {
    *s = dd::add(dd::mul(T.sin_j[j], ct), dd::mul(T.cos_j[j], st));
    *c = dd::add(dd::mul(T.cos_j[j], ct), dd::neg(dd::mul(T.sin_j[j], st)));
  }
  if (neg) *s = dd::neg(*s);
}

inline constexpr double kTrigErr = 0x1p-96;

// sin x for x != 0 finite, from the quadrant: sin, cos, -sin, -cos of r;
// cos x: cos, -sin, -cos, sin.
inline bool sincos_fast(double x, bool want_cos, double* out, const Tables& T, const Fault& F) {
  DD r{};
  int q;
  if (!(std::fabs(x) < 0x1p20 ? reduce(x, &r, &q, T) : reduce_large(x, &r, &q, T))) return false;
  DD s{}, c{};
  sincos_kernel(r, &s, &c, T);
  if (want_cos) q = (q + 1) & 3;
  const DD v = q == 0 ? s : q == 1 ? c : q == 2 ? dd::neg(s) : dd::neg(c);
  return round_test(v, kTrigErr, out, F);
}

// |x| < 2^-26: sin x = x - x^3/6 + ..., x^3/6 < 2^(e-54) for |x| < 2^e,
// e <= -26, below half an ulp on either side of x: the result is x.
inline bool sin_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  if (std::isinf(x)) return *out = invalid_nan(), true;
  if (std::fabs(x) < 0x1p-26) return *out = x, true;
  return sincos_fast(x, false, out, T, F);
}

// |x| < 2^-27: 1 - cos x < x^2/2 < 2^-55, below half the spacing (2^-53)
// of the doubles just under 1: the result is 1.
inline bool cos_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  if (std::isinf(x)) return *out = invalid_nan(), true;
  if (std::fabs(x) < 0x1p-27) return *out = 1.0, true;
  return sincos_fast(x, true, out, T, F);
}

// tanh x = E / (E + 2), E = expm1(2|x|) (relative 2^-94, f64_impl.h): the
// sum adds E's error at most once more (E > 0) and 3u^2, the division
// 15.1u^2: < 2^-92.9, claimed 2^-92. |x| > 20: 1 - tanh|x| < 2e^-40 < 2^-54,
// half the spacing below 1: the result is ±1. |x| < 2^-27: |x| - tanh|x| <
// |x|^3/3, below half an ulp of x: the result is x.
inline bool tanh_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  const double ax = std::fabs(x);
  if (ax > 20) return *out = std::copysign(1.0, x), true;
  if (ax < 0x1p-27) return *out = x, true;
  const DD e = expm1_dd(2 * ax, T);
  DD t = dd::div(e, dd::add(e, DD{2.0, 0}));
  if (x < 0) t = dd::neg(t);
  return round_test(t, 0x1p-92, out, F);
}

// erf x = (2/sqrt(pi)) x e^(-x^2) S, S = sum_n t_n, t_0 = 1,
// t_(n+1) = t_n * 2x^2/(2n+3): positive terms, no cancellation.
//  - Stop after adding t_(n+1) once 2n+5 >= 4x^2 + 1 (every later ratio is
//    <= 1/2) and t_(n+1) <= 2^-106 S: the tail is <= t_(n+1) (2^-106
//    relative). More than 256 terms (not reached for |x| < 6): slow path.
//  - t_n is within 17n u^2 (two muls and the table 1/(2n+3) per step); each
//    add is within 3u^2 of a partial sum <= S: S within 20 * 256 u^2 <
//    2^-93.6. x^2 is exact by two_prod when |x| >= 2^-511; below, its error
//    (< 2^-1074) is negligible against S >= 1.
//  - e^(-x^2): exp_core, 2^-101.5 (the scaling by 2^m, m >= -52, is exact);
//    two muls, the constant and mul_d by |x|: 19u^2.
// Total < 2^-93.5, claimed 2^-90. |x| >= 6: erfc(6) < 2^-55, so ±1.
// 0 < |x| < 2^-900: erf x = (2/sqrt(pi)) x (1 - x^2/3 + ...) with x^2/3 <
// 2^-1800, so (2/sqrt(pi)) x (relative 2^-104.4 with the constant) rounded
// directly: on x 2^1000 (exact) with the result scaled back when every
// candidate is normal (|x| >= 2^-1022), on the subnormal grid otherwise
// (then |result| < 1.13 2^-1022 < 2^-1021); claimed 2^-100.
inline bool erf_fast(double x, double* out, const Tables& T, const Fault& F) {
  if (std::isnan(x)) return *out = x + x, true;
  if (x == 0) return *out = x, true;
  const double ax = std::fabs(x);
  if (ax >= 6) return *out = std::copysign(1.0, x), true;
  if (ax < 0x1p-900) {
    const DD y = dd::mul_d(T.two_over_sqrtpi, x * 0x1p1000);
    if (ax < 0x1p-1022) return round_subnormal(y, -1000, 0x1p-100, out, F);
    double u;
    if (!round_test(y, 0x1p-100, &u, F)) return false;
    return *out = u * 0x1p-1000, true;
  }
  const DD x2 = dd::two_prod(ax, ax);
  const DD w{2 * x2.hi, 2 * x2.lo};
  DD t{1.0, 0}, sum{1.0, 0};
  for (int n = 0;; ++n) {
    if (n == Tables::kErfTerms) return false;
    t = dd::mul(dd::mul(t, w), T.inv_odd[n]);
    sum = dd::add(sum, t);
    if (2.0 * n + 5 >= 4 * x2.hi + 1 && t.hi <= sum.hi * 0x1p-106) break;
  }
  const Scaled g = exp_core(dd::neg(x2), T);
  const double sc = exp2i(g.m);
  DD y = dd::mul(sum, DD{g.y.hi * sc, g.y.lo * sc});
  y = dd::mul_d(dd::mul(y, T.two_over_sqrtpi), ax);
  if (x < 0) y = dd::neg(y);
  return round_test(y, 0x1p-90, out, F);
}

}  // namespace stax::math::f64
