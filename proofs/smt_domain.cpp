// The symbolic tensor domain (smt_domain.h), mirroring the Ieee domain
// (semantics/ieee_domain.cpp) operation for operation.
#include "proofs/smt_domain.h"

#include <cmath>
#include <optional>

#include "semantics/index_eval.h"

namespace stax::proofs {

using namespace sem;

void SmtDomain::count(int64_t k) {
  terms_ += k;
  if (terms_ > max_terms_)
    throw Unsupported{"over the size limit (" + std::to_string(max_terms_) + " terms): the program is too large to encode"};
  if (terms_ >= next_clock_) {  // the clock every 1,024 terms
    next_clock_ = terms_ + 1024;
    if (std::chrono::steady_clock::now() > deadline_) throw Unsupported{"timeout while encoding"};
  }
}

std::vector<SmtDomain::Buf> SmtDomain::make_regs(size_t count) const {
  std::vector<Buf> r(count);
  for (Buf& b : r) b.v.assign(kBlock, z3::expr(ops_.ctx()));
  return r;
}

SmtTensor SmtDomain::make_tensor(DType t, Shape s) const {
  SmtTensor r;
  r.dtype = t;
  r.shape = std::move(s);
  r.data.assign(size_t(r.size()), z3::expr(ops_.ctx()));
  return r;
}

SmtDomain::Value SmtDomain::constant(size_t reg, const Const& c, DType tag) {
  Value out = regs[reg].v.data();
  z3::expr v = ops_.constant(c, tag);
  for (size_t i = 0; i < n; ++i) out[i] = v;
  return out;
}

SmtDomain::Value SmtDomain::apply(size_t reg, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args) {
  Value out = regs[reg].v.data();
  count(int64_t(n));
  std::vector<z3::expr> a;
  for (size_t i = 0; i < n; ++i) {
    a.clear();
    for (const Value& v : args) a.push_back(v[i]);
    out[i] = ops_.apply(op, tag, operand_tag, a, &bottom);
  }
  return out;
}

SmtDomain::Value SmtDomain::cast(size_t reg, const Value& v, DType from, DType to) {
  Value out = regs[reg].v.data();
  count(int64_t(n));
  for (size_t i = 0; i < n; ++i) out[i] = ops_.cast(v[i], from, to);
  return out;
}

void SmtDomain::load(Value dst, const TensorT& t, const int64_t* off, size_t cnt) {
  for (size_t i = 0; i < cnt; ++i) dst[i] = ops_.widen(t.data[size_t(off[i])], t.dtype);
}

void SmtDomain::load_range(Value dst, const TensorT& t, int64_t start, size_t cnt) {
  for (size_t i = 0; i < cnt; ++i) dst[i] = ops_.widen(t.data[size_t(start) + i], t.dtype);
}

void SmtDomain::store(Value src, TensorT& t, int64_t start, size_t cnt) {
  for (size_t i = 0; i < cnt; ++i) t.data[size_t(start) + i] = ops_.narrow(src[i], t.dtype);
}

void SmtDomain::round_to_tag(Value v, DType tag, size_t cnt) {
  if (!is_half(tag)) return;
  for (size_t i = 0; i < cnt; ++i) v[i] = ops_.round_to_tag(v[i], tag);
}

void SmtDomain::from_int64(Value dst, const int64_t* v, size_t cnt, DType tag) {
  z3::context& c = ops_.ctx();
  for (size_t i = 0; i < cnt; ++i) dst[i] = ops_.from_int64(c.bv_val(v[i], 64), tag).simplify();
}

void SmtDomain::scale_pow2(Value v, DType tag, int e, size_t cnt) {
  if (!is_float(tag)) return;
  z3::context& c = ops_.ctx();
  z3::expr f = ops_.num(std::ldexp(1.0, e), ops_.compute_sort(tag));
  for (size_t i = 0; i < cnt; ++i) v[i] = z3::expr(c, Z3_mk_fpa_mul(c, ops_.rne(), v[i], f)).simplify();
}

void SmtDomain::fill(Value dst, const Const& c, size_t cnt) {
  z3::expr v = ops_.constant(c, c.dtype);
  for (size_t i = 0; i < cnt; ++i) dst[i] = v;
}

void SmtDomain::copy(Value dst, Value src, DType, size_t cnt) {
  for (size_t i = 0; i < cnt; ++i) dst[i] = src[i];
}

namespace {

/// A 64-bit integer as an index: an int64 when known, else a bit-vector term.
z3::expr as_index(const z3::expr& e) {
  z3::context& c = e.ctx();
  if (e.is_bool()) return z3::ite(e, c.bv_val(1, 64), c.bv_val(0, 64));
  unsigned w = e.get_sort().bv_size();
  return w == 64 ? e : z3::sext(e, 64 - w);
}

std::optional<int64_t> numeral(const z3::expr& e) {
  int64_t v = 0;
  z3::expr s = e.simplify();
  if (s.is_numeral() && Z3_get_numeral_int64(s.ctx(), s, &v)) return v;
  if (s.is_numeral()) {  // a bit-vector numeral reads as unsigned: sign it
    uint64_t u = 0;
    if (Z3_get_numeral_uint64(s.ctx(), s, &u)) return int64_t(u);
  }
  return std::nullopt;
}

}  // namespace

int64_t SmtDomain::read_int(const TensorT& t, int64_t off) const {
  if (auto v = numeral(as_index(t.data[size_t(off)]))) return *v;
  throw Unsupported{"a symbolic integer read as a concrete index"};
}

namespace {

/// The symbolic index domain of eval_iexpr (index_eval.h): 64-bit
/// wrap-around arithmetic, Python floor division and modulo; known values
/// stay int64 so that static views cost nothing.
struct SymIndexDomain {
  struct Value {
    std::optional<int64_t> k;
    z3::expr e;
  };
  FpaOps& ops;
  z3::expr& bottom;
  const int64_t* idx;
  const SmtDomain::Lookup& lookup;
  std::function<z3::expr(const SmtTensor&, const z3::expr&)> select;

