// Finds binary32 inputs whose correctly rounded result is hardest to decide:
// the exact value closest to a midpoint between two floats (the smallest
// rounding margin), for each unary function, among the inputs of a scan.
// The inputs it prints are listed in tests/mathlib/cr32_test.cpp.
//
//   g++ -std=c++20 -O2 mathlib/tools/hard_cases_f32.cpp -lmpfr -lgmp -o /tmp/hard && /tmp/hard [N]
//
// Scans N inputs (default 2^22) with random bits, |x| in [2^-8, 2^8).
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

namespace {

using Eval = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

struct Named {
  const char* name;
  Eval f;
};

/// The distance (in ulps of the binary32 result) from the exact f(x) to the
/// nearest midpoint between two floats, from f(x) at 120 bits; infinity
/// when the result is not a finite normal float.
double margin(Eval f, float x) {
  mpfr_t a, r;
  mpfr_init2(a, 64);
  mpfr_init2(r, 120);
  mpfr_set_flt(a, x, MPFR_RNDN);
  f(r, a, MPFR_RNDN);
  double m = INFINITY;
  if (mpfr_number_p(r) && !mpfr_zero_p(r)) {
    long e = mpfr_get_exp(r);  // r = 0.1xxx * 2^e
    if (e > -125 && e <= 128) {
      mpfr_mul_2si(r, r, 24 - e, MPFR_RNDN);  // the 24-bit significand as an integer part
      mpfr_abs(r, r, MPFR_RNDN);
      mpfr_t fl;
      mpfr_init2(fl, 120);
      mpfr_floor(fl, r);
      mpfr_sub(r, r, fl, MPFR_RNDN);  // the fraction below one ulp
      m = std::fabs(mpfr_get_d(r, MPFR_RNDN) - 0.5);
      mpfr_clear(fl);
    }
  }
  mpfr_clears(a, r, static_cast<mpfr_ptr>(nullptr));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (size_t(1) << 22);
  const Named fns[] = {{"exp", mpfr_exp},   {"expm1", mpfr_expm1}, {"log", mpfr_log}, {"log2", mpfr_log2},
                       {"log10", mpfr_log10}, {"log1p", mpfr_log1p}, {"tanh", mpfr_tanh}, {"erf", mpfr_erf},
                       {"sin", mpfr_sin},   {"cos", mpfr_cos}};
  for (const Named& fn : fns) {
    std::mt19937 g(12345);
    std::vector<std::pair<double, float>> best;
    for (size_t i = 0; i < n; ++i) {
      float x = std::bit_cast<float>(uint32_t((g() & 0x807fffffu) | ((119u + g() % 16) << 23)));
      double m = margin(fn.f, x);
      best.push_back({m, x});
      if (best.size() > 64) {
        std::sort(best.begin(), best.end());
        best.resize(3);
      }
    }
    std::sort(best.begin(), best.end());
    for (size_t i = 0; i < 3 && i < best.size(); ++i)
      std::printf("%s 0x%08xu  margin %.3g ulp (2^%.1f)\n", fn.name, std::bit_cast<uint32_t>(best[i].second), best[i].first,
                  std::log2(best[i].first));
  }
}
