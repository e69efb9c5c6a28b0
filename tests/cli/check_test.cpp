// `stax transform`, `stax check`, `stax tv` end to end (docs/design.md §8): exit
// codes, the Alive2-style report, --json, --max-rewrites.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace fs = std::filesystem;
using stax::test::Run;

namespace {

/// This file's scratch folder ($TMP/stax_check_test_<pid>) and the CLI helpers bound to it.
fs::path scratch() { return stax::test::scratch("stax_check_test"); }
Run run_stax(const std::string& args) { return stax::test::run_stax(scratch(), args); }
fs::path write(const std::string& name, const std::string& text) { return stax::test::write(scratch(), name, text); }

const std::string kSrc = "input x : bf16[16]\nlet a = map(fn(v) => div(v, 3.0), x)\nlet y = map(fn(v) => mul(v, 3.0), a)\noutput y\n";

}  // namespace

TEST_CASE("transform prints T(P), its class and its log") {
  fs::path p = write("src.stx", kSrc);
  Run r = run_stax("transform " + p.string() + " --transform inline,fuse-maps --log");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("# class: exact") && Catch::Contains("cast(div(v, 3.0), bf16)"));
  CHECK_THAT(r.err, Catch::Contains("#1 inline: a") && Catch::Contains("#2 fuse-maps"));
  // --max-rewrites 0 applies nothing.
  Run z = run_stax("transform " + p.string() + " --transform inline,fuse-maps --max-rewrites 0");
  CHECK_THAT(z.out, Catch::Contains("let a : bf16[16]"));
  CHECK(run_stax("transform " + p.string() + " --transform frobnicate").code == 2);
  CHECK_THAT(run_stax("transform " + p.string() + " --transform frobnicate").err, Catch::Contains("unknown transform"));
  CHECK(run_stax("transform " + p.string() + " --transform inline:name=nope").code == 2);
}

TEST_CASE("check verifies an exact pipeline and emits JSON") {
  fs::path p = write("src2.stx", kSrc);
  Run r = run_stax("check " + p.string() + " --transform inline,fuse-maps,normalize --trials 8");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("PROVED (exact)") && Catch::Contains("for all inputs at these shapes"));
  Run j = run_stax("check " + p.string() + " --transform cse --json");
  REQUIRE(j.code == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["verdict"] == "proved");
  CHECK(doc["proof"]["proved"] == true);
  CHECK(doc["class"] == "exact");
  // Testing only says so.
  Run t = run_stax("check " + p.string() + " --transform inline --no-prove --trials 4");
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::StartsWith("TESTED (exact)") && Catch::Contains("no difference on 4 input set(s)"));
}

TEST_CASE("tv finds a wrong fusion from outside and reports it Alive2-style") {
  fs::path src = write("tv_src.stx", kSrc);
  // A "compiler" that fused the two maps and dropped the bf16 rounding.
  fs::path bad = write("tv_bad.stx", "input x : bf16[16]\nlet y = map(fn(v) => mul(div(v, 3.0), 3.0), x)\noutput y\n");
  Run r = run_stax("tv " + src.string() + " " + bad.string() + " --class exact --trials 8");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("REFUTED: value mismatch") && Catch::Contains("output y at index") &&
                        Catch::Contains("source:") && Catch::Contains("target:") &&
                        Catch::Contains("source program:") && Catch::Contains("target program:"));
  Run j = run_stax("tv " + src.string() + " " + bad.string() + " --json");
  CHECK(j.code == 1);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["verdict"] == "refuted");
  CHECK(doc["counterexample"]["output"] == "y");
  CHECK(doc["counterexample"]["source_value"] != doc["counterexample"]["target_value"]);
  // The good fusion verifies.
  fs::path good = write("tv_good.stx",
                        "input x : bf16[16]\nlet y = map(fn(v) => mul(cast(div(v, 3.0), bf16), 3.0), x)\noutput y\n");
  CHECK(run_stax("tv " + src.string() + " " + good.string()).code == 0);
  // An interface mismatch is reported as such.
  fs::path other = write("tv_other.stx", "input x : bf16[16]\nlet z = map(neg, x)\noutput z\n");
  Run m = run_stax("tv " + src.string() + " " + other.string());
  CHECK(m.code == 1);
  CHECK_THAT(m.out, Catch::Contains("interface mismatch") && Catch::Contains("outputs differ"));
  CHECK(run_stax("tv " + src.string() + " " + good.string() + " --class sloppy").code == 2);
}