  z3::context& c() { return ops.ctx(); }
  Value known(int64_t v) { return {v, c().bv_val(v, 64)}; }
  Value term(z3::expr e) {
    if (auto v = numeral(e)) return known(*v);
    return {std::nullopt, e};
  }
  Value constant(const IExprNode&, int64_t v) { return known(v); }
  Value var(const IExprNode&, int64_t k) { return known(idx[k]); }
  Value add(const IExprNode&, Value a, Value b) {
    if (a.k && b.k) return known(ieee::wrap_add(*a.k, *b.k));
    return term(a.e + b.e);
  }
  Value sub(const IExprNode&, Value a, Value b) {
    if (a.k && b.k) return known(ieee::wrap_sub(*a.k, *b.k));
    return term(a.e - b.e);
  }
  Value mul(const IExprNode&, int64_t k, Value a) {
    if (a.k) return known(ieee::wrap_mul(k, *a.k));
    return term(c().bv_val(k, 64) * a.e);
  }
  Value floordiv(const IExprNode&, Value a, int64_t k) {
    if (k == 0) return divide_by_zero();
    if (a.k) return known(ieee::floor_div(*a.k, k));
    return term(ops.bv_floordiv(a.e, c().bv_val(k, 64)));
  }
  Value mod(const IExprNode&, Value a, int64_t k) {
    if (k == 0) return divide_by_zero();
    if (a.k) return known(ieee::py_mod(*a.k, k));
    return term(ops.bv_mod(a.e, c().bv_val(k, 64)));
  }
  Value divide_by_zero() {
    bottom = c().bool_val(true);
    return known(0);
  }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    const SmtTensor& t = lookup(e.name);
    int64_t off = 0;
    bool known = true;
    z3::expr soff = c().bv_val(0, 64);
    for (size_t k = 0; k < e.args.size(); ++k) {
      Value v = arg(k);
      int64_t n = t.shape[k];
      if (v.k) {
        if (*v.k < 0 || *v.k >= n) bottom = c().bool_val(true);
      } else {
        bottom = bottom || v.e < c().bv_val(0, 64) || v.e >= c().bv_val(n, 64);
      }
      known = known && v.k;
      if (known) off = off * n + *v.k;
      soff = soff * c().bv_val(n, 64) + v.e;
    }
    if (known && off >= 0 && off < t.size()) return term(as_index(ops.widen(t.data[size_t(off)], t.dtype)));
    if (known) return this->known(0);  // out of range: ⊥ already
    return term(as_index(select(t, soff)));
  }
};

}  // namespace

