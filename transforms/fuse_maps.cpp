// Cor. 6.1: map(g, view_π(map(f, x1..xr))) == map(g∘f, view_π(x1), ..., view_π(xr)).
// The inner map rounds at its store; when its dtype is f16/bf16 the fused
// lambda keeps that rounding with an explicit cast (Theorem 6.1's premise).
// If f may fail and π is not the identity, the source evaluates f at points
// the target never visits: the application is then a refinement.
#include "semantics/expr_util.h"
#include "semantics/mutants.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

Result fuse_maps(const Program& p, Context& ctx) {
  Result r{p, SemClass::Exact};
  for (Binding& b : r.program.bindings) {
    b.expr = rewrite_bottom_up(b.expr, [&](const Expr& e) -> std::optional<Expr> {
      const auto* g = std::get_if<MapE>(&e->p);
      if (!g) return std::nullopt;
      MapE cur = *g;
      bool changed = false;
      for (size_t k = 0; k < cur.args.size() && ctx.allow();) {
        Expr a = cur.args[k];
        const IndexMap* pi = nullptr;
        Expr inner = a;
        if (const auto* v = std::get_if<ViewE>(&a->p)) {
          pi = &v->map;
          inner = v->src;
        }
        const auto* f = std::get_if<MapE>(&inner->p);
        if (!f) {
          ++k;
          continue;
        }
        std::vector<Expr> new_args;
        for (const Expr& x : f->args)
          new_args.push_back(pi ? make_expr({x->type.dtype, a->type.shape}, ViewE{x, *pi}, a->loc) : x);
        if (pi && expr_may_fail(inner)) r.cls = SemClass::Refines;
        // Seeded bug (semantics/mutants.h): the half store rounding is lost.
        std::optional<DType> round_to = inner->type.dtype;
        if (mutant_active("fusion-drops-bf16-round")) round_to = std::nullopt;
        cur.fn = compose_lambda(cur.fn, k, f->fn, round_to);
        cur.args.erase(cur.args.begin() + std::ptrdiff_t(k));
        cur.args.insert(cur.args.begin() + std::ptrdiff_t(k), new_args.begin(), new_args.end());
        ctx.note("fuse-maps: " + b.name + ": fused operand " + std::to_string(k) + (pi ? " through a view" : ""));
        changed = true;
        k += new_args.size();
      }
      if (!changed) return std::nullopt;
      return make_expr(e->type, std::move(cur), e->loc);
    });
  }
  return r;
}

}  // namespace stax::xform
