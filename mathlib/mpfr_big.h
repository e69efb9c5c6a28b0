// One MPFR number at a fixed precision that clears itself: the tables of the
// fast paths (f32_tables.cpp, f64_tables.cpp) are computed with these.
#pragma once

#include <gmp.h>
#include <mpfr.h>

#include <cstdint>

namespace stax::math {

struct Big {
  static constexpr mpfr_prec_t kBits = 256;
  mpfr_t v;
  Big() { mpfr_init2(v, kBits); }
  explicit Big(double d) : Big() { mpfr_set_d(v, d, MPFR_RNDN); }
  ~Big() { mpfr_clear(v); }
  Big(const Big&) = delete;
  Big& operator=(const Big&) = delete;
  /// Rounded to nearest binary64.
  double get() const { return mpfr_get_d(v, MPFR_RNDN); }
};

/// floor(2/pi * 2^shift) mod 2^(64 words), most significant word first: the
/// bits of 2/pi that Payne–Hanek argument reduction multiplies by.
inline void two_over_pi_words(uint64_t* out, int words, long shift) {
  static_assert(sizeof(unsigned long) == 8, "mpz_get_ui must give 64 bits");
  mpfr_t w;
  mpfr_init2(w, shift + 128);
  mpfr_const_pi(w, MPFR_RNDN);
  mpfr_ui_div(w, 2, w, MPFR_RNDN);
  mpfr_mul_2ui(w, w, static_cast<unsigned long>(shift), MPFR_RNDN);
  mpz_t z;
  mpz_init(z);
  mpfr_get_z(z, w, MPFR_RNDZ);
  for (int i = words - 1; i >= 0; --i) {
    out[i] = mpz_get_ui(z);  // the low 64 bits
    mpz_tdiv_q_2exp(z, z, 64);
  }
  mpz_clear(z);
  mpfr_clear(w);
}

}  // namespace stax::math
