// Generic traversals of index expressions (Halide's IRVisitor and IRMutator,
// as function templates): an analysis that needs every node, or every node
// rebuilt, calls one of these instead of writing its own recursion. The
// tensor-expression counterparts (children, rewrite_bottom_up, the memoised
// DAG walks) are in expr_util.h; the evaluators that give each node kind a
// meaning are index_eval.h and lambda_eval.h.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "semantics/ir.h"

namespace stax::sem {

/// Calls f(node) for every node of `e`, a node before its operands.
template <class F>
void for_each_inode(const IExpr& e, F&& f) {
  f(*e);
  for (const IExpr& a : e->args) for_each_inode(a, f);
}

/// Whether some node of `e` satisfies `pred`; stops at the first.
template <class P>
bool any_inode(const IExpr& e, P&& pred) {
  if (pred(*e)) return true;
  for (const IExpr& a : e->args)
    if (any_inode(a, pred)) return true;
  return false;
}

/// `e` rebuilt bottom-up: each node is offered to `f` after its operands
/// were rebuilt, and f(node) returns its replacement or null to keep it.
/// Unchanged subtrees are shared: an `e` that nothing changed comes back as
/// itself (the same pointer).
template <class F>
IExpr mutate_inode(const IExpr& e, F&& f) {
  IExpr n = e;
  if (!e->args.empty()) {
    std::vector<IExpr> args;
    args.reserve(e->args.size());
    bool changed = false;
    for (const IExpr& a : e->args) {
      args.push_back(mutate_inode(a, f));
      changed |= args.back().get() != a.get();
    }
    if (changed) {
      auto c = std::make_shared<IExprNode>(*e);
      c->args = std::move(args);
      n = std::move(c);
    }
  }
  if (IExpr r = f(n)) return r;
  return n;
}

/// Whether `e` divides with floor or takes a modulo (the non-affine parts
/// of a view map: docs/design.md §5, affinity obligations).
inline bool has_floor_mod(const IExpr& e) {
  return any_inode(e, [](const IExprNode& n) {
    return n.kind == IExprNode::Kind::FloorDiv || n.kind == IExprNode::Kind::Mod;
  });
}
inline bool has_floor_mod(const IndexMap& m) {
  for (const IExpr& e : m.exprs)
    if (has_floor_mod(e)) return true;
  return false;
}

}  // namespace stax::sem
