// One value of the multiprecision domains (Real: an MPFR number; enclosures:
// an MPFI interval) for float tags, or an exact integer for int/bool tags.
// `Ops` names the library's init/copy/swap/clear for the float part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "semantics/ir.h"

namespace stax::sem {

template <class Ops>
struct BigValue {
  typename Ops::type f;
  int64_t i = 0;
  explicit BigValue(long prec = 256) { Ops::init(f, prec); }
  BigValue(const BigValue& o) : i(o.i) { Ops::init_copy(f, o.f); }
  BigValue(BigValue&& o) noexcept : i(o.i) {
    Ops::init(f, Ops::prec(o.f));
    Ops::swap(f, o.f);
  }
  BigValue& operator=(const BigValue& o) {
    Ops::set(f, o.f);
    i = o.i;
    return *this;
  }
  BigValue& operator=(BigValue&& o) noexcept {
    Ops::swap(f, o.f);
    i = o.i;
    return *this;
  }
  ~BigValue() { Ops::clear(f); }
};

template <class V>
struct BigTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<V> data;
  int64_t size() const { return num_elements(shape); }
};

/// What the multiprecision domains of TensorEvaluator share: registers and
/// tensors of BigValues, element moves, and the ⊥ slot. The arithmetic, the
/// casts and the reductions are each domain's own.
template <class V>
class BigDomain {
 public:
  using Value = V*;
  using TensorT = BigTensor<V>;
  static constexpr size_t kBlock = 256;
  struct Buf {
    std::vector<V> v;
  };

  explicit BigDomain(long prec) : prec_(prec) {}
  long precision() const { return prec_; }
  /// A register file for a lambda of `count` instructions.
  std::vector<Buf> make_regs(size_t count) const {
    std::vector<Buf> r(count);
    for (Buf& b : r) b.v.assign(kBlock, V(prec_));
    return r;
  }
  static Value value_of(Buf& b) { return b.v.data(); }
  TensorT make_tensor(DType t, Shape s) const {
    TensorT r;
    r.dtype = t;
    r.shape = std::move(s);
    r.data.assign(size_t(num_elements(r.shape)), V(prec_));
    return r;
  }

  Value param(size_t, size_t, const Value& a) { return a; }
  void load(Value dst, const TensorT& t, const int64_t* off, size_t cnt) {
    for (size_t i = 0; i < cnt; ++i) dst[i] = t.data[size_t(off[i])];
  }
  void load_range(Value dst, const TensorT& t, int64_t start, size_t cnt) {
    for (size_t i = 0; i < cnt; ++i) dst[i] = t.data[size_t(start) + i];
  }
  void store(Value src, TensorT& t, int64_t start, size_t cnt) {
    for (size_t i = 0; i < cnt; ++i) t.data[size_t(start) + i] = src[i];
  }
  void copy(Value dst, Value src, DType, size_t cnt) {
    for (size_t i = 0; i < cnt; ++i) dst[i] = src[i];
  }
  void round_to_tag(Value, DType, size_t) {}  // float casts are the identity on reals
  int64_t read_int(const TensorT& t, int64_t off) const { return t.data[size_t(off)].i; }

  Buf* regs = nullptr;
  uint8_t* const_ready = nullptr;  ///< unused: constants are cheap to refill
  size_t n = 0;
  int64_t fail_pos = -1;
  std::string fail_reason;

 protected:
  long prec_;
};

}  // namespace stax::sem
