#include "semantics/real_domain.h"

#include <cmath>

#include "semantics/int_ops.h"

namespace stax::sem {

namespace {

bool floaty(DType t) { return is_float(t); }

// IEEE 754-2019 maximum/minimum on reals: NaN-propagating, -0 < +0.
void real_maximum(mpfr_t o, const mpfr_t a, const mpfr_t b, bool is_max) {
  if (mpfr_nan_p(a) || mpfr_nan_p(b)) {
    mpfr_set_nan(o);
    return;
  }
  int c = mpfr_cmp(a, b);
  if (c == 0) {
    bool pick_a = is_max ? !mpfr_signbit(a) : mpfr_signbit(a);
    mpfr_set(o, pick_a ? a : b, MPFR_RNDN);
    return;
  }
  bool a_wins = is_max ? c > 0 : c < 0;
  mpfr_set(o, a_wins ? a : b, MPFR_RNDN);
}

int64_t trunc_to_int(const mpfr_t x, DType to) {
  if (mpfr_nan_p(x)) return 0;
  int64_t lo = int_min(to), hi = int_max(to);
  if (mpfr_cmp_si(x, lo) <= 0) return lo;
  if (mpfr_cmp_si(x, hi) >= 0) return hi;
  return mpfr_get_si(x, MPFR_RNDZ);
}

}  // namespace

RealDomain::RealDomain(mpfr_prec_t prec) : BigDomain(prec), tmp_(prec), tmp2_(prec) {
  mpfr_set_emax(kMaxExponent);
  mpfr_set_emin(-kMaxExponent);
}

void RealDomain::set_const(RVal& v, const Const& c) const {
  if (floaty(c.dtype)) mpfr_set_d(v.f, c.as_double(), MPFR_RNDN);
  else v.i = c.as_int();
}

RealDomain::Value RealDomain::constant(size_t reg, const Const& c, DType) {
  Value out = regs[reg].v.data();
  fill(out, c, n);
  return out;
}

void RealDomain::fill(Value dst, const Const& c, size_t cnt) {
  for (size_t i = 0; i < cnt; ++i) set_const(dst[i], c);
}

RealDomain::Value RealDomain::apply(size_t reg, ScalarOp op, DType /*tag*/, DType operand_tag,
                                    std::span<const Value> args) {
  Value o = regs[reg].v.data();
  const Value a = args[0];
  const Value b = args.size() > 1 ? args[1] : nullptr;
  const Value c = args.size() > 2 ? args[2] : nullptr;
  const auto R = MPFR_RNDN;
  if (apply_exact(*this, op, operand_tag, o, a, b, c, n)) return o;
  for (size_t i = 0; i < n; ++i) {
    mpfr_ptr r = o[i].f;
    mpfr_srcptr x = a[i].f;
    mpfr_srcptr y = b ? b[i].f : nullptr;
    switch (op) {
      case ScalarOp::Add: mpfr_add(r, x, y, R); break;
      case ScalarOp::Sub: mpfr_sub(r, x, y, R); break;
      case ScalarOp::Mul: mpfr_mul(r, x, y, R); break;
      case ScalarOp::Div: mpfr_div(r, x, y, R); break;
      case ScalarOp::Mod:
      case ScalarOp::FloorDiv: {
        // Python semantics on reals: mod has the sign of the divisor.
        mpfr_fmod(tmp_.f, x, y, R);
        if (!mpfr_zero_p(tmp_.f) && !mpfr_nan_p(tmp_.f) && (mpfr_sgn(tmp_.f) < 0) != (mpfr_sgn(y) < 0))
          mpfr_add(tmp_.f, tmp_.f, y, R);
        if (op == ScalarOp::Mod) {
          mpfr_set(r, tmp_.f, R);
        } else if (mpfr_zero_p(y)) {
          mpfr_div(r, x, y, R);
        } else {
          mpfr_sub(tmp2_.f, x, tmp_.f, R);
          mpfr_div(r, tmp2_.f, y, R);
          mpfr_rint(r, r, MPFR_RNDN);
        }
        break;
      }
      case ScalarOp::Neg: mpfr_neg(r, x, R); break;
      case ScalarOp::Abs: mpfr_abs(r, x, R); break;
      case ScalarOp::Relu:
        mpfr_set_zero(tmp_.f, 1);
        real_maximum(r, x, tmp_.f, true);
        break;
      case ScalarOp::Maximum: real_maximum(r, x, y, true); break;
      case ScalarOp::Minimum: real_maximum(r, x, y, false); break;
      case ScalarOp::Exp: mpfr_exp(r, x, R); break;
      case ScalarOp::Log: mpfr_log(r, x, R); break;
      case ScalarOp::Log2: mpfr_log2(r, x, R); break;
      case ScalarOp::Log10: mpfr_log10(r, x, R); break;
      case ScalarOp::Log1p: mpfr_log1p(r, x, R); break;
      case ScalarOp::Expm1: mpfr_expm1(r, x, R); break;
      case ScalarOp::Tanh: mpfr_tanh(r, x, R); break;
      case ScalarOp::Sigmoid:
        mpfr_neg(tmp_.f, x, R);
        mpfr_exp(tmp_.f, tmp_.f, R);
        mpfr_add_ui(tmp_.f, tmp_.f, 1, R);
        mpfr_ui_div(r, 1, tmp_.f, R);
        break;
      case ScalarOp::Sqrt: mpfr_sqrt(r, x, R); break;
      case ScalarOp::Rsqrt: mpfr_rec_sqrt(r, x, R); break;
      case ScalarOp::Erf: mpfr_erf(r, x, R); break;
      case ScalarOp::Sin: mpfr_sin(r, x, R); break;
      case ScalarOp::Cos: mpfr_cos(r, x, R); break;
      case ScalarOp::Floor: mpfr_floor(r, x); break;
      case ScalarOp::Pow: mpfr_pow(r, x, y, R); break;
      case ScalarOp::Fma: mpfr_fma(r, x, y, c[i].f, R); break;
      case ScalarOp::Eq: o[i].i = mpfr_equal_p(x, y); break;
      case ScalarOp::Ne: o[i].i = !mpfr_equal_p(x, y); break;
      case ScalarOp::Lt: o[i].i = mpfr_less_p(x, y); break;
      case ScalarOp::Le: o[i].i = mpfr_lessequal_p(x, y); break;
      case ScalarOp::Gt: o[i].i = mpfr_greater_p(x, y); break;
      case ScalarOp::Ge: o[i].i = mpfr_greaterequal_p(x, y); break;
      default: STAX_CHECK(false) << "float op " << op_name(op);
    }
  }
  return o;
}

RealDomain::Value RealDomain::cast(size_t reg, const Value& v, DType from, DType to) {
  Value o = regs[reg].v.data();
  for (size_t i = 0; i < n; ++i) {
    if (floaty(from) && floaty(to)) {
      mpfr_set(o[i].f, v[i].f, MPFR_RNDN);  // float casts are the identity on reals
    } else if (floaty(from)) {
      o[i].i = is_bool(to) ? !mpfr_zero_p(v[i].f) : trunc_to_int(v[i].f, to);
    } else if (floaty(to)) {
      mpfr_set_si(o[i].f, v[i].i, MPFR_RNDN);
    } else {
      o[i].i = int_cast(v[i].i, to);
    }
  }
  return o;
}

void RealDomain::from_int64(Value dst, const int64_t* v, size_t cnt, DType tag) {
  for (size_t i = 0; i < cnt; ++i) {
    if (floaty(tag)) mpfr_set_si(dst[i].f, v[i], MPFR_RNDN);
    else dst[i].i = v[i];
  }
}

void RealDomain::scale_pow2(Value v, DType tag, int e, size_t cnt) {
  if (!floaty(tag)) return;
  for (size_t i = 0; i < cnt; ++i) mpfr_mul_2si(v[i].f, v[i].f, e, MPFR_RNDN);
}

// ------------------------------------------------------------ reductions

void RealDomain::red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs, int64_t rsize) {
  s.op = op;
  s.tag = elem_tag;
  s.rsize = rsize;
  s.outputs = outputs;
  s.acc.assign(size_t(outputs), RVal(prec_));
  for (RVal& v : s.acc) set_const(v, init);
  if (red_is_arg(op)) s.arg.assign(size_t(outputs), 0);
  s.pending.clear();
  s.pending_out = 0;
}

