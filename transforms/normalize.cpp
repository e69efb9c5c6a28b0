// The normaliser: a chain of exact transforms (let hoisting = realization,
// view composition, map fusion, realization of reductions and of computed
// operands of views) until every binding is one kernel in the normal form
// red?(map(g, view(x1), ..., view(xr))) of docs/design.md §2, or a bare iota/full.
#include "semantics/expr_util.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

namespace {

bool is_map_form(const Expr& e) {
  if (const auto* m = std::get_if<MapE>(&e->p)) {
    for (const Expr& a : m->args)
      if (!is_kernel_access(a)) return false;
    return true;
  }
  return is_kernel_access(e);
}

/// The first subexpression that keeps `e` out of normal form and must be
/// bound on its own, or null.
Expr offender(const Expr& e) {
  if (std::holds_alternative<IotaE>(e->p) || std::holds_alternative<FullE>(e->p) || std::holds_alternative<RandE>(e->p))
    return nullptr;
  Expr body = e;
  if (const auto* r = std::get_if<RedE>(&e->p)) body = r->src;
  if (is_map_form(body)) return nullptr;
  if (body != e && !std::holds_alternative<MapE>(body->p)) {
    if (const auto* v = std::get_if<ViewE>(&body->p)) return v->src;
    return body;
  }
  if (const auto* v = std::get_if<ViewE>(&body->p)) return v->src;
  if (const auto* m = std::get_if<MapE>(&body->p)) {
    for (const Expr& a : m->args) {
      if (is_kernel_access(a)) continue;
      if (const auto* v = std::get_if<ViewE>(&a->p)) return v->src;
      return a;
    }
  }
  return body;
}

const LetE* outermost_let(const Expr& e, const ExprNode** node) {
  if (const auto* l = std::get_if<LetE>(&e->p)) {
    *node = e.get();
    return l;
  }
  for (const Expr& k : children(e))
    if (const LetE* l = outermost_let(k, node)) return l;
  return nullptr;
}

/// view(map(g, a...), m) -> map(g, view(a, m)...) when the map cannot fail:
/// a total map evaluated at fewer (or repeated) elements gives the same
/// values, so the rewrite is exact, and the kernel reads its operands
/// through the view instead of realizing the map. Bottom-up; counts rewrites.
Expr push_views_into_maps(const Expr& e, Context& ctx, int& n) {
  std::vector<Expr> kids = children(e);
  bool changed = false;
  for (Expr& k : kids) {
    Expr nk = push_views_into_maps(k, ctx, n);
    changed |= nk != k;
    k = nk;
  }
  Expr cur = changed ? with_children(e, kids) : e;
  const auto* v = std::get_if<ViewE>(&cur->p);
  if (!v || !ctx.allow()) return cur;
  const auto* m = std::get_if<MapE>(&v->src->p);
  if (!m || expr_may_fail(v->src)) return cur;
  std::vector<Expr> args;
  for (const Expr& a : m->args)
    args.push_back(make_expr(TensorType{a->type.dtype, cur->type.shape}, ViewE{a, v->map}, cur->loc));
  ++n;
  return make_expr(cur->type, MapE{m->fn, std::move(args)}, cur->loc);
}

}  // namespace

bool is_kernel_normal_form(const Expr& e) { return offender(e) == nullptr && !std::holds_alternative<LetE>(e->p); }

Result normalize(const Program& p, const NormalizeOptions& opt, Context& ctx) {
  Result r{p, SemClass::Exact};
  // fuse=0: no composition or fusion, which may only refine (they drop a
  // view or a map that may fail); let hoisting, moving views under total
  // maps and realization are exact.
  const bool fuse = opt.fuse;
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    // Hoist let-in values into bindings (realization).
    for (size_t k = 0; k < r.program.bindings.size() && ctx.allow(); ++k) {
      const ExprNode* node = nullptr;
      const LetE* l = outermost_let(r.program.bindings[k].expr, &node);
      if (!l) continue;
      // Copies: replacing the binding's expression may free the let node.
      const std::string let_name = l->name;
      std::string n = fresh_name(r.program, let_name + "_");
      Expr body = rename(l->body, let_name, n);
      Binding nb{n, l->value, l->value->loc};
      r.program.bindings[k].expr = replace_node(r.program.bindings[k].expr, node, body);
      r.program.bindings.insert(r.program.bindings.begin() + std::ptrdiff_t(k), nb);
      ctx.note("normalize: hoisted let " + let_name + " as " + n);
      changed = true;
    }
    int64_t before = ctx.count;
    for (Binding& b : r.program.bindings) {
      int n = 0;
      b.expr = push_views_into_maps(b.expr, ctx, n);
      if (n) ctx.note("normalize: moved " + std::to_string(n) + " view(s) under a total map in " + b.name);
    }
    if (fuse) {
      Result c = compose_views(r.program, ctx);
      Result f = fuse_maps(c.program, ctx);
      r.program = std::move(f.program);
      r.cls = weaker(r.cls, weaker(c.cls, f.cls));
    }
    changed |= ctx.count != before;
    // Realize what stays in the way.
    for (size_t k = 0; k < r.program.bindings.size() && ctx.allow(); ++k) {
      Expr off = offender(r.program.bindings[k].expr);
      if (!off) continue;
      std::string n = fresh_name(r.program, "k");
      Expr ref = make_expr(off->type, NameE{n}, off->loc);
      r.program.bindings[k].expr = replace_node(r.program.bindings[k].expr, off.get(), ref);
      r.program.bindings.insert(r.program.bindings.begin() + std::ptrdiff_t(k), Binding{n, off, off->loc});
      ctx.note("normalize: realized a subexpression of " + r.program.bindings[k + 1].name + " as " + n);
      changed = true;
    }
    if (!changed) break;
  }
  return r;
}

}  // namespace stax::xform
