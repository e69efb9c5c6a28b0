// `stax fuzz autodiff` (remat/autodiff_fuzz.h): the generated graphs pass the
// adjoint identity and the partition check with the real rules; each planted
// wrong VJP rule is caught (a finding carrying the graph's JSON, exit 1).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "autodiff/adjoint.h"
#include "compiler/graph.h"
#include "remat/autodiff_fuzz.h"
#include "tests/test_util.h"

using namespace stax;

namespace {

int sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("the generator is deterministic and its graphs parse") {
  CHECK(autodiff::random_graph(7) == autodiff::random_graph(7));
  CHECK(autodiff::random_graph(7) != autodiff::random_graph(8));
  for (uint64_t s = 1; s <= 10; ++s) CHECK(std::holds_alternative<compiler::Graph>(compiler::parse_graph(autodiff::random_graph(s))));
}

TEST_CASE("fuzz autodiff: no finding with the real rules") {
  remat::AutodiffFuzzOptions o;
  o.seed = 1;
  o.count = 25;
  remat::AutodiffFuzzReport r = remat::fuzz_autodiff(o);
  for (const auto& f : r.findings) INFO("seed " << f.seed << " " << f.check << ": " << f.message);
  CHECK(r.findings.empty());
  CHECK(r.graphs == 25);
  CHECK(r.adjoint_checked == 25);
  CHECK(r.partitions_checked == 25);
}

TEST_CASE("fuzz autodiff: every planted wrong VJP rule is caught by the adjoint identity") {
  for (const std::string& name : remat::planted_vjp_rule_names()) {
    INFO(name);
    auto rules = remat::planted_vjp_rules(name);
    REQUIRE(rules);
    remat::AutodiffFuzzOptions o;
    o.seed = 1;
    o.count = 25;
    o.rules = &*rules;
    remat::AutodiffFuzzReport r = remat::fuzz_autodiff(o);
    REQUIRE_FALSE(r.findings.empty());
    bool adjoint = false;
    for (const auto& f : r.findings) {
      adjoint |= f.check == "adjoint";
      // the finding carries the graph, which reproduces it
      CHECK(f.graph == autodiff::random_graph(f.seed));
    }
    CHECK(adjoint);
    // the partition is exact whatever the rules: no partition finding
    for (const auto& f : r.findings) CHECK(f.check != "partition");
  }
  CHECK_FALSE(remat::planted_vjp_rules("no-such-rule"));
}

TEST_CASE("stax fuzz autodiff: exit 0 clean, 1 with a finding and its graph, 2 on an unknown mutant") {
  std::string stax = STAX_BINARY;
  std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/stax_fuzz_autodiff_test";
  REQUIRE(sh("mkdir -p " + dir) == 0);
  CHECK(sh(stax + " fuzz autodiff --seed 1 --count 5 > " + dir + "/clean.txt") == 0);
  CHECK(test::contains(slurp(dir + "/clean.txt"), "0 findings"));
  CHECK(sh(stax + " fuzz autodiff --seed 1 --count 10 --mutant tanh-sign --out " + dir + "/found > " + dir + "/bad.txt") == 1);
  std::string bad = slurp(dir + "/bad.txt");
  CHECK(test::contains(bad, "finding: seed"));
  CHECK(test::contains(bad, "adjoint"));
  CHECK(test::contains(bad, "\"nodes\""));  // the graph's JSON
  CHECK(sh(stax + " fuzz autodiff --mutant nope 2> " + dir + "/err.txt") == 2);
  CHECK(test::contains(slurp(dir + "/err.txt"), "unknown autodiff mutant"));
  CHECK(sh(stax + " fuzz autodiff --seed 1 --count 10 --mutant tanh-sign --json > " + dir + "/bad.json") == 1);
  auto j = nlohmann::json::parse(slurp(dir + "/bad.json"));
  REQUIRE(j["findings"].size() > 0);
  CHECK(j["findings"][0]["graph"].contains("nodes"));
}
