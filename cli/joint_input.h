// What `stax partition` and `stax train-step` read first: a joint graph (or a
// forward graph, differentiated first by reverse mode as `stax grad` does),
// the strategy named on the command line, and the graph's rematerialization
// network (§5.4); with --memory-budget, the budgeted schedules (remat/
// budget_plan.h).
#pragma once

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "autodiff/joint_graph.h"
#include "autodiff/vjp.h"
#include "remat/budget_joint.h"
#include "remat/budget_plan.h"
#include "remat/network.h"
#include "remat/partition.h"

namespace stax::cli {

struct JointInput {
  autodiff::JointGraph graph;
  remat::Network net;
  remat::Strategy strategy;
  bool from_forward = false;  ///< the file was a forward graph: reverse mode ran first
};

/// A graph file without phases (no node has "phase", no "primals") is a
/// forward graph: its joint graph is built by reverse mode (every float
/// input differentiated). Anything else is read as a joint graph.
inline std::variant<autodiff::JointGraph, compiler::GraphError> read_joint_or_forward(const std::string& path,
                                                                                     bool* from_forward) {
  *from_forward = false;
  std::ifstream f(path);
  if (!f) return autodiff::read_joint_graph(path);  // its message names the file
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  bool forward = !j.is_discarded() && j.is_object() && !j.contains("primals") && j.contains("nodes") && j["nodes"].is_array();
  if (forward)
    for (const nlohmann::json& n : j["nodes"])
      if (n.is_object() && n.contains("phase")) forward = false;
  if (!forward) return autodiff::parse_joint_graph(text, path);
  auto g = compiler::parse_graph(text, path);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) return *e;
  *from_forward = true;
  return autodiff::build_joint_graph(std::get<compiler::Graph>(g));
}

/// Prints the error and returns nullopt (the caller exits 2) on a bad
/// strategy name or a graph that is neither a joint graph nor a
/// differentiable forward graph.
inline std::optional<JointInput> read_joint_input(const std::string& path, const std::string& strategy_name) {
  auto strategy = remat::parse_strategy(strategy_name);
  if (!strategy) {
    std::cerr << "error: --strategy: unknown strategy '" << strategy_name << "' (min-cut, save-all, recompute-all)\n";
    return std::nullopt;
  }
  bool from_forward = false;
  auto jr = read_joint_or_forward(path, &from_forward);
  if (auto* e = std::get_if<compiler::GraphError>(&jr)) {
    std::cerr << e->str() << "\n";
    return std::nullopt;
  }
  auto& jg = std::get<autodiff::JointGraph>(jr);
  auto types = remat::forward_types(jg);
  if (auto* e = std::get_if<compiler::GraphError>(&types)) {
    std::cerr << e->str() << "\n";
    return std::nullopt;
  }
  auto nr = remat::build_network(jg, std::get<remat::TypeMap>(types));
  if (auto* e = std::get_if<compiler::GraphError>(&nr)) {
    std::cerr << e->str() << "\n";
    return std::nullopt;
  }
  return JointInput{std::move(jg), std::move(std::get<remat::Network>(nr)), *strategy, from_forward};
}

/// The options `stax partition` and `stax train-step` share: the graph, the
/// strategy, the memory budget and its solver.
inline void add_joint_options(CLI::App* c, std::string& graph, std::string& strategy,
                              std::optional<int64_t>& memory_budget, std::string& solver) {
  c->add_option("graph", graph,
                "joint graph file (autodiff/joint_graph.h, docs/graph-format.md), or a forward graph (no \"phase\" "
                "fields: differentiated first, as stax grad)")
      ->required();
  c->add_option("--strategy", strategy, "min-cut, save-all or recompute-all");
  c->add_option("--memory-budget", memory_budget,
                "peak live bytes (primals and tangents not counted): store-all, min-cut, heuristic and exact node "
                "schedules compared, the cheapest that fits chosen (remat/budget_plan.h); below the minimum: exit 2 "
                "naming it")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--solver", solver,
                "with --memory-budget: exact (Checkmate's program, Z3), heuristic (greedy eviction) or auto (exact up "
                "to 40 nodes, and the heuristic)");
}

struct BudgetInput {
  remat::JointBudget joint;
  remat::BudgetPlan plan;
};

/// The strategies under `budget` (min-cut: the min-cut partition's
/// schedule). Prints the error and returns nullopt (exit 2) on a bad solver
/// name or a graph whose nodes do not lower; a budget below the minimum is
/// returned (plan.chosen() is null) for the caller to report.
inline std::optional<BudgetInput> plan_joint_budget(const JointInput& in, int64_t budget, const std::string& solver) {
  auto s = remat::parse_solver(solver);
  if (!s) {
    std::cerr << "error: --solver: unknown solver '" << solver << "' (exact, heuristic, auto)\n";
    return std::nullopt;
  }
  auto jb = remat::joint_budget(in.graph);
  if (auto* e = std::get_if<compiler::GraphError>(&jb)) {
    std::cerr << e->str() << "\n";
    return std::nullopt;
  }
  remat::JointBudget& b = std::get<remat::JointBudget>(jb);
  std::optional<remat::NodeSchedule> mc;
  auto p = remat::partition(in.graph, in.net, remat::Strategy::MinCut);
  if (auto* part = std::get_if<remat::Partition>(&p)) mc = remat::partition_schedule(b, *part);  // the network is built
  remat::PlanOptions po;
  po.solver = *s;
  remat::BudgetPlan plan = remat::plan_budget(b.dag, mc, budget, po);
  return BudgetInput{std::move(b), std::move(plan)};
}

}  // namespace stax::cli
