// The symbolic domain of the generic tensor evaluator (semantics/
// tensor_eval.h; §6.7: one description, many interpretations): every
// element is a Z3 term over symbolic inputs (fpa_ops.h gives each scalar op
// its meaning), and ⊥ is a condition rather than an event. Internal to
// proofs/ (it includes z3++.h); program_equiv.h is the interface.
//
// - Tensors hold stored values (f16 as binary16); loads widen them to the
//   compute sort, stores round (docs/design.md §2).
// - ⊥ (an integer division by zero, an indirect index out of range after
//   Python's wrapping of negatives) is or-ed into `bottom`: the evaluator is
//   strict, so a program is ⊥ exactly when some element of some binding is.
// - Indirect loads with symbolic indices: an index that is a numeral reads
//   its element; a symbolic one reads an if-then-else over the elements it
//   may address, and its range check joins `bottom`.
// - Reductions are unrolled in the interpreter's order (a left fold per
//   output in flat order from init).
// - Every term built counts against a budget; past it the encoder throws
//   Unsupported ("over the size limit"), and the caller falls back to testing.
#pragma once

#include <z3++.h>

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "proofs/fpa_ops.h"
#include "semantics/ir.h"

namespace stax::proofs {

struct SmtTensor {
  sem::DType dtype = sem::DType::F32;
  sem::Shape shape;
  std::vector<z3::expr> data;
  int64_t size() const { return sem::num_elements(shape); }
};

class SmtDomain {
 public:
  using Value = z3::expr*;
  using TensorT = SmtTensor;
  static constexpr size_t kBlock = 64;
  /// Views with indirect loads go through load_view (tensor_eval.h).
  static constexpr bool kSymbolicLoads = true;
  struct Buf {
    std::vector<z3::expr> v;
  };
  using Lookup = std::function<const SmtTensor&(const std::string&)>;

  /// `deadline`: the encoding throws Unsupported ("timeout while encoding")
  /// once it passes.
  SmtDomain(FpaOps& ops, int64_t max_terms, std::chrono::steady_clock::time_point deadline)
      : bottom(ops.ctx().bool_val(false)), ops_(ops), max_terms_(max_terms), deadline_(deadline) {}

  std::vector<Buf> make_regs(size_t count) const;
  static Value value_of(Buf& b) { return b.v.data(); }
  TensorT make_tensor(sem::DType t, sem::Shape s) const;

  // -- lambda evaluation (lambda_eval.h)
  Value param(size_t, size_t, const Value& a) { return a; }
  Value constant(size_t reg, const sem::Const& c, sem::DType tag);
  Value apply(size_t reg, sem::ScalarOp op, sem::DType tag, sem::DType operand_tag, std::span<const Value> args);
  Value cast(size_t reg, const Value& v, sem::DType from, sem::DType to);

  // -- tensor access
  void load(Value dst, const TensorT& t, const int64_t* off, size_t cnt);
  void load_range(Value dst, const TensorT& t, int64_t start, size_t cnt);
  void store(Value src, TensorT& t, int64_t start, size_t cnt);
  void round_to_tag(Value v, sem::DType tag, size_t cnt);
  void from_int64(Value dst, const int64_t* v, size_t cnt, sem::DType tag);
  void scale_pow2(Value v, sem::DType tag, int e, size_t cnt);
  void fill(Value dst, const sem::Const& c, size_t cnt);
  void copy(Value dst, Value src, sem::DType tag, size_t cnt);
  /// Only for numerals (the evaluator's concrete index path); else Unsupported.
  int64_t read_int(const TensorT& t, int64_t off) const;
  /// Element `i` of a block of a view: `idx` is the element's index in the
  /// view, `map` gives one index expression per dim of `src` (wrapping
  /// negatives where `wrap` says), `lookup` finds the tensors that index
  /// expressions load from.
  void load_view(Value dst, size_t i, const TensorT& src, const sem::IndexMap& map, const std::vector<bool>& wrap,
                 const int64_t* idx, const Lookup& lookup);

  // -- reductions: a left fold per output, from init, in flat order
  struct RedState {
    sem::RedOp op = sem::RedOp::Sum;
    sem::DType tag = sem::DType::F32;
    int64_t rsize = 1;
    std::vector<z3::expr> acc, arg;
  };
  void red_init(RedState& s, sem::RedOp op, const sem::Const& init, sem::DType elem_tag, int64_t outputs, int64_t rsize);
  void red_fold(RedState& s, Value col, size_t cnt, int64_t flat_start);
  void red_finish(RedState& s, TensorT& out);

  // -- state (the evaluator's interface; fail_pos stays -1: ⊥ is `bottom`)
  Buf* regs = nullptr;
  uint8_t* const_ready = nullptr;
  size_t n = 0;
  int64_t fail_pos = -1;
  std::string fail_reason;

  FpaOps& ops() { return ops_; }
  /// The condition under which the evaluation so far is ⊥.
  z3::expr bottom;
  int64_t terms() const { return terms_; }

 private:
  void count(int64_t k);
  FpaOps& ops_;
  int64_t max_terms_;
  std::chrono::steady_clock::time_point deadline_;
  int64_t terms_ = 0, next_clock_ = 0;
};

}  // namespace stax::proofs
