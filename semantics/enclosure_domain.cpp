#include "semantics/enclosure_domain.h"

#include "semantics/int_ops.h"
#include "semantics/real_domain.h"
#include "semantics/tensor_eval.h"

#include <cmath>

namespace stax::sem {

namespace {

constexpr int64_t kMaxEnclosureElements = int64_t(1) << 25;

mpfr_ptr lo(EVal& v) { return &v.f->left; }
mpfr_ptr hi(EVal& v) { return &v.f->right; }
mpfr_srcptr lo(const EVal& v) { return &v.f->left; }
mpfr_srcptr hi(const EVal& v) { return &v.f->right; }

void set_nan(EVal& v) {
  mpfr_set_nan(lo(v));
  mpfr_set_nan(hi(v));
}
void set_entire(EVal& v) {
  mpfr_set_inf(lo(v), -1);
  mpfr_set_inf(hi(v), 1);
}

/// Endpoint-wise max or min: monotone in both arguments.
void hull_max(EVal& o, const EVal& a, const EVal& b, bool is_max) {
  if (mpfi_nan_p(a.f) || mpfi_nan_p(b.f)) return set_nan(o);
  auto pick = [&](mpfr_ptr out, mpfr_srcptr x, mpfr_srcptr y, mpfr_rnd_t r) {
    if (is_max) mpfr_max(out, x, y, r);
    else mpfr_min(out, x, y, r);
  };
  pick(lo(o), lo(a), lo(b), MPFR_RNDD);
  pick(hi(o), hi(a), hi(b), MPFR_RNDU);
}

void round_to_grid(EVal& v, DType t) {
  mpfr_set_d(lo(v), grid_down(lo(v), t), MPFR_RNDN);
  mpfr_set_d(hi(v), grid_up(hi(v), t), MPFR_RNDN);
}

}  // namespace

void EnclosureDomain::set_const(EVal& v, const Const& c) const {
  if (is_float(c.dtype)) {
    mpfi_set_d(v.f, c.as_double());
    v.i = std::isnan(c.as_double());  // the faithful mode's NaN flag
  } else {
    v.i = c.as_int();
  }
}

EnclosureDomain::Value EnclosureDomain::constant(size_t reg, const Const& c, DType) {
  Value out = regs[reg].v.data();
  fill(out, c, n);
  return out;
}

void EnclosureDomain::fill(Value dst, const Const& c, size_t cnt) {
  for (size_t i = 0; i < cnt; ++i) set_const(dst[i], c);
}

std::optional<bool> EnclosureDomain::compare(ScalarOp op, mpfi_srcptr a, mpfi_srcptr b) {
  if (mpfi_nan_p(a) || mpfi_nan_p(b)) return std::nullopt;
  mpfr_srcptr al = &a->left, ar = &a->right, bl = &b->left, br = &b->right;
  auto lt = [&](mpfr_srcptr xl, mpfr_srcptr xr, mpfr_srcptr yl, mpfr_srcptr yr) -> std::optional<bool> {
    if (mpfr_less_p(xr, yl)) return true;
    if (mpfr_greaterequal_p(xl, yr)) return false;
    return std::nullopt;
  };
  auto le = [&](mpfr_srcptr xl, mpfr_srcptr xr, mpfr_srcptr yl, mpfr_srcptr yr) -> std::optional<bool> {
    if (mpfr_lessequal_p(xr, yl)) return true;
    if (mpfr_greater_p(xl, yr)) return false;
    return std::nullopt;
  };
  switch (op) {
    case ScalarOp::Lt: return lt(al, ar, bl, br);
    case ScalarOp::Gt: return lt(bl, br, al, ar);
    case ScalarOp::Le: return le(al, ar, bl, br);
    case ScalarOp::Ge: return le(bl, br, al, ar);
    case ScalarOp::Eq:
    case ScalarOp::Ne: {
      std::optional<bool> eq;
      if (mpfr_equal_p(al, ar) && mpfr_equal_p(bl, br) && mpfr_equal_p(al, bl)) eq = true;
      else if (mpfr_less_p(ar, bl) || mpfr_less_p(br, al)) eq = false;
      if (eq && op == ScalarOp::Ne) eq = !*eq;
      return eq;
    }
    default: STAX_CHECK(false) << "not a comparison: " << op_name(op);
  }
  return std::nullopt;
}

void EnclosureDomain::float_op(ScalarOp op, EVal& o, const EVal& a, const EVal* b, const EVal* c) {
  mpfi_ptr r = o.f;
  mpfi_srcptr x = a.f;
  switch (op) {
    case ScalarOp::Add: mpfi_add(r, x, b->f); break;
    case ScalarOp::Sub: mpfi_sub(r, x, b->f); break;
    case ScalarOp::Mul: mpfi_mul(r, x, b->f); break;
    case ScalarOp::Div: mpfi_div(r, x, b->f); break;
    case ScalarOp::Mod:
    case ScalarOp::FloorDiv: {
      // floor(x / y) must be one integer on the whole enclosure.
      if (mpfi_nan_p(x) || mpfi_nan_p(b->f) || mpfi_has_zero(b->f)) {
        undetermined("a float " + std::string(op_name(op)) + " whose divisor's enclosure contains 0");
        set_entire(o);
        break;
      }
      mpfi_div(tmp_.f, x, b->f);
      mpfr_floor(lo(tmp_), lo(tmp_));
      mpfr_floor(hi(tmp_), hi(tmp_));
      if (!mpfr_equal_p(lo(tmp_), hi(tmp_)) || !mpfr_number_p(lo(tmp_))) {
        undetermined("a float " + std::string(op_name(op)) + " at a step of floor(x / y)");
        set_entire(o);
        break;
      }
      if (op == ScalarOp::FloorDiv) {
        mpfi_set(r, tmp_.f);
      } else {
        mpfi_mul(tmp_.f, tmp_.f, b->f);  // x − y·floor(x / y)
        mpfi_sub(r, x, tmp_.f);
      }
      break;
    }
    case ScalarOp::Neg: mpfi_neg(r, x); break;
    case ScalarOp::Abs: mpfi_abs(r, x); break;
    case ScalarOp::Relu:
      mpfi_set_si(tmp_.f, 0);
      hull_max(o, a, tmp_, true);
      break;
    case ScalarOp::Maximum: hull_max(o, a, *b, true); break;
    case ScalarOp::Minimum: hull_max(o, a, *b, false); break;
    case ScalarOp::Exp: mpfi_exp(r, x); break;
    case ScalarOp::Log: mpfi_log(r, x); break;
    case ScalarOp::Log2: mpfi_log2(r, x); break;
    case ScalarOp::Log10: mpfi_log10(r, x); break;
    case ScalarOp::Log1p: mpfi_log1p(r, x); break;
    case ScalarOp::Expm1: mpfi_expm1(r, x); break;
    case ScalarOp::Tanh: mpfi_tanh(r, x); break;
    case ScalarOp::Sigmoid:
      mpfi_neg(tmp_.f, x);
      mpfi_exp(tmp_.f, tmp_.f);
      mpfi_add_ui(tmp_.f, tmp_.f, 1);
      mpfi_ui_div(r, 1, tmp_.f);
      break;
    case ScalarOp::Sqrt: mpfi_sqrt(r, x); break;
    case ScalarOp::Rsqrt:
      mpfi_sqrt(tmp_.f, x);
      mpfi_inv(r, tmp_.f);
      break;
    case ScalarOp::Erf:  // increasing
      if (mpfi_nan_p(x)) return set_nan(o);
      mpfr_erf(lo(o), lo(a), MPFR_RNDD);
      mpfr_erf(hi(o), hi(a), MPFR_RNDU);
      break;
    case ScalarOp::Sin: mpfi_sin(r, x); break;
    case ScalarOp::Cos: mpfi_cos(r, x); break;
    case ScalarOp::Floor:  // non-decreasing: the hull of the floors
      mpfr_floor(lo(o), lo(a));
      mpfr_floor(hi(o), hi(a));
      break;
    case ScalarOp::Pow:
      if (mpfi_is_strictly_pos(x)) {  // exp(y·log x)
        mpfi_log(tmp_.f, x);
        mpfi_mul(tmp_.f, tmp_.f, b->f);
        mpfi_exp(r, tmp_.f);
      } else if (mpfr_equal_p(lo(a), hi(a)) && mpfr_equal_p(lo(*b), hi(*b))) {
        mpfr_pow(lo(o), lo(a), lo(*b), MPFR_RNDD);
        mpfr_pow(hi(o), lo(a), lo(*b), MPFR_RNDU);
      } else {
        set_entire(o);  // a non-positive base on an interval: no claim
      }
      break;
    case ScalarOp::Fma:
      mpfi_mul(tmp_.f, x, b->f);
      mpfi_add(r, tmp_.f, c->f);
      break;
    default: STAX_CHECK(false) << "float op " << op_name(op);
  }
}

EnclosureDomain::Value EnclosureDomain::apply(size_t reg, ScalarOp op, DType tag, DType operand_tag,
                                              std::span<const Value> args) {
  Value o = regs[reg].v.data();
  const Value a = args[0];
  const Value b = args.size() > 1 ? args[1] : nullptr;
  const Value c = args.size() > 2 ? args[2] : nullptr;
  if (faithful_ && faithful_logic(op, tag, operand_tag, o, a, b, c)) return o;
  if (apply_exact(*this, op, operand_tag, o, a, b, c, n)) return o;
  bool cmp = op == ScalarOp::Eq || op == ScalarOp::Ne || op == ScalarOp::Lt || op == ScalarOp::Le ||
             op == ScalarOp::Gt || op == ScalarOp::Ge;
  for (size_t i = 0; i < n; ++i) {
    if (cmp && faithful_ && (mpfi_nan_p(a[i].f) || mpfi_nan_p(b[i].f))) {
      o[i].i = op == ScalarOp::Ne;  // IEEE: NaN is unordered
    } else if (cmp && faithful_) {
      // Undecided: the unknown bool (kUnknown), which select and the logical
      // ops carry on (faithful_logic). A NaN makes every comparison but ne false.
      std::optional<bool> t = compare(op, a[i].f, b[i].f);
      bool maybe_nan = a[i].i || b[i].i;
      if (maybe_nan && t && *t != (op == ScalarOp::Ne)) t.reset();
      o[i].i = t ? int64_t(*t) : kUnknown;
    } else if (cmp) {
      std::optional<bool> t = compare(op, a[i].f, b[i].f);
      if (!t) undetermined("a float comparison (" + std::string(op_name(op)) + ") of overlapping enclosures");
      o[i].i = t.value_or(false);
    } else if (faithful_) {
      faithful_result(op, tag, o[i], a[i], b ? &b[i] : nullptr, c ? &c[i] : nullptr);
    } else {
      float_op(op, o[i], a[i], b ? &b[i] : nullptr, c ? &c[i] : nullptr);
    }
  }
  return o;
}

bool EnclosureDomain::faithful_logic(ScalarOp op, DType tag, DType operand_tag, Value o, const Value a,
                                     const Value b, const Value c) {
  auto three = [](ScalarOp op2, int64_t x, int64_t y) -> int64_t {
    switch (op2) {
      case ScalarOp::And: return x == 0 || y == 0 ? 0 : (x == kUnknown || y == kUnknown ? kUnknown : 1);
      case ScalarOp::Or: return x == 1 || y == 1 ? 1 : (x == kUnknown || y == kUnknown ? kUnknown : 0);
      case ScalarOp::Not: return x == kUnknown ? kUnknown : !x;
      case ScalarOp::Eq: return x == kUnknown || y == kUnknown ? kUnknown : x == y;
      case ScalarOp::Ne: return x == kUnknown || y == kUnknown ? kUnknown : x != y;
      default: return -1;
    }
  };
  if (op == ScalarOp::Select) {
    for (size_t i = 0; i < n; ++i) {
      if (a[i].i != kUnknown) {
        o[i] = a[i].i ? b[i] : c[i];
      } else if (!is_float(tag)) {  // either branch: equal ones, or an unknown bool
        if (b[i].i != c[i].i && !is_bool(tag)) undetermined("a select of two integers on an undecided condition");
        o[i].i = b[i].i == c[i].i ? b[i].i : kUnknown;
      } else if (mpfi_nan_p(b[i].f) || mpfi_nan_p(c[i].f)) {  // the hull of a NaN and an interval
        const EVal& other = mpfi_nan_p(b[i].f) ? c[i] : b[i];
        o[i] = other;
        o[i].i = 1;
      } else {
        mpfi_union(o[i].f, b[i].f, c[i].f);
        o[i].i = b[i].i | c[i].i;
      }
    }
    return true;
  }
  if (!is_bool(operand_tag)) return false;
  for (size_t i = 0; i < n; ++i) {
    int64_t r = three(op, a[i].i, b ? b[i].i : 0);
    if (r < 0) return false;  // not a logical op: apply_exact's
    o[i].i = r;
  }
  return true;
}

void EnclosureDomain::faithful_result(ScalarOp op, DType tag, EVal& o, const EVal& a, const EVal* b,
                                      const EVal* c) {
  if (op == ScalarOp::Sigmoid || op == ScalarOp::Rsqrt) {
    // docs/design.md §3's composite definitions, each step faithful (exp(-x) may
    // overflow, so sigmoid(-100) may be 0): 1 / (1 + exp(-x)), 1 / sqrt(x).
    EVal& t = step_;
    EVal& one = one_;
    mpfi_set_si(one.f, 1);
    one.i = 0;
    if (op == ScalarOp::Sigmoid) {
      faithful_result(ScalarOp::Neg, tag, t, a, nullptr, nullptr);
      faithful_result(ScalarOp::Exp, tag, t, t, nullptr, nullptr);
      faithful_result(ScalarOp::Add, tag, t, one, &t, nullptr);
    } else {
      faithful_result(ScalarOp::Sqrt, tag, t, a, nullptr, nullptr);
    }
    faithful_result(ScalarOp::Div, tag, o, one, &t, nullptr);
    return;
  }
  // The operands' properties first: `o` may be one of them.
  bool may_nan = false, points = true, any_inf = false;
  bool inf[3] = {false, false, false}, zero[3] = {false, false, false};
  const EVal* xs[3] = {&a, b, c};
  for (int k = 0; k < 3; ++k) {
    const EVal* x = xs[k];
    if (!x) continue;
    may_nan |= x->i != 0 || mpfi_nan_p(x->f);
    if (mpfi_nan_p(x->f)) continue;
    points &= mpfr_equal_p(lo(*x), hi(*x));
    inf[k] = mpfr_inf_p(lo(*x)) || mpfr_inf_p(hi(*x));
    zero[k] = mpfi_has_zero(x->f) > 0;
    any_inf |= inf[k];
  }
  // Where an IEEE NaN may come from numbers: inf - inf, 0 * inf, 0 / 0,
  // inf / inf, sin(inf), ... (coarse for fma, mod, floordiv and pow).
  switch (op) {
    case ScalarOp::Add: case ScalarOp::Sub: may_nan |= inf[0] && inf[1]; break;
    case ScalarOp::Mul: may_nan |= (inf[0] && zero[1]) || (inf[1] && zero[0]); break;
    case ScalarOp::Div: may_nan |= (inf[0] && inf[1]) || (zero[0] && zero[1]); break;
    case ScalarOp::Mod: case ScalarOp::FloorDiv: may_nan |= any_inf || zero[1]; break;
    case ScalarOp::Fma: case ScalarOp::Pow: case ScalarOp::Sin: case ScalarOp::Cos: may_nan |= any_inf; break;
    default: break;
  }
  // Outside the domain on part of an interval (on all of it, float_op's result is NaN):
  // a negative base of pow, sqrt or log of a negative, log1p below -1.
  if (!mpfi_nan_p(a.f)) {
    switch (op) {
      case ScalarOp::Pow: case ScalarOp::Sqrt: case ScalarOp::Log: case ScalarOp::Log2: case ScalarOp::Log10:
        may_nan |= mpfr_sgn(lo(a)) < 0;
        break;
      case ScalarOp::Log1p: may_nan |= mpfr_cmp_si(lo(a), -1) < 0; break;
      default: break;
    }
  }
  float_op(op, o, a, b, c);
  o.i = 1;
  if (mpfi_nan_p(o.f)) {  // NaN for point operands; outside the domain on part of an interval
    if (!points) set_entire(o);
    return;
  }
  // Intervals carry no signed zero, but x / ±0 and pow(±0, -k) are ±inf by
  // the zero's sign: either infinity may come out.
  if ((op == ScalarOp::Div && zero[1]) || (op == ScalarOp::Pow && zero[0] && mpfr_sgn(lo(*b)) < 0)) {
    set_entire(o);
    o.i = may_nan;
    return;
  }
  FaithfulModel::Bound bound;
  if (auto it = faithful_->library.find(op); it != faithful_->library.end()) bound = it->second;
  if (bound.abs > 0) {
    mpfr_sub_d(lo(o), lo(o), bound.abs, MPFR_RNDD);
    mpfr_add_d(hi(o), hi(o), bound.abs, MPFR_RNDU);
  }
  round_to_grid(o, tag);
  if (int steps = int(std::ceil(bound.ulps)); steps > 0) {
    // Down by twice the ULPs: a step below a power of 2 is half an ULP of it.
    mpfr_set_d(lo(o), grid_step(mpfr_get_d(lo(o), MPFR_RNDN), tag, -2 * steps), MPFR_RNDN);
    mpfr_set_d(hi(o), grid_step(mpfr_get_d(hi(o), MPFR_RNDN), tag, steps), MPFR_RNDN);
  }
  o.i = may_nan;
}

void EnclosureDomain::faithful_fold_end(const RedState& s, size_t k, EVal& v) {
  // A sum whose exact fold is NaN without a NaN term met an infinity of each
  // sign, one of them perhaps only a bound (a product that may overflow, which
  // a fused dot product does not round): any value, or NaN.
  bool nan_term = s.op != RedOp::Sum || mpfr_nan_p(lo(s.mag[k]));
  if (mpfi_nan_p(v.f) && nan_term) {
    v.i = 1;
    return;
  }
  if (s.rsize < 2 || (s.op != RedOp::Sum && s.op != RedOp::Prod)) return;  // max, min: exact in any order
  // Any order of n terms: |fl(Σx) − Σx| ≤ γ(n−1)·Σ|x|, γ(m) = m·u / (1 − m·u),
  // unless a partial sum may overflow.
  // A product of the init and n terms, in any order, is n multiplications of
  // partial products: each rounds with a relative error ≤ u while its exact
  // value is normal and finite, so |fl(Πx) − Πx| ≤ γ(n)·|Πx| (Higham, Lemma
  // 3.1). Every partial product lies within a factor (1 ± γ(n)) < 2 of the
  // product of a subset of the factors, which is in [Π min(1, |x|), Π max(1,
  // |x|)]: when that range is inside [2 · smallest normal, largest / 2], no
  // partial product underflows or overflows. Otherwise (zeros, infinities,
  // tiny or huge factors): any value.
  const bool prod = s.op == RedOp::Prod;
  mpfr_srcptr mag = hi(s.mag[k]);
  double mu = double(prod ? s.rsize : s.rsize - 1) * unit_roundoff(s.tag);
  bool bounded = mu < 0.5 && mpfr_number_p(mag) && mpfr_cmp_d(mag, prod ? grid_max(s.tag) / 2 : grid_max(s.tag)) < 0;
  if (prod) bounded = bounded && mpfr_number_p(lo(s.mag[k])) && mpfr_cmp_d(lo(s.mag[k]), 2 * grid_min_normal(s.tag)) >= 0;
  if (!bounded) {
    set_entire(v);
    v.i = 1;
    return;
  }
  if (prod) {  // widen by γ(n)·|Πx|: the magnitude of the product's enclosure
    mpfi_mag(hi(tmp_), v.f);
    mag = hi(tmp_);
  }
  mpfr_t w;
  mpfr_init2(w, 64);
  mpfr_set_d(w, 1.0 - mu, MPFR_RNDD);
  mpfr_d_div(w, mu, w, MPFR_RNDU);  // γ rounded up (mu is exact: n−1 < 2^53 times a power of 2)
  mpfr_mul(w, w, mag, MPFR_RNDU);
  mpfr_sub(lo(v), lo(v), w, MPFR_RNDD);
  mpfr_add(hi(v), hi(v), w, MPFR_RNDU);
  mpfr_clear(w);
  round_to_grid(v, s.tag);
}

EnclosureDomain::Value EnclosureDomain::cast(size_t reg, const Value& v, DType from, DType to) {
  Value o = regs[reg].v.data();
  for (size_t i = 0; i < n; ++i) {
    if (is_float(from) && is_float(to)) {
      mpfi_set(o[i].f, v[i].f);  // float casts are the identity on reals
      o[i].i = v[i].i;
      if (faithful_ && !mpfi_nan_p(o[i].f)) round_to_grid(o[i], to);
    } else if (is_float(from)) {
      const EVal& x = v[i];
      if (mpfi_nan_p(x.f) || (faithful_ && x.i)) {
        undetermined("a cast of an enclosure that may be NaN to " + std::string(dtype_name(to)));
        o[i].i = 0;
      } else if (is_bool(to)) {
        bool zero = mpfr_zero_p(lo(x)) && mpfr_zero_p(hi(x));
        if (!zero && mpfi_has_zero(x.f)) undetermined("a cast to bool of an enclosure around 0");
        o[i].i = !zero;
      } else {
        auto trunc = [&](mpfr_srcptr e) {
          if (mpfr_cmp_si(e, int_min(to)) <= 0) return int_min(to);
          if (mpfr_cmp_si(e, int_max(to)) >= 0) return int_max(to);
          return int64_t(mpfr_get_si(e, MPFR_RNDZ));
        };
        int64_t l = trunc(lo(x)), h = trunc(hi(x));
        if (l != h) undetermined("a cast to " + std::string(dtype_name(to)) + " of an enclosure across an integer");
        o[i].i = l;
      }
    } else if (is_float(to) && v[i].i == kUnknown && faithful_ && is_bool(from)) {
      mpfi_interv_si(o[i].f, 0, 1);  // an undecided bool: 0 or 1
      o[i].i = 0;
    } else if (is_float(to)) {
      mpfi_set_si(o[i].f, long(v[i].i));
      o[i].i = 0;
      if (faithful_) round_to_grid(o[i], to);
    } else if (faithful_ && is_bool(from) && v[i].i == kUnknown) {
      if (!is_bool(to)) undetermined("an undecided bool cast to an integer");
      o[i].i = is_bool(to) ? kUnknown : 0;
    } else {
      o[i].i = int_cast(v[i].i, to);
    }
  }
  return o;
}

void EnclosureDomain::from_int64(Value dst, const int64_t* v, size_t cnt, DType tag) {
  for (size_t i = 0; i < cnt; ++i) {
    if (is_float(tag)) {
      mpfi_set_si(dst[i].f, long(v[i]));
      dst[i].i = 0;
      if (faithful_) round_to_grid(dst[i], tag);
    } else {
      dst[i].i = v[i];
    }
  }
}
void EnclosureDomain::scale_pow2(Value v, DType tag, int e, size_t cnt) {
  if (!is_float(tag)) return;
  for (size_t i = 0; i < cnt; ++i) {
    mpfi_mul_2si(v[i].f, v[i].f, e);
    if (faithful_ && !mpfi_nan_p(v[i].f)) round_to_grid(v[i], tag);
  }
}

void EnclosureDomain::red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs,
                               int64_t rsize) {
  s.op = op;
  s.tag = elem_tag;
  s.rsize = rsize;
  s.acc.assign(size_t(outputs), EVal(prec_));
  for (EVal& v : s.acc) set_const(v, init);
  if (red_is_arg(op)) s.arg.assign(size_t(outputs), 0);
  if (faithful_ && is_float(elem_tag) && op == RedOp::Sum) s.mag.assign(size_t(outputs), EVal(64));
  if (faithful_ && is_float(elem_tag) && op == RedOp::Prod) {
    s.mag.assign(size_t(outputs), EVal(64));
    for (size_t k = 0; k < s.mag.size(); ++k) {
      mpfi_set_si(s.mag[k].f, 1);
      product_bounds(s.mag[k], s.acc[k]);  // the init is a factor too
    }
  }
}

