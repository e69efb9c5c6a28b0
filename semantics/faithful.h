// Faithful enclosures: the set of results that *any* faithful implementation
// of a program may give, as the Enclosure domain in a second mode
// (EnclosureDomain::set_faithful). This is the model a peer compiler
// (PyTorch eager, Inductor) is checked against without tolerances
// (peers/torch_check.h):
//
//  - an IEEE operation (add, sub, mul, div, sqrt, casts between floats, ...)
//    rounds its real result to the dtype's grid; the enclosure of its result
//    is [RD(lo), RU(hi)] of the real result's enclosure. This contains the
//    exact real value too, so a contraction (fma) or a dot product computed
//    with fused operations stays inside;
//  - a library function (exp, log, tanh, erf, ...) is within its documented
//    bound of the real value: `ulps` units in the last place of the dtype and
//    an absolute error `abs` (FaithfulModel::pytorch_cpu says which and why);
//    sigmoid and rsqrt are their composite formulas (docs/design.md §3), each step
//    faithful, so an intermediate overflow is allowed for as in PyTorch;
//  - a float sum of n terms in *any* order is within γ(n−1)·Σ|x| of the real
//    sum (Higham, Thm. 4.4; it holds with gradual underflow), and may overflow
//    when Σ|x| reaches the dtype's largest value; max and min are exact in
//    any order; a float product of n factors in any order is within
//    γ(n)·|Πx| of the real product while no partial product can leave the
//    normal range (checked from bounds on the factors' magnitudes), and any
//    value otherwise;
//  - each float value carries a "may be NaN" flag (EVal::i, otherwise unused
//    for floats) next to the interval of its non-NaN values: an interval that
//    is NaN means "only NaN".
//
// Integers and bools stay exact, as in the Real domain's enclosures.
#pragma once

#include <mpfr.h>

#include <map>
#include <string>

#include "semantics/scalar_op.h"

namespace stax::sem {

struct FaithfulModel {
  /// A library function's documented error against the real value: at most
  /// `ulps` units in the last place of the result dtype plus `abs`.
  struct Bound {
    double ulps = 0;
    double abs = 0;
  };
  /// Ops not listed round like IEEE operations (half an ULP).
  std::map<ScalarOp, Bound> library;

  /// PyTorch's CPU kernels (ATen vectorised with SLEEF's 1-ULP functions,
  /// glibc in scalar tails; the erf polynomial of Abramowitz–Stegun 7.1.26),
  /// see the definition for the sources.
  static FaithfulModel pytorch_cpu();
  /// Every library function correctly rounded (our mathlib): the tightest model.
  static FaithfulModel correctly_rounded();
  /// "exp: 1 ulp, erf: 1 ulp + 1.5e-07, ..." for verdicts.
  std::string describe() const;
};

/// The largest value of float dtype `t` at most x / the smallest at least x
/// (±inf beyond the finite range; NaN for NaN).
double grid_down(mpfr_srcptr x, DType t);
double grid_up(mpfr_srcptr x, DType t);
/// `v` (a value of t's grid) moved `k` steps of t's grid (k > 0 up, k < 0
/// down), clamped at ±inf (a step down from +inf is the largest finite value).
double grid_step(double v, DType t, int k);
/// The largest finite value of float dtype t.
double grid_max(DType t);
/// The smallest positive normal value of float dtype t.
double grid_min_normal(DType t);
/// Distance in units of t's grid between two finite values of it (0 for
/// equal, including +0 and -0).
double grid_distance(double a, double b, DType t);

}  // namespace stax::sem
