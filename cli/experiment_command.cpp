// `stax experiment NAME|all [--out DIR]` (DESIGN §8).
#include <iostream>

#include "cli/commands.h"
#include "experiments/experiments.h"

namespace stax::cli {

int experiment_command(const ExperimentCommandOptions& o) {
  experiments::Options eo;
  eo.out_dir = o.out_dir;
  eo.min_log2n = o.min_log2n;
  eo.max_log2n = o.max_log2n;
  eo.step_log2n = o.step_log2n;
  eo.seed = o.seed;
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

}  // namespace stax::cli
