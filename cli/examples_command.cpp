// `stax examples`: every program of a folder under both semantics, one table.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "semantics/random_inputs.h"

namespace stax::cli {

namespace fs = std::filesystem;
using namespace stax::sem;

int examples_command(const ExamplesOptions& o) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.dir, ec))
    if (e.path().extension() == ".stx") files.push_back(e.path());
  if (ec) {
    std::cerr << "error: cannot read " << o.dir << ": " << ec.message() << "\n";
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::printf("%-28s %-8s %-16s %-26s %-26s %s\n", "program", "output", "type", "ieee[0]", "real[0] (f64)",
              "max |ieee-real|");
  int rc = 0;
  for (const fs::path& f : files) {
    auto prog = load_program(f.string());
    if (!prog) {
      rc = 2;
      continue;
    }
    Inputs in = random_inputs(*prog, o.seed, RandomOptions{0.0});
    IeeeOutcome a = eval_ieee(*prog, in);
    RealOutcome b = eval_real(*prog, in);
    if (a.failure || b.failure) {
      std::printf("%-28s ⊥ %s\n", f.filename().c_str(), (a.failure ? a.failure : b.failure)->reason.c_str());
      continue;
    }
    RealDomain conv;
    for (const std::string& name : prog->outputs) {
      const Tensor& x = *a.outputs.at(name);
      Tensor y = conv.to_tensor_f64(*b.outputs.at(name));
      double md = 0;
      for (int64_t i = 0; i < x.size(); ++i) {
        double d = std::fabs(x.get_double(i) - y.get_double(i));
        if (!std::isnan(d)) md = std::max(md, d);
      }
      std::string ty = type_str({x.dtype, x.shape});
      std::string x0 = x.size() ? element_text(x, 0) : "-";
      std::string y0 = y.size() ? element_text(y, 0) : "-";
      std::printf("%-28s %-8s %-16s %-26s %-26s %.3g\n", f.filename().c_str(), name.c_str(), ty.c_str(),
                  x0.substr(0, 26).c_str(), y0.substr(0, 26).c_str(), md);
    }
  }
  return rc;
}

Subcommand register_examples(CLI::App& app) {
  auto o = std::make_shared<ExamplesOptions>();
  auto* e = app.add_subcommand("examples", "Run every program of a folder under both semantics, print a table");
  e->add_option("dir", o->dir, "folder of .stx programs");
  e->add_option("--seed", o->seed, "input seed");
  return {e, [o] { return examples_command(*o); }};
}

}  // namespace stax::cli
