// The binary64 correctly rounded functions (mathlib/f64*.cpp) against the
// MPFR reference: random inputs over every exponent range, special values,
// thresholds, published hard-to-round cases, the block entry point, the
// fallback counters, and deliberately wrong fast paths (f64_impl.h's hook).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "mathlib/crmath.h"
#include "mathlib/f64_impl.h"

namespace stax::math {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMin = std::numeric_limits<double>::min();
constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kTiny = std::numeric_limits<double>::denorm_min();

const Fn kUnary[] = {Fn::Exp, Fn::Expm1, Fn::Log, Fn::Log2, Fn::Log10, Fn::Log1p,
                     Fn::Tanh, Fn::Erf, Fn::Sin, Fn::Cos};

uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

double from_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

// docs/design.md §3: same bits, or both NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }

std::string describe(Fn f, double x, double y, double got, double want) {
  std::ostringstream os;
  os << std::hexfloat << fn_name(f) << "(" << x;
  if (is_binary(f)) os << ", " << y;
  os << ") = " << got << ", MPFR says " << want;
  return os.str();
}

// Number of inputs where eval_f64 differs from MPFR; the first few are
// reported through Catch's INFO.
int mismatches(Fn f, const std::vector<double>& xs, const std::vector<double>& ys = {}) {
  int bad = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double y = ys.empty() ? 0.0 : ys[i];
    const double got = eval_f64(f, xs[i], y), want = mpfr_f64(f, xs[i], y);
    if (!same(got, want) && ++bad <= 3) UNSCOPED_INFO(describe(f, xs[i], y, got, want));
  }
  return bad;
}

// Inputs for f: a third uniform over the interesting range, a third with a
// random exponent in [-60, 12] (both signs), a third arbitrary bit patterns
// (every exponent, subnormals, infinities and NaNs included).
std::vector<double> random_inputs(Fn f, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-60, 12);
  double range = 10;
  if (f == Fn::Exp || f == Fn::Expm1) range = 750;
  if (f == Fn::Tanh) range = 22;
  if (f == Fn::Erf) range = 6.5;
  if (f == Fn::Sin || f == Fn::Cos) range = 1e8;  // both reductions
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) {
    double x;
    switch (i % 3) {
      case 0: x = unit(rng) * range; break;
      case 1: x = std::ldexp(unit(rng), expo(rng)); break;
      default: x = from_bits(rng()); break;
    }
    const bool log_like = f == Fn::Log || f == Fn::Log2 || f == Fn::Log10;
    if (log_like && i % 3 != 2) x = std::fabs(x);
    if (f == Fn::Log1p && i % 3 == 0) x = std::fabs(x) - 1.0;
    xs.push_back(x);
  }
  return xs;
}

std::vector<double> specials() {
  std::vector<double> v = {0.0, kInf, kNaN, kTiny, 3 * kTiny, kMin / 3, kMin, kMax, 1.0, 0.5, 2.0, 10.0,
                           100.0, 1e22, 0x1p-54, 0x1p-55, 0x1.0000000000001p-54, 0x1p-27, 0x1p-26,
                           0x1p-53, 0x1.8p-54, 0x1p-5, 709.78, 709.79, 709.7827, 709.7828, 709.78275, 709.782712893384, 709.7827128933841, 745.2,
                           745.1332191019411, 745.1332191019412, 707.6, 708.3, 40.0, 20.0, 19.1, 6.0,
                           5.9, 0x1p-900, 0x1p-901, 0x1p20, 0x1.fffffffffffffp19, 0x1p52, 0x1p1023,
                           6381956970095103.0 * 0x1p797, 1.5707963267948966, 3.141592653589793,
                           0.7853981633974483, 0x1.6a09e667f3bcdp+0, 0.9999999999999999,
                           1.0000000000000002, 1.0 / 256, 0x1.fc0p-1, 1.00390625};
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) {
    v.push_back(-v[i]);
    v.push_back(std::nextafter(v[i], kInf));
    v.push_back(std::nextafter(v[i], -kInf));
    v.push_back(-std::nextafter(v[i], kInf));
  }
  return v;
}

