// Prop. 6.2: view(view(e, π1), π2) == view(e, π1∘π2); the composed map is
// simplified (index_simplify.h). Floor/mod and indirect maps stay symbolic.
// With strict tensor values the inner view is evaluated everywhere in the
// source, so folding it is exact only when it cannot fail; otherwise the
// application is a refinement.
#include "semantics/expr_util.h"
#include "semantics/ir_visit.h"
#include "semantics/mutants.h"
#include "semantics/program_obligations.h"
#include "semantics/views.h"
#include "transforms/index_simplify.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

namespace {

bool is_identity(const IndexMap& m, const Shape& src, const Shape& out) {
  if (src != out || m.exprs.size() != out.size()) return false;
  for (size_t j = 0; j < m.exprs.size(); ++j)
    if (m.exprs[j]->kind != IExprNode::Kind::Var || m.exprs[j]->value != int64_t(j)) return false;
  return true;
}

bool uses_var(const IExpr& e, int64_t var) {
  return any_inode(e, [&](const IExprNode& n) { return n.kind == IExprNode::Kind::Var && n.value == var; });
}

// Whether view(view(x, inner), outer) may be folded, and whether the fold is
// exact. A component of `outer` with an indirect load wraps negatives and is
// bounds-checked against the middle extent; the fold keeps that only when
// `inner` passes the variable through unchanged to a dim of the same extent.
// Otherwise a failing component would be checked against another extent (or
// not at all): refuse. Out-of-range affine components of either map make the
// fold a refinement (the source fails where the target may not).
bool composable(const ViewE& inner, const Shape& base, const Shape& middle, const IndexMap& outer,
                const Shape& out, bool* exact) {
  for (size_t j = 0; j < outer.exprs.size(); ++j) {
    if (iexpr_has_load(outer.exprs[j])) {
      bool used = false;
      for (size_t k = 0; k < inner.map.exprs.size(); ++k) {
        const IExpr& c = inner.map.exprs[k];
        if (!uses_var(c, int64_t(j))) continue;
        if (c->kind != IExprNode::Kind::Var || base[k] != middle[j]) return false;
        used = true;
      }
      if (!used) *exact = false;  // the target no longer evaluates (nor checks) that load
    } else {
      Interval r = iexpr_range(outer.exprs[j], out);
      if (num_elements(out) > 0 && (r.lo < 0 || r.hi >= middle[j])) *exact = false;
    }
  }
  if (!view_statically_in_bounds(base, middle, inner.map)) {
    // Loads in the inner map are checked at the same component and extent in
    // the target; only its non-load components can fail where the target does not.
    for (size_t k = 0; k < inner.map.exprs.size(); ++k) {
      if (iexpr_has_load(inner.map.exprs[k])) continue;
      Interval r = iexpr_range(inner.map.exprs[k], middle);
      if (num_elements(middle) > 0 && (r.lo < 0 || r.hi >= base[k])) *exact = false;
    }
    // A load in the inner map is evaluated at fewer points in the target.
    for (const IExpr& c : inner.map.exprs)
      if (iexpr_has_load(c)) *exact = false;
  }
  return true;
}

// docs/design.md §5: a composition with floor/mod (a reshape) is applied only when the
// context's prover (Z3) proves the simplified composed map equal to the two
// maps in turn.
std::optional<std::string> composition_refused(const Context& ctx, const std::string& binding, const ViewE& inner,
                                               const Shape& middle, const IndexMap& outer, const Shape& out,
                                               const IndexMap& composed) {
  if (!has_floor_mod(inner.map) && !has_floor_mod(outer) && !has_floor_mod(composed)) return std::nullopt;
  sem::Obligation ob = sem::composition_obligation(binding, inner.map, inner.src->type.shape, outer, middle,
                                                         out, composed);
  sem::ProofVerdict v = ctx.discharge(ob);
  if (v.kind == sem::ProofVerdict::Proved) return std::nullopt;
  return "composition obligation " + std::string(sem::verdict_name(v.kind)) +
         (v.counterexample.empty() ? "" : ": " + v.counterexample) + (v.reason.empty() ? "" : " (" + v.reason + ")");
}

}  // namespace

Result compose_views(const Program& p, Context& ctx) {
  Result r{p, SemClass::Exact};
  for (Binding& b : r.program.bindings) {
    b.expr = rewrite_bottom_up(b.expr, [&](const Expr& e) -> std::optional<Expr> {
      const auto* v = std::get_if<ViewE>(&e->p);
      if (!v || !ctx.allow()) return std::nullopt;
      Expr src = v->src;
      IndexMap m = v->map;
      std::string what;
      if (const auto* inner = std::get_if<ViewE>(&src->p)) {
        bool exact = true;
        if (composable(*inner, inner->src->type.shape, src->type.shape, v->map, e->type.shape, &exact)) {
          IndexMap cm = compose_maps(inner->map, m);
          // Seeded bug (semantics/mutants.h): the inner offset counted one too many.
          if (mutant_active("view-offset-off-by-one"))
            if (auto af = as_affine(inner->map, int(src->type.shape.size())))
              for (size_t k = 0; k < cm.exprs.size(); ++k)
                if (af->c[k] != 0) {
                  cm.exprs[k] = iadd(cm.exprs[k], iconst(1));
                  break;
                }
          auto refused = composition_refused(ctx, b.name, *inner, src->type.shape, v->map, e->type.shape,
                                             simplify_map(cm, e->type.shape));
          if (refused) {
            ctx.log.push_back("compose-views: refused " + b.name + ": " + *refused);
          } else {
            if (!exact) r.cls = SemClass::Refines;
            m = std::move(cm);
            src = inner->src;
            what = "composed two views";
          }
        }
      }
      IndexMap s = simplify_map(m, e->type.shape);
      if (is_identity(s, src->type.shape, e->type.shape)) {
        ctx.note("compose-views: " + b.name + ": " + (what.empty() ? "dropped an identity view" : what + " into the identity"));
        return src;
      }
      if (what.empty() && s == v->map) return std::nullopt;
      ctx.note("compose-views: " + b.name + ": " + (what.empty() ? "simplified an index map" : what));
      return make_expr(e->type, ViewE{src, std::move(s)}, e->loc);
    });
  }
  return r;
}

}  // namespace stax::xform
