// `stax partition --memory-budget` and `stax train-step --memory-budget`:
// the summary, the below-minimum error (exit 2 naming the
// minimum), forward graphs differentiated first, and a budgeted training
// step writing the same files, bit for bit, as the partition's step.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

using namespace stax;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("stax_budget_cli_test_" + tag);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string graph(const std::string& name) { return std::string(STAX_SOURCE_DIR) + "/examples/graphs/" + name; }

}  // namespace

TEST_CASE("stax partition --memory-budget: the summary, and exit 2 below the minimum") {
  fs::path d = scratch("partition");
  auto r = test::run_stax(d, "partition " + graph("example_5_1_joint.json") + " --memory-budget 1000");
  CHECK(r.code == 2);
  CHECK(r.err.find("the exact minimum is 32772 bytes") != std::string::npos);
  r = test::run_stax(d, "partition " + graph("example_5_1_joint.json") + " --memory-budget 1000 --solver heuristic");
  CHECK(r.code == 2);
  CHECK(r.err.find("below the lower bound of 32768 bytes") != std::string::npos);
  r = test::run_stax(d, "partition " + graph("mlp_joint.json") + " --memory-budget 2308 --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["memory_budget"]["chosen"] == "exact");
  CHECK(j["memory_budget"]["check"] == "same bits on every output");
  CHECK(j["memory_budget"]["strategies"].size() == 4);
  r = test::run_stax(d, "partition " + graph("mlp_joint.json") + " --memory-budget 2308 --solver nope");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown solver 'nope'") != std::string::npos);
}

TEST_CASE("stax partition and train-step accept a forward graph") {
  fs::path d = scratch("forward");
  auto r = test::run_stax(d, "partition " + graph("example_5_1_forward.json") + " --memory-budget 100000 --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["from_forward_graph"] == true);
  CHECK(j["memory_budget"]["chosen"] != nullptr);
  r = test::run_stax(d, "train-step " + graph("example_5_1_forward.json") + " --random-inputs 2");
  CHECK(r.code == 0);
  CHECK(r.out.find("same bits on every output") != std::string::npos);
}

TEST_CASE("stax train-step --memory-budget writes the partition step's files, bit for bit") {
  fs::path d = scratch("train");
  auto a = test::run_stax(d, "train-step " + graph("transformer_block_joint.json") + " --random-inputs 4 --out " +
                                 (d / "plain").string());
  REQUIRE(a.code == 0);
  auto b = test::run_stax(d, "train-step " + graph("transformer_block_joint.json") +
                                 " --random-inputs 4 --memory-budget 11600 --solver heuristic --out " + (d / "budget").string());
  INFO(b.out << b.err);
  REQUIRE(b.code == 0);
  CHECK(b.out.find("same bits on every output") != std::string::npos);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(d / "plain")) {
    if (!e.is_regular_file()) continue;
    fs::path other = d / "budget" / fs::relative(e.path(), d / "plain");
    REQUIRE(fs::exists(other));
    CHECK(test::slurp(e.path()) == test::slurp(other));
    ++files;
  }
  CHECK(files > 12);
  auto c = test::run_stax(d, "train-step " + graph("transformer_block_joint.json") + " --random-inputs 4 --memory-budget 100");
  CHECK(c.code == 2);
  CHECK(c.err.find("no schedule found within the memory budget of 100 bytes") != std::string::npos);
}
