#pragma once
// Double-double ("double-word") arithmetic: a value is hi + lo with
// |lo| <= ulp(hi)/2, about 106 bits of precision. Built from error-free
// transformations only (TwoSum, Veltkamp/Dekker TwoProduct), so it needs no
// FMA and is exact under -ffp-contract=off.
//
// Error bounds, u = 2^-53, from Joldes, Muller, Popescu, "Tight and rigorous
// error bounds for basic building blocks of double-word arithmetic" (ACM TOMS
// 2017); all relative to the exact result of the operation on the inputs:
//   add   (AccurateDWPlusDW, their Alg. 6)  <= 3u^2 + 13u^4  <  2^-104.4
//   mul_d (DWTimesFP1, Alg. 7)              <= 1.5u^2 + 4u^3 <  2^-105.4
//   mul   (DWTimesDW1, Alg. 10, FMA replaced by a rounded product and sum:
//          the extra rounding of xl*yh is <= u^2 |xy|)  <= 8u^2  =  2^-103
//   div   (DWDivDW2, Alg. 17)               <= 15u^2 + 56u^3 <  2^-102
// These hold when no intermediate overflows or underflows; callers keep
// operands inside [2^-900, 2^990] in magnitude, or account for an absolute
// error of 2^-1074 per product where a tiny lo part may underflow.
//
// The library's correctness rests on these bounds: each fast path states its
// total error as a sum of them (see f64_*.cpp).

namespace stax::math::dd {

// Trivial (no member initialisers), so that a table of them can be a
// CUDA __device__ global (backends/gpu/cuda_math.cpp); `DD x{}` is zero.
struct DD {
  double hi, lo;
};

// s + e == a + b exactly, for any a, b (Knuth's TwoSum).
inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

// s + e == a + b exactly when a == 0 or exponent(a) >= exponent(b).
inline DD fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// Veltkamp splitting: a == hi + lo with both halves of at most 26 bits.
// Valid for |a| < 2^995 (the multiplication by 2^27 + 1 must not overflow).
inline DD split(double a) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  const double hi = t - (t - a);
  return {hi, a - hi};
}

// p + e == a * b exactly unless the product underflows (Dekker).
inline DD two_prod(double a, double b) {
  const double p = a * b;
  const DD as = split(a), bs = split(b);
  const double e = ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo;
  return {p, e};
}

inline DD neg(DD x) { return {-x.hi, -x.lo}; }

inline DD add(DD x, DD y) {
  const DD s = two_sum(x.hi, y.hi);
  const DD t = two_sum(x.lo, y.lo);
  const DD v = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(v.hi, t.lo + v.lo);
}

inline DD mul_d(DD x, double y) {
  const DD c = two_prod(x.hi, y);
  const DD t = fast_two_sum(c.hi, x.lo * y);
  return fast_two_sum(t.hi, t.lo + c.lo);
}

inline DD mul(DD x, DD y) {
  const DD c = two_prod(x.hi, y.hi);
  const double tl = x.hi * y.lo + x.lo * y.hi;
  return fast_two_sum(c.hi, c.lo + tl);
}

inline DD div(DD x, DD y) {
  const double th = x.hi / y.hi;
  const DD r = mul_d(y, th);
  const double d = (x.hi - r.hi) + (x.lo - r.lo);
  return fast_two_sum(th, d / y.hi);
}

}  // namespace stax::math::dd
