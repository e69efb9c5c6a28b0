#include "mathlib/f64_tables.h"

#include <gmp.h>
#include <mpfr.h>

#include "mathlib/mpfr_big.h"

namespace stax::math::f64 {

namespace {

DD to_dd(const mpfr_t x) {
  Big t;
  const double hi = mpfr_get_d(x, MPFR_RNDN);
  mpfr_sub_d(t.v, x, hi, MPFR_RNDN);
  return {hi, mpfr_get_d(t.v, MPFR_RNDN)};
}

// Rounds x to `bits` significant bits, stores it in *out and subtracts it
// from x (exactly: x has Big::kBits bits, the piece is a prefix of it).
void peel(mpfr_t x, int bits, double* out) {
  mpfr_t p;
  mpfr_init2(p, bits);
  mpfr_set(p, x, MPFR_RNDN);
  *out = mpfr_get_d(p, MPFR_RNDN);  // exact: bits <= 53
  mpfr_sub(x, x, p, MPFR_RNDN);
  mpfr_clear(p);
}

DD ratio(long num, long den) {
  Big t;
  mpfr_set_si(t.v, num, MPFR_RNDN);
  mpfr_div_si(t.v, t.v, den, MPFR_RNDN);
  return to_dd(t.v);
}

void build(Tables& T) {
  Big a, b;
  // ln2 and its pieces.
  mpfr_const_log2(a.v, MPFR_RNDN);
  T.ln2 = to_dd(a.v);
  mpfr_ui_div(b.v, 1, a.v, MPFR_RNDN);
  T.inv_ln2 = to_dd(b.v);
  mpfr_mul_ui(b.v, b.v, 64, MPFR_RNDN);
  T.inv_l64 = mpfr_get_d(b.v, MPFR_RNDN);
  mpfr_div_ui(a.v, a.v, 64, MPFR_RNDN);
  peel(a.v, 36, &T.l64[0]);
  peel(a.v, 36, &T.l64[1]);
  peel(a.v, 53, &T.l64[2]);
  mpfr_set_ui(a.v, 10, MPFR_RNDN);
  mpfr_log(a.v, a.v, MPFR_RNDN);
  mpfr_ui_div(a.v, 1, a.v, MPFR_RNDN);
  T.inv_ln10 = to_dd(a.v);

  for (int j = 0; j < 64; ++j) {
    mpfr_set_si(a.v, j, MPFR_RNDN);
    mpfr_div_ui(a.v, a.v, 64, MPFR_RNDN);
    mpfr_ui_pow(a.v, 2, a.v, MPFR_RNDN);
    T.exp2_j[j] = to_dd(a.v);
  }
  mpfr_set_ui(a.v, 1, MPFR_RNDN);
  for (int i = 0; i < 16; ++i) {
    if (i > 0) mpfr_div_ui(a.v, a.v, unsigned(i), MPFR_RNDN);
    T.inv_fact[i] = to_dd(a.v);
  }

  for (int idx = 0; idx < 184; ++idx) {
    T.log_c[idx] = 0;
    T.log_negc[idx] = {};
    if (idx < 90) continue;
    const double c = idx == 128 ? 1.0 : 128.0 / idx;
    T.log_c[idx] = c;
    mpfr_set_d(a.v, c, MPFR_RNDN);
    mpfr_log(a.v, a.v, MPFR_RNDN);
    mpfr_neg(a.v, a.v, MPFR_RNDN);
    T.log_negc[idx] = to_dd(a.v);
  }
  for (int i = 0; i < 16; ++i) T.log1p_coef[i] = ratio(i % 2 ? -1 : 1, i + 1);

  mpfr_const_pi(a.v, MPFR_RNDN);
  mpfr_div_ui(a.v, a.v, 2, MPFR_RNDN);
  mpfr_ui_div(b.v, 1, a.v, MPFR_RNDN);
  T.two_over_pi = mpfr_get_d(b.v, MPFR_RNDN);
  T.pio2_dd = to_dd(a.v);
  peel(a.v, 33, &T.pio2[0]);
  peel(a.v, 33, &T.pio2[1]);
  peel(a.v, 53, &T.pio2[2]);
  peel(a.v, 53, &T.pio2[3]);
  peel(a.v, 53, &T.pio2[4]);

  // floor(2^1280 * 2/pi) mod 2^1280: 2/pi < 1, so its integer part is 0.
  two_over_pi_words(T.two_over_pi_bits, 20, 1280);
  static_assert(sizeof(unsigned long) == 8);
  for (int j = 0; j < 52; ++j) {
    mpfr_set_si(a.v, j, MPFR_RNDN);
    mpfr_div_ui(a.v, a.v, 64, MPFR_RNDN);
    mpfr_sin_cos(a.v, b.v, a.v, MPFR_RNDN);
    T.sin_j[j] = to_dd(a.v);
    T.cos_j[j] = to_dd(b.v);
  }
  // (-1)^i/(2i+1)! and (-1)^i/(2i)!, from 1/n! with alternating signs.
  mpfr_set_ui(a.v, 1, MPFR_RNDN);
  for (int n = 0; n <= 13; ++n) {
    if (n > 0) mpfr_div_ui(a.v, a.v, unsigned(n), MPFR_RNDN);
    DD v = to_dd(a.v);
    if ((n / 2) % 2) v = dd::neg(v);
    if (n % 2 && n / 2 < 6) T.sin_coef[n / 2] = v;
    if (n % 2 == 0 && n / 2 < 7) T.cos_coef[n / 2] = v;
  }

  for (int n = 0; n < Tables::kErfTerms; ++n) T.inv_odd[n] = ratio(1, 2 * n + 3);
  mpfr_const_pi(a.v, MPFR_RNDN);
  mpfr_sqrt(a.v, a.v, MPFR_RNDN);
  mpfr_ui_div(a.v, 2, a.v, MPFR_RNDN);
  T.two_over_sqrtpi = to_dd(a.v);
}

}  // namespace

Tables& mutable_tables() {
  static Tables t = [] {
    Tables x{};
    build(x);
    return x;
  }();
  return t;
}

const Tables& tables() { return mutable_tables(); }

}  // namespace stax::math::f64
