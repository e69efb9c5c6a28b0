#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "experiments/experiments.h"

namespace stax::experiments {

const std::vector<Experiment>& registry() {
  static const std::vector<Experiment> r = {
      {"reduction-bounds",
       "measured error vs. worst-case bound of f32 sums in five orders (seed 6.5; sequential, split sqrt(n), 16 "
       "lanes, pairwise, NumPy pairwise)",
       reduction_bounds},
      {"theorem-5-3", "uniform checkpoint segments (seed 5.8): peak states <= 2 sqrt(l), forward steps <= 2l",
       theorem_5_3},
      {"theorem-5-4", "binomial checkpointing (seed 5.8): beta(s, t) by exhaustive search vs C(s+t, s)", theorem_5_4},
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
