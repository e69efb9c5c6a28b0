// One MPFR number at a fixed precision that clears itself: the tables of the
// fast paths (f32_tables.cpp, f64_tables.cpp) are computed with these.
#pragma once

#include <mpfr.h>

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

}  // namespace stax::math