// Hard-to-round inputs from Lefèvre and Muller's searches (the .wc lists of
// the CORE-MATH project, which cite
// https://www.vinc17.net/research/testlibm/): results within ~2^-100 (and
// closer) of a rounding boundary. erf's list starts with its generic tiny
// cases (erf(x) ~ 2x/sqrt(pi)); tanh's, cos's and expm1's include runs of
// consecutive inputs near 2^-25.
std::vector<double> hard_cases(Fn f) {
  switch (f) {
    case Fn::Exp:
      return {0x1.0122ef37212ebp-1, 0x1.00d48a707b93ep-1, 0x1.00e0e33c8c3fdp-1, 0x1.012c061237773p-1,
              0x1.0303c5638675fp-1, 0x1.fedc746ddf8fap-1, 0x1.008eb56314daap+0, 0x1.0138c96e1a075p+0,
              0x1.001e6892695eep+0, 0x1.4118d28ce3b82p-1, 0x1.6fbce05407de8p+0, 0x1.12f8d9c3a7e66p+0};
    case Fn::Log:
    case Fn::Log2:
    case Fn::Log10:
      return {0x1.a6ae5142326b5p+0, 0x1.a6ba95b1520f9p+0, 0x1.1e852e6951306p+1, 0x1.f003daa798b71p+0,
              0x1.000976581ce4ep+1, 0x1.cc9952467a0b3p+8, 0x1.a455a70c31d8p+13, 0x1.561031d4db97cp+16,
              0x1.7d822b508bb3bp+20, 0x1.70945ecdc0194p+28, 0x1.a6004162f2b8cp+45, 0x1.131425b692c14p+46};
    case Fn::Expm1:
      return {0x1.00091a4a0dae5p+2, 0x1.000bffb8030a7p-39, 0x1.002881d0cbecfp-12, 0x1.006652fb6febep-3,
              0x1.00ada891b730cp+0, 0x1.03f81f636b806p-47, 0x1.07e0f66afed03p-48, 0x1.0f876ccdf6cd5p-49,
              0x1.1e3779b97f4a7p-50, 0x1.1e3779b97f4aep-50, 0x1.2c2fc595456a2p-49, 0x1.01e5ceb2c761ep+5};
    case Fn::Log1p:
      // log1p(x) near its argument's small-x regime, built from expm1's list
      // (not a published hard-case list for log1p).
      return {0x1.000bffb8030a7p-39, 0x1.002881d0cbecfp-12, 0x1.1e3779b97f4a7p-50, -0x1.006652fb6febep-3};
    case Fn::Tanh:
      return {0x1.000b47bdb383fp-9, 0x1.004524207fad9p-3, 0x1.00a0f3cf999acp+2, 0x1.015bdb2761717p+4,
              0x1.01885ae3c818ap+0, 0x1.02a3ad2ef6f49p-24, 0x1.0a402fcc79292p-25, 0x1.0a402fcc792ap-25,
              0x1.30fc1931f09c8p+4, 0x1.0e000000280b9p-16};
    case Fn::Erf:
      return {0x1.6d5ad4307dd52p-7, 0x1.037b548d9d7a6p-61, 0x1.059a3d07be48cp-61, 0x1.015c6c137cacp-61,
              0x1.b29404e7af1b1p-61};
    case Fn::Sin:
      return {0x1.005023d32fee5p+1, 0x1.00874a5f9fc33p-13, 0x1.0192deafac33fp+0, 0x1.034c2318b3f2dp+0,
              0x1.06800e629d672p-23, 0x1.184a0aa58191ep-24, 0x1.30c7efbee12aep-24, 0x1.6f623e27cdb79p-1,
              0x1.55b92c74d29cbp+1, 0x1.5d9b876341713p+1};
    case Fn::Cos:
      return {0x1.0009effd4bedap-12, 0x1.00147eec5cfa5p+0, 0x1.00786b0bf421p-2, 0x1.0f876ccdf6cd9p-25,
              0x1.2c2fc595456a7p-25, 0x1.0bfbedfb16285p+0, 0x1.64af4ea49404p+0, 0x1.21c6f0699a3fdp+0};
    case Fn::Pow: return {};  // pow's cases are pairs, see its test
  }
  return {};
}

