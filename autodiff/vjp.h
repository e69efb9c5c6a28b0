// Reverse-mode automatic differentiation over operator graphs (§5.2,
// 5.3; Algorithm 5.1, Listing 5.2). Each differentiable operator has one
// vector-Jacobian-product rule in a table keyed by its overload name (the
// analogue of PyTorch's derivatives.yaml, vjp_rules.cpp); a rule reads the
// forward node and the adjoint of its output and emits backward nodes in the
// graph format's own operators, so the joint graph lowers with
// compiler/lower like any graph. Adjoints are accumulated in reverse
// topological order: a value's adjoint is the add.Tensor sum of the
// contributions of its users (the proof of Theorem 5.1).
//
// The table is a value: a test copies default_vjp_rules(), plants a wrong
// rule, and checks that the adjoint test catches it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/emitter.h"
#include "autodiff/joint_graph.h"
#include "compiler/graph.h"

namespace stax::autodiff {

/// What a VJP rule sees: the forward node, the adjoint `grad` of its output
/// (same type as the output), and which tensor arguments want a gradient.
class VjpContext {
 public:
  VjpContext(const compiler::Node& n, std::string grad, Emitter& em, std::function<bool(const std::string&)> wants,
             std::function<void(const std::string&, const std::string&)> give)
      : node(n), grad(std::move(grad)), em(em), wants_(std::move(wants)), give_(std::move(give)) {}

  const compiler::Node& node;
  const std::string grad;
  Emitter& em;

  const std::string& out() const { return node.name; }
  bool is_tensor(size_t i) const { return i < node.args.size() && node.args[i].is_string(); }
  /// The name of tensor argument i.
  std::string arg(size_t i) const { return node.args.at(i).get<std::string>(); }
  sem::TensorType type(const std::string& name) const { return em.type(name); }
  sem::TensorType out_type() const { return em.type(node.name); }
  /// Argument i is a tensor that needs a gradient (float, depends on a
  /// differentiated input).
  bool wants(size_t i) const { return is_tensor(i) && wants_(arg(i)); }
  bool wants_name(const std::string& name) const { return wants_(name); }
  /// A contribution to argument i's adjoint; broadcasting and promotion are
  /// undone here (summed back to the operand's shape, cast to its dtype).
  void give(size_t i, const std::string& g) {
    if (wants(i)) give_name(arg(i), g);
  }
  void give_name(const std::string& name, const std::string& g) {
    if (wants_(name)) give_(name, em.sum_to(g, em.type(name)));
  }
  std::string emit(const std::string& op, nlohmann::json args, nlohmann::json kwargs = nlohmann::json::object()) {
    return em.emit(op, std::move(args), std::move(kwargs));
  }

 private:
  std::function<bool(const std::string&)> wants_;
  std::function<void(const std::string&, const std::string&)> give_;
};

using VjpRule = std::function<void(VjpContext&)>;
/// Overload name ("add.Tensor") -> rule.
using VjpRules = std::map<std::string, VjpRule>;

/// The rules (vjp_rules.cpp). Composite operators without a rule of their own
/// (layer_norm) are differentiated through their decomposition.
const VjpRules& default_vjp_rules();

/// ∂ prod / ∂ x for a prod.dim_int / prod.default node (its operand's shape,
/// zeros handled as PyTorch's prod_backward); shared by both tables.
std::string prod_derivative(const compiler::Node& n, Emitter& em);

struct GradOptions {
  /// Inputs to differentiate (empty: every float input).
  std::vector<std::string> wrt;
  /// Rename the inputs primals_1, primals_2, ... as in Listing 5.2.
  bool listing_names = false;
  /// nullptr: default_vjp_rules().
  const VjpRules* rules = nullptr;
  /// How a value's adjoint is formed from its users' contributions (default:
  /// their add.Tensor sum, Theorem 5.1). Injectable so that a test can plant
  /// a missing accumulation and see the adjoint test catch it.
  std::function<std::string(Emitter&, const std::vector<std::string>&)> accumulate;
};

/// The joint graph of `g`: inputs primals then tangents_1.. (one per forward
/// output), forward nodes (composites without a rule decomposed), backward
/// nodes, outputs forward outputs then the gradients of the differentiated
/// inputs that reach an output. User errors (unknown or integer --wrt input,
/// a non-differentiable operator on the gradient path) name the node.
std::variant<JointGraph, compiler::GraphError> build_joint_graph(const compiler::Graph& g, const GradOptions& opt = {});

/// The double-backward contract (§5.7): a graph from the compile path
/// (compiler::Graph::compiled, e.g. remat's partitioned backward) is not
/// itself differentiable — its inputs include the values the forward saved,
/// so a derivative with respect to the primals would silently miss their
/// dependence on the primals. Reverse mode (`mode` "reverse mode"), forward
/// mode and the Hessian-vector products call this first and return its error:
/// why, and what to do (differentiate the uncompiled function). nullopt for
/// an uncompiled graph.
std::optional<compiler::GraphError> refuse_compiled(const compiler::Graph& g, const std::string& mode);

/// Listing 5.2's form: one line per input and node, `[FW]`/`[BW]` tags,
/// `name : type = op(args)`, then `return (...)`.
std::string joint_listing(const JointGraph& j);

/// The wrt inputs after defaults and checks (shared with forward mode):
/// every float input when `wrt` is empty; an unknown name or an integer input
/// is an error naming it.
std::variant<std::vector<std::string>, compiler::GraphError> resolve_wrt(const compiler::Graph& g,
                                                                        const std::vector<std::string>& wrt);

/// Composites kept as one node because a rule of the table differentiates
/// them; the others are expanded by compiler::decompose.
compiler::GraphResult decompose_for(const compiler::Graph& g, const std::function<bool(const std::string&)>& has_rule);

}  // namespace stax::autodiff
