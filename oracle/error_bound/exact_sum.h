// The exact sum of many doubles (the error-bound analysis' ground truth): mpfr_sum
// over chunks of summands, without an allocation per summand.
#pragma once

#include <gmp.h>
#include <mpfr.h>

#include <array>
#include <cmath>
#include <memory>
#include <vector>

namespace stax::oracle::detail {

// ---- The exact sum: mpfr_sum over chunks of summands ----

/// Sums doubles exactly: a chunk of values is summed by mpfr_sum into a
/// number wide enough to hold the sum exactly (the values are set into
/// preallocated MPFR numbers with the custom interface: no allocation per
/// summand); the chunk sums are summed again with one final rounding.
class ExactSum {
 public:
  static constexpr size_t kChunk = size_t(1) << 15;

  ExactSum() : slots_(kChunk), limbs_(kChunk), ptrs_(kChunk) {
    for (size_t i = 0; i < kChunk; ++i) ptrs_[i] = &slots_[i];
    mpfr_init2(neg_, 64);
    mpfr_init2(out_, 64);
    mpfr_init2(out53_, 53);
  }
  ~ExactSum() {
    for (auto& p : parts_) mpfr_clear(p.get()->x);
    mpfr_clear(neg_);
    mpfr_clear(out_);
    mpfr_clear(out53_);
  }
  ExactSum(const ExactSum&) = delete;
  ExactSum& operator=(const ExactSum&) = delete;

  void reset() {
    fill_ = 0;
    nparts_ = 0;
    emin_ = LONG_MAX;
    emax_ = LONG_MIN;
  }

  /// v finite and nonzero.
  void add(double v) {
    uint64_t b = std::bit_cast<uint64_t>(v);
    bool neg = (b >> 63) != 0;
    uint64_t biased = (b >> 52) & 0x7ff, mant = b & ((uint64_t(1) << 52) - 1);
    mp_limb_t limb;
    long ex;
    if (biased) {
      limb = mp_limb_t((mant | (uint64_t(1) << 52)) << 11);
      ex = long(biased) - 1022;
    } else {
      int lz = std::countl_zero(mant);
      limb = mp_limb_t(mant << lz);
      ex = -1010 - lz;
    }
    limbs_[fill_] = limb;
    mpfr_custom_init_set(&slots_[fill_], neg ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, ex, 64, &limbs_[fill_]);
    emin_ = std::min(emin_, ex - 64);
    emax_ = std::max(emax_, ex);
    if (++fill_ == kChunk) flush();
  }

  /// The exact sum s rounded to double, and |s − shat| rounded away from zero.
  void finish(double shat, double& exact, double& err) {
    flush();
    std::vector<mpfr_ptr> ps;
    ps.reserve(nparts_ + 1);
    for (size_t i = 0; i < nparts_; ++i) ps.push_back(parts_[i]->x);
    if (ps.empty()) {
      exact = 0.0;
    } else {
      mpfr_sum(out53_, ps.data(), ps.size(), MPFR_RNDN);
      exact = mpfr_get_d(out53_, MPFR_RNDN);
    }
    mpfr_set_d(neg_, -shat, MPFR_RNDN);
    ps.push_back(neg_);
    mpfr_sum(out_, ps.data(), ps.size(), MPFR_RNDA);
    err = std::fabs(mpfr_get_d(out_, MPFR_RNDA));
  }

 private:
  struct Part {
    mpfr_t x;
  };
  void flush() {
    if (!fill_) return;
    if (nparts_ == parts_.size()) {
      parts_.push_back(std::make_unique<Part>());
      mpfr_init2(parts_.back()->x, 64);
    }
    long bits = long(std::bit_width(fill_));
    mpfr_prec_t prec = mpfr_prec_t(emax_ - emin_ + bits + 2);
    mpfr_ptr x = parts_[nparts_++]->x;
    mpfr_set_prec(x, std::max<mpfr_prec_t>(prec, MPFR_PREC_MIN));
    int inexact = mpfr_sum(x, ptrs_.data(), fill_, MPFR_RNDN);
    STAX_CHECK(inexact == 0) << "chunk sum not exact at " << prec << " bits";
    fill_ = 0;
    emin_ = LONG_MAX;
    emax_ = LONG_MIN;
  }

  std::vector<__mpfr_struct> slots_;
  std::vector<mp_limb_t> limbs_;
  std::vector<mpfr_ptr> ptrs_;
  std::vector<std::unique_ptr<Part>> parts_;
  size_t fill_ = 0, nparts_ = 0;
  long emin_ = LONG_MAX, emax_ = LONG_MIN;
  mpfr_t neg_, out_, out53_;
};

}  // namespace stax::oracle::detail
