#include "transforms/index_simplify.h"

#include <algorithm>
#include <numeric>
#include <map>

#include "semantics/mutants.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::xform {

using namespace sem;
using K = IExprNode::Kind;

namespace {

struct Linear {
  std::vector<std::pair<IExpr, int64_t>> terms;  // atom, coefficient
  int64_t c = 0;

  void add(const IExpr& atom, int64_t k) {
    if (k == 0) return;
    for (size_t i = 0; i < terms.size(); ++i)
      if (iexpr_equal(terms[i].first, atom)) {
        terms[i].second += k;
        if (terms[i].second == 0) terms.erase(terms.begin() + std::ptrdiff_t(i));  // no zero terms
        return;
      }
    terms.push_back({atom, k});
  }
  void add(const Linear& o, int64_t k) {
    for (const auto& [a, q] : o.terms) add(a, q * k);
    c += o.c * k;
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
      e = isub(e, k == -1 ? a : imul(-k, a));
    }
  }
  if (!e) return iconst(l.c);
  if (l.c > 0) e = iadd(e, iconst(l.c));
  if (l.c < 0) e = isub(e, iconst(-l.c));
  return e;
}

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
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
        if (a != d->value * b) continue;
        Linear inner = lin(d->args[0], ext);
        IExpr di = l.terms[i].first, mj = l.terms[j].first;
        int64_t bb = b;
        l.add(di, -a);
        l.add(mj, -bb);
        l.add(inner, bb);
        changed = true;
      }
    }
  }
}

Linear lin(const IExpr& e, const Shape& ext) {
  Linear l;
  switch (e->kind) {
    case K::Const: l.c = e->value; return l;
    case K::Var: l.add(e, 1); return l;
    case K::Add: l.add(lin(e->args[0], ext), 1); l.add(lin(e->args[1], ext), 1); break;
    case K::Sub: l.add(lin(e->args[0], ext), 1); l.add(lin(e->args[1], ext), -1); break;
    case K::Mul: l.add(lin(e->args[0], ext), e->value); break;
    case K::FloorDiv:
    case K::Mod: {
      int64_t c = e->value;
      Linear in = lin(e->args[0], ext);
      // Find the largest g | c with in = g*q + r and 0 <= r < g over the box:
      // then in // c = q // (c/g) and in % c = g*(q % (c/g)) + r.
      std::vector<int64_t> gs = {c};
      for (const auto& [a, k] : in.terms) gs.push_back(std::gcd(c, k < 0 ? -k : k));
      std::sort(gs.rbegin(), gs.rend());
      bool done = false;
      for (int64_t g : gs) {
        if (g <= 1 || done) continue;
        Linear q, r;
        for (const auto& [a, k] : in.terms) {
          if (k % g == 0) q.add(a, k / g);
          else r.add(a, k);
        }
        q.c = floordiv_i(in.c, g);
        r.c = in.c - q.c * g;
        IExpr rexpr = build(r);
        IRange rr = iexpr_range(rexpr, ext);
        // Seeded bug (semantics/mutants.h): the remainder taken as non-negative.
        bool lo_ok = rr.lo >= 0 || mutant_active("floormod-negative");
        if (!(lo_ok && rr.hi < g)) continue;
        int64_t d = c / g;
        IExpr qe = build(q);
        if (e->kind == K::FloorDiv) {
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
        q.c = floordiv_i(in.c, c);
        r.c = in.c - q.c * c;
        IExpr rexpr = build(r);
        if (e->kind == K::FloorDiv) {
          l.add(q, 1);
          if (!r.terms.empty()) l.add(ifloordiv(rexpr, c), 1);
        } else if (r.terms.empty()) {
          l.c += r.c;
        } else {
          l.add(imod(rexpr, c), 1);
        }
      }
      break;
    }
    case K::Load: {
      auto n = std::make_shared<IExprNode>(*e);
      for (IExpr& a : n->args) a = simplify_index(a, ext);
      l.add(n, 1);
      return l;
    }
  }
  merge_divmod(l, ext);
  return l;
}

}  // namespace

IExpr simplify_index(const IExpr& e, const Shape& extents) { return build(lin(e, extents)); }

IndexMap simplify_map(const IndexMap& m, const Shape& extents) {
  IndexMap r = m;
  for (IExpr& e : r.exprs) e = simplify_index(e, extents);
  return r;
}

}  // namespace stax::xform
