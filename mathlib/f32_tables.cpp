// The tables of f32_tables.h, computed by MPFR at 256 bits and rounded once
// to binary64 (round to nearest): every entry is within 2^-53 relative of
// its definition.
#include "mathlib/f32_tables.h"

#include <mpfr.h>

#include "mathlib/mpfr_big.h"

#include <bit>
#include <cmath>
#include <initializer_list>

namespace stax::math::f32 {

namespace {


/// v rounded to `bits` significant bits (a "hi" part whose products with
/// small integers are exact in binary64).
double round_to_bits(const Big& v, mpfr_prec_t bits) {
  mpfr_t t;
  mpfr_init2(t, bits);
  mpfr_set(t, v.v, MPFR_RNDN);
  double d = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  return d;
}

/// hi = v to `bits` bits, lo = v - hi to 53 bits.
void split(const Big& v, mpfr_prec_t bits, double& hi, double& lo) {
  hi = round_to_bits(v, bits);
  Big r;
  mpfr_sub_d(r.v, v.v, hi, MPFR_RNDN);
  lo = r.get();
}

Tables make_tables() {
  Tables t{};
  Big ln2, pi, x, y;
  mpfr_const_log2(ln2.v, MPFR_RNDN);
  mpfr_const_pi(pi.v, MPFR_RNDN);
  for (int j = 0; j < kExpTable; ++j) {
    mpfr_set_si(x.v, j, MPFR_RNDN);
    mpfr_div_si(x.v, x.v, kExpTable, MPFR_RNDN);
    mpfr_exp2(y.v, x.v, MPFR_RNDN);
    t.exp2j[j] = y.get();
  }
  for (int j = 0; j < 16; ++j) {
    mpfr_set_si(x.v, j, MPFR_RNDN);
    mpfr_div_si(x.v, x.v, 16, MPFR_RNDN);
    mpfr_exp2(y.v, x.v, MPFR_RNDN);
    t.exp16_2j[j] = y.get();
  }
  // 1/n! for n = 0..13.
  mpfr_set_ui(x.v, 1, MPFR_RNDN);
  for (int n = 0; n < 14; ++n) {
    if (n > 0) mpfr_div_ui(x.v, x.v, unsigned(n), MPFR_RNDN);
    if (n < 6) t.exp_c[n] = x.get();
    if (n < 7) t.exp16_c[n] = x.get();
    if (n >= 1) t.expm1_c[n - 1] = x.get();
  }
  // An IEEE division is correctly rounded: each (-1)^n/(n+1) is within u.
  for (int n = 0; n < 7; ++n) t.log_c_r[n] = (n % 2 ? -1.0 : 1.0) / (n + 1);
  // sin and cos: (-1)^n / k!, k = 0..17.
  mpfr_set_ui(x.v, 1, MPFR_RNDN);
  for (int k = 0; k < 18; ++k) {
    if (k > 0) mpfr_div_ui(x.v, x.v, unsigned(k), MPFR_RNDN);
    double v = x.get() * (((k / 2) % 2) ? -1.0 : 1.0);  // sign flip is exact
    if (k % 2) t.sin_c[k / 2] = v;
    else t.cos_c[k / 2] = v;
  }
  // erf: c_n = 2^n / (1*3*5*...*(2n+1)).
  mpfr_set_ui(x.v, 1, MPFR_RNDN);
  for (int n = 0; n < kErfTerms; ++n) {
    if (n > 0) {
      mpfr_mul_ui(x.v, x.v, 2, MPFR_RNDN);
      mpfr_div_ui(x.v, x.v, unsigned(2 * n + 1), MPFR_RNDN);
    }
    t.erf_c[n] = x.get();
  }
  // log subintervals.
  t.log_max_r = 0;
  for (int i = 0; i < kLogTable; ++i) {
    double zlo = std::bit_cast<double>(kLogOff + (uint64_t(i) << 45));
    double zhi = std::bit_cast<double>(kLogOff + (uint64_t(i + 1) << 45));
    double inv = 1.0;
    if (i != kLogOne) {
      Big c(zlo);
      mpfr_add_d(c.v, c.v, zhi, MPFR_RNDN);
      mpfr_ui_div(c.v, 2, c.v, MPFR_RNDN);
      inv = round_to_bits(c, 28);
    }
    t.log_inv[i] = inv;
    mpfr_set_d(x.v, inv, MPFR_RNDN);
    mpfr_log(x.v, x.v, MPFR_RNDN);
    mpfr_neg(x.v, x.v, MPFR_RNDN);
    t.log_t[i] = x.get();
    for (double z : {zlo, zhi}) {
      Big r(z);
      mpfr_mul_d(r.v, r.v, inv, MPFR_RNDN);
      mpfr_sub_ui(r.v, r.v, 1, MPFR_RNDN);
      t.log_max_r = std::fmax(t.log_max_r, std::fabs(r.get()));
    }
  }
  mpfr_ui_div(x.v, 64, ln2.v, MPFR_RNDN);
  t.inv_ln2_64 = x.get();
  mpfr_div_ui(x.v, ln2.v, 64, MPFR_RNDN);
  split(x, 32, t.ln2_64_hi, t.ln2_64_lo);
  mpfr_ui_div(x.v, 16, ln2.v, MPFR_RNDN);
  t.inv_ln2_16 = x.get();
  mpfr_div_ui(x.v, ln2.v, 16, MPFR_RNDN);
  split(x, 53, t.ln2_16_hi, t.ln2_16_lo);
  split(ln2, 32, t.ln2_hi, t.ln2_lo);
  t.ln2 = ln2.get();
  mpfr_ui_div(x.v, 1, ln2.v, MPFR_RNDN);
  t.inv_ln2 = x.get();
  mpfr_set_ui(x.v, 10, MPFR_RNDN);
  mpfr_log(x.v, x.v, MPFR_RNDN);
  mpfr_ui_div(x.v, 1, x.v, MPFR_RNDN);
  t.inv_ln10 = x.get();
  mpfr_ui_div(x.v, 2, pi.v, MPFR_RNDN);
  t.two_over_pi = x.get();
  // pi/2 in three parts: p1 (30 bits), p2 (30 bits), p3 (53 bits).
  mpfr_div_ui(x.v, pi.v, 2, MPFR_RNDN);
  t.pio2_1 = round_to_bits(x, 30);
  mpfr_sub_d(x.v, x.v, t.pio2_1, MPFR_RNDN);
  t.pio2_2 = round_to_bits(x, 30);
  mpfr_sub_d(x.v, x.v, t.pio2_2, MPFR_RNDN);
  t.pio2_3 = x.get();
  mpfr_div_ui(x.v, pi.v, 2, MPFR_RNDN);
  t.pio2 = x.get();
  // floor(2/pi * 2^313): the bits j = 1..313 of 2/pi as an integer; with the
  // 7 leading zeros (j = -6..0) it fills 320 bits.
  two_over_pi_words(t.two_over_pi_bits, 5, 313);
  mpfr_sqrt(x.v, pi.v, MPFR_RNDN);
  mpfr_ui_div(x.v, 2, x.v, MPFR_RNDN);
  t.two_over_sqrt_pi = x.get();
  return t;
}

}  // namespace

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

}  // namespace stax::math::f32
