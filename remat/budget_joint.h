// The memory budget on joint graphs (autodiff/joint_graph.h; beyond the
// text): the joint graph as a budget DAG, the min-cut partition's
// schedule, and an executor that runs a node schedule for real — each
// computed node lowered on its own (a one-node graph, the compiler's CPU
// policies) and run through a Runner — whose outputs (forward outputs and
// gradients) must equal the joint graph run whole, bit for bit.
//
// Node sizes: the bytes of the node's result type. Node cost: the Count
// domain's op count of the node's eager lowering (autodiff::program_ops, as
// `stax grad --cost`), plus one for the kernel launch, so a view is not free.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <variant>

#include "autodiff/joint_graph.h"
#include "remat/budget_schedule.h"
#include "remat/partition.h"
#include "remat/train_step.h"

namespace stax::remat {

struct JointBudget {
  BudgetDag dag;  ///< one node per joint-graph node, in the graph's order
  std::unordered_map<std::string, int> index;
  std::map<std::string, sem::TensorType> types;  ///< every input and node
  std::vector<sem::Program> programs;            ///< per node: its one-node graph, lowered (policies)
};

/// Errors name the node (a joint graph that does not lower, a node whose
/// one-node graph does not lower).
std::variant<JointBudget, compiler::GraphError> joint_budget(const autodiff::JointGraph& jg);

/// The partition's schedule: the forward graph's nodes, then the backward
/// graph's (its recomputations included), freed after their last readers.
NodeSchedule partition_schedule(const JointBudget& b, const Partition& p);

/// The min-cut partition's schedule (network, min cut, split, then
/// partition_schedule); nullopt when the network or the split fails.
std::optional<NodeSchedule> min_cut_schedule(const autodiff::JointGraph& jg, const JointBudget& b);

/// Runs the schedule (checked first; an illegal one is a StepError) on the
/// inputs (primals and tangents); returns every output of the joint graph by
/// name. Freed values are dropped, so the runner sees exactly the schedule.
std::variant<Tensors, sem::Failure, StepError> run_node_schedule(const autodiff::JointGraph& jg, const JointBudget& b,
                                                                 const NodeSchedule& s, const sem::Inputs& in,
                                                                 const Runner& run);

/// The joint graph run whole (eager lowering, interpreter) against `got`:
/// the first difference ("grad W differs at [0, 1]: ..."), or nullopt when
/// every output has the same bits. A joint graph that fails or does not
/// lower is a difference too, said so.
std::optional<std::string> differs_from_joint(const autodiff::JointGraph& jg, const sem::Inputs& in, const Tensors& got);

}  // namespace stax::remat
