#include "semantics/ieee_domain.h"

#include <cmath>
#include <cstring>

#include "semantics/ieee_scalar.h"

namespace stax::sem {

namespace {

template <class T>
T* col(IeeeDomain::Value v) {
  return static_cast<T*>(v);
}

template <class T>
void float_op(ScalarOp op, size_t n, T* __restrict o, const T* __restrict a, const T* __restrict b,
              const T* __restrict c) {
  if (auto f = ieee::cr_fn(op)) {
    ieee::cr_n(*f, n, o, a, b);  // transcendental: correctly rounded (mathlib/)
    return;
  }
  switch (op) {
    case ScalarOp::Add: for (size_t i = 0; i < n; ++i) o[i] = a[i] + b[i]; return;
    case ScalarOp::Sub: for (size_t i = 0; i < n; ++i) o[i] = a[i] - b[i]; return;
    case ScalarOp::Mul: for (size_t i = 0; i < n; ++i) o[i] = a[i] * b[i]; return;
    case ScalarOp::Div: for (size_t i = 0; i < n; ++i) o[i] = a[i] / b[i]; return;
    case ScalarOp::Mod: for (size_t i = 0; i < n; ++i) { T m; ieee::divmod(a[i], b[i], m); o[i] = m; } return;
    case ScalarOp::FloorDiv: for (size_t i = 0; i < n; ++i) { T m; o[i] = ieee::divmod(a[i], b[i], m); } return;
    case ScalarOp::Neg: for (size_t i = 0; i < n; ++i) o[i] = -a[i]; return;
    case ScalarOp::Abs: for (size_t i = 0; i < n; ++i) o[i] = std::fabs(a[i]); return;
    case ScalarOp::Relu: for (size_t i = 0; i < n; ++i) o[i] = ieee::maximum_branchless(a[i], T(0)); return;
    case ScalarOp::Maximum: for (size_t i = 0; i < n; ++i) o[i] = ieee::maximum_branchless(a[i], b[i]); return;
    case ScalarOp::Minimum: for (size_t i = 0; i < n; ++i) o[i] = ieee::minimum_branchless(a[i], b[i]); return;
    case ScalarOp::Sigmoid:
      // 1 / (1 + exp(-a)) over the correctly rounded exp (docs/design.md §3).
      for (size_t i = 0; i < n; ++i) o[i] = -a[i];
      ieee::cr_n(math::Fn::Exp, n, o, o);
      for (size_t i = 0; i < n; ++i) o[i] = T(1) / (T(1) + o[i]);
      return;
    case ScalarOp::Sqrt: for (size_t i = 0; i < n; ++i) o[i] = std::sqrt(a[i]); return;
    case ScalarOp::Rsqrt: for (size_t i = 0; i < n; ++i) o[i] = ieee::rsqrt(a[i]); return;
    case ScalarOp::Floor: for (size_t i = 0; i < n; ++i) o[i] = std::floor(a[i]); return;
    case ScalarOp::Fma: for (size_t i = 0; i < n; ++i) o[i] = std::fma(a[i], b[i], c[i]); return;
    default: break;
  }
  STAX_CHECK(false) << "float op " << op_name(op) << " not handled";
}

template <class T>
void int_op(ScalarOp op, size_t n, T* __restrict o, const T* __restrict a, const T* __restrict b,
            const T* __restrict c, IeeeDomain& d) {
  auto div_check = [&](auto f) {
    for (size_t i = 0; i < n; ++i) {
      if (b[i] == 0) {
        if (d.fail_pos < 0) {
          d.fail_pos = int64_t(i);
          d.fail_reason = std::string("integer ") + std::string(op_name(op)) + " by zero";
        }
        o[i] = 0;
      } else {
        o[i] = f(a[i], b[i]);
      }
    }
  };
  switch (op) {
    case ScalarOp::Add: for (size_t i = 0; i < n; ++i) o[i] = ieee::wrap_add(a[i], b[i]); return;
    case ScalarOp::Sub: for (size_t i = 0; i < n; ++i) o[i] = ieee::wrap_sub(a[i], b[i]); return;
    case ScalarOp::Mul: for (size_t i = 0; i < n; ++i) o[i] = ieee::wrap_mul(a[i], b[i]); return;
    case ScalarOp::Div: div_check(ieee::trunc_div<T>); return;
    case ScalarOp::Mod: div_check(ieee::py_mod<T>); return;
    case ScalarOp::FloorDiv: div_check(ieee::floor_div<T>); return;
    case ScalarOp::Neg: for (size_t i = 0; i < n; ++i) o[i] = ieee::wrap_neg(a[i]); return;
    case ScalarOp::Abs: for (size_t i = 0; i < n; ++i) o[i] = a[i] < 0 ? ieee::wrap_neg(a[i]) : a[i]; return;
    case ScalarOp::Relu: for (size_t i = 0; i < n; ++i) o[i] = a[i] < 0 ? 0 : a[i]; return;
    case ScalarOp::Maximum: for (size_t i = 0; i < n; ++i) o[i] = a[i] < b[i] ? b[i] : a[i]; return;
    case ScalarOp::Minimum: for (size_t i = 0; i < n; ++i) o[i] = b[i] < a[i] ? b[i] : a[i]; return;
    case ScalarOp::Fma: for (size_t i = 0; i < n; ++i) o[i] = ieee::wrap_add(ieee::wrap_mul(a[i], b[i]), c[i]); return;
    default: break;
  }
  STAX_CHECK(false) << "int op " << op_name(op) << " not handled";
}

template <class T>
void compare_op(ScalarOp op, size_t n, uint8_t* o, const T* a, const T* b) {
  switch (op) {
    case ScalarOp::Eq: for (size_t i = 0; i < n; ++i) o[i] = a[i] == b[i]; return;
    case ScalarOp::Ne: for (size_t i = 0; i < n; ++i) o[i] = a[i] != b[i]; return;
    case ScalarOp::Lt: for (size_t i = 0; i < n; ++i) o[i] = a[i] < b[i]; return;
    case ScalarOp::Le: for (size_t i = 0; i < n; ++i) o[i] = a[i] <= b[i]; return;
    case ScalarOp::Gt: for (size_t i = 0; i < n; ++i) o[i] = a[i] > b[i]; return;
    case ScalarOp::Ge: for (size_t i = 0; i < n; ++i) o[i] = a[i] >= b[i]; return;
    default: break;
  }
  STAX_CHECK(false) << "compare op " << op_name(op) << " not handled";
}

template <class T>
void select_op(size_t n, T* o, const uint8_t* c, const T* a, const T* b) {
  for (size_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
}

template <class T>
void dispatch_typed(ScalarOp op, size_t n, void* o, std::span<const IeeeDomain::Value> args, IeeeDomain& d) {
  const T* a = col<const T>(args[0]);
  const T* b = args.size() > 1 ? col<const T>(args[1]) : nullptr;
  const T* c = args.size() > 2 ? col<const T>(args[2]) : nullptr;
  switch (op) {
    case ScalarOp::Eq:
    case ScalarOp::Ne:
    case ScalarOp::Lt:
    case ScalarOp::Le:
    case ScalarOp::Gt:
    case ScalarOp::Ge: compare_op<T>(op, n, col<uint8_t>(o), a, b); return;
    case ScalarOp::Select:
      select_op<T>(n, col<T>(o), col<const uint8_t>(args[0]), col<const T>(args[1]), col<const T>(args[2]));
      return;
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) float_op<T>(op, n, col<T>(o), a, b, c);
  else if constexpr (std::is_same_v<T, uint8_t>) {
    switch (op) {
      case ScalarOp::And: for (size_t i = 0; i < n; ++i) col<uint8_t>(o)[i] = a[i] & b[i]; return;
      case ScalarOp::Or: for (size_t i = 0; i < n; ++i) col<uint8_t>(o)[i] = a[i] | b[i]; return;
      case ScalarOp::Not: for (size_t i = 0; i < n; ++i) col<uint8_t>(o)[i] = !a[i]; return;
      default: STAX_CHECK(false) << "bool op " << op_name(op) << " not handled";
    }
  } else {
    int_op<T>(op, n, col<T>(o), a, b, c, d);
  }
}

// Converts a column between compute types, with the rounding of the target tag.
template <class From>
void convert_from(const From* a, void* out, DType to, size_t n) {
  switch (to) {
    case DType::F32:
      for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<From, int64_t>) col<float>(out)[i] = float(a[i]);
        else if constexpr (std::is_same_v<From, uint8_t>) col<float>(out)[i] = a[i] ? 1.0f : 0.0f;
        else col<float>(out)[i] = float(a[i]);
      }
      return;
    case DType::F64:
      for (size_t i = 0; i < n; ++i) col<double>(out)[i] = double(a[i]);
      return;
    case DType::F16:
    case DType::BF16:
      for (size_t i = 0; i < n; ++i) {
        float r;
        if constexpr (std::is_same_v<From, double>) {
          r = to == DType::F16 ? f16_bits_to_f32(f64_to_f16_bits(a[i])) : bf16_bits_to_f32(f64_to_bf16_bits(a[i]));
        } else if constexpr (std::is_same_v<From, float>) {
          r = round_to_half(a[i], to);
        } else if constexpr (std::is_same_v<From, uint8_t>) {
          r = a[i] ? 1.0f : 0.0f;
        } else {
          r = round_to_half(i64_to_f32_round_odd(int64_t(a[i])), to);
        }
        col<float>(out)[i] = r;
      }
      return;
    case DType::I32:
      for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<From>) col<int32_t>(out)[i] = ieee::float_to_int<int32_t>(a[i]);
        else col<int32_t>(out)[i] = int32_t(uint32_t(uint64_t(int64_t(a[i]))));
      }
      return;
    case DType::I64:
      for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<From>) col<int64_t>(out)[i] = ieee::float_to_int<int64_t>(a[i]);
        else col<int64_t>(out)[i] = int64_t(a[i]);
      }
      return;
    case DType::Bool:
      for (size_t i = 0; i < n; ++i) col<uint8_t>(out)[i] = a[i] != From(0);
      return;
  }
}