TEST_CASE("f64: random inputs over all exponent ranges match MPFR", "[mathlib][f64]") {
  for (Fn f : kUnary) {
    INFO(fn_name(f));
    CHECK(mismatches(f, random_inputs(f, 12000, 17 + int(f))) == 0);
  }
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> xs, ys;
  for (int i = 0; i < 12000; ++i) {
    switch (i % 3) {
      case 0: xs.push_back(std::fabs(unit(rng)) * 8); ys.push_back(unit(rng) * 60); break;
      case 1: xs.push_back(std::ldexp(unit(rng), int(unit(rng) * 300))); ys.push_back(std::round(unit(rng) * 40)); break;
      default: xs.push_back(from_bits(rng())); ys.push_back(from_bits(rng()) * 0x1p-1000); break;
    }
  }
  CHECK(mismatches(Fn::Pow, xs, ys) == 0);
}

TEST_CASE("f64: subnormal results match MPFR", "[mathlib][f64]") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> ex, tiny, px, py;
  for (int i = 0; i < 5000; ++i) {
    ex.push_back(-707.0 - 38.3 * unit(rng));
    tiny.push_back(std::ldexp(unit(rng), -900 - int(175 * unit(rng))) * (i % 2 ? 1 : -1));
    px.push_back(i % 2 ? 0.5 + unit(rng) / 2 : -0.5);
    py.push_back(i % 2 ? 1020 + 60 * unit(rng) : std::round(1020 + 60 * unit(rng)));
  }
  CHECK(mismatches(Fn::Exp, ex) == 0);
  CHECK(mismatches(Fn::Erf, tiny) == 0);
  CHECK(mismatches(Fn::Pow, px, py) == 0);
}

TEST_CASE("f64: special values and thresholds match MPFR", "[mathlib][f64]") {
  const std::vector<double> s = specials();
  for (Fn f : kUnary) {
    INFO(fn_name(f));
    CHECK(mismatches(f, s) == 0);
  }
  // pow's whole special table: every pair of these.
  const double p[] = {0.0, -0.0, 1.0, -1.0, kInf, -kInf, kNaN, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5,
                      -2.5, 1e300, -1e300, kTiny, -kTiny, 0x1p53, 0x1p53 + 2, -0x1p53 - 1, 0x1p901,
                      1.0000000000000002, 0.9999999999999999, 1025.0, -1075.0, 709.0, 0.1};
  std::vector<double> xs, ys;
  for (double x : p)
    for (double y : p) xs.push_back(x), ys.push_back(y);
  CHECK(mismatches(Fn::Pow, xs, ys) == 0);
}

TEST_CASE("f64: exact cases are exact", "[mathlib][f64]") {
  CHECK(bits(eval_f64(Fn::Log, 1.0)) == bits(0.0));
  CHECK(bits(eval_f64(Fn::Log2, 1.0)) == bits(0.0));
  CHECK(eval_f64(Fn::Log2, 0x1p-1074) == -1074.0);
  CHECK(eval_f64(Fn::Log2, 1024.0) == 10.0);
  CHECK(eval_f64(Fn::Log10, 1e22) == 22.0);
  CHECK(eval_f64(Fn::Exp, 0.0) == 1.0);
  CHECK(bits(eval_f64(Fn::Expm1, -0.0)) == bits(-0.0));
  CHECK(bits(eval_f64(Fn::Sin, -0.0)) == bits(-0.0));
  CHECK(bits(eval_f64(Fn::Tanh, -0.0)) == bits(-0.0));
  CHECK(eval_f64(Fn::Pow, 2.0, 10.0) == 1024.0);
  CHECK(eval_f64(Fn::Pow, 9.0, 0.5) == 3.0);
  CHECK(eval_f64(Fn::Pow, -2.0, 3.0) == -8.0);
  CHECK(eval_f64(Fn::Pow, kNaN, 0.0) == 1.0);
  CHECK(eval_f64(Fn::Pow, 1.0, kNaN) == 1.0);
  CHECK(eval_f64(Fn::Pow, -1.0, kInf) == 1.0);
  CHECK(bits(eval_f64(Fn::Pow, -0.0, 3.0)) == bits(-0.0));
  CHECK(eval_f64(Fn::Pow, -0.0, -3.0) == -kInf);
  CHECK(std::isnan(eval_f64(Fn::Pow, -2.0, 0.5)));
}

