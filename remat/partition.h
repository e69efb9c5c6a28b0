// The partition of a joint graph into a forward graph and a backward graph
// (§5.4–5.6). The forward graph computes the forward outputs and the
// saved values; the backward graph takes the saved values, the tangents and
// the primals it reads, recomputes the other forward values it needs, and
// returns the gradients.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/joint_graph.h"
#include "compiler/graph.h"
#include "remat/min_cut.h"
#include "remat/network.h"

namespace stax::remat {

enum class Strategy {
  MinCut,        ///< §5.4: the least-capacity feasible saved set
  SaveAll,       ///< save every forward value the backward reads; recompute nothing
  RecomputeAll,  ///< save nothing: the backward recomputes every forward value it needs from the primals
};
std::string_view strategy_name(Strategy s);
std::optional<Strategy> parse_strategy(std::string_view s);

struct Partition {
  Strategy strategy = Strategy::MinCut;
  bool fell_back = false;                ///< min cut: no finite cut, so everything is saved
  std::vector<std::string> saved;        ///< forward values (not primals) the forward hands to the backward
  std::vector<std::string> primals_read; ///< primals the backward reads
  std::vector<std::string> recomputed;   ///< forward nodes the backward recomputes
  int64_t saved_bytes = 0;
  compiler::Graph forward, backward;
};

/// Splits the joint graph given a saved set (forward value names; primals in
/// it are ignored: they are inputs of both graphs anyway).
std::variant<Partition, compiler::GraphError> split(const autodiff::JointGraph& jg, const Network& net,
                                                    const std::vector<std::string>& saved, Strategy s);

/// The saved set of a strategy. MinCut runs min_cut() and returns it in `cut`
/// (its `error` set on a failed cross-check).
std::vector<std::string> saved_set(const Network& net, Strategy s, MinCut* cut = nullptr);

/// saved_set + split.
std::variant<Partition, compiler::GraphError> partition(const autodiff::JointGraph& jg, const Network& net, Strategy s,
                                                        MinCut* cut = nullptr);

}  // namespace stax::remat