template <class F>
void with_compute_type(DType tag, F f) {
  switch (compute_type(tag)) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::I32: f(int32_t{}); return;
    case DType::I64: f(int64_t{}); return;
    case DType::Bool: f(uint8_t{}); return;
    default: STAX_CHECK(false) << "no compute type";
  }
}

}  // namespace

IeeeDomain::Value IeeeDomain::constant(size_t reg, const Const& c, DType) {
  Value out = regs[reg].bytes;
  if (const_ready && const_ready[reg]) return out;
  fill(out, c, kBlock);
  if (const_ready) const_ready[reg] = 1;
  return out;
}

void IeeeDomain::fill(Value dst, const Const& c, size_t cnt) {
  switch (compute_type(c.dtype)) {
    case DType::F32: { float v = float(c.as_double()); for (size_t i = 0; i < cnt; ++i) col<float>(dst)[i] = v; return; }
    case DType::F64: { double v = c.as_double(); for (size_t i = 0; i < cnt; ++i) col<double>(dst)[i] = v; return; }
    case DType::I32: { int32_t v = int32_t(c.as_int()); for (size_t i = 0; i < cnt; ++i) col<int32_t>(dst)[i] = v; return; }
    case DType::I64: { int64_t v = c.as_int(); for (size_t i = 0; i < cnt; ++i) col<int64_t>(dst)[i] = v; return; }
    case DType::Bool: std::memset(dst, c.bits ? 1 : 0, cnt); return;
    default: break;
  }
}

