// binary64 correctly rounded functions: per function, on 10^6
// random inputs of three distributions ("range": uniform over the function's
// useful range; "bits": arbitrary bit patterns, every exponent; "edges":
// next to the places where the fast paths cancel or switch method), the fallback
// rate of eval_f64_n, its time per element against mpfr_f64 and the host
// libm, the number of results where the host libm differs from the correctly
// rounded one, and a check that eval_f64_n agrees with MPFR on every input.
// Usage: stax_bench_mathlib_f64 [n]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "mathlib/crmath.h"

namespace {

using stax::math::Fn;

double libm(Fn f, double x, double y) {
  switch (f) {
    case Fn::Exp: return std::exp(x);
    case Fn::Expm1: return std::expm1(x);
    case Fn::Log: return std::log(x);
    case Fn::Log2: return std::log2(x);
    case Fn::Log10: return std::log10(x);
    case Fn::Log1p: return std::log1p(x);
    case Fn::Tanh: return std::tanh(x);
    case Fn::Erf: return std::erf(x);
    case Fn::Sin: return std::sin(x);
    case Fn::Cos: return std::cos(x);
    case Fn::Pow: return std::pow(x, y);
  }
  return 0;
}

bool same(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

double range_of(Fn f) {
  switch (f) {
    case Fn::Exp: case Fn::Expm1: return 745;
    case Fn::Tanh: return 22;
    case Fn::Erf: return 6.5;
    case Fn::Sin: case Fn::Cos: return 1e5;
    default: return 1e3;
  }
}

enum class Dist { Range, Bits, Edges };

// Edges: sin/cos within a few ulps of k pi/2 (k up to 10^15); the logs near
// 1, sqrt(2) and the table's bucket boundaries; pow with x near 1 and large
// y, or results near overflow and underflow; the others near the thresholds
// of their branches (relative perturbations from 2^-1 to 2^-50).
double edge(Fn f, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double tiny = (u(rng) - 0.5) * std::ldexp(1.0, -int(u(rng) * 50));
  switch (f) {
    case Fn::Sin:
    case Fn::Cos: {
      double x = std::floor(u(rng) * (u(rng) < 0.5 ? 1e6 : 1e15)) * 1.5707963267948966;
      for (int i = int(u(rng) * 5); i > 0; --i) x = std::nextafter(x, u(rng) < 0.5 ? -HUGE_VAL : HUGE_VAL);
      return x;
    }
    case Fn::Log: case Fn::Log2: case Fn::Log10: case Fn::Log1p: {
      const double b[] = {1.0, 1.4142135623730951, (90 + std::floor(u(rng) * 92) + 0.5) / 128};
      const double x = b[int(u(rng) * 3)] * (1 + tiny);
      return f == Fn::Log1p ? x - 1 : x;
    }
    case Fn::Exp: case Fn::Expm1: case Fn::Tanh: case Fn::Erf: {
      const double b[] = {0x1p-5, 0x1p-54, 40, 0x1p-27, 20, 6, 0x1p-26, 0x1p-900, 0x1p-1022, 708.3, 0.5, 709.78};
      return b[int(u(rng) * 12)] * (1 + tiny) * (u(rng) < 0.5 ? -1 : 1);
    }
    case Fn::Pow: return 0;  // pairs: see inputs()
  }
  return 0;
}

void inputs(Fn f, Dist dist, size_t n, std::vector<double>& xs, std::vector<double>& ys) {
  std::mt19937_64 rng(42 + int(f));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  xs.resize(n);
  ys.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double x, y = 0;
    if (dist == Dist::Edges && f == Fn::Pow) {
      if (i % 2) {
        x = 1 + unit(rng) * std::ldexp(1.0, -int(std::fabs(unit(rng)) * 52));
        y = unit(rng) * std::ldexp(1.0, int(std::fabs(unit(rng)) * 60));
      } else {
        x = std::fabs(unit(rng)) * 2;
        y = (unit(rng) < 0 ? 1 : -1) * (700 + std::fabs(unit(rng)) * 50) / std::log(x);
      }
    } else if (dist == Dist::Edges) {
      x = edge(f, rng);
    } else if (dist == Dist::Bits) {
      const uint64_t b = rng();
      std::memcpy(&x, &b, sizeof x);
      if (f == Fn::Pow) y = unit(rng) * 64;
    } else if (f == Fn::Pow) {
      x = std::fabs(unit(rng)) * 8;
      y = unit(rng) * 64;
    } else {
      x = unit(rng) * range_of(f);
      if (f == Fn::Log || f == Fn::Log2 || f == Fn::Log10) x = std::fabs(x);
      if (f == Fn::Log1p) x = std::fabs(x) - 1.0;
    }
    xs[i] = x;
    ys[i] = y;
  }
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? size_t(std::atol(argv[1])) : 1000000;
  std::printf("%-6s %-5s %10s %9s %9s %9s %10s %8s\n", "fn", "dist", "fallback%", "cr_ns", "mpfr_ns", "libm_ns",
              "libm_diff", "wrong");
  std::vector<double> xs, ys, cr(n), ref(n), lm(n);
  for (int fi = 0; fi < stax::math::kNumFns; ++fi) {
    const Fn f = Fn(fi);
    for (Dist dist : {Dist::Range, Dist::Bits, Dist::Edges}) {
      inputs(f, dist, n, xs, ys);
      const double* yp = f == Fn::Pow ? ys.data() : nullptr;
      stax::math::reset_fallback_counts();
      double t0 = now();
      stax::math::eval_f64_n(f, n, cr.data(), xs.data(), yp);
      const double t_cr = now() - t0;
      const uint64_t fb = stax::math::fallback_count(f, stax::math::Width::F64);
      t0 = now();
      for (size_t i = 0; i < n; ++i) ref[i] = stax::math::mpfr_f64(f, xs[i], ys[i]);
      const double t_mpfr = now() - t0;
      t0 = now();
      for (size_t i = 0; i < n; ++i) lm[i] = libm(f, xs[i], ys[i]);
      const double t_libm = now() - t0;
      size_t diff = 0, wrong = 0;
      for (size_t i = 0; i < n; ++i) {
        diff += !same(lm[i], ref[i]);
        wrong += !same(cr[i], ref[i]);
      }
      std::printf("%-6s %-5s %10.4f %9.1f %9.1f %9.1f %10zu %8zu\n", std::string(stax::math::fn_name(f)).c_str(),
                  dist == Dist::Range ? "range" : dist == Dist::Bits ? "bits" : "edges", 100.0 * double(fb) / double(n), 1e9 * t_cr / double(n),
                  1e9 * t_mpfr / double(n), 1e9 * t_libm / double(n), diff, wrong);
      std::fflush(stdout);
    }
  }
}
