// `stax mathcheck` end to end: a small random check of two functions in
// JSON, the exit codes of bad usage.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace fs = std::filesystem;
using stax::test::Run;

namespace {

fs::path scratch() { return stax::test::scratch("stax_mathcheck_test"); }
Run run_stax(const std::string& args) { return stax::test::run_stax(scratch(), args); }

}  // namespace

TEST_CASE("mathcheck finds no mismatch and reports in JSON") {
  for (const char* fn : {"exp", "pow"}) {
    Run r = run_stax(std::string("mathcheck ") + fn + " --count 3000 --seed 3 --against host --jobs 2 --json");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["ok"] == true);
    CHECK(doc["dtype"] == "f32");
    const auto& f = doc["functions"][0];
    CHECK(f["name"] == fn);
    CHECK(f["checked"] == 3000);
    CHECK(f["mismatches"] == 0);
    CHECK(f["fallback_rate"].get<double>() < 0.05);
    CHECK(f["ns_per_elem"]["vector"].get<double>() > 0);
    CHECK(f["host"].contains("max_ulp"));
  }
  Run t = run_stax("mathcheck log1p --count 500");
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("500 checked, 0 mismatches"));
}

TEST_CASE("mathcheck rejects bad usage with exit 2") {
  Run u = run_stax("mathcheck frobnicate --count 10");
  CHECK(u.code == 2);
  CHECK_THAT(u.err, Catch::Contains("unknown function 'frobnicate'"));
  Run p = run_stax("mathcheck pow --exhaustive");
  CHECK(p.code == 2);
  CHECK_THAT(p.err, Catch::Contains("not applicable to pow"));
  CHECK(run_stax("mathcheck exp --dtype f16 --count 10").code == 2);
  CHECK(run_stax("mathcheck exp --dtype f64 --exhaustive").code == 2);
}