IeeeDomain::Value IeeeDomain::apply(size_t reg, ScalarOp op, DType /*tag*/, DType operand_tag,
                                    std::span<const Value> args) {
  Value out = regs[reg].bytes;
  with_compute_type(operand_tag, [&](auto t) { dispatch_typed<decltype(t)>(op, n, out, args, *this); });
  return out;
}

IeeeDomain::Value IeeeDomain::cast(size_t reg, const Value& v, DType from, DType to) {
  Value out = regs[reg].bytes;
  with_compute_type(from, [&](auto t) { convert_from(col<const decltype(t)>(v), out, to, n); });
  return out;
}

void IeeeDomain::round_to_tag(Value v, DType tag, size_t cnt) {
  if (!is_half(tag)) return;
  float* p = col<float>(v);
  for (size_t i = 0; i < cnt; ++i) p[i] = round_to_half(p[i], tag);
}

void IeeeDomain::from_int64(Value dst, const int64_t* v, size_t cnt, DType tag) {
  convert_from(v, dst, tag, cnt);
}

void IeeeDomain::scale_pow2(Value v, DType tag, int e, size_t cnt) {
  if (compute_type(tag) == DType::F64) {
    for (size_t i = 0; i < cnt; ++i) col<double>(v)[i] = std::ldexp(col<double>(v)[i], e);
  } else if (compute_type(tag) == DType::F32) {
    for (size_t i = 0; i < cnt; ++i) col<float>(v)[i] = std::ldexp(col<float>(v)[i], e);
  }
}

