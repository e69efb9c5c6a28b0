// Node schedules under a peak-memory budget (beyond the text: §5.8's
// partitioner accepts a memory budget and ignores it). A schedule is a list
// of events `compute v` / `free v` over a plain-data DAG; the checker replays
// it, rejects it at the first illegal event, and measures peak live bytes and
// compute cost. The same DAG serves joint graphs (budget_joint.h) and chains
// at the granularity of phi steps (budget_chain.h).
//
// Memory convention: the graph's inputs (primals and tangents) are the
// caller's and not counted; a node's result counts from its `compute` event
// to its `free` event. While a node is computed its operands are live and its
// result is allocated: the live bytes after a compute event are compared with
// the budget. At the end every output node must be live (outputs may stay
// live; nothing else is required to be freed, but store-all and the solvers
// free everything else).
//
// Cost: total = sum of the costs of every compute event; recompute = total
// minus the cost of computing every node once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stax::remat {

struct BudgetNode {
  std::string name;
  int64_t bytes = 0;
  int64_t cost = 1;
  std::vector<int> inputs;  ///< operand nodes (indices < this one's); graph inputs are not nodes
  bool output = false;
};

/// Nodes in a topological order (inputs before users).
struct BudgetDag {
  std::vector<BudgetNode> nodes;
  size_t size() const { return nodes.size(); }
  int64_t cost_once() const;
  /// "node 3 reads node 5" when an operand is not earlier, else "".
  std::string malformed() const;
};

struct Event {
  enum Kind { Compute, Free };
  Kind kind;
  int node;
  bool operator==(const Event&) const = default;
};
using NodeSchedule = std::vector<Event>;

std::string event_text(const BudgetDag& d, const Event& e);

struct ScheduleCheck {
  bool ok = false;
  int64_t at = -1;     ///< index of the first offending event (size(): the end)
  std::string error;   ///< why it was rejected
  int64_t peak_bytes = 0;
  int64_t total_cost = 0;
  int64_t recompute_cost = 0;
  std::vector<int> computes;  ///< per node: compute events
  /// Nodes computed more than once.
  std::vector<int> recomputed() const;
};

/// Legal: each computed node's operands are live and the node itself is not
/// (a second compute while live is rejected); a freed node is live; live
/// bytes never exceed `budget` (nullopt: no budget); every output is live at
/// the end. Node indices out of range are rejected too.
ScheduleCheck check_node_schedule(const BudgetDag& d, const NodeSchedule& s, std::optional<int64_t> budget);

/// Store-all: every node once in topological order, each freed after its last
/// reader (outputs kept).
NodeSchedule store_all_schedule(const BudgetDag& d);

/// A compute order (nodes may repeat: recomputation) turned into events: each
/// computed value is freed right after its last reader before the node's next
/// compute (or at once if nothing reads it), outputs kept after their last
/// compute. The order must compute each operand before its reader.
NodeSchedule schedule_from_order(const BudgetDag& d, const std::vector<int>& order);

/// The greedy heuristic (dynamic tensor rematerialization, Kirisame et al.
/// 2021): the nodes in topological order; before a node is computed, its
/// evicted operands are recomputed (recursively) and, while the budget would
/// be exceeded, the live value with the least projected cost / (bytes *
/// staleness) that is not pinned (projected: its cost plus that of the
/// non-live ancestors its recomputation would need, DTR's h) (an operand of a compute in progress) is evicted; a value is
/// freed once every reader has been computed (not an output). nullopt when it
/// cannot meet the budget (every live value pinned).
std::optional<NodeSchedule> heuristic_schedule(const BudgetDag& d, int64_t budget);

/// Lower bounds on any schedule's peak: the most bytes one compute needs
/// (node + distinct operand nodes) and the outputs' total.
int64_t peak_lower_bound(const BudgetDag& d);
/// The least budget at which heuristic_schedule succeeds (binary search
/// between peak_lower_bound and store-all's peak; the heuristic is not
/// monotone in the budget, so this is the least found, checked).
int64_t heuristic_least_budget(const BudgetDag& d);

nlohmann::json schedule_json(const BudgetDag& d, const NodeSchedule& s);

}  // namespace stax::remat