TEST_CASE("f64: NaN bits: input payloads kept (quieted), invalid operations give the default NaN", "[mathlib][f64]") {
  const double quiet = from_bits(0x7ff8000000001234), signaling = from_bits(0xfff0000000000042);
  for (Fn f : kUnary) {
    INFO(fn_name(f));
    CHECK(bits(eval_f64(f, quiet)) == 0x7ff8000000001234);
    CHECK(bits(eval_f64(f, signaling)) == 0xfff8000000000042);
  }
  CHECK(bits(eval_f64(Fn::Pow, quiet, 1.5)) == 0x7ff8000000001234);
  const uint64_t invalid = bits(mpfr_f64(Fn::Log, -1.0));
  CHECK(invalid == 0xfff8000000000000);
  CHECK(bits(eval_f64(Fn::Log, -1.0)) == invalid);
  CHECK(bits(eval_f64(Fn::Log1p, -2.0)) == invalid);
  CHECK(bits(eval_f64(Fn::Sin, kInf)) == invalid);
  CHECK(bits(eval_f64(Fn::Cos, -kInf)) == invalid);
  CHECK(bits(eval_f64(Fn::Pow, -2.0, 0.5)) == invalid);
}

TEST_CASE("f64: published hard-to-round cases match MPFR", "[mathlib][f64]") {
  for (Fn f : kUnary) {
    INFO(fn_name(f));
    std::vector<double> xs = hard_cases(f);
    const size_t n = xs.size();
    for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
    CHECK(mismatches(f, xs) == 0);
  }
  // pow: (x, y) pairs with 102 to 153 identical bits after the round bit.
  CHECK(mismatches(Fn::Pow, {0x1.ffffffffffffcp-1, 0x1.ffffffffffffcp-1, 0x1.ffffffffffffp-1, 0x1.ffffffffffff8p-1},
                   {0x1.fffffffffffffp-2, -0x1.ffffffffffffdp-2, -0x1.ffffffffffff6p-3, -0x1.ffffffffffffbp-3}) == 0);
}

// exp((2j+1) 2^-53) = 1 + (2j+1) 2^-53 + (2j+1)^2 2^-107 + ...: just above
// the midpoint 1 + (2j+1) 2^-53 of two doubles, by less than exp's proven
// bound (2^-100) for j <= 3, so the rounding test must decline every one.
std::vector<double> near_midpoints() { return {0x1p-53, 3 * 0x1p-53, 5 * 0x1p-53, 7 * 0x1p-53}; }

TEST_CASE("f64: the rounding test declines inputs closer to a midpoint than the bound", "[mathlib][f64]") {
  reset_fallback_counts();
  CHECK(mismatches(Fn::Exp, near_midpoints()) == 0);
  CHECK(fallback_count(Fn::Exp, Width::F64) == near_midpoints().size());
  // An injected error within the margin (2^-103, on top of the real error
  // < 2^-101.5) changes nothing: still declined, still right.
  f64::g_fault.inject_rel = -0x1p-103;
  reset_fallback_counts();
  CHECK(mismatches(Fn::Exp, near_midpoints()) == 0);
  CHECK(fallback_count(Fn::Exp, Width::F64) == near_midpoints().size());
  f64::g_fault = {};
}

