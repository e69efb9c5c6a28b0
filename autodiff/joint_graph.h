// The joint graph of §5.3 (Algorithm 5.1, Listing 5.2): one operator graph
// holding the forward computation and the backward computation that reverse
// mode derived from it. It is an ordinary compiler::Graph (docs/graph-format.md)
// whose inputs are the primals followed by one `tangents_i` per output, plus a
// phase per node. Backward nodes refer to forward values directly; that is what
// the min-cut partition (§5.4, remat/) decides to save or recompute.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compiler/graph.h"

namespace stax::autodiff {

enum class Phase { Forward, Backward };

struct JointGraph {
  /// Inputs: primals (the forward graph's inputs, renamed `primals_1`, ... only
  /// when the caller asks for Listing 5.2's names) then the tangents
  /// (`tangents_1`, ... one per forward output, same dtype and shape).
  /// Outputs: the forward outputs, then one gradient per differentiated input.
  compiler::Graph graph;
  std::vector<Phase> phase;  ///< parallel to graph.nodes
  std::vector<std::string> primals;
  std::vector<std::string> tangents;
  std::vector<std::string> forward_outputs;
  /// Differentiated input (its name in `graph`) -> the node (or input) holding
  /// its gradient. Inputs not differentiated (integers, not in --wrt, or off
  /// every path to an output) are absent.
  std::map<std::string, std::string> grads;
};

/// JSON: the graph format (docs/graph-format.md) with `"phase": "forward" |
/// "backward"` on every node and the top-level arrays "primals", "tangents",
/// "forward_outputs" and the object "grads". A node without a phase, a primal
/// or tangent that is not an input, or a grad naming an unknown value is an
/// error naming it.
std::variant<JointGraph, compiler::GraphError> parse_joint_graph(std::string_view text, std::string file = "<joint>");
std::variant<JointGraph, compiler::GraphError> read_joint_graph(const std::string& path);
nlohmann::json joint_graph_to_json(const JointGraph& j);

}  // namespace stax::autodiff
