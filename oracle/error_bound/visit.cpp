// Per-element rounding depths of the error-bound analysis (§6.5,
// docs/design.md §4; Higham, ch. 4): for one element of a reduction root, every
// summand's path to the root and the roundings d_i on it, per precision. A
// fold step is exact when the accumulator is an exact zero (the first
// element folded into an init of ±0) or the element added is a leaf equal to
// ±0; a half store or a narrowing cast is one rounding of the narrower
// format. Each summand enters the bound with c_i = Π_p (1 + γ_p(d_i,p)) − 1.
// Products count the multiplications that round; max/min are exact.
#include <algorithm>
#include <array>

#include "oracle/error_bound/analyzer.h"
#include "semantics/lambda_eval.h"

namespace stax::oracle::bound_analysis {

namespace {

/// The exact-zero domain of sem::eval_lambda over a linear lambda: an
/// instruction's value is whether it is known to be an exact zero (a
/// parameter reading a zero leaf, a zero constant). An add/sub rounds unless
/// an operand is an exact zero; a rounding cast rounds unless its operand
/// is; `rounds` records it per instruction.
struct ExactZeroDomain {
  using Value = uint8_t;
  const LinInfo& lin;
  std::vector<uint8_t>& rounds;

  Value param(size_t reg, size_t, const Value& arg) {
    rounds[reg] = 0;
    return arg;
  }
  Value constant(size_t reg, const Const& c, DType) {
    rounds[reg] = 0;
    return c.as_double() == 0.0;
  }
  Value apply(size_t reg, ScalarOp op, DType, DType, std::span<const Value> args) {
    if (op == ScalarOp::Neg) {
      rounds[reg] = 0;
      return args[0];
    }
    rounds[reg] = !(args[0] || args[1]);
    return args[0] && args[1];
  }
  Value cast(size_t reg, const Value& v, DType, DType) {
    rounds[reg] = lin.round_cls[reg] >= 0 && !v;
    return v;
  }
};

}  // namespace

inline void Analyzer::emit(double v, const Depth& eff, const Depth& st, int leaf, int64_t off, SumAcc& a) const {
  ++a.count;
  int32_t de = eff.n[size_t(a.main_cls)];
  if (de > a.max_eff) a.max_eff = de;
  for (int k = 0; k < kClasses; ++k)
    if (st.n[size_t(k)] > a.max_st.n[size_t(k)]) a.max_st.n[size_t(k)] = st.n[size_t(k)];
  if (v == 0.0) return;
  if (!std::isfinite(v)) {
    a.nonfinite = true;
    return;
  }
  ++a.nonzero;
  double c = coefficient(eff, a.main_cls, *a.gt);
  double av = std::fabs(v);
  double term = c * av;
  a.bound += term;
  a.sum_abs += av;
  a.ex.add(v);
  if (a.top) {
    Cand cd{term, v, eff, leaf, off};
    if (a.top->size() < a.top_k) {
      a.top->push_back(cd);
      std::push_heap(a.top->begin(), a.top->end());
    } else if (!a.top->empty() && term > a.top->front().term) {
      std::pop_heap(a.top->begin(), a.top->end());
      a.top->back() = cd;
      std::push_heap(a.top->begin(), a.top->end());
    }
  }
}

void Analyzer::check_narrow(const Node& nd, int64_t q, int64_t nonzero_before, SumAcc& a) const {
  if (!nd.narrow_check || nd.value_slot < 0) return;
  double v = read(*slots_[size_t(nd.value_slot)].t, q);
  double av = std::fabs(v);
  double floor = std::max(min_normal(nd.dtype), nd.narrow_min_normal);
  if ((av > 0 && av < floor) || (av == 0 && a.nonzero > nonzero_before)) a.underflow = true;
}

void Analyzer::visit_sum(int id, int64_t q, const Depth& eff, const Depth& st, double sign, SumAcc& a) const {
  const Node& nd = nodes_[size_t(id)];
  if (nd.kind == Node::Kind::Red) visit_red_sum(nd, q, eff, st, sign, a);
  else visit_lin_sum(nd, q, eff, st, sign, a);
}

// ---- Sum reductions: a fold of n elements into the init ----
//
// Element r of a fold goes through the rounding steps r, r+1, ..., n-1 (by
// structure: n - r of them, n - 1 for the first when the init is zero); the
// effective count leaves out the steps with an exact zero operand. Each fold
// below returns R, the steps that round, which the init goes through.

void Analyzer::visit_red_sum(const Node& nd, int64_t q, const Depth& eff, const Depth& st, double sign,
                             SumAcc& a) const {
  int64_t nz0 = a.nonzero;
  Depth e = eff, s = st;
  if (nd.store_cls >= 0) {
    ++e.n[size_t(nd.store_cls)];
    ++s.n[size_t(nd.store_cls)];
  }
  const Node& c = nodes_[size_t(nd.child.target)];
  int64_t R;
  if (c.kind == Node::Kind::Leaf && nd.n <= kSmallFold) R = fold_short_leaf(nd, q, e, s, sign, a);
  else if (c.kind == Node::Kind::Leaf) R = fold_leaf(nd, q, e, s, sign, a);
  else R = fold_partials(nd, q, e, s, sign, a);
  if (!nd.init_zero) {
    const size_t k = size_t(nd.acc_cls);
    Depth e2 = e, s2 = s;
    e2.n[k] += int32_t(R);
    s2.n[k] += int32_t(nd.n);
    emit(sign * nd.init, e2, s2, -1, -1, a);
  }
  check_narrow(nd, q, nz0, a);
}

/// A short fold over a leaf: reads the elements once.
int64_t Analyzer::fold_short_leaf(const Node& nd, int64_t q, const Depth& e, const Depth& s, double sign,
                                  SumAcc& a) const {
  const size_t k = size_t(nd.acc_cls);
  const int64_t n = nd.n;
  const Edge& ch = nd.child;
  const Tensor& t = *slots_[size_t(nodes_[size_t(ch.target)].slot)].t;
  std::array<double, kSmallFold> vs;
  std::array<int64_t, kSmallFold> offs;
  int64_t R = 0;
  bool z = nd.init_zero;
  if (n > 0) cursor_start(ch, q * n);
  for (int64_t r = 0; r < n; ++r) {
    double v = read(t, ch.off);
    vs[size_t(r)] = v;
    offs[size_t(r)] = ch.off;
    if (v != 0.0 || std::isnan(v)) {
      R += !z;
      z = false;
    }
    if (r + 1 < n) cursor_next(ch);
  }
  int64_t pre = 0;
  z = nd.init_zero;
  Depth e2 = e, s2 = s;
  for (int64_t r = 0; r < n; ++r) {
    double v = vs[size_t(r)];
    e2.n[k] = e.n[k] + int32_t(R - pre);
    s2.n[k] = s.n[k] + int32_t(r == 0 ? n - (nd.init_zero ? 1 : 0) : n - r);
    emit(sign * v, e2, s2, ch.target, offs[size_t(r)], a);
    if (v != 0.0 || std::isnan(v)) {
      pre += !z;
      z = false;
    }
  }
  return R;
}

/// A long fold over a leaf: two passes over its elements.
int64_t Analyzer::fold_leaf(const Node& nd, int64_t q, const Depth& e, const Depth& s, double sign,
                            SumAcc& a) const {
  const size_t k = size_t(nd.acc_cls);
  const int64_t n = nd.n;
  const Edge& ch = nd.child;
  const Tensor& t = *slots_[size_t(nodes_[size_t(ch.target)].slot)].t;
  // Pass 1: which steps round (an exact zero on either side does not).
  int64_t R = 0;
  bool z = nd.init_zero;
  if (n > 0) cursor_start(ch, q * n);
  for (int64_t r = 0; r < n; ++r) {
    double v = read(t, ch.off);
    if (v != 0.0 || std::isnan(v)) {
      R += !z;
      z = false;
    }
    cursor_next(ch);
  }
  // Pass 2: element r goes through the rounding steps r, r+1, ...
  int64_t pre = 0;
  z = nd.init_zero;
  if (n > 0) cursor_start(ch, q * n);
  Depth e2 = e, s2 = s;
  for (int64_t r = 0; r < n; ++r) {
    double v = read(t, ch.off);
    bool nzv = v != 0.0 || std::isnan(v);
    e2.n[k] = e.n[k] + int32_t(R - pre);
    s2.n[k] = s.n[k] + int32_t(r == 0 ? n - (nd.init_zero ? 1 : 0) : n - r);
    emit(sign * v, e2, s2, ch.target, ch.off, a);
    if (nzv) {
      pre += !z;
      z = false;
    }
    cursor_next(ch);
  }
  return R;
}

/// A fold over partial sums: every step counts as rounding.
int64_t Analyzer::fold_partials(const Node& nd, int64_t q, const Depth& e, const Depth& s, double sign,
                                SumAcc& a) const {
  const size_t k = size_t(nd.acc_cls);
  const int64_t n = nd.n;
  const Edge& ch = nd.child;
  int64_t R = n - (nd.init_zero && n > 0 ? 1 : 0);
  if (n > 0) cursor_start(ch, q * n);
  Depth e2 = e, s2 = s;
  for (int64_t r = 0; r < n; ++r) {
    int32_t d = int32_t(r == 0 ? R : n - r);
    e2.n[k] = e.n[k] + d;
    s2.n[k] = s.n[k] + d;
    int64_t off = ch.off;
    visit_sum(ch.target, off, e2, s2, sign, a);
    cursor_next(ch);
  }
  return R;
}

// ---- Linear maps: each term goes through the roundings on its path ----

void Analyzer::visit_lin_sum(const Node& nd, int64_t q, const Depth& eff, const Depth& st, double sign,
                             SumAcc& a) const {
  int64_t nz0 = a.nonzero;
  const LinInfo& L = *nd.lin;
  for (size_t j = 0; j < nd.args.size(); ++j) {
    const Edge& ed = nd.args[j];
    int64_t off = map_one(ed, q);
    nd.argi[j] = off;
    const Node& c = nodes_[size_t(ed.target)];
    if (c.kind == Node::Kind::Leaf) {
      double v = read(*slots_[size_t(c.slot)].t, off);
      nd.argv[j] = v;
      nd.argz[j] = v == 0.0;
    } else {
      nd.argz[j] = 0;  // a partial: not known to be zero
    }
  }
  ExactZeroDomain zeros{L, nd.rnd};
  sem::eval_lambda(*nd.fn, zeros, std::span<const uint8_t>(nd.argz), nd.z);
  Depth e = eff, s = st;
  if (nd.store_cls >= 0) {
    ++s.n[size_t(nd.store_cls)];
    if (!nd.z.back()) ++e.n[size_t(nd.store_cls)];
  }
  for (const Term& t : L.terms) {
    Depth e2 = e, s2 = s;
    for (int k : t.path) {
      size_t c = size_t(L.round_cls[size_t(k)]);
      ++s2.n[c];
      if (nd.rnd[size_t(k)]) ++e2.n[c];
    }
    double sg = sign * t.sign;
    if (t.param < 0) {
      emit(sg * t.cval, e2, s2, -1, -1, a);
      continue;
    }
    const Edge& ed = nd.args[size_t(t.param)];
    const Node& c = nodes_[size_t(ed.target)];
    if (c.kind == Node::Kind::Leaf) emit(sg * nd.argv[size_t(t.param)], e2, s2, ed.target, nd.argi[size_t(t.param)], a);
    else visit_sum(ed.target, nd.argi[size_t(t.param)], e2, s2, sg, a);
  }
  check_narrow(nd, q, nz0, a);
}

// ---- Products and extrema ----

void Analyzer::visit_prod(int id, int64_t q, ProdAcc& a) const {
  const Node& nd = nodes_[size_t(id)];
  const int64_t n = nd.n;
  if (nd.store_cls >= 0) ++a.S;
  const Edge& ch = nd.child;
  const Node& c = nodes_[size_t(ch.target)];
  // A step is exact when the accumulator or the factor is ±1 (an init of ±1,
  // identity padding with 1.0); partial products count as rounding.
  bool unit = nd.init_unit;
  int64_t rounds = 0;
  if (n > 0) cursor_start(ch, q * n);
  for (int64_t r = 0; r < n; ++r) {
    if (c.kind == Node::Kind::Leaf) {
      double v = read(*slots_[size_t(c.slot)].t, ch.off);
      a.factor(v);
      bool vu = std::fabs(v) == 1.0;
      rounds += !(unit || vu);
      unit = unit && vu;
    } else {
      visit_prod(ch.target, ch.off, a);
      rounds += !unit;
      unit = false;
    }
    cursor_next(ch);
  }
  a.D += rounds;
  if (!nd.init_unit) a.factor(nd.init);
  else if (nd.init < 0) mpfr_neg(a.p, a.p, MPFR_RNDN);
}

void Analyzer::visit_max(int id, int64_t q, MaxAcc& a) const {
  const Node& nd = nodes_[size_t(id)];
  const int64_t n = nd.n;
  const Edge& ch = nd.child;
  const Node& c = nodes_[size_t(ch.target)];
  a.take(nd.init);
  if (n > 0) cursor_start(ch, q * n);
  for (int64_t r = 0; r < n; ++r) {
    if (c.kind == Node::Kind::Leaf) a.take(read(*slots_[size_t(c.slot)].t, ch.off));
    else visit_max(ch.target, ch.off, a);
    cursor_next(ch);
  }
}

}  // namespace stax::oracle::bound_analysis