void RealDomain::flush_sum(RedState& s) {
  // One rounding for the whole sum: init plus every summand (mpfr_sum).
  RVal& acc = s.acc[size_t(s.pending_out)];
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(s.pending.size() + 1);
  RVal init = acc;
  ptrs.push_back(init.f);
  for (RVal& v : s.pending) ptrs.push_back(v.f);
  mpfr_sum(acc.f, ptrs.data(), ptrs.size(), MPFR_RNDN);
  s.pending.clear();
}

void RealDomain::red_fold(RedState& s, Value v, size_t cnt, int64_t flat_start) {
  if (s.rsize == 0) return;
  int64_t o = flat_start / s.rsize;
  int64_t r = flat_start % s.rsize;
  bool fl = floaty(s.tag);
  for (size_t i = 0; i < cnt; ++i) {
    RVal& a = s.acc[size_t(o)];
    const RVal& x = v[i];
    switch (s.op) {
      case RedOp::Sum:
        if (fl) {
          if (s.pending_out != o && !s.pending.empty()) flush_sum(s);
          s.pending_out = o;
          s.pending.push_back(x);
        } else {
          a.i = int_fold(s.op, a.i, x.i, s.tag);
        }
        break;
      case RedOp::Prod:
        if (fl) mpfr_mul(a.f, a.f, x.f, MPFR_RNDN);
        else a.i = int_fold(s.op, a.i, x.i, s.tag);
        break;
      case RedOp::Max:
        if (fl) real_maximum(a.f, a.f, x.f, true);
        else a.i = int_fold(s.op, a.i, x.i, s.tag);
        break;
      case RedOp::Min:
        if (fl) real_maximum(a.f, a.f, x.f, false);
        else a.i = int_fold(s.op, a.i, x.i, s.tag);
        break;
      case RedOp::ArgMax:
      case RedOp::ArgMin: {
        bool take;
        if (fl) {
          int c = mpfr_nan_p(x.f) || mpfr_nan_p(a.f) ? 0 : mpfr_cmp(x.f, a.f);
          // NaN is the greatest value (docs/design.md §3).
          take = s.op == RedOp::ArgMax ? c > 0 || (mpfr_nan_p(x.f) && !mpfr_nan_p(a.f))
                                       : c < 0 || (!mpfr_nan_p(x.f) && mpfr_nan_p(a.f));
        } else {
          take = s.op == RedOp::ArgMax ? x.i > a.i : x.i < a.i;
        }
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

void RealDomain::red_finish(RedState& s, RealTensor& out) {
  if (s.op == RedOp::Sum && floaty(s.tag) && !s.pending.empty()) flush_sum(s);
  if (red_is_arg(s.op)) {
    for (size_t i = 0; i < s.arg.size(); ++i) out.data[i].i = s.arg[i];
    return;
  }
  for (size_t i = 0; i < s.acc.size(); ++i) out.data[i] = s.acc[i];
}

RealTensor RealDomain::from_tensor(const Tensor& t) const {
  RealTensor r = make_tensor(t.dtype, t.shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (floaty(t.dtype)) mpfr_set_d(r.data[size_t(i)].f, t.get_double(i), MPFR_RNDN);
    else r.data[size_t(i)].i = t.get_int(i);
  }
  return r;
}

Tensor RealDomain::to_tensor_f64(const RealTensor& t) const {
  Tensor out(floaty(t.dtype) ? DType::F64 : t.dtype, t.shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (floaty(t.dtype)) {
      out.as<double>()[i] = mpfr_get_d(t.data[size_t(i)].f, MPFR_RNDN);
    } else if (t.dtype == DType::I32) {
      out.as<int32_t>()[i] = int32_t(t.data[size_t(i)].i);
    } else if (t.dtype == DType::I64) {
      out.as<int64_t>()[i] = t.data[size_t(i)].i;
    } else {
      out.as<uint8_t>()[i] = t.data[size_t(i)].i != 0;
    }
  }
  return out;
}

}  // namespace stax::sem
