#include "transforms/index_simplify.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <map>

#include "semantics/ieee_scalar.h"
#include "semantics/index_eval.h"
#include "semantics/mutants.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::xform {

using namespace sem;
using K = IExprNode::Kind;

namespace {

/// A coefficient or constant of a linear form left int64: the expression is
/// kept as it is (simplify_index), never rewritten with a wrapped value.
struct Overflow {};
int64_t add_ck(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Overflow{};
  return r;
}
int64_t sub_ck(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw Overflow{};
  return r;
}
int64_t mul_ck(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Overflow{};
  return r;
}

struct Linear {
  std::vector<std::pair<IExpr, int64_t>> terms;  // atom, coefficient
  int64_t c = 0;

  void add(const IExpr& atom, int64_t k) {
    if (k == 0) return;
    for (size_t i = 0; i < terms.size(); ++i)
      if (iexpr_equal(terms[i].first, atom)) {
        terms[i].second = add_ck(terms[i].second, k);
        if (terms[i].second == 0) terms.erase(terms.begin() + std::ptrdiff_t(i));  // no zero terms
        return;
      }
    terms.push_back({atom, k});
  }
  void add(const Linear& o, int64_t k) {
    for (const auto& [a, q] : o.terms) add(a, mul_ck(q, k));
    c = add_ck(c, mul_ck(o.c, k));
  }
};

int rank_of(const IExpr& a) {
  switch (a->kind) {
    case K::Var: return 0;
    case K::FloorDiv: return 1;
    case K::Mod: return 2;
    default: return 3;
  }
}

IExpr build(Linear l) {
  l.terms.erase(std::remove_if(l.terms.begin(), l.terms.end(), [](const auto& t) { return t.second == 0; }),
                l.terms.end());
  std::stable_sort(l.terms.begin(), l.terms.end(), [](const auto& x, const auto& y) {
    int rx = rank_of(x.first), ry = rank_of(y.first);
    if (rx != ry) return rx < ry;
    if (rx == 0) return x.first->value < y.first->value;
    return print_iexpr(x.first, {}) < print_iexpr(y.first, {});
  });
  IExpr e;
  for (const auto& [a, k] : l.terms) {
    if (!e) {
      e = k == 1 ? a : imul(k, a);
    } else if (k > 0) {
      e = iadd(e, k == 1 ? a : imul(k, a));
    } else {
      e = isub(e, k == -1 ? a : imul(sub_ck(0, k), a));
    }
  }
  if (!e) return iconst(l.c);
  if (l.c > 0) e = iadd(e, iconst(l.c));
  if (l.c < 0) e = isub(e, iconst(sub_ck(0, l.c)));
  return e;
}

Linear lin(const IExpr& e, const Shape& ext);

// Merges s*b*(E // s) + b*(E % s) into b*E (E = s*(E // s) + E % s).
void merge_divmod(Linear& l, const Shape& ext) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < l.terms.size() && !changed; ++i) {
      const auto& [d, a] = l.terms[i];
      if (d->kind != K::FloorDiv) continue;
      for (size_t j = 0; j < l.terms.size() && !changed; ++j) {
        const auto& [m, b] = l.terms[j];
        if (m->kind != K::Mod || m->value != d->value || !iexpr_equal(m->args[0], d->args[0])) continue;
        int64_t ab;
        if (__builtin_mul_overflow(d->value, b, &ab) || a != ab) continue;
        Linear inner = lin(d->args[0], ext);
        IExpr di = l.terms[i].first, mj = l.terms[j].first;
        int64_t bb = b;
        l.add(di, sub_ck(0, a));
        l.add(mj, sub_ck(0, bb));
        l.add(inner, bb);
        changed = true;
      }
    }
  }
}

/// The linear-form domain of the index evaluator (index_eval.h): an index
/// expression as Σ k·atom + c, atoms being variables, loads and the floor
/// divisions and remainders that cannot be resolved over the box [0, ext).
struct LinearDomain {
  using Value = Linear;
  const Shape& ext;

