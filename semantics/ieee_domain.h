// The Ieee domain: the bit-exact reference float semantics (docs/design.md §3), over
// blocks of elements. A Value is a column of up to kBlock elements of the
// compute type of its tag (f16/bf16 tags are carried in f32).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "semantics/ir.h"
#include "semantics/tensor.h"

namespace stax::sem {

class IeeeDomain {
 public:
  using Value = void*;
  using TensorT = Tensor;
  static constexpr size_t kBlock = 1024;
  struct alignas(64) Buf {
    uint8_t bytes[kBlock * 8];
  };

  std::vector<Buf> make_regs(size_t count) const { return std::vector<Buf>(count); }
  static Value value_of(Buf& b) { return b.bytes; }

  // -- lambda evaluation (see lambda_eval.h)
  Value param(size_t, size_t, const Value& a) { return a; }
  Value constant(size_t reg, const Const& c, DType tag);
  Value apply(size_t reg, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args);
  Value cast(size_t reg, const Value& v, DType from, DType to);

  // -- tensor access
  void load(Value dst, const Tensor& t, const int64_t* offsets, size_t n);
  void load_range(Value dst, const Tensor& t, int64_t start, size_t n);
  void store(Value src, Tensor& t, int64_t start, size_t n);
  /// Rounds a column to its tag's storage precision (a map's store).
  void round_to_tag(Value v, DType tag, size_t n);
  void from_int64(Value dst, const int64_t* v, size_t n, DType tag);
  /// Multiplies a float column by 2^e (exact unless it under/overflows).
  void scale_pow2(Value v, DType tag, int e, size_t n);
  void fill(Value dst, const Const& c, size_t n);
  void copy(Value dst, Value src, DType tag, size_t n);
  int64_t read_int(const Tensor& t, int64_t off) const { return t.get_int(off); }
  Tensor make_tensor(DType t, Shape s) const { return Tensor::uninitialized(t, std::move(s)); }

  // -- reductions: a left fold per output, from init, in flat order
  struct RedState {
    RedOp op;
    DType tag;
    int64_t rsize = 1;
    std::vector<uint8_t> acc;   // compute-type accumulators
    std::vector<int64_t> arg;   // argmax/argmin indices
  };
  void red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs, int64_t rsize);
  void red_fold(RedState& s, Value col, size_t n, int64_t flat_start);
  void red_finish(RedState& s, Tensor& out);

  // -- state
  Buf* regs = nullptr;  ///< register file of the lambda being evaluated
  /// Per register: 1 once a constant's block has been filled (constants do
  /// not change between blocks of one lambda).
  uint8_t* const_ready = nullptr;
  size_t n = 0;         ///< elements in the current block
  int64_t fail_pos = -1;
  std::string fail_reason;
};

}  // namespace stax::sem
