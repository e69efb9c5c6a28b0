// The rematerialization network of §5.4 (Definition 5.2) built from a
// joint graph (5.3): one entry per forward value (the primals included) with
// its bytes b(v), distance d(v), factor β(v), capacity c(v), whether it is in
// U (must be computed in the forward, with the rule that put it there) and in
// B (read by the backward).
//
// Reconstructed equation (docs/design.md §7): c(v) = β(v)·⌊b(v)·1.1^d(v)⌋, d clamped
// to [1, 100]. Our readings, stated once:
// - d(v): the length of the shortest data path from v to a backward node
//   ("forward steps between v and its first backward reader"): 1 when a
//   backward node reads v, 100 when no path reaches the backward (Table 5.1's
//   gelu).
// - β(v) = 1 when v is written to memory in the forward anyway: a forward
//   output, the result of a non-fusible op (mm, cat, random), or read by a
//   forward user that cannot fuse with it; else 2.
// - the primals are inputs of both graphs: in U, capacity 0 (Table 5.1 leaves
//   them out; a zero-capacity split edge is the same network).
// - U: rule 1 (expensive or random op), rule 2 (a backward user, seen
//   through backward views, cannot fuse with it), rule 3 (a reduction with
//   4·b(v) < bytes read), and the two extra rules: read near and far (a
//   fusible forward user placed after the first unfusible op downstream of
//   v's other users), end of a fusible chain longer than 100 forward steps.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "autodiff/joint_graph.h"
#include "compiler/graph.h"
#include "remat/op_class.h"
#include "semantics/ir.h"

namespace stax::remat {

/// Types of the forward values (primals and forward nodes) by name.
using TypeMap = std::map<std::string, sem::TensorType>;

/// The types of every forward value, by lowering the forward part of the
/// joint graph (compiler::lower_graph, eager). Errors name the node.
std::variant<TypeMap, compiler::GraphError> forward_types(const autodiff::JointGraph& jg);

constexpr int kMaxDistance = 100;      ///< d is clamped to [1, 100]
constexpr int kLongFusibleChain = 100; ///< extra rule: forced save past this many fusible steps

struct Value {
  std::string name;
  std::string op;  ///< empty for a primal
  OpClass cls = OpClass::Pointwise;
  bool primal = false;
  int fw_order = 0;            ///< position among the forward values
  sem::TensorType type;
  int64_t bytes = 0;           ///< b(v)
  int64_t input_bytes = 0;     ///< bytes of its tensor operands
  int distance = kMaxDistance; ///< d(v), clamped
  int beta = 2;                ///< β(v)
  int64_t capacity = 0;        ///< c(v); kInfinite when not saveable
  bool forward_output = false;
  std::vector<std::string> u_reasons;  ///< why v ∈ U (empty: not in U)
  bool in_b = false;                   ///< v ∈ B: a backward node (or output) reads it
  std::vector<int> preds;              ///< forward values it reads (indices, deduplicated)
  std::vector<int> fw_users;           ///< forward values that read it
  bool in_u() const { return !u_reasons.empty(); }
};

constexpr int64_t kInfinite = INT64_MAX;

struct Network {
  std::vector<Value> values;  ///< forward values in topological order, primals first
  std::unordered_map<std::string, int> index;
  const Value& at(const std::string& n) const { return values[size_t(index.at(n))]; }
};

struct NetworkOptions {
  /// Values that may not be saved (their split edge is infinite): a test
  /// hook for the text's "no finite cut" fallback.
  std::vector<std::string> unsaveable;
};

/// Builds the network. Errors name the node: an unknown operator, a forward
/// node reading a backward value or a tangent, a forward value without a type.
std::variant<Network, compiler::GraphError> build_network(const autodiff::JointGraph& jg, const TypeMap& types,
                                                          const NetworkOptions& opt = {});

}  // namespace stax::remat
