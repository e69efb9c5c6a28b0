// The Real domain with rigorous enclosures (docs/design.md §3, class real): every
// float value is an interval (MPFI, over MPFR at precision P) that contains
// the exact real value of the program — each operation rounds its bounds
// outward, sums are folded exactly into intervals, transcendental functions
// are MPFI's (erf by its monotonicity). Integers and bools stay exact points,
// with the Real domain's semantics (semantics/int_ops.h).
//
// Where a discontinuous operation meets an interval that straddles its
// discontinuity — a float cast to an integer or bool, a comparison, a float
// floordiv or mod, an arg-reduction whose leading candidates overlap — the
// integer result is not determined by the enclosure: the evaluation is marked
// *indeterminate* and its results decide nothing. Otherwise two enclosures
// that are disjoint prove that the real values differ.
#pragma once

#include <mpfi.h>

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "semantics/big_value.h"
#include "semantics/evaluator.h"
#include "semantics/faithful.h"

namespace stax::sem {

struct MpfiOps {
  using type = mpfi_t;
  static void init(mpfi_ptr f, long prec) {
    mpfi_init2(f, prec);
    mpfi_set_si(f, 0);
  }
  static void init_copy(mpfi_ptr f, mpfi_srcptr o) {
    mpfi_init2(f, mpfi_get_prec(o));
    mpfi_set(f, o);
  }
  static long prec(mpfi_srcptr f) { return long(mpfi_get_prec(f)); }
  static void set(mpfi_ptr f, mpfi_srcptr o) { mpfi_set(f, o); }
  static void swap(mpfi_ptr a, mpfi_ptr b) { mpfi_swap(a, b); }
  static void clear(mpfi_ptr f) { mpfi_clear(f); }
};

/// One value: an interval for float tags, an exact integer for int/bool.
using EVal = BigValue<MpfiOps>;

using EncTensor = BigTensor<EVal>;

class EnclosureDomain : public BigDomain<EVal> {
 public:
  explicit EnclosureDomain(mpfr_prec_t prec = 256) : BigDomain(prec), tmp_(prec), step_(prec), one_(prec) {}

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
    std::vector<EVal> acc;
    std::vector<int64_t> arg;
    /// Faithful sums: an enclosure of Σ|x| (its upper end). Faithful
    /// products: [Π min(1, |x|), Π max(1, |x|)] over the init and the terms,
    /// bounds on every partial product of any order.
    std::vector<EVal> mag;
  };
  void red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs, int64_t rsize);
  void red_fold(RedState& s, Value col, size_t n, int64_t flat_start);
  void red_finish(RedState& s, EncTensor& out);

  EncTensor from_tensor(const Tensor& t) const;

  /// Faithful mode (semantics/faithful.h): every float result is widened to
  /// what a faithful implementation under `m` may give. Null: the real value.
  void set_faithful(const FaithfulModel* m) { faithful_ = m; }

  /// Set by the first discontinuity an enclosure straddles (see the file comment).
  std::optional<std::string> indeterminate;

 private:
  void undetermined(const std::string& why) {
    if (!indeterminate) indeterminate = why;
  }
  void set_const(EVal& v, const Const& c) const;
  /// The truth of `a op b` (a comparison), or nullopt when the enclosures
  /// do not decide it.
  std::optional<bool> compare(ScalarOp op, mpfi_srcptr a, mpfi_srcptr b);
  void float_op(ScalarOp op, EVal& o, const EVal& a, const EVal* b, const EVal* c);
  /// Faithful mode: a bool that a comparison of overlapping enclosures left
  /// undecided (EVal::i); select takes the hull of both branches on it.
  static constexpr int64_t kUnknown = 2;
  /// Faithful mode: select and the logical ops in three-valued logic; false
  /// when `op` is neither.
  bool faithful_logic(ScalarOp op, DType tag, DType operand_tag, Value o, const Value a, const Value b,
                      const Value c);
  /// Faithful mode: widens `o = op(a, b, c)` (float_op's result) and sets its NaN flag.
  void faithful_result(ScalarOp op, DType tag, EVal& o, const EVal& a, const EVal* b, const EVal* c);
  /// Faithful mode: a reduction's exact fold widened to any order.
  void faithful_fold_end(const RedState& s, size_t i, EVal& v);
  /// Folds |x| into a faithful product's partial-product bounds (RedState::mag).
  void product_bounds(EVal& m, const EVal& x);
  EVal tmp_;
  EVal step_, one_;  ///< faithful sigmoid and rsqrt: the intermediate step, and 1
  const FaithfulModel* faithful_ = nullptr;
};

struct EnclosureOutcome {
  std::optional<Failure> failure;
  std::optional<std::string> indeterminate;
  std::map<std::string, std::shared_ptr<const EncTensor>> outputs;
};

/// Evaluates the program with enclosures at `precision` bits. Inputs must
/// pass check_inputs. Throws ResourceError on oversized tensors.
EnclosureOutcome eval_enclosure(const Program& p, const Inputs& in, long precision = 256);

/// Whether two values of the same tag are proven different: disjoint
/// intervals (neither NaN) or different integers.
bool enclosures_disjoint(const EVal& a, const EVal& b, DType t);

std::string enclosure_text(const EVal& v, DType t);

/// Evaluates the program's faithful enclosures (semantics/faithful.h) at
/// `precision` bits. Inputs must pass check_inputs.
EnclosureOutcome eval_faithful(const Program& p, const Inputs& in, const FaithfulModel& m, long precision = 128);

/// Whether a float result `x` of dtype t is one a faithful enclosure allows:
/// NaN where the value may be NaN, otherwise inside the interval (±0 both
/// inside when 0 is).
bool faithful_contains(const EVal& e, DType t, double x);
/// The bounds of a faithful enclosure (values of its dtype's grid; NaN, NaN
/// when it holds only NaN).
std::pair<double, double> faithful_bounds(const EVal& e);
/// "[lo, hi]" with "or NaN" when the value may be NaN, in t's precision.
std::string faithful_text(const EVal& e, DType t);

}  // namespace stax::sem