TEST_CASE("f64: deliberately wrong fast paths are caught", "[mathlib][f64]") {
  // An error bound too small (zero): the rounding test accepts everything,
  // and nothing is counted...
  f64::g_fault.bound_scale = 0;
  reset_fallback_counts();
  for (double x : near_midpoints()) eval_f64(Fn::Exp, x);
  CHECK(fallback_count(Fn::Exp, Width::F64) == 0);
  // ...so an approximation error that crosses the midpoint goes through
  // unseen by the fast path itself, and the MPFR comparison must report it.
  f64::g_fault.inject_rel = -0x1p-96;
  CHECK(mismatches(Fn::Exp, near_midpoints()) == int(near_midpoints().size()));
  f64::g_fault = {};
  CHECK(mismatches(Fn::Exp, near_midpoints()) == 0);

  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> xs;
  for (int i = 0; i < 4000; ++i) xs.push_back(unit(rng) * 700);
  // A coefficient moved in the last bit of its lo part: inside the proven
  // bound, so every result stays correct.
  f64::perturb_exp_coefficient(1, false);
  CHECK(mismatches(Fn::Exp, xs) == 0);
  f64::perturb_exp_coefficient(-1, false);
  CHECK(mismatches(Fn::Exp, xs) == 0);
  // The same coefficient moved far beyond the bound (2^20 ulps of its hi
  // part, 2^-33 relative): the results are wrong often enough that the MPFR
  // comparison over a few thousand inputs reports it.
  f64::perturb_exp_coefficient(1 << 20, true);
  CHECK(mismatches(Fn::Exp, xs) > 0);
  f64::perturb_exp_coefficient(0, false);
  CHECK(mismatches(Fn::Exp, xs) == 0);
}

TEST_CASE("f64: eval_f64_n matches eval_f64, in place too, and counts the same fallbacks", "[mathlib][f64]") {
  std::vector<double> ys;
  for (Fn f : {Fn::Exp, Fn::Log1p, Fn::Sin, Fn::Erf, Fn::Pow}) {
    INFO(fn_name(f));
    std::vector<double> xs = random_inputs(f, 3000, 7);
    for (double s : specials()) xs.push_back(s);
    if (f == Fn::Pow) {
      ys = random_inputs(Fn::Tanh, int(xs.size()), 8);
      for (double& x : xs) x = std::fabs(x);
    }
    const double* yp = f == Fn::Pow ? ys.data() : nullptr;
    reset_fallback_counts();
    std::vector<double> want;
    for (size_t i = 0; i < xs.size(); ++i) want.push_back(eval_f64(f, xs[i], yp ? yp[i] : 0.0));
    const uint64_t scalar_fallbacks = fallback_count(f, Width::F64);
    reset_fallback_counts();
    std::vector<double> out(xs.size());
    eval_f64_n(f, xs.size(), out.data(), xs.data(), yp);
    CHECK(fallback_count(f, Width::F64) == scalar_fallbacks);
    eval_f64_n(f, xs.size(), xs.data(), xs.data(), yp);  // out aliases x
    int bad = 0, bad_in_place = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      bad += !same(out[i], want[i]);
      bad_in_place += !same(xs[i], want[i]);
    }
    CHECK(bad == 0);
    CHECK(bad_in_place == 0);
  }
}

TEST_CASE("f64: fallbacks are counted, per function", "[mathlib][f64]") {
  reset_fallback_counts();
  eval_f64(Fn::Exp, 709.78275);  // next to overflow: slow path
  eval_f64(Fn::Pow, 2.0, 1024.00006);  // likewise
  eval_f64(Fn::Exp, -720.0);   // subnormal result: fast path
  eval_f64(Fn::Exp, 0.5);      // fast path
  eval_f64(Fn::Sin, 1e22);     // Payne-Hanek: fast path
  eval_f64(Fn::Cos, 0.5);      // fast path
  CHECK(fallback_count(Fn::Exp, Width::F64) == 1);
  CHECK(fallback_count(Fn::Pow, Width::F64) == 1);
  CHECK(fallback_count(Fn::Sin, Width::F64) == 0);
  CHECK(fallback_count(Fn::Cos, Width::F64) == 0);
  CHECK(fallback_count(Fn::Exp, Width::F32) == 0);
}

}  // namespace
}  // namespace stax::math
