#pragma once
// Constants and tables of the binary32 fast paths (f32.cpp). Every entry is
// the binary64 value nearest to its real definition, computed once by MPFR at
// first use (f32_tables.cpp), so no literal can carry a typo: each entry's
// error is at most 2^-53 relative, the figure the error bounds in
// f32_kernels.h assume.
#include <cstdint>

namespace stax::math::f32 {

inline constexpr int kExpBits = 6;  // exp: 2^(j/64), j < 64
inline constexpr int kExpTable = 1 << kExpBits;
inline constexpr int kLogBits = 7;  // log: 128 subintervals of [0.70, 1.41)
inline constexpr int kLogTable = 1 << kLogBits;
inline constexpr int kErfTerms = 61;  // erf series: t^0 .. t^60

// log's subintervals: z (a double in [2^-0.5.., 2^0.5..)) lies in subinterval
// i = (bits(z) - kLogOff) >> 45. kLogOff is chosen so that 1.0 sits in the
// middle of its subinterval (index kLogOne), whose inverse is exactly 1:
// near x = 1 the reduction is r = z - 1, exact, and log loses no relative
// accuracy (no cancellation between a table value and the polynomial).
inline constexpr uint64_t kLogOff = 0x3fe6900000000000ULL;
inline constexpr int kLogOne = 75;

struct Tables {
  double exp2j[kExpTable];   // 2^(j/64)
  double exp_c[6];           // 1/n!, n = 0..5 (exp(r), |r| <= ln2/128 + tiny)
  double expm1_c[13];        // 1/(n+1)!, n = 0..12 (expm1(x)/x = sum x^n/(n+1)!, |x| <= 1/4)
  double log_inv[kLogTable]; // ~1/centre of subinterval i, 28 significant bits
  double log_t[kLogTable];   // -log(log_inv[i])
  double log_c_r[7];         // (-1)^n/(n+1), n = 0..6: log1p(r) = r sum c_n r^n (|r| <= 2^-8 + tiny)
  double erf_c[kErfTerms];   // 2^n / (2n+1)!!: erf(x) = 2/sqrt(pi) x e^(-x^2) sum c_n x^(2n)
  double sin_c[9];           // (-1)^n/(2n+1)!, n = 0..8 (|r| <= pi/4 + tiny)
  double cos_c[9];           // (-1)^n/(2n)!,   n = 0..8
  double inv_ln2_64;         // 64/ln2 (the exp reduction's multiplier; any nearby value works)
  double ln2_64_hi, ln2_64_lo;  // ln2/64 = hi + lo; hi has 32 significant bits
  double ln2_hi, ln2_lo;        // ln2 = hi + lo; hi has 32 significant bits
  double ln2, inv_ln2, inv_ln10;
  double two_over_pi;
  double pio2_1, pio2_2, pio2_3;  // pi/2 = p1 + p2 + p3; p1 and p2 have 30 significant bits
  double two_over_sqrt_pi;
  double pio2;  // pi/2
  // floor(2/pi 2^313) in 320 bits, most significant word first: bit j of
  // 2/pi (weight 2^-j, j >= -6; zero for j <= 0) is bit 63 - (j+6)%64 of
  // word (j+6)/64.
  // 320 bits reach j = 312, beyond the 2^-230 that Payne-Hanek needs for x < 2^128.
  uint64_t two_over_pi_bits[5];
  double log_max_r;  // max |z * log_inv[i] - 1| over every subinterval (checked by the tests)
  // The AVX-512 forms' exp core (f32_vec_impl.inc, fused): a 16-entry table
  // that fits in two registers.
  double exp16_2j[16];            // 2^(j/16)
  double exp16_c[7];              // 1/n!, n = 0..6 (exp(r), |r| <= ln2/32 + tiny)
  double inv_ln2_16;              // 16/ln2
  double ln2_16_hi, ln2_16_lo;    // ln2/16 = hi + lo; hi to 53 bits
};

const Tables& tables();

}  // namespace stax::math::f32
