// `stax fuzz autodiff [--seed S] [--count N] [--mutant NAME] [--out DIR]
// [--json]`: random differentiable graphs through the adjoint identity (Real
// domain) and the partition's exactness (remat/autodiff_fuzz.h). Each
// finding is printed with its graph's JSON (and written to
// DIR/autodiff-SEED.json with --out); exit 1 on a finding, 2 on bad usage.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/subcommands.h"
#include "remat/autodiff_fuzz.h"

namespace stax::cli {

namespace {

struct FuzzAutodiffOptions {
  uint64_t seed = 1, count = 25;
  std::string mutant, out_dir;
  long precision = 256;
  int trials = 4;
  bool json = false, list_mutants = false;
};

int fuzz_autodiff_command(const FuzzAutodiffOptions& o) {
  if (o.list_mutants) {
    for (const std::string& n : remat::planted_vjp_rule_names()) std::cout << n << "\n";
    return 0;
  }
  remat::AutodiffFuzzOptions fo;
  fo.seed = o.seed;
  fo.count = o.count;
  fo.precision = o.precision;
  fo.trials = o.trials;
  std::optional<autodiff::VjpRules> planted;
  if (!o.mutant.empty()) {
    planted = remat::planted_vjp_rules(o.mutant);
    if (!planted) {
      std::cerr << "error: unknown autodiff mutant '" << o.mutant << "' (see stax fuzz autodiff --list-mutants)\n";
      return 2;
    }
    fo.rules = &*planted;
  }
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) {
      std::cerr << "error: --out: cannot create " << o.out_dir << ": " << ec.message() << "\n";
      return 2;
    }
  }
  remat::AutodiffFuzzReport rep = remat::fuzz_autodiff(fo);
  for (const remat::AutodiffFinding& f : rep.findings)
    if (!o.out_dir.empty()) {
      std::ofstream(std::filesystem::path(o.out_dir) / ("autodiff-" + std::to_string(f.seed) + ".json")) << f.graph << "\n";
    }
  if (o.json) {
    nlohmann::json j;
    j["seed"] = o.seed;
    j["count"] = o.count;
    j["mutant"] = o.mutant;
    j["graphs"] = rep.graphs;
    j["adjoint_checked"] = rep.adjoint_checked;
    j["partitions_checked"] = rep.partitions_checked;
    j["seconds"] = rep.seconds;
    j["findings"] = nlohmann::json::array();
    for (const remat::AutodiffFinding& f : rep.findings) {
      nlohmann::json g = nlohmann::json::parse(f.graph, nullptr, false);
      j["findings"].push_back({{"seed", f.seed}, {"check", f.check}, {"message", f.message}, {"graph", g.is_discarded() ? nlohmann::json(f.graph) : g}});
    }
    std::cout << j.dump(2) << "\n";
  } else {
    for (const remat::AutodiffFinding& f : rep.findings)
      std::cout << "finding: seed " << f.seed << ", " << f.check << ": " << f.message << "\n" << f.graph << "\n";
    std::cout << "stax fuzz autodiff: " << rep.graphs << " graphs (seeds " << o.seed << ".." << o.seed + o.count - 1 << ")"
              << (o.mutant.empty() ? "" : ", mutant " + o.mutant) << ": " << rep.adjoint_checked
              << " adjoint identities, " << rep.partitions_checked << " partitions checked, " << rep.findings.size()
              << " findings, " << rep.seconds << " s\n";
  }
  return rep.findings.empty() ? 0 : 1;
}

}  // namespace

Subcommand register_fuzz_autodiff(CLI::App& fuzz) {
  auto o = std::make_shared<FuzzAutodiffOptions>();
  auto* c = fuzz.add_subcommand("autodiff", "Random differentiable graphs: adjoint identity (Real domain) and partition "
                                            "exactness (forward + backward = joint graph, same bits); exit 1 on a finding");
  c->add_option("--seed", o->seed, "first graph seed");
  c->add_option("--count", o->count, "graphs")->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  c->add_option("--mutant", o->mutant, "plant a wrong VJP rule (see --list-mutants)");
  c->add_flag("--list-mutants", o->list_mutants, "list the planted wrong VJP rules");
  c->add_option("--precision", o->precision, "MPFR bits of the adjoint check")->check(CLI::Range(64, 65536));
  c->add_option("--trials", o->trials, "input sets per partition check")->check(CLI::Range(1, 1000));
  c->add_option("--out", o->out_dir, "write each finding's graph to DIR/autodiff-SEED.json");
  c->add_flag("--json", o->json, "one JSON document");
  return {c, [o] { return fuzz_autodiff_command(*o); }};
}

}  // namespace stax::cli
