// Integer intervals (Def. 6.4): the one interval type of the project, used by
// the Interval domain of index expressions (views.h `iexpr_range`) and by the
// value ranges of integer tensors (value_range.h). Bounds are 128-bit,
// so the arithmetic of two int64 intervals is exact; each client decides how
// a result that leaves int64 (or a dtype) is widened.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace stax::sem {

using I128 = __int128;

struct Interval {
  I128 lo = 0, hi = 0;
  bool operator==(const Interval&) const = default;
};

/// Python floor division of 128-bit values; b != 0.
inline I128 floordiv128(I128 a, I128 b) {
  I128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// The hull of f over the four corners (f monotone in each argument on the box).
template <class F>
Interval corners(Interval a, Interval b, F f) {
  I128 v[4] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
  return {*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
}

inline Interval operator+(Interval a, Interval b) { return {a.lo + b.lo, a.hi + b.hi}; }
inline Interval operator-(Interval a, Interval b) { return {a.lo - b.hi, a.hi - b.lo}; }
inline Interval operator*(Interval a, Interval b) {
  return corners(a, b, [](I128 x, I128 y) { return x * y; });
}

/// `[lo, hi]` in decimal (bounds within int64).
inline std::string interval_text(Interval r) {
  return "[" + std::to_string(int64_t(r.lo)) + ", " + std::to_string(int64_t(r.hi)) + "]";
}

}  // namespace stax::sem
