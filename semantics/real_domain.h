// The Real domain (Theorem 6.3; DESIGN §3): every float op evaluated in MPFR
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

struct RealTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<RVal> data;
  int64_t size() const { return num_elements(shape); }
};

class RealDomain {
 public:
  using Value = RVal*;
  using TensorT = RealTensor;
  static constexpr size_t kBlock = 256;
  struct Buf {
    std::vector<RVal> v;
  };

  /// Magnitudes are bounded by 2^±kMaxExponent (beyond any float format by
  /// far); past that they overflow to ±inf or underflow to ±0. Without a bound,
  /// exp(exp(x)) builds numbers of ~2^(10^8) bits and cos of them never ends.
  static constexpr long kMaxExponent = 16384;
  explicit RealDomain(mpfr_prec_t prec = 256);
  mpfr_prec_t precision() const { return prec_; }
  /// Allocates a register file for a lambda of `count` instructions.
  std::vector<Buf> make_regs(size_t count) const;
  static Value value_of(Buf& b) { return b.v.data(); }

  Value param(size_t, size_t, const Value& a) { return a; }
  Value constant(size_t reg, const Const& c, DType tag);
  Value apply(size_t reg, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args);
  Value cast(size_t reg, const Value& v, DType from, DType to);

  void load(Value dst, const RealTensor& t, const int64_t* offsets, size_t n);
  void load_range(Value dst, const RealTensor& t, int64_t start, size_t n);
  void store(Value src, RealTensor& t, int64_t start, size_t n);
  void round_to_tag(Value, DType, size_t) {}  // float casts are the identity
  void from_int64(Value dst, const int64_t* v, size_t n, DType tag);
  void scale_pow2(Value v, DType tag, int e, size_t n);
  void fill(Value dst, const Const& c, size_t n);
  void copy(Value dst, Value src, DType tag, size_t n);
  int64_t read_int(const RealTensor& t, int64_t off) const { return t.data[size_t(off)].i; }
  RealTensor make_tensor(DType t, Shape s) const;

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

  Buf* regs = nullptr;
  uint8_t* const_ready = nullptr;  ///< unused: Real constants are cheap to refill
  size_t n = 0;
  int64_t fail_pos = -1;
  std::string fail_reason;

 private:
  void set_const(RVal& v, const Const& c) const;
  void flush_sum(RedState& s);
  mpfr_prec_t prec_;
  RVal tmp_, tmp2_;
};

}  // namespace stax::sem
