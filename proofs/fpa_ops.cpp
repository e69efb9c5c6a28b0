// The scalar ops in Z3's theories (fpa_ops.h). Each case mirrors the Ieee
// domain (semantics/ieee_domain.cpp, ieee_scalar.h, int_ops.h) op for op.
#include "proofs/fpa_ops.h"

#include <climits>
#include <cmath>

namespace stax::proofs {

using namespace sem;

namespace {

unsigned int_width(DType t) { return t == DType::I32 ? 32u : 64u; }

uint64_t canonical_nan(DType t) {
  switch (t) {
    case DType::F16: return 0x7e00;
    case DType::BF16: return 0x7fc0;
    case DType::F32: return 0x7fc00000;
    default: return 0x7ff8000000000000ull;
  }
}

}  // namespace

uint64_t model_bits(const z3::model& m, const z3::expr& e, DType t) {
  z3::context& c = e.ctx();
  if (e.is_bool()) return m.eval(e, true).is_true() ? 1 : 0;
  z3::expr bv = e;
  if (e.is_fpa()) {
    if (m.eval(z3::expr(c, Z3_mk_fpa_is_nan(c, e)), true).is_true()) return canonical_nan(t);
    bv = z3::expr(c, Z3_mk_fpa_to_ieee_bv(c, e));
  }
  uint64_t bits = 0;
  if (!Z3_get_numeral_uint64(c, m.eval(bv, true), &bits)) throw Unsupported{"model value is not a numeral"};
  return bits;
}

DType FpaOps::compute(DType t) const { return half_in_f32_ ? compute_type(t) : t; }

z3::sort FpaOps::storage_sort(DType t) {
  switch (t) {
    case DType::F16: return c_.fpa_sort(5, 11);
    case DType::BF16: return c_.fpa_sort(8, 8);
    case DType::F32: return c_.fpa_sort(8, 24);
    case DType::F64: return c_.fpa_sort(11, 53);
    case DType::I32: return c_.bv_sort(32);
    case DType::I64: return c_.bv_sort(64);
    case DType::Bool: return c_.bool_sort();
  }
  throw Unsupported{"dtype"};
}

z3::sort FpaOps::compute_sort(DType t) { return storage_sort(compute(t)); }

z3::expr FpaOps::rne() { return z3::expr(c_, Z3_mk_fpa_rne(c_)); }

z3::expr FpaOps::num(double v, const z3::sort& s) { return z3::expr(c_, Z3_mk_fpa_numeral_double(c_, v, s)); }

z3::expr FpaOps::convert(const z3::expr& v, const z3::sort& s) {
  if (z3::eq(v.get_sort(), s)) return v;
  // Rounding back a value that was widened exactly from `s` gives it back:
  // so a stored f16 loaded to f32 and stored again is the same term, and the
  // two sides of an exact rewrite stay syntactically equal.
  if (v.is_app() && v.decl().decl_kind() == Z3_OP_FPA_TO_FP && v.num_args() == 2) {
    z3::expr w = v.arg(1);
    z3::sort vs = v.get_sort();
    if (w.is_fpa() && z3::eq(w.get_sort(), s) && vs.fpa_ebits() >= s.fpa_ebits() && vs.fpa_sbits() >= s.fpa_sbits())
      return w;
  }
  return z3::expr(c_, Z3_mk_fpa_to_fp_float(c_, rne(), v, s));
}

z3::expr FpaOps::from_bits(uint64_t bits, DType t) {
  if (t == DType::Bool) return c_.bool_val(bits != 0);
  unsigned w = unsigned(dtype_bytes(t) * 8);
  if (is_int(t)) return c_.bv_val(uint64_t(bits), w);
  z3::expr bv = c_.bv_val(uint64_t(bits), w);
  return z3::expr(c_, Z3_mk_fpa_to_fp_bv(c_, bv, storage_sort(t)));
}

z3::expr FpaOps::constant(const Const& k, DType tag) {
  z3::expr v = from_bits(k.bits, k.dtype);
  if (is_float(k.dtype) && is_float(tag)) return convert(v, compute_sort(tag));
  if (k.dtype == tag || is_bool(tag)) return v;
  return cast(v, k.dtype, tag);
}

z3::expr FpaOps::widen(const z3::expr& stored, DType t) {
  return is_float(t) ? convert(stored, compute_sort(t)) : stored;
}

z3::expr FpaOps::narrow(const z3::expr& value, DType t) { return is_float(t) ? convert(value, storage_sort(t)) : value; }

z3::expr FpaOps::round_to_tag(const z3::expr& value, DType t) {
  if (!is_half(t) || !half_in_f32_) return value;
  return convert(convert(value, storage_sort(t)), compute_sort(t));
}

z3::expr FpaOps::is_nan(const z3::expr& a) { return z3::expr(c_, Z3_mk_fpa_is_nan(c_, a)); }

z3::expr FpaOps::same(const z3::expr& a, const z3::expr& b) {
  // SMT-LIB's `=` on floats is identity (so -0 ≠ +0) with a single NaN.
  if (a.is_fpa()) return (is_nan(a) && is_nan(b)) || a == b;
  return a == b;
}

z3::expr FpaOps::maximum(const z3::expr& a, const z3::expr& b) {
  // IEEE 754-2019 maximum (docs/design.md §3): NaN-propagating, -0 < +0; SMT-LIB's
  // fp.max leaves max(-0, +0) unspecified, so it is spelled out.
  z3::expr eq(c_, Z3_mk_fpa_eq(c_, a, b)), gt(c_, Z3_mk_fpa_gt(c_, a, b)), neg(c_, Z3_mk_fpa_is_negative(c_, a));
  return z3::ite(is_nan(a) || is_nan(b), z3::expr(c_, Z3_mk_fpa_nan(c_, a.get_sort())),
                 z3::ite(eq, z3::ite(neg, b, a), z3::ite(gt, a, b)));
}

z3::expr FpaOps::minimum(const z3::expr& a, const z3::expr& b) {
  z3::expr eq(c_, Z3_mk_fpa_eq(c_, a, b)), lt(c_, Z3_mk_fpa_lt(c_, a, b)), neg(c_, Z3_mk_fpa_is_negative(c_, a));
  return z3::ite(is_nan(a) || is_nan(b), z3::expr(c_, Z3_mk_fpa_nan(c_, a.get_sort())),
                 z3::ite(eq, z3::ite(neg, a, b), z3::ite(lt, a, b)));
}

z3::expr FpaOps::uf(ScalarOp op, const z3::sort& s, std::span<const z3::expr> args) {
  std::string name = std::string(op_name(op)) + "_" + std::to_string(s.fpa_ebits()) + "_" + std::to_string(s.fpa_sbits());
  uf_ops_.insert(std::string(op_name(op)));
  auto it = ufs_.find(name);
  if (it == ufs_.end()) {
    z3::sort_vector dom(c_);
    for (size_t k = 0; k < args.size(); ++k) dom.push_back(s);
    it = ufs_.emplace(name, c_.function(name.c_str(), dom, s)).first;
  }
  z3::expr_vector a(c_);
  for (const z3::expr& v : args) a.push_back(v);
  return it->second(a);
}

z3::expr FpaOps::bv_floordiv(const z3::expr& a, const z3::expr& b) {
  z3::expr q(c_, Z3_mk_bvsdiv(c_, a, b)), r(c_, Z3_mk_bvsrem(c_, a, b));
  z3::expr zero = c_.bv_val(0, a.get_sort().bv_size());
  return z3::ite(r != zero && ((a < zero) != (b < zero)), q - 1, q);
}

z3::expr FpaOps::bv_mod(const z3::expr& a, const z3::expr& b) {
  return z3::expr(c_, Z3_mk_bvsmod(c_, a, b));  // the sign of the divisor, as Python
}

z3::expr FpaOps::int_op(ScalarOp op, DType operand_tag, std::span<const z3::expr> args, z3::expr* fails) {
  auto A = [&](size_t k) -> const z3::expr& { return args[k]; };
  z3::expr zero = c_.bv_val(0, int_width(compute(operand_tag)));
  if (op == ScalarOp::Div || op == ScalarOp::Mod || op == ScalarOp::FloorDiv) {
    if (!fails) throw Unsupported{"integer " + std::string(op_name(op)) + " (it may be ⊥)"};
    *fails = *fails || A(1) == zero;
  }
  switch (op) {
    case ScalarOp::Add: return A(0) + A(1);
    case ScalarOp::Sub: return A(0) - A(1);
    case ScalarOp::Mul: return A(0) * A(1);
    case ScalarOp::Div: return z3::expr(c_, Z3_mk_bvsdiv(c_, A(0), A(1)));  // truncating; MIN / -1 wraps
    case ScalarOp::Mod: return bv_mod(A(0), A(1));
    case ScalarOp::FloorDiv: return bv_floordiv(A(0), A(1));
    case ScalarOp::Neg: return -A(0);
    case ScalarOp::Abs: return z3::ite(A(0) < zero, -A(0), A(0));
    case ScalarOp::Relu: return z3::ite(A(0) < zero, zero, A(0));
    case ScalarOp::Maximum: return z3::ite(A(0) < A(1), A(1), A(0));
    case ScalarOp::Minimum: return z3::ite(A(1) < A(0), A(1), A(0));
    case ScalarOp::Fma: return A(0) * A(1) + A(2);
    case ScalarOp::Eq: return A(0) == A(1);
    case ScalarOp::Ne: return A(0) != A(1);
    case ScalarOp::Lt: return A(0) < A(1);  // z3++: signed comparisons on bit-vectors
    case ScalarOp::Le: return A(0) <= A(1);
    case ScalarOp::Gt: return A(0) > A(1);
    case ScalarOp::Ge: return A(0) >= A(1);
    default: break;
  }
  throw Unsupported{"integer op " + std::string(op_name(op))};
}

z3::expr FpaOps::float_op(ScalarOp op, std::span<const z3::expr> args) {
  auto A = [&](size_t k) -> const z3::expr& { return args[k]; };
  z3::expr rm = rne();
  switch (op) {
    case ScalarOp::Add: return z3::expr(c_, Z3_mk_fpa_add(c_, rm, A(0), A(1)));
    case ScalarOp::Sub: return z3::expr(c_, Z3_mk_fpa_sub(c_, rm, A(0), A(1)));
    case ScalarOp::Mul: return z3::expr(c_, Z3_mk_fpa_mul(c_, rm, A(0), A(1)));
    case ScalarOp::Div: return z3::expr(c_, Z3_mk_fpa_div(c_, rm, A(0), A(1)));
    case ScalarOp::Neg: return z3::expr(c_, Z3_mk_fpa_neg(c_, A(0)));
    case ScalarOp::Abs: return z3::expr(c_, Z3_mk_fpa_abs(c_, A(0)));
    case ScalarOp::Relu: return maximum(A(0), num(0.0, A(0).get_sort()));
    case ScalarOp::Maximum: return maximum(A(0), A(1));
    case ScalarOp::Minimum: return minimum(A(0), A(1));
    case ScalarOp::Fma: return z3::expr(c_, Z3_mk_fpa_fma(c_, rm, A(0), A(1), A(2)));
    case ScalarOp::Sqrt: return z3::expr(c_, Z3_mk_fpa_sqrt(c_, rm, A(0)));
    case ScalarOp::Rsqrt: {  // the reference composite: 1 / sqrt(a), two roundings
      z3::expr s(c_, Z3_mk_fpa_sqrt(c_, rm, A(0)));
      return z3::expr(c_, Z3_mk_fpa_div(c_, rm, num(1.0, s.get_sort()), s));
    }
    case ScalarOp::Floor: return z3::expr(c_, Z3_mk_fpa_round_to_integral(c_, z3::expr(c_, Z3_mk_fpa_rtn(c_)), A(0)));
    case ScalarOp::Sigmoid: {  // 1 / (1 + exp(-a)), exp uninterpreted
      z3::sort s = A(0).get_sort();
      z3::expr na(c_, Z3_mk_fpa_neg(c_, A(0)));
      z3::expr e = uf(ScalarOp::Exp, s, std::span<const z3::expr>(&na, 1));
      z3::expr d(c_, Z3_mk_fpa_add(c_, rm, num(1.0, s), e));
      return z3::expr(c_, Z3_mk_fpa_div(c_, rm, num(1.0, s), d));
    }
    case ScalarOp::Exp:
    case ScalarOp::Log:
    case ScalarOp::Log2:
    case ScalarOp::Log10:
    case ScalarOp::Log1p:
    case ScalarOp::Expm1:
    case ScalarOp::Tanh:
    case ScalarOp::Erf:
    case ScalarOp::Sin:
    case ScalarOp::Cos:
    case ScalarOp::Pow:
    case ScalarOp::Mod:  // NumPy's divmod on floats: no FPA counterpart
    case ScalarOp::FloorDiv: return uf(op, A(0).get_sort(), args);
    case ScalarOp::Eq: return z3::expr(c_, Z3_mk_fpa_eq(c_, A(0), A(1)));
    case ScalarOp::Ne: return !z3::expr(c_, Z3_mk_fpa_eq(c_, A(0), A(1)));
    case ScalarOp::Lt: return z3::expr(c_, Z3_mk_fpa_lt(c_, A(0), A(1)));
    case ScalarOp::Le: return z3::expr(c_, Z3_mk_fpa_leq(c_, A(0), A(1)));
    case ScalarOp::Gt: return z3::expr(c_, Z3_mk_fpa_gt(c_, A(0), A(1)));
    case ScalarOp::Ge: return z3::expr(c_, Z3_mk_fpa_geq(c_, A(0), A(1)));
    default: break;
  }
  throw Unsupported{"op " + std::string(op_name(op))};
}

z3::expr FpaOps::apply(ScalarOp op, DType, DType operand_tag, std::span<const z3::expr> args, z3::expr* fails) {
  if (op == ScalarOp::Select) return z3::ite(args[0], args[1], args[2]);
  if (is_bool(operand_tag)) {
    switch (op) {
      case ScalarOp::And: return args[0] && args[1];
      case ScalarOp::Or: return args[0] || args[1];
      case ScalarOp::Not: return !args[0];
      case ScalarOp::Eq: return args[0] == args[1];
      case ScalarOp::Ne: return args[0] != args[1];
      default: throw Unsupported{"bool op " + std::string(op_name(op))};
    }
  }
  if (is_int(operand_tag)) return int_op(op, operand_tag, args, fails);
  return float_op(op, args);
}

z3::expr FpaOps::float_to_int(const z3::expr& v, DType from, DType to) {
  // ieee::float_to_int: truncation toward zero, NaN -> 0, saturating at the
  // bounds as the source format rounds them.
  unsigned w = int_width(to);
  bool dbl = compute(from) == DType::F64;
  int64_t lo = to == DType::I32 ? INT32_MIN : INT64_MIN, hi = to == DType::I32 ? INT32_MAX : INT64_MAX;
  double flo = dbl ? double(lo) : double(float(lo)), fhi = dbl ? double(hi) : double(float(hi));
  z3::sort s = v.get_sort();
  z3::expr le(c_, Z3_mk_fpa_leq(c_, v, num(flo, s))), ge(c_, Z3_mk_fpa_geq(c_, v, num(fhi, s)));
  z3::expr rtz(c_, Z3_mk_fpa_rtz(c_));
  z3::expr conv(c_, Z3_mk_fpa_to_sbv(c_, rtz, v, w));
  return z3::ite(is_nan(v), c_.bv_val(0, w),
                 z3::ite(le, c_.bv_val(lo, w), z3::ite(ge, c_.bv_val(hi, w), conv)));
}

z3::expr FpaOps::cast(const z3::expr& v, DType from, DType to) {
  if (is_float(from) && is_float(to)) return convert(convert(v, storage_sort(to)), compute_sort(to));
  if (is_float(from)) {
    if (is_bool(to)) return !z3::expr(c_, Z3_mk_fpa_eq(c_, v, num(0.0, v.get_sort())));
    return float_to_int(v, from, to);
  }
  if (is_bool(from)) {
    if (is_bool(to)) return v;
    if (is_int(to)) return z3::ite(v, c_.bv_val(1, int_width(to)), c_.bv_val(0, int_width(to)));
    z3::sort s = compute_sort(to);
    return z3::ite(v, num(1.0, s), num(0.0, s));
  }
  // from an integer
  unsigned wf = v.get_sort().bv_size();
  if (is_bool(to)) return v != c_.bv_val(0, wf);
  if (is_int(to)) {
    unsigned wt = int_width(to);
    if (wt == wf) return v;
    return wt < wf ? v.extract(wt - 1, 0) : z3::sext(v, wt - wf);
  }
  // One rounding to the storage format (an integer to f16 directly, as the
  // interpreter's round-to-odd through f32 does), then exact widening.
  z3::expr r(c_, Z3_mk_fpa_to_fp_signed(c_, rne(), v, storage_sort(to)));
  return convert(r, compute_sort(to));
}

z3::expr FpaOps::from_int64(const z3::expr& v, DType tag) { return cast(v, DType::I64, tag); }

}  // namespace stax::proofs
