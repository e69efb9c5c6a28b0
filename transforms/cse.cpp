// Theorem 6.2.1: let y1 = e; let y2 = e; b  ==  let y1 = e; b[y1/y2], and its
// subexpression form (realize a repeated subexpression once, Theorem 6.1,
// then merge). Structural equality is the hash-consed expr_equal. Nodes that
// are not functions of the environment (rand) are never merged: that is where
// Lemma 6.1's determinism premise fails.
#include <functional>
#include <unordered_map>

#include "semantics/expr_util.h"
#include "semantics/mutants.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

namespace {

bool has_rand(const Expr& e) {
  return any_node(e, [](const Expr& n) { return std::holds_alternative<RandE>(n->p); });
}

// Seeded bug (semantics/mutants.h) "cse-merge-rand": rand nodes compare
// equal whatever their keys, and are shared like any other node.
bool merge_rand() { return mutant_active("cse-merge-rand"); }

Expr without_rand_keys(const Expr& e) {
  if (std::holds_alternative<RandE>(e->p)) return make_expr(e->type, RandE{0}, e->loc);
  std::vector<Expr> kids = children(e);
  for (Expr& k : kids) k = without_rand_keys(k);
  return with_children(e, kids);
}

bool same(const Expr& a, const Expr& b) {
  if (!merge_rand()) return expr_equal(a, b);
  return expr_equal(without_rand_keys(a), without_rand_keys(b));
}

bool worth_sharing(const Expr& e) {
  return !std::holds_alternative<NameE>(e->p) && !std::holds_alternative<LetE>(e->p) && (merge_rand() || !has_rand(e));
}

// Proper subexpressions not under a let-in, with the binding they occur in.
void collect(const Expr& e, bool root, size_t binding, std::vector<std::pair<Expr, size_t>>& out) {
  if (std::holds_alternative<LetE>(e->p)) return;
  if (!root && worth_sharing(e)) out.push_back({e, binding});
  for (const Expr& k : children(e)) collect(k, false, binding, out);
}

Expr replace_equal(const Expr& e, const Expr& target, const Expr& by) {
  if (std::holds_alternative<LetE>(e->p)) return e;
  if (same(e, target)) return by;
  std::vector<Expr> kids = children(e);
  for (Expr& k : kids) k = replace_equal(k, target, by);
  return with_children(e, kids);
}

size_t size_of(const Expr& e) {
  size_t n = 0;
  for_each_node(e, [&](const Expr&) { ++n; });
  return n;
}

}  // namespace

Result cse(const Program& p, Context& ctx) {
  Program cur = p;
  // 1. Repeated subexpressions: the largest first, bound once before its first use.
  for (bool changed = true; changed && ctx.allow();) {
    changed = false;
    std::vector<std::pair<Expr, size_t>> subs;
    for (size_t k = 0; k < cur.bindings.size(); ++k) collect(cur.bindings[k].expr, true, k, subs);
    std::stable_sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) { return size_of(a.first) > size_of(b.first); });
    for (size_t i = 0; i < subs.size() && !changed; ++i) {
      int count = 0;
      for (const auto& s : subs) count += same(s.first, subs[i].first);
      // A subexpression equal to a whole binding is also shared.
      size_t whole = cur.bindings.size();
      for (size_t k = 0; k < cur.bindings.size(); ++k)
        if (same(cur.bindings[k].expr, subs[i].first)) whole = std::min(whole, k);
      if (count < 2 && whole == cur.bindings.size()) continue;
      const Expr target = subs[i].first;
      size_t first = subs[i].second;
      for (const auto& s : subs)
        if (same(s.first, target)) first = std::min(first, s.second);
      std::string name;
      size_t from;
      if (whole < first) {
        name = cur.bindings[whole].name;
        from = whole + 1;
      } else {
        name = fresh_name(cur, "c");
        cur.bindings.insert(cur.bindings.begin() + std::ptrdiff_t(first), Binding{name, target, target->loc});
        from = first + 1;
      }
      Expr ref = make_expr(target->type, NameE{name}, target->loc);
      for (size_t k = from; k < cur.bindings.size(); ++k) cur.bindings[k].expr = replace_equal(cur.bindings[k].expr, target, ref);
      ctx.note("cse: shared subexpression as " + name);
      changed = true;
    }
  }
  // 2. Equal bindings: later ones become references to the first.
  for (size_t k = 0; k < cur.bindings.size() && ctx.allow(); ++k) {
    const Binding& b = cur.bindings[k];
    if (!worth_sharing(b.expr)) continue;
    for (size_t j = 0; j < k; ++j) {
      if (!same(cur.bindings[j].expr, b.expr)) continue;
      std::string keep = cur.bindings[j].name, drop = b.name;
      ctx.note("cse: " + drop + " = " + keep);
      bool is_output = count_uses(cur, drop).output > 0;
      if (is_output) {
        cur.bindings[k].expr = make_expr(b.expr->type, NameE{keep}, b.loc);
      } else {
        cur.bindings.erase(cur.bindings.begin() + std::ptrdiff_t(k));
        for (Binding& o : cur.bindings) o.expr = rename(o.expr, drop, keep);
        --k;
      }
      break;
    }
  }
  return {cur, SemClass::Exact};
}

}  // namespace stax::xform
