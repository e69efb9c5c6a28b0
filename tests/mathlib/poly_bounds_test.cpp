// Error bounds of mathlib's polynomials and series, proven in MPFR (not
// sampled): the vector forms' polynomials (f32_vec.h: kExpPoly4, kErfPoly,
// kErfPoly12, kErfBigPoly), erf's series length and the log reduction's
// range. Split from cr32_test.cpp, which checks results bit for bit.
#include <catch2/catch.hpp>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "mathlib/crmath.h"
#include "mathlib/f32_kernels.h"
#include "mathlib/f32_lanes.h"
#include "mathlib/f32_tables.h"
#include "mathlib/f32_vec.h"
#include "mathlib/mpfr_big.h"

namespace m = stax::math;
using m::Fn;

TEST_CASE("the log reduction stays within the polynomial's range") {
  // f32_kernels.h's log bound assumes |r| <= 2^-8 + 2^-14.
  CHECK(stax::math::f32::tables().log_max_r <= 0x1p-8 + 0x1p-14);
}

TEST_CASE("erf's series: the omitted terms stay below 2^-55 of the sum") {
  // f32_kernels.h keeps 61 terms of sum 2^n t^n/(2n+1)!! for t = x^2 <= 16.
  // All terms are positive and the tail's share grows with t, so t = 16
  // is the worst case; the sum to 400 terms stands in for the series
  // (the terms beyond fall below 2^-400 of it).
  auto tail_share = [](int kept, unsigned t = 16) {
    mpfr_t term, head, all;
    mpfr_inits2(256, term, head, all, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_ui(term, 1, MPFR_RNDN);
    mpfr_set_ui(all, 0, MPFR_RNDN);
    for (int n = 0; n < 400; ++n) {
      if (n == kept) mpfr_set(head, all, MPFR_RNDN);
      mpfr_add(all, all, term, MPFR_RNDN);
      mpfr_mul_ui(term, term, 2 * t, MPFR_RNDN);
      mpfr_div_ui(term, term, unsigned(2 * n + 3), MPFR_RNDN);
    }
    mpfr_sub(head, all, head, MPFR_RNDN);
    mpfr_div(head, head, all, MPFR_RNDN);
    double share = mpfr_get_d(head, MPFR_RNDU);
    mpfr_clears(term, head, all, static_cast<mpfr_ptr>(nullptr));
    return share;
  };
  CHECK(tail_share(stax::math::f32::kErfTerms) < 0x1p-55);
  CHECK(tail_share(45) > 0x1p-55);  // too few terms: the check notices
}

#if defined(__x86_64__)
namespace {

/// The most roundings a coefficient passes in estrin_steps' tree of n terms
/// with fused nodes: a node adds one to both halves, its power t^(2^k) (k
/// squarings) 2^k - 1 more to the upper half's.
int estrin_roundings(int n) {
  if (n == 1) return 0;
  const int lg = m::f32::floor_log2(n - 1);
  return 1 + std::max(estrin_roundings(1 << lg), (1 << lg) - 1 + estrin_roundings(n - (1 << lg)));
}

constexpr size_t kErfPolyTerms = std::size(m::f32::vec::kErfPoly);
using ErfPoly = double[kErfPolyTerms];

struct ErfPolyBound {
  double approx;  ///< max |p(t) - G(t)| / G(4) over every real t in [0, 4] (rounded up)
  double cond;    ///< sum |c_i| 4^i / G(4): the largest sum |c_i| t^i / G(t) there (rounded up)
};

/// f32_vec.h's bounds for a polynomial c in t against G(t) =
/// erf(sqrt t)/sqrt t, proven for every real t in [0, 4], not sampled. G's
/// Taylor series T_N (N = 90) stands in for G: its terms alternate and
/// decrease in magnitude from n = 4 on where t <= 4, so |G - T_N| is below
/// the first omitted term. q = p - T_N is a polynomial with known
/// coefficients; on each of 512 pieces [t0, t0 + h] its Taylor shift
/// q(t0 + s) = sum b_k s^k gives |q| <= |b_0| + sum_k>0 |b_k| h^k. All in
/// 256-bit MPFR (m::Big; its rounding errors, below 2^-230 here, covered
/// by a margin of 2^-200).
/// max |q(t)| over t in [t0, t0 + h] (rounded up, before the margin): the
/// Taylor shift q(t0 + s) = sum b_k s^k (synthetic division, in r), then
/// |b_0| + sum_k>0 |b_k| h^k.
void piece_bound(const std::vector<m::Big>& q, const m::Big& t0, const m::Big& h, std::vector<m::Big>& r,
                 m::Big& bound) {
  const int n = int(q.size()) - 1;
  for (int k = 0; k <= n; ++k) mpfr_set(r[size_t(k)].v, q[size_t(k)].v, MPFR_RNDN);
  for (int i = 0; i < n; ++i)
    for (int j = n - 1; j >= i; --j) mpfr_fma(r[size_t(j)].v, t0.v, r[size_t(j) + 1].v, r[size_t(j)].v, MPFR_RNDN);
  m::Big hk, term;
  mpfr_abs(bound.v, r[0].v, MPFR_RNDU);
  mpfr_set_ui(hk.v, 1, MPFR_RNDN);
  for (int k = 1; k <= n; ++k) {
    mpfr_mul(hk.v, hk.v, h.v, MPFR_RNDU);
    mpfr_abs(term.v, r[size_t(k)].v, MPFR_RNDU);
    mpfr_mul(term.v, term.v, hk.v, MPFR_RNDU);
    mpfr_add(bound.v, bound.v, term.v, MPFR_RNDU);
  }
}

ErfPolyBound erf_poly_bound(std::span<const double> c) {
  constexpr int kN = 90, kPieces = 512;
  std::vector<m::Big> q(kN + 1), r(kN + 1);
  m::Big g, tmp, t0, bound, worst, g4, s4, h(0x1p-7);  // h = 4 / 512
  // g = 2/sqrt(pi) (-1)^n / n!, q_n = c_n - g/(2n+1).
  mpfr_const_pi(g.v, MPFR_RNDN);
  mpfr_rec_sqrt(g.v, g.v, MPFR_RNDN);
  mpfr_mul_ui(g.v, g.v, 2, MPFR_RNDN);
  for (int n = 0; n <= kN + 1; ++n) {
    if (n > 0) mpfr_div_si(g.v, g.v, -n, MPFR_RNDN);
    mpfr_div_ui(tmp.v, g.v, unsigned(2 * n + 1), MPFR_RNDN);
    if (n == kN + 1) break;  // tmp: the first omitted term's coefficient
    mpfr_set_d(q[n].v, size_t(n) < c.size() ? c[size_t(n)] : 0.0, MPFR_RNDN);
    mpfr_sub(q[n].v, q[n].v, tmp.v, MPFR_RNDN);
  }
  mpfr_abs(tmp.v, tmp.v, MPFR_RNDU);
  mpfr_mul_2ui(tmp.v, tmp.v, 2 * (kN + 1), MPFR_RNDU);  // its term at t = 4
  mpfr_set_ui(worst.v, 0, MPFR_RNDN);
  for (int piece = 0; piece < kPieces; ++piece) {
    mpfr_set_ui(t0.v, unsigned(piece), MPFR_RNDN);
    mpfr_div_ui(t0.v, t0.v, kPieces / 4, MPFR_RNDN);  // exact: kPieces / 4 is a power of two
    piece_bound(q, t0, h, r, bound);
    mpfr_max(worst.v, worst.v, bound.v, MPFR_RNDU);
  }
  mpfr_add(worst.v, worst.v, tmp.v, MPFR_RNDU);
  mpfr_set_d(tmp.v, 0x1p-200, MPFR_RNDN);
  mpfr_add(worst.v, worst.v, tmp.v, MPFR_RNDU);
  // G(4) = erf(2) / 2, rounded down by the margin.
  mpfr_set_ui(g4.v, 2, MPFR_RNDN);
  mpfr_erf(g4.v, g4.v, MPFR_RNDD);
  mpfr_div_2ui(g4.v, g4.v, 1, MPFR_RNDD);
  mpfr_sub(g4.v, g4.v, tmp.v, MPFR_RNDD);
  mpfr_set_ui(s4.v, 0, MPFR_RNDN);
  for (size_t n = 0; n < c.size(); ++n) {
    mpfr_set_d(g.v, std::fabs(c[n]), MPFR_RNDN);
    mpfr_mul_2ui(g.v, g.v, 2 * n, MPFR_RNDU);
    mpfr_add(s4.v, s4.v, g.v, MPFR_RNDU);
  }
  mpfr_div(worst.v, worst.v, g4.v, MPFR_RNDU);
  mpfr_div(s4.v, s4.v, g4.v, MPFR_RNDU);
  return {mpfr_get_d(worst.v, MPFR_RNDU), mpfr_get_d(s4.v, MPFR_RNDU)};
}

/// f32_vec.h's kExpPoly4 bound for a polynomial c of degree 4: max |p(r) -
/// exp(r)| / exp(r) over every real r in [-R, R], R = 0x1.62fp-6 (0.021664,
/// beyond exp_v16_in_range's |r| < 0.021662), proven, not sampled. exp's
/// Taylor polynomial T_12 stands in for exp: |exp - T_12| <= R^13/13! e^R
/// < 2 R^13/13! there. q = p - T_12 has known coefficients; on each of 8192
/// pieces of width h = 2R/8192 its Taylor shift bounds |q| (piece_bound:
/// |b_1| h, the slope's share, is about 25 h / R of the bound at the ends,
/// where a Chebyshev interpolant's error is largest and steepest);
/// the sum is divided by exp(-R), the least exp(r). 256-bit MPFR, a margin
/// of 2^-200.
double exp_poly_bound(const double (&c)[5]) {
  constexpr int kN = 12, kPieces = 8192;
  std::vector<m::Big> q(kN + 1), r(kN + 1);
  m::Big f, t0, h, bound, worst, rad(0x1.62fp-6), tail;
  mpfr_set_ui(f.v, 1, MPFR_RNDN);
  for (int n = 0; n <= kN; ++n) {  // q_n = c_n - 1/n!
    if (n > 0) mpfr_div_ui(f.v, f.v, unsigned(n), MPFR_RNDN);
    mpfr_set_d(q[size_t(n)].v, n < 5 ? c[n] : 0.0, MPFR_RNDN);
    mpfr_sub(q[size_t(n)].v, q[size_t(n)].v, f.v, MPFR_RNDN);
  }
  mpfr_div_ui(h.v, rad.v, kPieces / 2, MPFR_RNDN);  // exact: a power of two
  mpfr_set_ui(worst.v, 0, MPFR_RNDN);
  for (int piece = 0; piece < kPieces; ++piece) {
    mpfr_mul_si(t0.v, h.v, piece, MPFR_RNDN);  // exact
    mpfr_sub(t0.v, t0.v, rad.v, MPFR_RNDN);    // exact: -R + piece h
    piece_bound(q, t0, h, r, bound);
    mpfr_max(worst.v, worst.v, bound.v, MPFR_RNDU);
  }
  mpfr_pow_ui(tail.v, rad.v, kN + 1, MPFR_RNDU);  // 2 R^13 / 13!
  mpfr_mul_ui(tail.v, tail.v, 2, MPFR_RNDU);
  mpfr_mul(tail.v, tail.v, f.v, MPFR_RNDU);
  mpfr_div_ui(tail.v, tail.v, kN + 1, MPFR_RNDU);
  mpfr_add(worst.v, worst.v, tail.v, MPFR_RNDU);
  mpfr_set_d(tail.v, 0x1p-200, MPFR_RNDN);
  mpfr_add(worst.v, worst.v, tail.v, MPFR_RNDU);
  mpfr_neg(f.v, rad.v, MPFR_RNDN);
  mpfr_exp(f.v, f.v, MPFR_RNDD);
  mpfr_div(worst.v, worst.v, f.v, MPFR_RNDU);
  return mpfr_get_d(worst.v, MPFR_RNDU);
}

/// The relative error of f32_vec.h's erf candidate from a polynomial with
/// these bounds: approximation, evaluation (gamma_k sum |c_i| t^i), the
/// product by |x|.
double erf_poly_error(const ErfPolyBound& b, size_t terms = kErfPolyTerms) {
  const double u = 0x1p-53, k = estrin_roundings(int(terms));
  const double gamma = k * u / (1 - k * u);
  return ((b.approx + gamma * b.cond) * (1 + u) + u) * (1 + 0x1p-40);  // the sum's own roundings, generously
}

/// f32_vec.h's kErfBigPoly bound for a polynomial c in u: max |p(u) -
/// erf(3 + u)| over every real u in [-1, 1], proven, not sampled. erf's
/// Taylor polynomial T_N at 3 (N = 60) stands in for erf: its coefficients
/// are erf(3) and, for n >= 1, 2/sqrt(pi) e^-9 (-1)^(n-1) H_(n-1)(3) / n!
/// (H the Hermite polynomials: H_0 = 1, H_1(x) = 2x, H_(k+1) = 2x H_k -
/// 2k H_(k-1), integers at 3); the remainder's derivative 2/sqrt(pi)
/// (-1)^N H_N(xi) e^(-xi^2) is at most 2/sqrt(pi) 2 sqrt(2^N N!) by
/// Cramer's inequality (|H_n(x)| <= 1.0865 sqrt(2^n n!) e^(x^2/2)), so
/// |erf - T_N| <= that over (N+1)! for |u| <= 1 (below 2^-110). q = p -
/// T_N on 8192 pieces (piece_bound: the slope's share of a piece's bound,
/// |b_1| h, is about 16^2 h of the error at the ends, where the
/// interpolant's error is largest). 256-bit MPFR, a margin of 2^-200.
double erf_big_poly_bound(std::span<const double> c) {
  constexpr int kN = 60, kPieces = 8192;
  std::vector<m::Big> q(kN + 1), r(kN + 1);
  m::Big g, hm, h0, h1, tmp, t0, bound, worst, rem, h(0x1p-12);  // h = 2 / 8192
  // g = 2/sqrt(pi) e^-9 / n!, times H_(n-1)(3) (h0 = H_(n-2), h1 = H_(n-1)).
  mpfr_const_pi(g.v, MPFR_RNDN);
  mpfr_rec_sqrt(g.v, g.v, MPFR_RNDN);
  mpfr_mul_ui(g.v, g.v, 2, MPFR_RNDN);
  mpfr_set_si(tmp.v, -9, MPFR_RNDN);
  mpfr_exp(tmp.v, tmp.v, MPFR_RNDN);
  mpfr_mul(g.v, g.v, tmp.v, MPFR_RNDN);
  mpfr_set_ui(h0.v, 0, MPFR_RNDN);
  mpfr_set_ui(h1.v, 1, MPFR_RNDN);
  for (int n = 0; n <= kN; ++n) {
    if (n == 0) {
      mpfr_set_ui(tmp.v, 3, MPFR_RNDN);
      mpfr_erf(tmp.v, tmp.v, MPFR_RNDN);
    } else {
      mpfr_div_ui(g.v, g.v, unsigned(n), MPFR_RNDN);
      if (n >= 2) {  // h1 = H_(n-1)(3) = 6 H_(n-2) - 2(n-2) H_(n-3)
        mpfr_mul_ui(hm.v, h1.v, 6, MPFR_RNDN);
        mpfr_mul_ui(h0.v, h0.v, unsigned(2 * (n - 2)), MPFR_RNDN);
        mpfr_sub(hm.v, hm.v, h0.v, MPFR_RNDN);
        mpfr_swap(h0.v, h1.v);
        mpfr_swap(h1.v, hm.v);
      }
      mpfr_mul(tmp.v, g.v, h1.v, MPFR_RNDN);
      if (n % 2 == 0) mpfr_neg(tmp.v, tmp.v, MPFR_RNDN);
    }
    mpfr_set_d(q[size_t(n)].v, size_t(n) < c.size() ? c[size_t(n)] : 0.0, MPFR_RNDN);
    mpfr_sub(q[size_t(n)].v, q[size_t(n)].v, tmp.v, MPFR_RNDN);
  }
  // The remainder: 2/sqrt(pi) 2 sqrt(2^N N!) / (N+1)!.
  mpfr_fac_ui(tmp.v, kN, MPFR_RNDU);
  mpfr_mul_2ui(tmp.v, tmp.v, kN, MPFR_RNDU);
  mpfr_sqrt(rem.v, tmp.v, MPFR_RNDU);
  mpfr_mul_ui(rem.v, rem.v, 4, MPFR_RNDU);
  mpfr_fac_ui(tmp.v, kN + 1, MPFR_RNDD);
  mpfr_div(rem.v, rem.v, tmp.v, MPFR_RNDU);
  mpfr_const_pi(tmp.v, MPFR_RNDD);
  mpfr_sqrt(tmp.v, tmp.v, MPFR_RNDD);
  mpfr_div(rem.v, rem.v, tmp.v, MPFR_RNDU);
  mpfr_set_ui(worst.v, 0, MPFR_RNDN);
  for (int piece = 0; piece < kPieces; ++piece) {
    mpfr_set_si(t0.v, piece - kPieces / 2, MPFR_RNDN);
    mpfr_div_ui(t0.v, t0.v, kPieces / 2, MPFR_RNDN);  // exact: a power of two
    piece_bound(q, t0, h, r, bound);
    mpfr_max(worst.v, worst.v, bound.v, MPFR_RNDU);
  }
  mpfr_add(worst.v, worst.v, rem.v, MPFR_RNDU);
  mpfr_set_d(tmp.v, 0x1p-200, MPFR_RNDN);
  mpfr_add(worst.v, worst.v, tmp.v, MPFR_RNDU);
  return mpfr_get_d(worst.v, MPFR_RNDU);
}

}  // namespace

TEST_CASE("exp's degree-4 polynomial (the sixteen-lane form's first tier): its error bound, proven") {
  namespace v = m::f32::vec;
  const double b = exp_poly_bound(v::kExpPoly4);
  UNSCOPED_INFO("approx 2^" << std::log2(b));
  CHECK(b < std::exp2(-38.50));  // f32_vec.h's figure
  // f32_vec_impl.inc's E1 (evaluation, table and product 7u; the reduction
  // 2^-48.26) and its window of 2^16 patterns a side.
  const double e1 = b + 7 * 0x1p-53 + std::exp2(-48.26);
  CHECK(e1 < std::exp2(-38.49));
  CHECK(0x1p54 * std::exp2(-38.49) < 0x1p16);
  // Deliberately wrong: the linear coefficient off by 2^-36 of itself, or
  // exp's Taylor polynomial of degree 4 in its place.
  double bad[5];
  std::copy(std::begin(v::kExpPoly4), std::end(v::kExpPoly4), bad);
  bad[1] *= 1 + 0x1p-36;
  CHECK(exp_poly_bound(bad) > std::exp2(-38.50));
  const double taylor[5] = {1.0, 1.0, 0.5, 1.0 / 6, 1.0 / 24};
  CHECK(exp_poly_bound(taylor) > std::exp2(-35));
}

TEST_CASE("erf's polynomial for |x| <= 2: its error bound, proven over [0, 4]") {
  namespace v = m::f32::vec;
  CHECK(m::f32::kErfSmallT == 4.0);
  CHECK(estrin_roundings(17) == 16);
  CHECK(estrin_roundings(64) == 31 + 15 + 7 + 3 + 1 + 6);  // f32_kernels.h's count, one rounding a fused level
  const ErfPolyBound b = erf_poly_bound(v::kErfPoly);
  UNSCOPED_INFO("approx 2^" << std::log2(b.approx) << ", total 2^" << std::log2(erf_poly_error(b)));
  CHECK(b.approx < 0x1p-51);  // f32_vec.h's figures
  CHECK(b.cond < 18.66);
  CHECK(erf_poly_error(b) < std::exp2(-44.7));
  CHECK(erf_poly_error(b) < m::f32::kErrErf);
  // Deliberately wrong: one coefficient off by 2^-40 of itself, or a
  // polynomial of degree 14 (the last two coefficients dropped) — the
  // proof notices both.
  ErfPoly bad;
  std::copy(std::begin(v::kErfPoly), std::end(v::kErfPoly), bad);
  bad[3] *= 1 + 0x1p-40;
  CHECK(erf_poly_error(erf_poly_bound(bad)) > m::f32::kErrErf);
  std::copy(std::begin(v::kErfPoly), std::end(v::kErfPoly), bad);
  bad[15] = bad[16] = 0;
  CHECK(erf_poly_bound(bad).approx > 0x1p-48);
}

TEST_CASE("erf's first tier (degree 12 on AVX-512): its error bound, proven, and its window") {
  namespace v = m::f32::vec;
  const ErfPolyBound b = erf_poly_bound(v::kErfPoly12);
  const double e1 = erf_poly_error(b, std::size(v::kErfPoly12));
  UNSCOPED_INFO("approx 2^" << std::log2(b.approx) << ", cond " << b.cond << ", total 2^" << std::log2(e1));
  CHECK(b.approx < std::exp2(-36.71));  // f32_vec.h's figures
  CHECK(b.cond < 18.62);
  CHECK(e1 < std::exp2(-36.70));
  // The candidates within E1 y: 2^53 E1 patterns a side, twice that below a
  // power of two, inside the window.
  CHECK(0x1p54 * std::exp2(-36.70) < double(v::kErfTier1Half));
  // Deliberately wrong: a coefficient off by 2^-30 of itself, or the
  // degree-16 polynomial's first 13 coefficients in its place.
  double bad[13];
  std::copy(std::begin(v::kErfPoly12), std::end(v::kErfPoly12), bad);
  bad[4] *= 1 + 0x1p-30;
  CHECK(erf_poly_bound(bad).approx > std::exp2(-36.71));
  std::copy(std::begin(v::kErfPoly), std::begin(v::kErfPoly) + 13, bad);
  CHECK(erf_poly_bound(bad).approx > std::exp2(-30));
}

TEST_CASE("erf's polynomial for |x| in [2, 4] (AVX-512): its error bound, proven, and its window") {
  namespace v = m::f32::vec;
  const double approx = erf_big_poly_bound(v::kErfBigPoly);
  // The evaluation: at most estrin_roundings(16) roundings a coefficient,
  // times sum |c_i| (|u| <= 1).
  double sum = 0;
  for (double c : v::kErfBigPoly) sum += std::fabs(c);
  const double k = estrin_roundings(16), eval = k * 0x1p-53 / (1 - k * 0x1p-53) * sum;
  UNSCOPED_INFO("approx 2^" << std::log2(approx) << ", evaluation 2^" << std::log2(eval));
  CHECK(approx < std::exp2(-39.95));  // f32_vec.h's figures
  CHECK(eval < std::exp2(-48.9));
  // y in [1/2, 1): 2^53 patterns a unit; inside the first tier's window.
  CHECK(0x1p53 * (approx + eval) < std::exp2(13.1));
  CHECK(std::exp2(13.1) < double(v::kErfTier1Half));
  // erf(4) rounds to 1 (the lanes beyond 4 use p(1)): it lies above the
  // midpoint 1 - 2^-25.
  CHECK(m::mpfr_f32(Fn::Erf, 4.0f) == 1.0f);
  CHECK(m::mpfr_f32(Fn::Erf, 3.9f) < 1.0f);  // and not every lane beyond 2 does
  // Deliberately wrong: a coefficient off by 2^-30 of itself, or the
  // polynomial cut to degree 13.
  double bad[16];
  std::copy(std::begin(v::kErfBigPoly), std::end(v::kErfBigPoly), bad);
  bad[2] *= 1 + 0x1p-30;
  CHECK(erf_big_poly_bound(bad) > std::exp2(-39.95));
  std::copy(std::begin(v::kErfBigPoly), std::end(v::kErfBigPoly), bad);
  bad[14] = bad[15] = 0;
  CHECK(erf_big_poly_bound(bad) > std::exp2(-38));
}
#endif
