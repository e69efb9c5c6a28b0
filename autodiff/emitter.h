// Building derivative graphs node by node: every emitted node is typed as it
// is appended (compiler::NodeTyper, the lowering rules' own typing), so a
// derivative rule can ask for the shape and dtype of anything it reads, and a
// rule that builds an ill-typed node fails at once, naming the node.
// Shared by reverse mode (vjp.cpp) and forward mode (jvp.cpp).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "autodiff/joint_graph.h"
#include "compiler/lower.h"

namespace stax::autodiff {

/// A user error found while differentiating (a non-differentiable operator on
/// the gradient path, ...): the node it concerns and the message.
struct AdError {
  std::string node;
  std::string message;
};

class Emitter {
 public:
  /// Appends to `g` (whose inputs must already be set) and, when `phases` is
  /// given, records `current` for each emitted node.
  Emitter(compiler::Graph& g, std::vector<Phase>* phases);

  Phase current = Phase::Forward;

  /// Appends an existing node under its own name (forward nodes).
  void copy(const compiler::Node& n);
  /// Appends a new node named after its operator (`expand`, `expand_0`, ...,
  /// as in Listing 5.2) and returns the name.
  std::string emit(const std::string& op, nlohmann::json args, nlohmann::json kwargs = nlohmann::json::object());
  /// Adds a graph input (tangents) typed `t`.
  void add_input(const std::string& name, const sem::TensorType& t);
  void reserve(const std::string& name) { used_.insert(name); }
  std::string fresh(const std::string& stem);

  sem::TensorType type(const std::string& name) const;

  // ---- helpers the derivative rules share ----
  /// `g` summed over the dims that broadcasting added or stretched, so that it
  /// has `target`'s shape, and converted to `target`'s dtype (the adjoint of
  /// an implicit broadcast and promotion).
  std::string sum_to(const std::string& g, const sem::TensorType& target);
  /// `v` expanded to `target`'s shape and converted to its dtype (the tangent
  /// of an implicit broadcast and promotion).
  std::string expand_to(const std::string& v, const sem::TensorType& target);
  /// zeros of type `t`.
  std::string zeros(const sem::TensorType& t);
  /// a + b (add.Tensor), skipping empty names (an empty name is zero).
  std::string add(const std::string& a, const std::string& b);

  compiler::Graph& graph() { return g_; }

 private:
  compiler::Graph& g_;
  std::vector<Phase>* phases_;
  compiler::NodeTyper typer_;
  std::set<std::string> used_;
};

/// Where the derivative path into node `n` breaks, if it does: an argument of
/// `n` computed from a differentiated input (`varied`: value -> that input)
/// that is an integer (or a bool converted by _to_copy/to) — argmax,
/// comparisons, floor_divide, casts to integers. The error names the root
/// cause: the first node back along the varied path without a derivative
/// rule, or that turns a varied float into an integer or bool. Bool masks
/// used as operands (where's condition, x * (x > 0)) are fine: piecewise
/// constant, their derivative is zero almost everywhere (PyTorch's reading).
void check_derivative_path(const compiler::Node& n, const std::map<std::string, const compiler::Node*>& producer,
                           const std::map<std::string, std::string>& varied,
                           const std::function<bool(const std::string&)>& has_rule, const Emitter& em);

/// Reads the literal arguments of a node (throws AdError naming the node).
int64_t int_arg(const compiler::Node& n, size_t i, int64_t dflt);
std::vector<int64_t> ints_arg(const compiler::Node& n, size_t i);
/// Normalises a possibly negative dim for a rank.
int64_t norm_dim(const compiler::Node& n, int64_t d, size_t rank);

}  // namespace stax::autodiff