void IeeeDomain::copy(Value dst, Value src, DType tag, size_t cnt) {
  std::memcpy(dst, src, cnt * size_t(dtype_bytes(compute_type(tag))));
}

void IeeeDomain::load(Value dst, const Tensor& t, const int64_t* off, size_t cnt) {
  switch (t.dtype) {
    case DType::F32: { const float* s = t.as<float>(); for (size_t i = 0; i < cnt; ++i) col<float>(dst)[i] = s[off[i]]; return; }
    case DType::F64: { const double* s = t.as<double>(); for (size_t i = 0; i < cnt; ++i) col<double>(dst)[i] = s[off[i]]; return; }
    case DType::F16: { const uint16_t* s = t.as<uint16_t>(); for (size_t i = 0; i < cnt; ++i) col<float>(dst)[i] = f16_bits_to_f32(s[off[i]]); return; }
    case DType::BF16: { const uint16_t* s = t.as<uint16_t>(); for (size_t i = 0; i < cnt; ++i) col<float>(dst)[i] = bf16_bits_to_f32(s[off[i]]); return; }
    case DType::I32: { const int32_t* s = t.as<int32_t>(); for (size_t i = 0; i < cnt; ++i) col<int32_t>(dst)[i] = s[off[i]]; return; }
    case DType::I64: { const int64_t* s = t.as<int64_t>(); for (size_t i = 0; i < cnt; ++i) col<int64_t>(dst)[i] = s[off[i]]; return; }
    case DType::Bool: { const uint8_t* s = t.as<uint8_t>(); for (size_t i = 0; i < cnt; ++i) col<uint8_t>(dst)[i] = s[off[i]] != 0; return; }
  }
}

void IeeeDomain::load_range(Value dst, const Tensor& t, int64_t start, size_t cnt) {
  if (cnt == 0) return;
  switch (t.dtype) {
    case DType::F16: { const uint16_t* s = t.as<uint16_t>() + start; for (size_t i = 0; i < cnt; ++i) col<float>(dst)[i] = f16_bits_to_f32(s[i]); return; }
    case DType::BF16: { const uint16_t* s = t.as<uint16_t>() + start; for (size_t i = 0; i < cnt; ++i) col<float>(dst)[i] = bf16_bits_to_f32(s[i]); return; }
    case DType::Bool: { const uint8_t* s = t.as<uint8_t>() + start; for (size_t i = 0; i < cnt; ++i) col<uint8_t>(dst)[i] = s[i] != 0; return; }
    default: {
      size_t b = size_t(dtype_bytes(t.dtype));
      std::memcpy(dst, t.data.data() + size_t(start) * b, cnt * b);
    }
  }
}

