// Forward-mode automatic differentiation over operator graphs (§5.7):
// each value carries a tangent `dz = J · dx` computed alongside it, one JVP
// rule per operator in a table keyed by overload name (jvp_rules.cpp). The
// JVP graph is an ordinary operator graph: inputs primals then one tangent
// per differentiated input, outputs the forward outputs then their tangents.
// Like the VJP table, the JVP table is a value a test can copy and override.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/emitter.h"
#include "autodiff/joint_graph.h"
#include "compiler/graph.h"

namespace stax::autodiff {

/// What a JVP rule sees: the forward node and the tangents of its tensor
/// arguments ("" where the tangent is zero: the argument does not depend on
/// a differentiated input). A rule returns the output's tangent ("" for
/// zero); broadcasting and dtype are fixed up after it (Emitter::expand_to).
class JvpContext {
 public:
  JvpContext(const compiler::Node& n, Emitter& em, std::function<std::string(const std::string&)> tangent_of)
      : node(n), em(em), tangent_of_(std::move(tangent_of)) {}
  const compiler::Node& node;
  Emitter& em;

  const std::string& out() const { return node.name; }
  bool is_tensor(size_t i) const { return i < node.args.size() && node.args[i].is_string(); }
  std::string arg(size_t i) const { return node.args.at(i).get<std::string>(); }
  sem::TensorType type(const std::string& name) const { return em.type(name); }
  sem::TensorType out_type() const { return em.type(node.name); }
  /// The tangent of tensor argument i ("" when zero or not a tensor).
  std::string tangent(size_t i) const { return is_tensor(i) ? tangent_of_(arg(i)) : std::string(); }
  std::string tangent_of(const std::string& name) const { return tangent_of_(name); }
  /// The tangent of argument i, zeros of its type when it has none.
  std::string tangent_or_zeros(size_t i) {
    std::string t = tangent(i);
    return t.empty() ? em.zeros(type(arg(i))) : t;
  }
  std::string emit(const std::string& op, nlohmann::json args, nlohmann::json kwargs = nlohmann::json::object()) {
    return em.emit(op, std::move(args), std::move(kwargs));
  }

 private:
  std::function<std::string(const std::string&)> tangent_of_;
};

using JvpRule = std::function<std::string(JvpContext&)>;
using JvpRules = std::map<std::string, JvpRule>;
const JvpRules& default_jvp_rules();

struct JvpGraph {
  compiler::Graph graph;      ///< inputs: primals then `tangents`; outputs: forward outputs then `tangent_outputs`
  std::vector<Phase> phase;   ///< Forward for primal nodes, Backward for tangent nodes
  std::vector<std::string> primals, wrt, tangents;  ///< tangents[k]: the tangent input of wrt[k]
  std::vector<std::string> forward_outputs, tangent_outputs;
};

struct JvpOptions {
  std::vector<std::string> wrt;  ///< empty: every float input
  const JvpRules* rules = nullptr;
};

std::variant<JvpGraph, compiler::GraphError> build_jvp_graph(const compiler::Graph& g, const JvpOptions& opt = {});
std::string jvp_listing(const JvpGraph& j);
nlohmann::json jvp_graph_to_json(const JvpGraph& j);

}  // namespace stax::autodiff
