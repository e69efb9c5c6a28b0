// `stax experiment NAME|all [--out DIR] [--quick] [--row ID] [--expect-override ROW=VALUE]` (docs/design.md §8;
// all: the reproduction report, experiments/report.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/subcommands.h"
#include "experiments/experiments.h"
#include "experiments/report.h"

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
  eo.errors = &std::cerr;
  if (o.name != "all" && (!o.expect_override.empty() || !o.rows.empty())) {
    std::cerr << "error: --row and --expect-override apply to 'all' (the report) only\n";
    return 2;
  }
  if (o.name == "all") {
    experiments::ReportOptions ro;
    ro.only = o.rows;
    for (const std::string& kv : o.expect_override) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "error: --expect-override expects ROW=VALUE, got '" << kv << "'\n";
        return 2;
      }
      ro.expect_override[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    // The report's own sweep of reduction-bounds: --quick stops at 2^12.
    if (o.quick) eo.max_log2n = std::min(eo.max_log2n, 12);
    std::cout << "== all: the numbered items of sections 5 and 6 (REPORT.md under " << eo.out_dir << ")\n";
    return experiments::report_all(eo, ro, std::cout);
  }
  std::vector<const experiments::Experiment*> selected;
  if (const auto* e = experiments::find_experiment(o.name)) {
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
  x->add_option("--examples", o->examples_dir, "folder of the example graphs (section-5 experiments; default examples/graphs)");
  x->add_flag("--quick", o->quick, "smaller sweeps and shorter solver timeouts (memory-budget; all: under 2 minutes)");
  x->add_option("--row", o->rows, "all: run only this row of the report (repeatable; ids as in REPORT.md)");
  x->add_option("--expect-override", o->expect_override,
                "all: ROW=VALUE replaces a row's expected value (a deliberately wrong one must exit 1)");
  return {x, [o] { return experiment_command(*o); }};
}

}  // namespace stax::cli
