// `stax lower` (docs/design.md §8; §6.1–6.8): an operator-level graph to the core
// language with the policies of §6.1–6.8; `--check` compares the policy
// lowering (and its loop-merged form) with the eager lowering, the graph's
// reference semantics, through the no-tolerance oracle (Theorem 6.1).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/subcommands.h"
#include "compiler/lower.h"
#include "oracle/checker.h"
#include "semantics/printer.h"

namespace stax::cli {

int lower_command(const LowerCommandOptions& o) {
  auto dev = compiler::parse_device(o.device);
  if (auto* e = std::get_if<std::string>(&dev)) {
    std::cerr << "error: --device: " << *e << "\n";
    return 2;
  }
  const compiler::Device& d = std::get<compiler::Device>(dev);
  auto g = compiler::read_graph(o.graph);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  auto policy = compiler::lower_graph(std::get<compiler::Graph>(g), {d, o.eager});
  if (auto* e = std::get_if<compiler::GraphError>(&policy)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  const compiler::Lowered& l = std::get<compiler::Lowered>(policy);
  nlohmann::json j = compiler::lowered_json(l, d);
  int rc = 0;
  std::string check_text;
  if (o.check && !o.eager) {
    auto eager = compiler::lower_graph(std::get<compiler::Graph>(g), {d, true});
    const sem::Program& ref = std::get<compiler::Lowered>(eager).program;
    j["checks"] = nlohmann::json::array();
    std::vector<std::pair<std::string, const sem::Program*>> targets = {{"policy lowering", &l.program}};
    if (!l.canonical.bindings.empty()) targets.push_back({"policy lowering, loops merged", &l.canonical});
    for (const auto& [what, tgt] : targets) {
      oracle::Verdict v = oracle::check_programs(ref, *tgt, l.cls, oracle::CheckOptions{o.trials, o.seed});
      std::string title = "eager lowering vs " + what;
      j["checks"].push_back(oracle::verdict_json(v, ref, *tgt, title));
      check_text += oracle::format_verdict(v, ref, *tgt, title);
      if (v.status == oracle::Status::Counterexample) rc = 1;
      else if (v.status == oracle::Status::NotCheckable && rc == 0) rc = 3;
    }
  }
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << compiler::lowered_text(l, d);
    if (!check_text.empty()) std::cerr << check_text;
  }
  return rc;
}

Subcommand register_lower(CLI::App& app) {
  auto o = std::make_shared<LowerCommandOptions>();
  auto* lo = app.add_subcommand("lower", "Lower an operator-level graph (JSON) to the core language (§6.1–6.8)");
  lo->add_option("graph", o->graph, "graph file (docs/graph-format.md)")->required();
  lo->add_option("--device", o->device, "cpu or gpu[:sm=N][:warp=W][:threads=T]");
  lo->add_flag("--json", o->json, "one JSON document");
  lo->add_flag("--check", o->check, "compare with the eager lowering on random inputs (exact, or real for splits)");
  lo->add_flag("--eager", o->eager, "print the eager lowering (every node realized)");
  lo->add_option("--trials", o->trials, "input sets for --check")->check(CLI::Range(1, 100000));
  lo->add_option("--seed", o->seed, "input seed for --check");
  return {lo, [o] { return lower_command(*o); }};
}

}  // namespace stax::cli
