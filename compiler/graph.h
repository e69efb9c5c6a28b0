// Operator-level graphs (§5.1, Listing 5.1) in the JSON format of
// docs/graph-format.md: typed inputs, nodes naming an operator overload
// (`add.Tensor`, `sum.dim_IntList`, ...) with positional args (node names or
// literals) and kwargs, and the outputs. Parsing checks the structure only
// (unique names, references, cycles); operator arity, dtypes and shapes are
// checked by the lowering (lower.h), which is where shapes are inferred.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "semantics/ir.h"

namespace stax::compiler {

struct GraphInput {
  std::string name;
  sem::TensorType type;
};

struct Node {
  std::string name;
  std::string op;         ///< overload name, e.g. "add.Tensor"
  nlohmann::json args;    ///< array; a string is a reference to a node or input
  nlohmann::json kwargs;  ///< object of literals
};

struct Graph {
  std::vector<GraphInput> inputs;
  std::vector<Node> nodes;  ///< in topological order after parse_graph
  std::vector<std::string> outputs;
  std::string file;
  /// Non-empty when the graph came out of the compile path (remat's partition:
  /// the backward graph, which reads the values the forward saved): what it
  /// is. JSON key "compiled". Reverse and forward mode refuse to
  /// differentiate such a graph (a second-order gradient through a compiled
  /// backward, autodiff/README.md).
  std::string compiled;
};

/// A user error in a graph: the node (or input/output) it concerns and what
/// is wrong. `str()` reads "file: node 'add': message".
struct GraphError {
  std::string file;
  std::string node;
  std::string message;
  std::string str() const;
};

using GraphResult = std::variant<Graph, GraphError>;

/// Parses the JSON text. Nodes may be listed in any order; they are sorted
/// topologically (a cycle is an error naming a node on it).
GraphResult parse_graph(std::string_view text, std::string file = "<graph>");
GraphResult read_graph(const std::string& path);

/// The node and input names a node's args reference (in order, nested lists
/// included).
std::vector<std::string> node_refs(const Node& n);

/// Back to JSON (the format of docs/graph-format.md).
nlohmann::json graph_to_json(const Graph& g);

}  // namespace stax::compiler
