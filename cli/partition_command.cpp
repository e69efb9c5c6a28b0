// `stax partition` (docs/design.md §8; §5.4–5.5): the min-cut partition of a
// joint graph. Prints the rematerialization network as Table 5.1 (value,
// bytes, d, β, capacity, U, B), the max flow of Edmonds–Karp and of
// Boykov–Kolmogorov, the cut, the saved set against the two baseline
// strategies, the forward and backward graphs, and the check that the two
// graphs run in turn reproduce the joint graph's bits.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/joint_input.h"
#include "cli/subcommands.h"
#include "remat/partition.h"
#include "remat/verify.h"
#include "semantics/random_inputs.h"

namespace stax::cli {

using nlohmann::json;

namespace {

std::string capacity_text(int64_t c) { return c == remat::kInfinite ? "inf" : std::to_string(c); }

json network_json(const remat::Network& net) {
  json rows = json::array();
  for (const remat::Value& v : net.values)
    rows.push_back({{"value", v.name},
                    {"op", v.primal ? "primal" : v.op},
                    {"bytes", v.bytes},
                    {"d", v.distance},
                    {"beta", v.beta},
                    {"capacity", v.capacity == remat::kInfinite ? json("inf") : json(v.capacity)},
                    {"U", v.u_reasons},
                    {"B", v.in_b}});
  return rows;
}

std::string network_text(const remat::Network& net) {
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %-22s %12s %4s %5s %14s  %-3s %-3s\n", "value", "op", "bytes", "d", "beta",
                "capacity", "U", "B");
  os << line;
  for (const remat::Value& v : net.values) {
    std::snprintf(line, sizeof line, "%-20s %-22s %12lld %4d %5d %14s  %-3s %-3s\n", v.name.c_str(),
                  v.primal ? "(primal)" : v.op.c_str(), (long long)v.bytes, v.distance, v.beta,
                  capacity_text(v.capacity).c_str(), v.in_u() ? "yes" : "-", v.in_b ? "yes" : "-");
    os << line;
  }
  for (const remat::Value& v : net.values)
    if (v.in_u() && !v.primal)
      for (const std::string& r : v.u_reasons) os << "  " << v.name << " in U: " << r << "\n";
  return os.str();
}

/// A graph as compact JSON: the inputs on one line, one line per node.
std::string graph_text(const compiler::Graph& g) {
  json j = compiler::graph_to_json(g);
  std::string s = "  inputs: " + j["inputs"].dump() + "\n";
  for (const json& n : j["nodes"]) s += "  " + n.dump() + "\n";
  return s + "  outputs: " + j["outputs"].dump() + "\n";
}

struct StrategyRow {
  remat::Strategy s;
  size_t saved = 0;
  int64_t bytes = 0;
  size_t recomputed = 0;
};

}  // namespace