void SmtDomain::load_view(Value dst, size_t i, const TensorT& src, const IndexMap& map, const std::vector<bool>& wrap,
                          const int64_t* idx, const Lookup& lookup) {
  z3::context& c = ops_.ctx();
  auto select = [&](const SmtTensor& t, const z3::expr& off) {
    // The element at a symbolic flat offset: an if-then-else over all of them
    // (out of range is ⊥, checked by the caller; element 0 stands in).
    count(t.size());
    z3::expr r = t.data.empty() ? ops_.widen(ops_.from_bits(0, t.dtype), t.dtype) : ops_.widen(t.data[0], t.dtype);
    for (int64_t k = t.size() - 1; k >= 1; --k) r = z3::ite(off == c.bv_val(k, 64), ops_.widen(t.data[size_t(k)], t.dtype), r);
    return r;
  };
  SymIndexDomain dom{ops_, bottom, idx, lookup, select};
  std::vector<int64_t> strides = row_major_strides(src.shape);
  int64_t off = 0;
  bool known = true;  // every index so far is a number: `off` is the offset
  z3::expr soff = c.bv_val(0, 64);
  for (size_t j = 0; j < src.shape.size(); ++j) {
    SymIndexDomain::Value v = eval_iexpr(map.exprs[j], dom);
    int64_t n = src.shape[j];
    if (v.k) {
      int64_t x = *v.k;
      if (wrap[j] && x < 0) x += n;
      if (x < 0 || x >= n) bottom = c.bool_val(true);
      v = dom.known(x);
    } else {
      z3::expr zero = c.bv_val(0, 64), bn = c.bv_val(n, 64);
      z3::expr x = wrap[j] ? z3::ite(v.e < zero, v.e + bn, v.e) : v.e;
      bottom = bottom || x < zero || x >= bn;
      v = dom.term(x);
    }
    known = known && v.k;
    if (known) off += *v.k * strides[j];
    soff = soff + v.e * c.bv_val(strides[j], 64);
  }
  if (known && off >= 0 && off < src.size()) dst[i] = ops_.widen(src.data[size_t(off)], src.dtype);
  else if (known) dst[i] = ops_.widen(ops_.from_bits(0, src.dtype), src.dtype);  // ⊥ already
  else dst[i] = select(src, soff);
}

void SmtDomain::red_init(RedState& s, RedOp op, const Const& init, DType elem_tag, int64_t outputs, int64_t rsize) {
  if (is_bool(elem_tag)) throw Unsupported{"a bool reduction"};
  s.op = op;
  s.tag = elem_tag;
  s.rsize = rsize;
  s.acc.assign(size_t(outputs), ops_.constant(init, elem_tag));
  if (red_is_arg(op)) s.arg.assign(size_t(outputs), ops_.ctx().bv_val(0, 64));
}

void SmtDomain::red_fold(RedState& s, Value v, size_t cnt, int64_t flat_start) {
  if (s.rsize == 0) return;
  count(int64_t(cnt));
  z3::context& c = ops_.ctx();
  bool fl = is_float(s.tag);
  int64_t o = flat_start / s.rsize, r = flat_start % s.rsize;
  for (size_t i = 0; i < cnt; ++i) {
    const z3::expr& x = v[i];
    z3::expr& a = s.acc[size_t(o)];
    switch (s.op) {
      case RedOp::Sum: a = ops_.apply(ScalarOp::Add, s.tag, s.tag, std::vector<z3::expr>{a, x}); break;
      case RedOp::Prod: a = ops_.apply(ScalarOp::Mul, s.tag, s.tag, std::vector<z3::expr>{a, x}); break;
      case RedOp::Max: a = fl ? ops_.maximum(a, x) : z3::ite(a < x, x, a); break;
      case RedOp::Min: a = fl ? ops_.minimum(a, x) : z3::ite(x < a, x, a); break;
      case RedOp::ArgMax:
      case RedOp::ArgMin: {
        // NaN is the greatest value (docs/design.md §3); ties keep the first index.
        bool mx = s.op == RedOp::ArgMax;
        z3::expr take = c.bool_val(false);
        if (fl) {
          z3::expr cmp = mx ? z3::expr(c, Z3_mk_fpa_gt(c, x, a)) : z3::expr(c, Z3_mk_fpa_lt(c, x, a));
          take = mx ? (cmp || (ops_.is_nan(x) && !ops_.is_nan(a))) : (cmp || (!ops_.is_nan(x) && ops_.is_nan(a)));
        } else {
          take = mx ? x > a : x < a;
        }
        a = z3::ite(take, x, a);
        s.arg[size_t(o)] = z3::ite(take, c.bv_val(r, 64), s.arg[size_t(o)]);
        break;
      }
    }
    if (++r == s.rsize) {
      r = 0;
      ++o;
    }
  }
}

void SmtDomain::red_finish(RedState& s, TensorT& out) {
  for (int64_t k = 0; k < out.size(); ++k) {
    if (red_is_arg(s.op)) {
      const z3::expr& a = s.arg[size_t(k)];
      out.data[size_t(k)] = out.dtype == DType::I32 ? a.extract(31, 0) : a;
    } else {
      out.data[size_t(k)] = ops_.narrow(s.acc[size_t(k)], out.dtype);
    }
  }
}

}  // namespace stax::proofs
