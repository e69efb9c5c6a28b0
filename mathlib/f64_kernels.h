#pragma once
// The shared pieces of the binary64 fast paths (f64_exp_log.h, f64_trig.h):
// the rounding tests, scaling by powers of two, and the fault-injection
// settings of the tests.
//
// Contract of a fast path `bool f_fast(x, double* out, T, F)`: it returns
// true only with *out the correctly rounded (to nearest-even) value of f(x),
// including special inputs it handles itself; false sends the caller to the
// slow path. T is the tables (f64_tables.h, computed by the host with MPFR);
// F the fault settings (the default Fault{} changes nothing).
//
// The GPU backend compiles these headers (dd.h, f64_tables.h, this one,
// f64_exp_log.h, f64_trig.h) as device code too (backends/gpu/cuda_math.cpp
// embeds their text; NVRTC gets a small shim of the std names used here):
// keep to <bit>, <cmath> and <cstdint>, inline functions only, no globals,
// no builtins outside those names. The host library (f64.cpp) passes its
// tables and the tests' g_fault (f64_impl.h).

#include <bit>
#include <cmath>
#include <cstdint>

#include "mathlib/dd.h"
#include "mathlib/f64_tables.h"

namespace stax::math::f64 {

// Test hook: a deliberately wrong fast path (f64_impl.h's g_fault on the
// host; device code passes the default).
struct Fault {
  double bound_scale = 1.0;  // multiplies every claimed error bound
  double inject_rel = 0.0;   // adds inject_rel*|hi| to every approximation
};

inline constexpr double kMaxDouble = 0x1.fffffffffffffp+1023;

// The NaN of an invalid operation (log(-1), sin(inf), pow(-2, 0.5)): the
// x86 default NaN (sign set, quiet, zero payload), the bits glibc and MPFR
// return. A NaN input is returned quieted with its payload (x + x), as glibc
// does.
inline double invalid_nan() { return std::bit_cast<double>(uint64_t(0xfff8000000000000ULL)); }

// 2^e as a double, e in [-1022, 1023].
inline double exp2i(int e) { return std::bit_cast<double>(uint64_t(e + 1023) << 52); }

// The rounding test. `y` approximates the real value v with
// |y.hi + y.lo - v| <= rel * |v|, |y.lo| <= ulp(y.hi)/2, and rel >= 2^-100 a
// power of two. If every point of that interval rounds to the same double,
// stores it in *out and returns true.
//
// Why it is sound: with e >= (err + 2^-52 |lo|) / (1 - 2^-52) (err the bound
// in absolute terms), fl(lo - e) <= lo - err and fl(lo + e) >= lo + err, so
// hi + fl(lo -/+ e) bracket v; rounding is monotonic, so if both brackets
// round to the same double, v does too (an overflow to inf included: then
// both brackets, and v, are past the overflow threshold). Computed below:
// err <= rel |hi| (1 + 2^-51); e = ((rel|hi| + rel|hi| 2^-40) + |lo| 2^-48)
// with two roundings and an underflow of at most 2^-1075 in the last
// product is still >= rel|hi| (1 + 2^-42) + |lo| 2^-50 because rel|hi| >=
// 2^-1000 (|hi| >= 2^-900); that exceeds the requirement. Below 2^-900 and
// for non-finite hi the test fails (slow path).
inline bool round_test(dd::DD y, double rel, double* out, const Fault& F) {
  y.lo += F.inject_rel * std::fabs(y.hi);
  const double ahi = std::fabs(y.hi);
  if (!(ahi >= 0x1p-900 && ahi <= kMaxDouble)) return false;
  const double e1 = rel * ahi;
  const double e = ((e1 + e1 * 0x1p-40) + std::fabs(y.lo) * 0x1p-48) * F.bound_scale;
  const double u = y.hi + (y.lo - e);
  const double v = y.hi + (y.lo + e);
  if (u != v) return false;
  *out = u;
  return true;
}

// round_subnormal's comparison of a computed end with ±0.5 (see there).
inline bool classify_half(double z, double* c) {
  if (z > 0.5) return *c = 1, true;
  if (z < -0.5) return *c = -1, true;
  if (z > -0.5 && z < 0.5) return *c = 0, true;
  return false;
}

// The rounding test for results on the subnormal grid: v = 2^m (y.hi +
// y.lo) within rel * |v|, |v| < 2^-1021 (every candidate is a multiple of
// 2^-1074), m + 1074 in [-1022, 1023]. In units of 2^-1074, Y = yh + yl
// (exact scaling); n0 = nearbyint(yh) and d = (yh - n0) + yl exactly
// (two_sum; yh - n0 is exact), so RN(v) = (n0 + c) 2^-1074 where c rounds
// d to an integer. The interval d -/+ E (E >= rel |Y|, widened as in
// round_test) is bracketed by its computed ends; comparing a computed end
// with the representable 0.5 gives the same answer as the exact end unless
// it equals ±0.5, which is left undecided. If both ends agree, c is known;
// a midpoint (Y - n0 = ±0.5) is always inside the interval, so it is never
// decided here.
inline bool round_subnormal(dd::DD y, int m, double rel, double* out, const Fault& F) {
  y.lo += F.inject_rel * std::fabs(y.hi);
  const double sgn = y.hi < 0 ? -1.0 : 1.0;
  const double sc = exp2i(m + 1074);
  const double yh = std::fabs(y.hi) * sc, yl = sgn * y.lo * sc;
  if (!(yh >= 0x1p-100 && yh < 0x1p53)) return false;
  const double n0 = std::nearbyint(yh);
  const dd::DD d = dd::two_sum(yh - n0, yl);
  const double e1 = rel * yh;
  const double e = ((e1 + e1 * 0x1p-40) + std::fabs(d.lo) * 0x1p-48) * F.bound_scale;
  double c_lo, c_hi;
  if (!classify_half(d.hi + (d.lo - e), &c_lo) || !classify_half(d.hi + (d.lo + e), &c_hi) || c_lo != c_hi)
    return false;
  *out = sgn * ((n0 + c_lo) * 0x1p-1074);
  return true;
}

// u * 2^m for m in [-1022, 1024], exact when the result is normal.
inline double scale(double u, int m) { return m > 1023 ? u * exp2i(m - 1) * 2.0 : u * exp2i(m); }

// A value 2^m * y (exp_core's result).
struct Scaled {
  dd::DD y;
  int m;
};

// u 2^m correctly rounded from s (see exp_fast and round_subnormal).
inline bool round_scaled(const Scaled& s, bool normal, double rel, double* out, const Fault& F) {
  if (!normal) return round_subnormal(s.y, s.m, rel, out, F);
  double u;
  if (!round_test(s.y, rel, &u, F)) return false;
  *out = scale(u, s.m);
  return true;
}

}  // namespace stax::math::f64