  Value constant(const IExprNode&, int64_t c) {
    Linear l;
    l.c = c;
    return l;
  }
  Value var(const IExprNode&, int64_t k) {
    Linear l;
    l.add(ivar(int(k)), 1);
    return l;
  }
  Value add(const IExprNode&, Value a, const Value& b) { return combine(std::move(a), b, 1); }
  Value sub(const IExprNode&, Value a, const Value& b) { return combine(std::move(a), b, -1); }
  Value mul(const IExprNode&, int64_t c, const Value& a) { return combine(Linear{}, a, c); }
  Value floordiv(const IExprNode&, const Value& a, int64_t c) { return divmod(a, c, false); }
  Value mod(const IExprNode&, const Value& a, int64_t c) { return divmod(a, c, true); }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    auto n = std::make_shared<IExprNode>(e);
    for (size_t k = 0; k < n->args.size(); ++k) n->args[k] = build(arg(k));
    Linear l;
    l.add(n, 1);
    return l;
  }

  Linear combine(Linear l, const Linear& b, int64_t k) {
    l.add(b, k);
    merge_divmod(l, ext);
    return l;
  }
  Linear divmod(const Linear& in, int64_t c, bool is_mod);
};

Linear lin(const IExpr& e, const Shape& ext) {
  LinearDomain dom{ext};
  return eval_iexpr(e, dom);
}

Linear LinearDomain::divmod(const Linear& in, int64_t c, bool is_mod) {
  Linear l;
  if (c == 0) {  // ⊥ wherever it is evaluated: kept as it is
    IExpr a = build(in);
    l.add(is_mod ? imod(a, c) : ifloordiv(a, c), 1);
    return l;
  }
  // INT64_MIN has no negation: k % -1, |k| and floor_div(k, -1) would overflow.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  if (c == kMin || in.c == kMin) throw Overflow{};
  for (const auto& [a, k] : in.terms)
    if (k == kMin) throw Overflow{};
  // Find the largest g | c with in = g*q + r and 0 <= r < g over the box:
  // then in // c = q // (c/g) and in % c = g*(q % (c/g)) + r.
  std::vector<int64_t> gs = {c};
  for (const auto& [a, k] : in.terms) gs.push_back(std::gcd(c, k < 0 ? sub_ck(0, k) : k));
  std::sort(gs.rbegin(), gs.rend());
  bool done = false;
  for (int64_t g : gs) {
    if (g <= 1 || done) continue;
    Linear q, r;
    for (const auto& [a, k] : in.terms) {
      if (k % g == 0) q.add(a, k / g);
      else r.add(a, k);
    }
    q.c = ieee::floor_div(in.c, g);
    r.c = sub_ck(in.c, mul_ck(q.c, g));
    IExpr rexpr = build(r);
    Interval rr = iexpr_range(rexpr, ext);
    // Seeded bug (semantics/mutants.h): the remainder taken as non-negative.
    bool lo_ok = rr.lo >= 0 || mutant_active("floormod-negative");
    if (!(lo_ok && rr.hi < g)) continue;
    int64_t d = c / g;
    IExpr qe = build(q);
    if (!is_mod) {
      if (d == 1) l.add(q, 1);
      else l.add(lin(ifloordiv(qe, d), ext), 1);
    } else {
      if (d != 1) l.add(lin(imod(qe, d), ext), g);
      l.add(r, 1);
    }
    done = true;
  }
  if (!done) {
    // (c*q + r) // c = q + r // c and (c*q + r) % c = r % c hold for any r.
    Linear q, r;
    for (const auto& [a, k] : in.terms) {
      if (k % c == 0) q.add(a, k / c);
      else r.add(a, k);
    }
    q.c = ieee::floor_div(in.c, c);
    r.c = sub_ck(in.c, mul_ck(q.c, c));
    IExpr rexpr = build(r);
    if (!is_mod) {
      l.add(q, 1);
      if (!r.terms.empty()) l.add(ifloordiv(rexpr, c), 1);
    } else if (r.terms.empty()) {
      l.c = add_ck(l.c, r.c);
    } else {
      l.add(imod(rexpr, c), 1);
    }
  }
  merge_divmod(l, ext);
  return l;
}

}  // namespace

IExpr simplify_index(const IExpr& e, const Shape& extents) {
  try {
    return build(lin(e, extents));
  } catch (const Overflow&) {
    return e;
  }
}

IndexMap simplify_map(const IndexMap& m, const Shape& extents) {
  IndexMap r = m;
  for (IExpr& e : r.exprs) e = simplify_index(e, extents);
  return r;
}

}  // namespace stax::xform