void EnclosureDomain::product_bounds(EVal& m, const EVal& x) {
  if (mpfi_nan_p(x.f)) {
    mpfr_set_nan(lo(m));
    return;
  }
  mpfi_mig(lo(tmp_), x.f);  // min |x|, rounded down
  if (mpfr_cmp_si(lo(tmp_), 1) < 0) mpfr_mul(lo(m), lo(m), lo(tmp_), MPFR_RNDD);
  mpfi_mag(hi(tmp_), x.f);  // max |x|, rounded up
  if (mpfr_cmp_si(hi(tmp_), 1) > 0) mpfr_mul(hi(m), hi(m), hi(tmp_), MPFR_RNDU);
}

void EnclosureDomain::red_fold(RedState& s, Value v, size_t cnt, int64_t flat_start) {
  if (s.rsize == 0) return;
  int64_t o = flat_start / s.rsize;
  int64_t r = flat_start % s.rsize;
  bool fl = is_float(s.tag);
  for (size_t i = 0; i < cnt; ++i) {
    EVal& a = s.acc[size_t(o)];
    const EVal& x = v[i];
    if (red_is_arg(s.op)) {
      bool take;
      if (fl) {
        std::optional<bool> t = compare(s.op == RedOp::ArgMax ? ScalarOp::Gt : ScalarOp::Lt, x.f, a.f);
        if (!t) undetermined("an arg-reduction over overlapping enclosures");
        take = t.value_or(false);
      } else {
        take = s.op == RedOp::ArgMax ? x.i > a.i : x.i < a.i;
      }
      if (take) a = x, s.arg[size_t(o)] = r;
    } else if (!fl) {
      if (faithful_ && is_bool(s.tag) && x.i == kUnknown) undetermined("a reduction over an undecided bool");
      a.i = int_fold(s.op, a.i, x.i, s.tag);
    } else {
      if (s.op == RedOp::Sum) mpfi_add(a.f, a.f, x.f);
      else if (s.op == RedOp::Prod) mpfi_mul(a.f, a.f, x.f);
      else hull_max(a, a, x, s.op == RedOp::Max);
      if (faithful_) {
        a.i |= x.i;
        if (!s.mag.empty() && s.op == RedOp::Prod) {
          product_bounds(s.mag[size_t(o)], x);
        } else if (!s.mag.empty() && mpfi_nan_p(x.f)) {  // a term that is NaN: the sum is, in any order
          mpfr_set_nan(lo(s.mag[size_t(o)]));
        } else if (!s.mag.empty()) {  // Σ|x|, rounded up
          mpfi_abs(tmp_.f, x.f);
          mpfr_add(hi(s.mag[size_t(o)]), hi(s.mag[size_t(o)]), hi(tmp_), MPFR_RNDU);
        }
      }
    }
    if (++r == s.rsize) {
      r = 0;
      ++o;
    }
  }
}