void IeeeDomain::store(Value src, Tensor& t, int64_t start, size_t cnt) {
  if (cnt == 0) return;  // an empty tensor may have no buffer at all
  switch (t.dtype) {
    case DType::F16: { uint16_t* d = t.as<uint16_t>() + start; for (size_t i = 0; i < cnt; ++i) d[i] = f32_to_f16_bits(col<float>(src)[i]); return; }
    case DType::BF16: { uint16_t* d = t.as<uint16_t>() + start; for (size_t i = 0; i < cnt; ++i) d[i] = f32_to_bf16_bits(col<float>(src)[i]); return; }
    default: {
      size_t b = size_t(dtype_bytes(t.dtype));
      std::memcpy(t.data.data() + size_t(start) * b, src, cnt * b);
    }
  }
}

// ------------------------------------------------------------- reductions

void IeeeDomain::red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs, int64_t rsize) {
  s.op = op;
  s.tag = elem_tag;
  s.rsize = rsize;
  DType ct = compute_type(elem_tag);
  s.acc.assign(size_t(outputs) * size_t(dtype_bytes(ct)), 0);
  if (outputs > 0) fill(s.acc.data(), Const{init.dtype, init.bits}, size_t(outputs));
  if (red_is_arg(op)) s.arg.assign(size_t(outputs), 0);
}

namespace {
template <class T>
void fold_typed(IeeeDomain::RedState& s, const T* v, size_t cnt, int64_t flat_start) {
  T* acc = reinterpret_cast<T*>(s.acc.data());
  int64_t o = flat_start / s.rsize;
  int64_t r = flat_start % s.rsize;
  for (size_t i = 0; i < cnt; ++i) {
    T x = v[i];
    T& a = acc[o];
    switch (s.op) {
      case RedOp::Sum:
        if constexpr (std::is_floating_point_v<T>) a = a + x;
        else a = ieee::wrap_add(a, x);
        break;
      case RedOp::Prod:
        if constexpr (std::is_floating_point_v<T>) a = a * x;
        else a = ieee::wrap_mul(a, x);
        break;
      case RedOp::Max:
        if constexpr (std::is_floating_point_v<T>) a = ieee::maximum(a, x);
        else a = a < x ? x : a;
        break;
      case RedOp::Min:
        if constexpr (std::is_floating_point_v<T>) a = ieee::minimum(a, x);
        else a = x < a ? x : a;
        break;
      case RedOp::ArgMax: {
        bool take;
        if constexpr (std::is_floating_point_v<T>) take = x > a || (std::isnan(x) && !std::isnan(a));
        else take = x > a;
        if (take) a = x, s.arg[size_t(o)] = r;
        break;
      }
      case RedOp::ArgMin: {
        bool take;  // NaN is the greatest value (docs/design.md §3): it is the min only when all are NaN
        if constexpr (std::is_floating_point_v<T>) take = x < a || (!std::isnan(x) && std::isnan(a));
        else take = x < a;
        if (take) a = x, s.arg[size_t(o)] = r;
        break;
      }
    }
    if (++r == s.rsize) {
      r = 0;
      ++o;
    }
  }
}
}  // namespace

void IeeeDomain::red_fold(RedState& s, Value v, size_t cnt, int64_t flat_start) {
  if (s.rsize == 0) return;
  with_compute_type(s.tag, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, uint8_t>) STAX_CHECK(false) << "bool reduction";
    else fold_typed<T>(s, col<const T>(v), cnt, flat_start);
  });
}

void IeeeDomain::red_finish(RedState& s, Tensor& out) {
  if (out.size() == 0) return;
  if (red_is_arg(s.op)) {
    std::memcpy(out.data.data(), s.arg.data(), s.arg.size() * sizeof(int64_t));
    return;
  }
  store(s.acc.data(), out, 0, size_t(out.size()));
}

}  // namespace stax::sem
