#pragma once
// Constants and tables of the binary64 fast paths, computed once (on first
// use) with MPFR at 256 bits and rounded to double-doubles, so no literal can
// be mistyped and each entry is within 2^-106 (relative) of its real value.
// Internal to mathlib.

#include <cstdint>

#include "mathlib/dd.h"

namespace stax::math::f64 {

using dd::DD;

struct Tables {
  // exp: x = k*ln2/64 + r; ln2/64 = l64[0] + l64[1] + l64[2], the first two
  // with 36 significant bits so k*l64[i] is exact for |k| < 2^17.
  double l64[3];
  double inv_l64;   // 64/ln2, rounded: only picks k
  DD exp2_j[64];    // 2^(j/64)
  DD inv_fact[16];  // 1/i!
  // log: x = 2^e * m, m in [sqrt(1/2), sqrt(2)); idx = round(128 m) in
  // [90, 182]; log_c[idx] ~ 128/idx (any double works: m*c is formed exactly),
  // log_negc[idx] = -log(log_c[idx]); idx 128 has c = 1 and -log c = 0.
  double log_c[184];
  DD log_negc[184];
  DD log1p_coef[16];  // (-1)^i / (i+1)
  DD ln2, inv_ln2, inv_ln10;
  // sin/cos: pi/2 = pio2[0] + ... + pio2[4], the first two with 33 bits so
  // k*pio2[i] is exact for |k| < 2^20; the sum is within 2^-224 of pi/2.
  double pio2[5];
  double two_over_pi;  // rounded: only picks k
  DD pio2_dd;                    // pi/2
  // Payne-Hanek: the first 1280 bits of the fraction of 2/pi, most
  // significant first (bit 1 of word 0 is the 2^-1 bit).
  uint64_t two_over_pi_bits[20];
  DD sin_j[52], cos_j[52];       // sin(j/64), cos(j/64)
  DD sin_coef[6], cos_coef[7];   // (-1)^i/(2i+1)!, (-1)^i/(2i)!
  // erf: series in 2x^2 with term ratios 1/(2n+3).
  static constexpr int kErfTerms = 256;
  DD inv_odd[kErfTerms];         // 1/(2n+3)
  DD two_over_sqrtpi;
};

const Tables& tables();
// For the fault-injection test hook only (perturb_exp_coefficient, f64_impl.h).
Tables& mutable_tables();

}  // namespace stax::math::f64
