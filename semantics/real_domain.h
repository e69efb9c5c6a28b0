// The Real domain (Theorem 6.3; docs/design.md §3): every float op evaluated in MPFR
// at precision P (default 256 bits), sums with mpfr_sum (one rounding), float
// casts the identity, ±inf in the extended reals. Integer and bool values are
// exact, as in Ieee. It is the ground truth for error measurement.
#pragma once

#include <mpfr.h>

#include <span>
#include <string>
#include <vector>

#include "semantics/big_value.h"
#include "semantics/ir.h"
#include "semantics/tensor.h"

namespace stax::sem {

struct MpfrOps {
  using type = mpfr_t;
  static void init(mpfr_ptr f, long prec) {
    mpfr_init2(f, prec);
    mpfr_set_zero(f, 1);
  }
  static void init_copy(mpfr_ptr f, mpfr_srcptr o) {
    mpfr_init2(f, mpfr_get_prec(o));
    mpfr_set(f, o, MPFR_RNDN);
  }
  static long prec(mpfr_srcptr f) { return long(mpfr_get_prec(f)); }
  static void set(mpfr_ptr f, mpfr_srcptr o) { mpfr_set(f, o, MPFR_RNDN); }
  static void swap(mpfr_ptr a, mpfr_ptr b) { mpfr_swap(a, b); }
  static void clear(mpfr_ptr f) { mpfr_clear(f); }
};

/// One value of the Real domain: an MPFR number for float tags, an exact
/// integer for int/bool tags.
using RVal = BigValue<MpfrOps>;

using RealTensor = BigTensor<RVal>;

class RealDomain : public BigDomain<RVal> {
 public:
  /// Magnitudes are bounded by 2^±kMaxExponent (beyond any float format by
  /// far); past that they overflow to ±inf or underflow to ±0. Without a bound,
  /// exp(exp(x)) builds numbers of ~2^(10^8) bits and cos of them never ends.
  static constexpr long kMaxExponent = 16384;
  explicit RealDomain(mpfr_prec_t prec = 256);

  Value constant(size_t reg, const Const& c, DType tag);
  Value apply(size_t reg, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args);
  Value cast(size_t reg, const Value& v, DType from, DType to);
  void from_int64(Value dst, const int64_t* v, size_t n, DType tag);
  void scale_pow2(Value v, DType tag, int e, size_t n);
  void fill(Value dst, const Const& c, size_t n);

  struct RedState {
    RedOp op;
    DType tag;
    int64_t rsize = 1;
    int64_t outputs = 0;
    std::vector<RVal> acc;
    std::vector<int64_t> arg;
    std::vector<RVal> pending;  // sum: the summands of the current output
    int64_t pending_out = 0;
  };
  void red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs, int64_t rsize);
  void red_fold(RedState& s, Value col, size_t n, int64_t flat_start);
  void red_finish(RedState& s, RealTensor& out);

  /// Exact conversion of a tensor into the Real domain.
  RealTensor from_tensor(const Tensor& t) const;
  /// The real result rounded to nearest f64 (floats) or kept (ints/bool).
  Tensor to_tensor_f64(const RealTensor& t) const;


 private:
  void set_const(RVal& v, const Const& c) const;
  void flush_sum(RedState& s);
  RVal tmp_, tmp2_;
};

}  // namespace stax::sem