void EnclosureDomain::red_finish(RedState& s, EncTensor& out) {
  if (red_is_arg(s.op)) {
    for (size_t i = 0; i < s.arg.size(); ++i) out.data[i].i = s.arg[i];
    return;
  }
  for (size_t i = 0; i < s.acc.size(); ++i) {
    if (faithful_ && is_float(s.tag)) faithful_fold_end(s, i, s.acc[i]);
    out.data[i] = s.acc[i];
  }
}

EncTensor EnclosureDomain::from_tensor(const Tensor& t) const {
  EncTensor r = make_tensor(t.dtype, t.shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (is_float(t.dtype)) {
      mpfi_set_d(r.data[size_t(i)].f, t.get_double(i));
      r.data[size_t(i)].i = std::isnan(t.get_double(i));
    } else {
      r.data[size_t(i)].i = t.get_int(i);
    }
  }
  return r;
}

EnclosureOutcome eval_enclosure(const Program& p, const Inputs& in, long precision) {
  // The Real domain's exponent range; at its edge MPFI's outward rounding
  // still encloses (an overflow widens to +inf, an underflow to 0).
  mpfr_set_emax(RealDomain::kMaxExponent);
  mpfr_set_emin(-RealDomain::kMaxExponent);
  EnclosureDomain dom(precision);
  EnclosureOutcome out;
  run_converted(dom, p, in, kMaxEnclosureElements, "Real domain's enclosures", out);
  out.indeterminate = dom.indeterminate;
  return out;
}

