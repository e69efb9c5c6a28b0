// The IR toolkit every layer above the semantics shares: the operands of a
// tensor expression node and its rebuilding, bottom-up rewrites and memoised
// DAG walks (the tensor-expression counterparts of ir_visit.h), substitution
// (the b[e/y] of Lemma 6.1), a binding read as a kernel, use counts, lambda
// composition (Cor. 6.1) and index map composition (Prop. 6.2).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "semantics/ir.h"

namespace stax::sem {

/// The direct tensor operands of a node (map args, view/red source, let value and body).
std::vector<sem::Expr> children(const sem::Expr& e);
/// The same node with new operands (in the order of `children`); returns `e`
/// itself when nothing changed.
sem::Expr with_children(const sem::Expr& e, const std::vector<sem::Expr>& kids);

/// Bottom-up rewrite: `f` sees each node after its operands were rewritten and
/// returns a replacement or nullopt.
sem::Expr rewrite_bottom_up(const sem::Expr& e, const std::function<std::optional<sem::Expr>(const sem::Expr&)>& f);

/// Replaces free uses of `name` by `by` (tensor operands only; index loads
/// keep naming tensors, so they are renamed only when `by` is a name).
sem::Expr substitute(const sem::Expr& e, const std::string& name, const sem::Expr& by);
/// Renames free uses of `from` to `to`, in operands and in index loads.
sem::Expr rename(const sem::Expr& e, const std::string& from, const std::string& to);

/// Calls f(node) for every node of the tree under `e`, a node before its
/// operands (a shared subexpression once per use).
template <class F>
void for_each_node(const sem::Expr& e, F&& f) {
  f(e);
  for (const sem::Expr& c : children(e)) for_each_node(c, f);
}

/// Whether some node of the tree under `e` satisfies `pred`; stops at the
/// first.
template <class P>
bool any_node(const sem::Expr& e, P&& pred) {
  if (pred(e)) return true;
  for (const sem::Expr& c : children(e))
    if (any_node(c, pred)) return true;
  return false;
}

/// Calls f(node) once for each distinct node of the DAG under `e`, operands
/// before users; `seen` holds the nodes visited, so a subexpression shared
/// between calls is visited once across them too.
template <class F>
void for_each_node_once(const sem::Expr& e, std::set<const sem::ExprNode*>& seen, F&& f) {
  if (!seen.insert(e.get()).second) return;
  for (const sem::Expr& c : children(e)) for_each_node_once(c, seen, f);
  f(*e);
}

/// A memoised fold over the DAG under `e`: f(node, the operands' values)
/// gives a node's value, computed once per distinct node; `memo` keeps the
/// values across calls (so folding each link of a chain costs O(1)).
template <class T, class F>
T fold_dag(const sem::Expr& e, std::map<const sem::ExprNode*, T>& memo, F&& f) {
  if (auto it = memo.find(e.get()); it != memo.end()) return it->second;
  std::vector<T> kids;
  for (const sem::Expr& c : children(e)) kids.push_back(fold_dag<T>(c, memo, f));
  T v = f(*e, kids);
  memo.emplace(e.get(), v);
  return v;
}

/// `e` with the node `target` (by identity) replaced by `by`.
sem::Expr replace_node(const sem::Expr& e, const sem::ExprNode* target, const sem::Expr& by);
/// The subexpression of `e` that is the node `target`, or null.
sem::Expr find_node(const sem::Expr& e, const sem::ExprNode* target);
/// An operand a kernel reads directly: a name, a view of a name, or a constant `full`.
bool is_kernel_access(const sem::Expr& a);

/// A binding's expression read as a kernel red?(map(g, a1, ..., ar))
/// (docs/design.md §2): the reduction and the map when present, the operands it reads (the
/// map's arguments, else the body itself), the loop domain D ++ R and |D|.
/// The pointers point into the expression, which must outlive the Kernel.
struct Kernel {
  const sem::RedE* red = nullptr;
  const sem::MapE* map = nullptr;
  std::vector<sem::Expr> accesses;
  sem::Shape domain;
  size_t outer = 0;
  /// Whether every access is a kernel access (the kernel normal form).
  bool accesses_are_direct() const;
};
Kernel kernel_of(const sem::Expr& e);

/// Uses of a name across the program (operands, index loads and outputs).
struct Uses {
  int operand = 0;
  int load = 0;
  int output = 0;
  int total() const { return operand + load + output; }
};
Uses count_uses(const sem::Program& p, const std::string& name);
void count_uses_in(const sem::Expr& e, const std::string& name, Uses& u);
/// count_uses_in for every name at once (one walk of `e`), added into `u`.
void count_all_uses_in(const sem::Expr& e, std::map<std::string, Uses>& u);

/// Nesting depth of a tensor expression (a name or a constant: 1). With
/// `memo` the depths of nodes measured before are reused across calls, so
/// measuring each link of a chain costs O(1).
int expr_depth(const sem::Expr& e, std::map<const sem::ExprNode*, int>* memo = nullptr);
/// The deepest a transform or the lowering nests an expression: well inside
/// the 256 levels the parser reads back, and the recursive passes' stacks.
inline constexpr int kMaxExprDepth = 128;

/// A fresh binding name not used in the program, from a stem.
std::string fresh_name(const sem::Program& p, const std::string& stem);

/// `g` with its parameter `k` replaced by the body of `f`: parameters become
/// g's [0, k), f's, g's (k, n). When `round_to` is a half dtype the result of
/// f is rounded with an explicit cast (a map's store rounding, Theorem 6.1).
sem::Lambda compose_lambda(const sem::Lambda& g, size_t k, const sem::Lambda& f, std::optional<sem::DType> round_to);

/// Index map of view(view(e, inner), outer): e[inner(outer(i))].
sem::IndexMap compose_maps(const sem::IndexMap& inner, const sem::IndexMap& outer);
/// Substitutes index expressions for the variables of `e`.
sem::IExpr substitute_vars(const sem::IExpr& e, const std::vector<sem::IExpr>& by);

}  // namespace stax::sem