int partition_command(const PartitionCommandOptions& o) {
  auto in = read_joint_input(o.graph, o.strategy);
  if (!in) return 2;
  const autodiff::JointGraph& jg = in->graph;
  const remat::Network& net = in->net;
  const remat::Strategy strategy = in->strategy;
  remat::MinCut cut = remat::min_cut(net);
  int rc = 0;
  std::optional<BudgetInput> budget;
  if (o.memory_budget) {
    budget = plan_joint_budget(*in, *o.memory_budget, o.solver);
    if (!budget) return 2;
  }
  const bool below_minimum = budget && !budget->plan.chosen();
  // The chosen budgeted schedule run node by node (interpreter) against the
  // joint graph run whole: same bits on every output.
  std::string budget_check;
  if (budget && !below_minimum && o.verify) {
    sem::Program ins;
    for (const auto& i : jg.graph.inputs) ins.inputs.push_back({i.name, i.type, {}});
    sem::Inputs x = sem::random_inputs(ins, o.seed, sem::RandomOptions{0.0});
    remat::Runner interp = [](const sem::Program& p, const sem::Inputs& v) { return sem::eval_ieee(p, v); };
    auto r = remat::run_node_schedule(jg, budget->joint, budget->plan.chosen()->schedule, x, interp);
    if (auto* t = std::get_if<remat::Tensors>(&r)) {
      auto d = remat::differs_from_joint(jg, x, *t);
      budget_check = d ? "counterexample: " + *d : "same bits on every output";
      if (d) rc = 1;
    } else {
      budget_check = std::holds_alternative<sem::Failure>(r) ? "the schedule fails: " + std::get<sem::Failure>(r).str()
                                                             : "error: " + std::get<remat::StepError>(r).message;
      rc = 1;
    }
  }

  std::vector<StrategyRow> rows;
  std::optional<remat::Partition> chosen;
  for (remat::Strategy s : {remat::Strategy::MinCut, remat::Strategy::SaveAll, remat::Strategy::RecomputeAll}) {
    auto pr = remat::partition(jg, net, s);
    if (auto* e = std::get_if<compiler::GraphError>(&pr)) {
      std::cerr << e->str() << "\n";
      return 2;
    }
    const remat::Partition& p = std::get<remat::Partition>(pr);
    rows.push_back({s, p.saved.size(), p.saved_bytes, p.recomputed.size()});
    if (s == strategy) chosen = p;
  }
  remat::VerifyResult vr;
  if (o.verify) vr = remat::verify_partition(jg, *chosen, {o.trials, o.seed});

  if (!cut.error.empty()) rc = 1;
  else if (o.verify && vr.status == remat::VerifyStatus::Counterexample) rc = 1;
  else if (o.verify && vr.status == remat::VerifyStatus::NotCheckable) rc = 3;

  std::vector<std::string> cut_edges;
  for (int i : cut.saved) cut_edges.push_back(net.values[size_t(i)].name + "_in -> " + net.values[size_t(i)].name + "_out");

  if (o.json) {
    json j;
    j["graph"] = o.graph;
    j["strategy"] = remat::strategy_name(strategy);
    j["from_forward_graph"] = in->from_forward;
    if (budget) {
      j["memory_budget"] = budget->plan.json(budget->joint.dag);
      if (!budget_check.empty()) j["memory_budget"]["check"] = budget_check;
    }
    j["network"] = network_json(net);
    j["flow"] = {{"edmonds_karp", cut.flow_ek}, {"boykov_kolmogorov", cut.flow_bk}, {"finite", cut.finite},
                 {"components", cut.components}, {"vertices", cut.vertices}, {"edges", cut.edges}};
    j["cut"] = cut_edges;
    j["cross_check"] = cut.error.empty() ? json("ok") : json(cut.error);
    j["saved"] = chosen->saved;
    j["saved_bytes"] = chosen->saved_bytes;
    j["primals_read"] = chosen->primals_read;
    j["recomputed"] = chosen->recomputed;
    j["fell_back"] = chosen->fell_back;
    j["strategies"] = json::array();
    for (const StrategyRow& r : rows)
      j["strategies"].push_back({{"strategy", remat::strategy_name(r.s)}, {"saved", r.saved}, {"saved_bytes", r.bytes},
                                 {"recomputed_ops", r.recomputed}});
    j["forward"] = compiler::graph_to_json(chosen->forward);
    j["backward"] = compiler::graph_to_json(chosen->backward);
    if (o.verify)
      j["verification"] = {{"status", remat::verify_status_name(vr.status)}, {"trials", vr.trials}, {"message", vr.message}};
    std::cout << j.dump(2) << "\n";
    if (below_minimum) {
      std::cerr << "error: " << budget->plan.below_minimum() << "\n";
      return 2;
    }
    return rc;
  }
  if (in->from_forward)
    std::cout << "a forward graph (no phases): its joint graph by reverse mode first, as stax grad\n\n";
  std::cout << "rematerialization network (Definition 5.2 of the text, Table 5.1): " << net.values.size() << " values, "
            << cut.vertices << " vertices, " << cut.edges << " edges\n"
            << network_text(net) << "\n";
  if (!cut.finite) std::cout << "no finite cut: some value the backward needs can be neither saved nor recomputed\n";
  std::cout << "max flow: Edmonds-Karp " << cut.flow_ek << ", Boykov-Kolmogorov " << cut.flow_bk << " ("
            << cut.components << " components)\n";
  std::cout << "cut:";
  for (const std::string& e : cut_edges) std::cout << " " << e << ";";
  std::cout << "\ncross-check: " << (cut.error.empty() ? "ok (same flow, cut capacity = flow, Proposition 5.1 holds)" : cut.error)
            << "\n\n";
  std::cout << "strategy " << remat::strategy_name(strategy) << (chosen->fell_back ? " (no finite cut: save everything)" : "")
            << ": saved";
  for (const std::string& s : chosen->saved) std::cout << " " << s;
  std::cout << " (" << chosen->saved_bytes << " bytes); the backward reads the primals";
  for (const std::string& s : chosen->primals_read) std::cout << " " << s;
  std::cout << "; recomputes";
  for (const std::string& s : chosen->recomputed) std::cout << " " << s;
  std::cout << (chosen->recomputed.empty() ? " nothing" : "") << "\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %8s %14s %16s\n", "strategy", "saved", "saved bytes", "recomputed ops");
  std::cout << line;
  for (const StrategyRow& r : rows) {
    std::snprintf(line, sizeof line, "%-14s %8zu %14lld %16zu\n", std::string(remat::strategy_name(r.s)).c_str(),
                  r.saved, (long long)r.bytes, r.recomputed);
    std::cout << line;
  }
  std::cout << "\nforward graph:\n" << graph_text(chosen->forward);
  std::cout << "\nbackward graph:\n" << graph_text(chosen->backward);
  if (o.verify)
    std::cout << "\nverification (forward then backward vs the joint graph, class exact): "
              << remat::verify_status_name(vr.status) << " (" << vr.trials << " input sets)"
              << (vr.message.empty() ? "" : ": " + vr.message) << "\n";
  if (budget) std::cout << "\n" << budget->plan.text(budget->joint.dag);
  if (!budget_check.empty())
    std::cout << "the chosen schedule run node by node (interpreter) vs the joint graph: " << budget_check << "\n";
  if (below_minimum) {
    std::cerr << "error: " << budget->plan.below_minimum() << "\n";
    return 2;
  }
  return rc;
}

Subcommand register_partition(CLI::App& app) {
  auto o = std::make_shared<PartitionCommandOptions>();
  auto* c = app.add_subcommand("partition",
                               "Min-cut partition of a joint graph into forward and backward (§5.4–5.5); with "
                               "--memory-budget, node schedules under a peak-memory budget");
  add_joint_options(c, o->graph, o->strategy, o->memory_budget, o->solver);
  c->add_flag("--json", o->json, "one JSON document");
  c->add_flag("!--no-verify", o->verify, "skip running the two graphs against the joint graph");
  c->add_option("--trials", o->trials, "input sets for the verification")->check(CLI::Range(1, 100000));
  c->add_option("--seed", o->seed, "input seed for the verification");
  return {c, [o] { return partition_command(*o); }};
}

}  // namespace stax::cli