EnclosureOutcome eval_faithful(const Program& p, const Inputs& in, const FaithfulModel& m, long precision) {
  mpfr_set_emax(RealDomain::kMaxExponent);
  mpfr_set_emin(-RealDomain::kMaxExponent);
  EnclosureDomain dom(precision);
  dom.set_faithful(&m);
  EnclosureOutcome out;
  run_converted(dom, p, in, kMaxEnclosureElements, "faithful enclosures", out);
  out.indeterminate = dom.indeterminate;
  return out;
}

bool faithful_contains(const EVal& e, DType t, double x) {
  if (!is_float(t)) return false;
  if (std::isnan(x)) return e.i != 0 || mpfi_nan_p(e.f);
  if (mpfi_nan_p(e.f)) return false;
  return mpfr_cmp_d(lo(e), x) <= 0 && mpfr_cmp_d(hi(e), x) >= 0;
}

std::pair<double, double> faithful_bounds(const EVal& e) {
  return {mpfr_get_d(lo(e), MPFR_RNDN), mpfr_get_d(hi(e), MPFR_RNDN)};
}

std::string faithful_text(const EVal& e, DType t) {
  if (!is_float(t)) return std::to_string(e.i);
  if (mpfi_nan_p(e.f)) return "NaN";
  char buf[160];
  int digits = t == DType::F64 ? 17 : 9;
  mpfr_snprintf(buf, sizeof buf, "[%.*Rg, %.*Rg]%s", digits, lo(e), digits, hi(e), e.i ? " or NaN" : "");
  return buf;
}

bool enclosures_disjoint(const EVal& a, const EVal& b, DType t) {
  if (!is_float(t)) return a.i != b.i;
  if (mpfi_nan_p(a.f) || mpfi_nan_p(b.f)) return false;
  return mpfr_less_p(hi(a), lo(b)) || mpfr_less_p(hi(b), lo(a));
}

std::string enclosure_text(const EVal& v, DType t) {
  if (!is_float(t)) return std::to_string(v.i);
  char buf[160];
  mpfr_snprintf(buf, sizeof buf, "[%.20Rg, %.20Rg]", lo(v), hi(v));
  return buf;
}

}  // namespace stax::sem
