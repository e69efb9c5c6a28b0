#include <mpfr.h>

#include <array>
#include <atomic>

#include "mathlib/crmath.h"

namespace stax::math {

namespace {

constexpr std::array<std::string_view, kNumFns> kNames = {
    "exp", "expm1", "log", "log2", "log10", "log1p", "tanh", "erf", "sin", "cos", "pow"};

std::array<std::array<std::atomic<uint64_t>, 2>, kNumFns> g_fallbacks{};
thread_local std::array<std::array<uint64_t, 2>, kNumFns> t_fallbacks{};

// MPFR keeps per-thread caches (constants such as pi and log 2 that the
// slow path computed); they would leak with the thread. The first slow
// path a thread takes creates this guard, whose destructor runs at the
// thread's exit and frees them, so no caller has to remember to.
struct ThreadCacheGuard {
  bool used = false;
  ~ThreadCacheGuard() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};
thread_local ThreadCacheGuard t_cache_guard;

// Evaluates f at precision `prec` with the exponent range of a format whose
// smallest normal exponent is emin_normal and largest finite exponent is
// emax, then subnormalizes: the result is the correctly rounded value in
// that format (MPFR's documented recipe for emulating IEEE formats).
template <class T>
T mpfr_eval(Fn f, T x, T y, mpfr_prec_t prec, mpfr_exp_t emin, mpfr_exp_t emax) {
  // The exponent range is global state of MPFR (thread-local when MPFR is
  // built thread-safe, as Debian's is); restore it afterwards.
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  t_cache_guard.used = true;  // constructs this thread's guard
  mpfr_t a, b, r;
  mpfr_init2(a, 64);
  mpfr_init2(b, 64);
  mpfr_init2(r, prec);
  mpfr_set_d(a, double(x), MPFR_RNDN);  // exact: float and double fit in 64 bits
  mpfr_set_d(b, double(y), MPFR_RNDN);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  int t = 0;
  switch (f) {
    case Fn::Exp: t = mpfr_exp(r, a, MPFR_RNDN); break;
    case Fn::Expm1: t = mpfr_expm1(r, a, MPFR_RNDN); break;
    case Fn::Log: t = mpfr_log(r, a, MPFR_RNDN); break;
    case Fn::Log2: t = mpfr_log2(r, a, MPFR_RNDN); break;
    case Fn::Log10: t = mpfr_log10(r, a, MPFR_RNDN); break;
    case Fn::Log1p: t = mpfr_log1p(r, a, MPFR_RNDN); break;
    case Fn::Tanh: t = mpfr_tanh(r, a, MPFR_RNDN); break;
    case Fn::Erf: t = mpfr_erf(r, a, MPFR_RNDN); break;
    case Fn::Sin: t = mpfr_sin(r, a, MPFR_RNDN); break;
    case Fn::Cos: t = mpfr_cos(r, a, MPFR_RNDN); break;
    case Fn::Pow: t = mpfr_pow(r, a, b, MPFR_RNDN); break;
  }
  t = mpfr_check_range(r, t, MPFR_RNDN);
  mpfr_subnormalize(r, t, MPFR_RNDN);
  T out;
  if constexpr (sizeof(T) == 4) out = mpfr_get_flt(r, MPFR_RNDN);
  else out = mpfr_get_d(r, MPFR_RNDN);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  mpfr_clears(a, b, r, static_cast<mpfr_ptr>(nullptr));
  return out;
}

}  // namespace

std::string_view fn_name(Fn f) { return kNames[size_t(f)]; }

std::optional<Fn> fn_from_name(std::string_view name) {
  for (int i = 0; i < kNumFns; ++i)
    if (kNames[size_t(i)] == name) return Fn(i);
  return std::nullopt;
}

// binary32: 24-bit significand, normal exponents 2^-126 .. 2^127; in MPFR's
// convention (significand in [1/2, 1)) that is emin = -125 - 23 = -148 for
// the smallest subnormal 2^-149, emax = 128.
float mpfr_f32(Fn f, float x, float y) { return mpfr_eval<float>(f, x, y, 24, -148, 128); }

// binary64: smallest subnormal 2^-1074 → emin = -1073, emax = 1024.
double mpfr_f64(Fn f, double x, double y) { return mpfr_eval<double>(f, x, y, 53, -1073, 1024); }

uint64_t fallback_count(Fn f, Width w) {
  return g_fallbacks[size_t(f)][size_t(w)].load(std::memory_order_relaxed);
}

void reset_fallback_counts() {
  for (auto& per_fn : g_fallbacks)
    for (auto& c : per_fn) c.store(0, std::memory_order_relaxed);
}

uint64_t thread_fallback_count(Fn f, Width w) { return t_fallbacks[size_t(f)][size_t(w)]; }

void note_fallback(Fn f, Width w) {
  g_fallbacks[size_t(f)][size_t(w)].fetch_add(1, std::memory_order_relaxed);
  ++t_fallbacks[size_t(f)][size_t(w)];
}

}  // namespace stax::math
