// Prop. 6.2: view(view(e, π1), π2) == view(e, π1∘π2); the composed map is
// simplified (index_simplify.h). Floor/mod and indirect maps stay symbolic.
// With strict tensor values the inner view is evaluated everywhere in the
// source, so folding it is exact only when it cannot fail; otherwise the
// application is a refinement.
#include "semantics/views.h"
#include "transforms/expr_util.h"
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

}  // namespace

Result compose_views(const Program& p, const Params&, Context& ctx) {
  Result r{p, SemClass::Exact};
  for (Binding& b : r.program.bindings) {
    b.expr = rewrite_bottom_up(b.expr, [&](const Expr& e) -> std::optional<Expr> {
      const auto* v = std::get_if<ViewE>(&e->p);
      if (!v || !ctx.allow()) return std::nullopt;
      Expr src = v->src;
      IndexMap m = v->map;
      std::string what;
      if (const auto* inner = std::get_if<ViewE>(&src->p)) {
        if (!view_statically_in_bounds(inner->src->type.shape, src->type.shape, inner->map))
          r.cls = SemClass::Refines;
        m = compose_maps(inner->map, m);
        src = inner->src;
        what = "composed two views";
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
