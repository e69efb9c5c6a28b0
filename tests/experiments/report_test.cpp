// `stax experiment all`: the report of sections 5 and 6. Runs
// `all --quick` (under 2 minutes), checks the rows that must match and
// the known mismatches, determinism (two runs of a subset of rows are
// byte-identical outside the timing section), and that a deliberately wrong
// expected value makes the command exit 1 naming the row.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;

struct Out {
  int code;
  std::string out;
};

Out experiment_all(const std::string& args) {
  static const fs::path scratch = stax::test::scratch("stax_report_test_io");
  stax::test::Run r = stax::test::run_stax(
      scratch, "experiment all --examples " + std::string(STAX_SOURCE_DIR) + "/examples/graphs " + args);
  return {r.code, r.out + r.err};
}

std::string dir(const std::string& tag) {
  fs::path p = fs::temp_directory_path() / ("stax_report_test_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string without_timings(const std::string& md) { return md.substr(0, md.find("\n## Timings")); }

nlohmann::json row(const nlohmann::json& j, const std::string& id) {
  for (const auto& r : j["rows"])
    if (r["id"] == id) return r;
  return nullptr;
}

}  // namespace

TEST_CASE("all --quick: every numbered item has a row; the checked items match; under 2 minutes", "[experiments]") {
  std::string d = dir("quick");
  auto t0 = std::chrono::steady_clock::now();
  Out o = experiment_all("--quick --out " + d);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(o.out);
  CHECK(o.code == 0);
  CHECK(s < 120 * stax::test::time_scale());
  std::string md = slurp(d + "/REPORT.md");
  REQUIRE(!md.empty());
  nlohmann::json j = nlohmann::json::parse(slurp(d + "/REPORT.json"));
  CHECK(md.find("**Summary: " + j["summary"].get<std::string>() + ".**") != std::string::npos);
  CHECK(md.find("## Timings") != std::string::npos);
  // The items that must match.
  for (const char* id : {"listing-5.1", "listing-5.2", "example-5.1", "table-5.1", "proposition-5.1", "definition-5.2",
                         "theorem-5.2", "figure-5.1", "listing-5.3", "listing-5.5", "proposition-5.2", "theorem-5.3", "definition-5.3",
                         "theorem-5.4", "checkpoint-tradeoff", "listing-6.1", "promotion-6.2", "listing-6.2",
                         "figure-6.1", "corollary-6.1", "proposition-6.2", "example-6.1", "listing-6.3", "definition-6.3",
                         "bound-6.5-1", "bound-6.5-2", "bound-6.5-3", "ordering-6.5", "algorithm-6.1", "example-6.2",
                         "proposition-6.3", "example-6.3", "int32-6.8", "proposition-6.4", "realization-6.6", "definition-6.6",
                         "lemma-6.1", "theorem-6.1", "theorem-6.2", "theorem-6.3", "algorithm-5.1", "theorem-5.1-unary"}) {
    nlohmann::json r = row(j, id);
    INFO(id << ": " << r.dump());
    REQUIRE(!r.is_null());
    CHECK(r["verdict"] == "match");
  }
  // Known and explained: Theorem 5.1 on the two gather graphs, the split threshold.
  for (const char* id : {"theorem-5.1", "algorithm-6.1-threshold"}) {
    nlohmann::json r = row(j, id);
    INFO(id << ": " << r.dump());
    REQUIRE(!r.is_null());
    CHECK(r["verdict"] == "mismatch");
    CHECK(!r["known_reason"].get<std::string>().empty());
  }
  CHECK(row(j, "theorem-5.1")["ours"].get<std::string>().find("example_6_3_g1") != std::string::npos);
  // Not checkable, with the reason.
  for (const char* id : {"table-6.1", "cost-model-6.6"}) {
    nlohmann::json r = row(j, id);
    REQUIRE(!r.is_null());
    CHECK(r["verdict"] == "not checkable");
    CHECK(!r["not_checkable_reason"].get<std::string>().empty());
  }
  // Figures: the min-cut network (when dot is installed) and the plots.
  if (std::system("command -v dot >/dev/null 2>&1") == 0) CHECK(fs::exists(d + "/figures/example_5_1_min_cut.png"));
  CHECK(fs::exists(d + "/figures/example_5_1_min_cut.dot"));
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) CHECK(fs::exists(d + "/figures/checkpoint_tradeoff.png"));
  fs::remove_all(d);
}

TEST_CASE("all: deterministic outside the timing section (a subset of rows, twice)", "[experiments]") {
  std::string rows = "--row table-5.1 --row figure-5.1 --row proposition-5.1 --row theorem-5.3 --row example-6.2 "
                     "--row bound-6.5-2 --row realization-6.6 --row theorem-6.3 --row algorithm-6.1-threshold";
  std::string a = dir("det_a"), b = dir("det_b");
  Out oa = experiment_all("--quick " + rows + " --out " + a);
  Out ob = experiment_all("--quick " + rows + " --out " + b);
  INFO(oa.out << ob.out);
  CHECK(oa.code == 0);
  CHECK(ob.code == 0);
  std::string ma = slurp(a + "/REPORT.md"), mb = slurp(b + "/REPORT.md");
  REQUIRE(!ma.empty());
  CHECK(without_timings(ma) == without_timings(mb));
  nlohmann::json ja = nlohmann::json::parse(slurp(a + "/REPORT.json")), jb = nlohmann::json::parse(slurp(b + "/REPORT.json"));
  ja.erase("timings");
  jb.erase("timings");
  CHECK(ja == jb);
  CHECK(ja["rows"].size() == 9);
  CHECK(slurp(a + "/figures/example_5_1_min_cut.dot") == slurp(b + "/figures/example_5_1_min_cut.dot"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("all: a deliberately wrong expected value exits 1 and names the row", "[experiments]") {
  std::string d = dir("wrong");
  Out o = experiment_all("--quick --row table-5.1 --row algorithm-6.1 --expect-override 'table-5.1=12 match, 0 mismatch' --out " + d);
  INFO(o.out);
  CHECK(o.code == 1);
  CHECK(o.out.find("MISMATCH table-5.1") != std::string::npos);
  CHECK(o.out.find("MISMATCH algorithm-6.1") == std::string::npos);
  CHECK(slurp(d + "/REPORT.md").find("**MISMATCH**") != std::string::npos);
  // The known list does not excuse an overridden expectation.
  Out k = experiment_all("--quick --row theorem-5.1 --expect-override 'theorem-5.1=nothing' --out " + d);
  CHECK(k.code == 1);
  CHECK(k.out.find("MISMATCH theorem-5.1") != std::string::npos);
  // The right value passes.
  Out ok = experiment_all("--quick --row algorithm-6.1 --expect-override 'algorithm-6.1=k = 2' --out " + d);
  CHECK(ok.code == 0);
  // Unknown rows are usage errors.
  CHECK(experiment_all("--quick --row no-such-row --out " + d).code == 2);
  CHECK(experiment_all("--quick --expect-override nonsense --out " + d).code == 2);
  fs::remove_all(d);
}
