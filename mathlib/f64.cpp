// binary64 entry points: the fast paths of f64_exp_log.h and f64_trig.h,
// with MPFR (counted as a fallback) wherever a fast path declines.
#include <bit>
#include <cstdint>
#include <vector>

#include "mathlib/crmath.h"
#include "mathlib/f64_impl.h"

namespace stax::math {

namespace f64 {

Fault g_fault;

void perturb_exp_coefficient(int ulps, bool hi_part) {
  static const DD original = tables().inv_fact[3];
  DD& c = mutable_tables().inv_fact[3];
  c = original;
  double& part = hi_part ? c.hi : c.lo;
  // Same sign and binade: |ulps| is small.
  part = std::bit_cast<double>(std::bit_cast<uint64_t>(part) + uint64_t(int64_t(ulps)));
}

}  // namespace f64

namespace {

bool fast(Fn f, double x, double y, double* out) {
  const f64::Tables& T = f64::tables();
  const f64::Fault& F = f64::g_fault;
  switch (f) {
    case Fn::Exp: return f64::exp_fast(x, out, T, F);
    case Fn::Expm1: return f64::expm1_fast(x, out, T, F);
    case Fn::Log: return f64::log_fast(x, out, T, F);
    case Fn::Log2: return f64::log2_fast(x, out, T, F);
    case Fn::Log10: return f64::log10_fast(x, out, T, F);
    case Fn::Log1p: return f64::log1p_fast(x, out, T, F);
    case Fn::Tanh: return f64::tanh_fast(x, out, T, F);
    case Fn::Erf: return f64::erf_fast(x, out, T, F);
    case Fn::Sin: return f64::sin_fast(x, out, T, F);
    case Fn::Cos: return f64::cos_fast(x, out, T, F);
    case Fn::Pow: return f64::pow_fast(x, y, out, T, F);
  }
  return false;
}

}  // namespace

double eval_f64(Fn f, double x, double y) {
  double r;
  if (fast(f, x, y, &r)) return r;
  note_fallback(f, Width::F64);
  return mpfr_f64(f, x, y);
}

// Fast path over the block first; the elements it declines keep their inputs
// aside (out may alias x or y) for the slow path.
void eval_f64_n(Fn f, size_t n, double* out, const double* x, const double* y) {
  struct Miss {
    size_t i;
    double x, y;
  };
  std::vector<Miss> misses;
  for (size_t i = 0; i < n; ++i) {
    const double xi = x[i], yi = y ? y[i] : 0.0;
    if (!fast(f, xi, yi, &out[i])) misses.push_back({i, xi, yi});
  }
  for (const Miss& m : misses) {
    note_fallback(f, Width::F64);
    out[m.i] = mpfr_f64(f, m.x, m.y);
  }
}

}  // namespace stax::math
