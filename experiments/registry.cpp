#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "experiments/experiments.h"

namespace stax::experiments {

const std::vector<Experiment>& registry() {
  static const std::vector<Experiment> r = {
      {"reduction-bounds",
       "measured error vs. worst-case bound of f32 sums in five orders (§6.5; sequential, split sqrt(n), 16 "
       "lanes, pairwise, NumPy pairwise)",
       reduction_bounds},
      {"listing-5-2", "the joint graph of Example 5.1 by reverse mode against Listing 5.2, node for node (§5.3)",
       listing_5_2},
      {"table-5-1", "the rematerialization network and min cut of Example 5.1 against Table 5.1 (§5.5)", table_5_1},
      {"theorem-5-1", "(forward + backward) / forward op counts of every example graph against 1 + max(4, c_Omega + 2) (§5.2)",
       theorem_5_1},
      {"proposition-5-2", "full Jacobians by n JVPs and m VJPs: n*W vs m*W, and the two Jacobians equal (§5.7)",
       proposition_5_2},
      {"theorem-5-3", "uniform checkpoint segments (§5.8): peak states <= 2 sqrt(l), forward steps <= 2l",
       theorem_5_3},
      {"theorem-5-4", "binomial checkpointing (§5.8): beta(s, t) by exhaustive search vs C(s+t, s)", theorem_5_4},
      {"memory-budget",
       "recompute cost vs peak memory under a budget (beyond the text): chains and a transformer block; store-all, "
       "min-cut, sqrt(l), binomial, greedy heuristic, exact (Checkmate's program, Z3)",
       memory_budget},
  };
  return r;
}

const Experiment* find_experiment(std::string_view name) {
  for (const Experiment& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

std::string run_gnuplot(const std::string& dir, const std::string& name, const std::string& script) {
  namespace fs = std::filesystem;
  std::string gp = (fs::path(dir) / (name + ".gp")).string();
  {
    std::ofstream f(gp);
    if (!f) return "cannot write " + gp;
    f << script;
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot not found (Debian: gnuplot-nox); PNG skipped, script kept in " + gp;
  std::string cmd = "cd '" + dir + "' && gnuplot '" + name + ".gp' 2>'" + name + ".gnuplot.log'";
  if (std::system(cmd.c_str()) != 0) return "gnuplot failed (see " + dir + "/" + name + ".gnuplot.log); PNG skipped";
  std::error_code ec;
  fs::remove(fs::path(dir) / (name + ".gnuplot.log"), ec);
  return "";
}

}  // namespace stax::experiments
