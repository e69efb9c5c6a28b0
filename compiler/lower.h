// Lowering of operator-level graphs to the tensor core language
// (§6.1–6.8). The graph interpreter (6.1) runs each node's lowering rule (6.2,
// ops.cpp) on expressions instead of tensors; shapes and dtypes are inferred
// on the way. Two lowerings share the rules:
// - eager: every node is realized as its own binding. This is a graph's
//   reference semantics.
// - policy: the text's decisions: realization (6.6), layout (6.4), the split
//   of Algorithm 6.1 on GPU targets (6.5), canonicalisation (6.8) and value
//   ranges feeding the in-bounds / int32 obligations (Def. 6.4, Example 6.3).
// Theorem 6.1 says the two agree bit for bit (the split: in the real
// semantics, within its error bound); `stax lower --check` tests exactly that.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/graph.h"
#include "semantics/ir.h"
#include "transforms/transform.h"

namespace stax::compiler {

/// Device properties used by the policies (6.6 thresholds, Algorithm 6.1).
struct Device {
  bool gpu = false;
  int64_t sm = 132;              ///< S: streaming multiprocessors
  int64_t warp = 32;             ///< w
  int64_t threads_per_sm = 2048; ///< T
  std::string str() const;
};
/// "cpu", "gpu", "gpu:sm=N[:warp=W][:threads=T]".
std::variant<Device, std::string> parse_device(std::string_view spec);

/// The realization thresholds of 6.6 for a device.
struct RealizeLimits {
  int64_t max_ops;        ///< op count above which a multi-user value is realized (GPU 30, CPU 50)
  int64_t max_buffers;    ///< buffers read (4)
  int64_t max_acc_reads;  ///< accumulated reads (GPU 8, CPU 12)
  bool expensive_ops;     ///< CPU: exp/log/log10/log1p/log2/sigmoid/tanh realize
  static RealizeLimits of(const Device& d);
};

/// What the realization policy decided for one node, and why.
struct Decision {
  std::string node;
  bool realized = false;
  std::string reason;
};

/// Algorithm 6.1: the number of segments of an inner reduction of length
/// `nr` with `n` outputs on a GPU (1: no split). `why` says which branch.
int64_t split_segments(int64_t nr, int64_t n, const Device& d, std::string* why = nullptr);

/// A kernel's loop nest after canonicalisation (6.8): loops (name, extent,
/// reduction?), the address of each access as text, and the steps taken.
struct LoopNest {
  std::string binding;
  std::vector<std::string> loops;        ///< "x0:[128]", "r:[8192]"
  std::vector<std::string> accesses;     ///< "load primals_1[8192*x0 + r]"
  std::vector<std::string> steps;        ///< what canonicalisation did
};

struct LowerOptions {
  Device device;
  bool eager = false;
};

struct Lowered {
  sem::Program program;    ///< after realization, layout and split (policy), or every node bound (eager)
  sem::Program canonical;  ///< policy: `program` with loops merged (6.8, merge-loops); empty for eager
  xform::SemClass cls = xform::SemClass::Exact;  ///< how it relates to the eager lowering
  std::vector<Decision> decisions;               ///< realization (policy only)
  std::vector<std::string> notes;                ///< layout, split, merges, value ranges, obligations
  std::vector<LoopNest> kernels;                 ///< per binding, before and after canonicalisation
};

/// Non-basis operators expanded by the decomposition table (4.8): softmax,
/// log_softmax, layer_norm, gelu, mean, matmul, ... The result has basis
/// operators only; the last node of each expansion keeps the original name.
std::variant<Graph, GraphError> decompose(const Graph& g);
/// The same, keeping the non-basis operators for which `keep(op)` holds
/// (autodiff keeps those with a derivative rule of their own, e.g. gelu).
std::variant<Graph, GraphError> decompose(const Graph& g, const std::function<bool(const std::string& op)>& keep);

/// Shape and dtype inference node by node with the lowering rules' typing
/// (non-basis operators typed through their expansion). Used by autodiff to
/// type the nodes it emits.
class NodeTyper {
 public:
  explicit NodeTyper(const std::vector<GraphInput>& inputs);
  ~NodeTyper();
  NodeTyper(const NodeTyper&) = delete;
  NodeTyper& operator=(const NodeTyper&) = delete;
  /// Types `n`, whose references must be typed already; the error names it.
  std::optional<GraphError> add(const Node& n);
  void add_input(const GraphInput& in);
  std::optional<sem::TensorType> type(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::variant<Lowered, GraphError> lower_graph(const Graph& g, const LowerOptions& opt);

/// The lowered program with its decisions as leading `#` comments (it parses
/// as .stx).
std::string lowered_text(const Lowered& l, const Device& d);
nlohmann::json lowered_json(const Lowered& l, const Device& d);

/// The operator overloads the lowering knows, with their positional arity.
struct OpSignature {
  std::string name;
  int min_args, max_args;
  bool basis;  ///< false: expanded by decompose()
};
const std::vector<OpSignature>& op_signatures();

}  // namespace stax::compiler
