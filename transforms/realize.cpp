// Theorem 6.1 read right to left: b[e/y]  ==  let y = e; b. A realized value
// is stored in its own dtype, which is the map's dtype, so no extra rounding
// happens (the hidden premise of Theorem 6.1).
#include <functional>

#include "semantics/expr_util.h"
#include "transforms/passes.h"

namespace stax::xform {

using namespace sem;

namespace {

/// Proper subexpressions that can be bound outside: not names, not under a
/// let-in (they may read the let's name). Pre-order.
void candidates(const Expr& e, bool root, std::vector<const ExprNode*>& out) {
  if (std::holds_alternative<LetE>(e->p)) {
    if (!root) out.push_back(e.get());
    return;
  }
  if (!root && !std::holds_alternative<NameE>(e->p)) out.push_back(e.get());
  for (const Expr& k : children(e)) candidates(k, false, out);
}

// Binds candidate `node` of binding k; returns the new program.
Program realize_node(const Program& p, size_t k, const ExprNode* node, Context& ctx) {
  Program r = p;
  Expr sub = find_node(p.bindings[k].expr, node);
  std::string n = fresh_name(p, "r");
  Expr ref = make_expr(sub->type, NameE{n}, sub->loc);
  r.bindings[k].expr = replace_node(p.bindings[k].expr, node, ref);
  r.bindings.insert(r.bindings.begin() + std::ptrdiff_t(k), Binding{n, sub, sub->loc});
  ctx.note("realize: " + n + " from " + p.bindings[k].name);
  return r;
}

}  // namespace

Result realize(const Program& p, const RealizeOptions& opt, Context& ctx) {
  Program cur = p;
  if (const auto& b = opt.binding) {
    const int64_t index = opt.index;
    for (size_t k = 0; k < cur.bindings.size(); ++k) {
      if (cur.bindings[k].name != *b) continue;
      std::vector<const ExprNode*> c;
      candidates(cur.bindings[k].expr, true, c);
      if (index < 0 || index >= int64_t(c.size()))
        throw TransformError{"realize: binding '" + *b + "' has " + std::to_string(c.size()) +
                             " realizable subexpression(s); index " + std::to_string(index) + " is out of range"};
      if (ctx.allow()) cur = realize_node(cur, k, c[size_t(index)], ctx);
      return {cur, SemClass::Exact};
    }
    throw TransformError{"realize: no binding named '" + *b + "'"};
  }
  // Every proper subexpression, innermost first (so each new binding is itself realized).
  for (size_t k = 0; k < cur.bindings.size(); ++k) {
    for (;;) {
      std::vector<const ExprNode*> c;
      candidates(cur.bindings[k].expr, true, c);
      if (c.empty() || !ctx.allow()) break;
      cur = realize_node(cur, k, c.front(), ctx);  // the inserted binding takes index k; revisit it
    }
  }
  return {cur, SemClass::Exact};
}

}  // namespace stax::xform
