// `stax experiment NAME|all [--out DIR]` (DESIGN §8).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/subcommands.h"
#include "experiments/experiments.h"

namespace stax::cli {

int experiment_command(const ExperimentCommandOptions& o) {
  experiments::Options eo;
  eo.out_dir = o.out_dir;
  eo.min_log2n = o.min_log2n;
  eo.max_log2n = o.max_log2n;
  eo.step_log2n = o.step_log2n;
  eo.seed = o.seed;
  eo.examples_dir = o.examples_dir;
  eo.quick = o.quick;
  std::vector<const experiments::Experiment*> selected;
  if (o.name == "all") {
    for (const auto& e : experiments::registry()) selected.push_back(&e);
  } else if (const auto* e = experiments::find_experiment(o.name)) {
    selected.push_back(e);
  } else {
    std::cerr << "error: unknown experiment '" << o.name << "' (known:";
    for (const auto& x : experiments::registry()) std::cerr << " " << x.name;
    std::cerr << ", all)\n";
    return 2;
  }
  int rc = 0;
  for (const auto* e : selected) {
    std::cout << "== " << e->name << ": " << e->summary << "\n";
    rc = std::max(rc, e->run(eo, std::cout));
  }
  return rc;
}

Subcommand register_experiment(CLI::App& app) {
  auto o = std::make_shared<ExperimentCommandOptions>();
  auto* x = app.add_subcommand("experiment", "Reproduce an experiment of the text (CSV, Markdown, PNG)");
  x->add_option("name", o->name, "experiment name, or all")->required();
  x->add_option("--out", o->out_dir, "output folder (each experiment writes OUT/NAME/)");
  x->add_option("--min-log2n", o->min_log2n, "smallest size, log2")->check(CLI::Range(0, 30));
  x->add_option("--max-log2n", o->max_log2n, "largest size, log2")->check(CLI::Range(0, 30));
  x->add_option("--step-log2n", o->step_log2n, "size step, log2 (2: n grows x4)")->check(CLI::Range(1, 30));
  x->add_option("--seed", o->seed, "input seed");
  x->add_option("--examples", o->examples_dir, "folder of the example graphs (seed-5 experiments; default examples/graphs)");
  x->add_flag("--quick", o->quick, "smaller sweeps and shorter solver timeouts (memory-budget)");
  return {x, [o] { return experiment_command(*o); }};
}

}  // namespace stax::cli
