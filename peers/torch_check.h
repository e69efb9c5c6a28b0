// PyTorch as a peer, checked without tolerances.
//
// Eager, op by op: every node of a graph (docs/graph-format.md) is lowered
// alone and our reference of it is applied to *PyTorch's own* inputs of that
// node (its outputs of the nodes before, `python -m stax_torch trace`), so a
// discrepancy is localized to one op. How a node is judged is a property of
// PyTorch's kernel for the aten op, so it is a table keyed by the op
// (`node_class`):
//
//  - exact: IEEE operations, views, copies, casts, comparisons, selections,
//    max/min/arg reductions: the same bits as our interpreter (NaN payloads
//    aside; ±0 distinguished);
//  - torch-sum: float sums: the same bits as our interpreter under the
//    `torch-sum` transform (PyTorch's CPU summation order, one thread); a sum
//    the transform does not cover is judged as an enclosure;
//  - enclosure: everything else (library functions, matmuls, composite ops):
//    inside the faithful enclosure of our decomposition of the op
//    (semantics/faithful.h) under a model of PyTorch's library
//    (FaithfulModel::pytorch_cpu).
//
// Compiled (Inductor), whole graph: the compiled outputs must lie in the
// faithful enclosure of the whole graph on its inputs; so must eager's.
//
// Anything else is a finding, with the node, the element and both values.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/graph.h"
#include "semantics/faithful.h"
#include "semantics/tensor.h"

namespace stax::peers {

enum class NodeClass { Exact, TorchSum, Enclosure };
std::string_view class_name(NodeClass c);
/// How PyTorch's kernel of this overload is judged (the table above).
NodeClass node_class(const std::string& op);

struct Finding {
  std::string node;   ///< the node (eager) or the output (compiled)
  std::string op;     ///< its overload ("" for a compiled output)
  std::string cls;    ///< exact, torch-sum, enclosure, shape
  std::string kind;   ///< "sign of zero" (±0 against ∓0), "NaN" (one side only), "value", "shape"
  std::vector<int64_t> index;
  std::string theirs;  ///< PyTorch's value (bits for floats)
  std::string ours;    ///< our bits, or the enclosure
  // The same, as numbers (reproducers): PyTorch's value; what is allowed:
  // exactly `ours_value` (exact classes), or [lo, hi] and NaN when `nan_ok`.
  double theirs_value = 0;
  bool exact = true;
  double ours_value = 0;
  double lo = 0, hi = 0;
  bool nan_ok = false;
  std::string str() const;
};

struct NodeReport {
  std::string node, op;
  std::string cls;          ///< the class it was judged by
  int64_t elements = 0;
  int64_t outside = 0;      ///< elements that are findings
  double max_ulps = 0;      ///< PyTorch against our IEEE result, in ULPs of the dtype (floats)
  int64_t differ = 0;       ///< elements whose bits differ from our IEEE result
  double max_width = 0;     ///< enclosures: the widest finite one, in ULPs (grid steps) of the dtype
  double median_width = 0;  ///< enclosures: the median width of the finite ones, in ULPs
  std::string note;         ///< why a class was changed, or why it was not checked
  bool checked = true;
};

struct Options {
  sem::FaithfulModel model = sem::FaithfulModel::pytorch_cpu();
  int64_t threads = 1;          ///< torch.set_num_threads of the trace (torch-sum's threads=)
  int64_t max_findings = 10;    ///< listed per node/output; all are counted
  /// Tensors whose PyTorch layout is not contiguous (a view's strides):
  /// their sums are not in torch-sum's order, so they are judged as enclosures.
  std::set<std::string> noncontiguous;
};

/// Reads a trace's trace.json (`python -m stax_torch trace`): the thread count
/// and the non-contiguous tensors. An error message on a malformed file.
std::optional<std::string> read_trace_meta(const std::string& file, Options& opt);

/// Tensors by name: the graph's inputs, and PyTorch's outputs.
using TensorMap = std::map<std::string, sem::Tensor>;

struct Report {
  std::vector<NodeReport> nodes;      ///< eager, one per node
  std::vector<NodeReport> outputs;    ///< compiled and eager final outputs against the whole-graph enclosure
  std::vector<Finding> findings;
  std::optional<std::string> indeterminate;  ///< the whole-graph enclosure decided nothing
  std::string model;                         ///< FaithfulModel::describe()
  int64_t finding_count = 0;                 ///< every finding, listed or not
  nlohmann::json to_json() const;
  std::string text() const;
};

/// Eager, op by op. `inputs` are the graph's inputs, `eager` PyTorch's output
/// of each node (a missing node is reported as not checked). Throws
/// sem::ResourceError on oversized tensors.
void check_eager(const compiler::Graph& g, const TensorMap& inputs, const TensorMap& eager, const Options& opt,
                 Report& r);

/// A peer's values of a graph's outputs: `who` ("compiled", "eager") names
/// them in the report.
struct PeerOutputs {
  std::string who;
  TensorMap outputs;
};

/// Whole graph: each peer's outputs (named by graph output) against the
/// faithful enclosure of the graph, evaluated once for all of them.
void check_outputs(const compiler::Graph& g, const TensorMap& inputs, const std::vector<PeerOutputs>& peers,
                   const Options& opt, Report& r);
/// One peer.
void check_outputs(const compiler::Graph& g, const TensorMap& inputs, const TensorMap& outputs,
                   const std::string& who, const Options& opt, Report& r);

/// DIR/NAME.npy for each name into `out`: a missing file is skipped when
/// `optional`, else an error; an unreadable one is an error (the message).
std::optional<std::string> read_tensors(const std::filesystem::path& dir, const std::vector<std::string>& names,
                                        bool optional, TensorMap& out);

}  // namespace stax::peers
