// The memory budget for general DAGs (beyond the text): the exact
// solver (Checkmate's integer program, proofs/remat_ilp.h) turned into a node
// schedule, and the strategies side by side under one budget — store-all,
// the min-cut partition's schedule, the greedy heuristic and the exact
// solver — each checked by check_node_schedule.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "proofs/remat_ilp.h"
#include "remat/budget_schedule.h"

namespace stax::remat {

proofs::RematProblem remat_problem(const BudgetDag& d);

/// The events of a solution of the integer program: stage t computes the
/// nodes with R[t][i] in order, frees each value after its last reader in the
/// stage unless it is stored into the next stage, and at the end of the stage
/// frees whatever else is live and not stored.
NodeSchedule schedule_from_solution(const BudgetDag& d, const proofs::RematSolution& s);

struct ExactSchedule {
  proofs::RematSolution solution;
  std::optional<NodeSchedule> schedule;  ///< when solution.status is Optimal
};
ExactSchedule exact_schedule(const BudgetDag& d, int64_t budget, const proofs::RematSolveOptions& o = {});

enum class Solver { Exact, Heuristic, Auto };
std::optional<Solver> parse_solver(std::string_view s);

struct StrategyOutcome {
  std::string name;
  bool ran = false;     ///< false: not applicable or not asked for (note says why)
  bool fits = false;    ///< legal and within the budget
  NodeSchedule schedule;
  ScheduleCheck check;  ///< checked without a budget: the schedule's own peak and cost
  std::string note;
};

struct BudgetPlan {
  int64_t budget = 0;
  StrategyOutcome store_all, min_cut, heuristic, exact;
  /// The cheapest that fits (exact preferred on ties); null: none fits.
  const StrategyOutcome* chosen() const;
  /// The minimum, when nothing fits: a lower bound, the heuristic's least
  /// budget, and the exact model's least peak when the solver finished.
  int64_t lower_bound = 0;
  int64_t heuristic_least = 0;
  std::optional<int64_t> exact_least;
  std::string exact_least_note;
  std::string below_minimum() const;  ///< the error message ("" when something fits)
  nlohmann::json json(const BudgetDag& d) const;
  /// The summary: per strategy peak bytes, cost, recompute cost, whether it
  /// fits; the chosen schedule's recomputed values.
  std::string text(const BudgetDag& d) const;
};

struct PlanOptions {
  Solver solver = Solver::Auto;
  proofs::RematSolveOptions exact;
  /// Auto runs the exact solver up to this many nodes (it always runs the heuristic).
  size_t auto_exact_nodes = 40;
};

/// Runs the strategies under `budget`. `min_cut` is the min-cut partition's
/// schedule when there is one (joint graphs), else nullopt.
BudgetPlan plan_budget(const BudgetDag& d, const std::optional<NodeSchedule>& min_cut, int64_t budget,
                       const PlanOptions& o = {});

}  // namespace stax::remat
