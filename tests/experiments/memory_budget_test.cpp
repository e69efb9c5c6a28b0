// The memory-budget experiment: the quick sweep runs, checks every
// schedule and writes its CSV, Markdown and gnuplot script; a planted illegal
// schedule (Options::wrong_expectation) makes it fail (exit 1).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/experiments.h"

using namespace stax;

namespace {

experiments::Options options(const std::string& tag) {
  experiments::Options o;
  o.out_dir = (std::filesystem::temp_directory_path() / ("stax_memory_budget_test_" + tag)).string();
  o.examples_dir = std::string(STAX_SOURCE_DIR) + "/examples/graphs";
  o.quick = true;
  return o;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("memory-budget: the quick sweep checks every schedule and writes its files") {
  experiments::Options o = options("ok");
  std::ostringstream log;
  int rc = experiments::memory_budget(o, log);
  INFO(log.str());
  CHECK(rc == 0);
  std::filesystem::path dir = std::filesystem::path(o.out_dir) / "memory-budget";
  std::string csv = slurp(dir / "memory_budget.csv");
  for (const char* s : {"chain l=6,store-all", "chain l=10,binomial", "chain l=10,exact", "chain l=10,heuristic",
                        "transformer block joint,min-cut", "transformer block joint,heuristic", "mlp joint,store-all"})
    CHECK(csv.find(s) != std::string::npos);
  CHECK(std::filesystem::exists(dir / "memory_budget.md"));
  CHECK(std::filesystem::exists(dir / "memory_budget.gp"));
  CHECK(log.str().find("FAILED") == std::string::npos);
  CHECK(experiments::find_experiment("memory-budget") != nullptr);
}

TEST_CASE("memory-budget: an illegal schedule fails the experiment") {
  experiments::Options o = options("wrong");
  o.wrong_expectation = true;
  std::ostringstream log;
  CHECK(experiments::memory_budget(o, log) == 1);
  CHECK(log.str().find("FAILED: chain l=4 store-all without its first event") != std::string::npos);
}
