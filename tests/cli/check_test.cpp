// `stax transform`, `stax check`, `stax tv` end to end (DESIGN §8): exit
// codes, the Alive2-style report, --json, --max-rewrites.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out, err;
};

fs::path scratch() {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("stax_check_test_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Run run_stax(const std::string& args) {
  fs::path o = scratch() / "stdout.txt", e = scratch() / "stderr.txt";
  int st = std::system((std::string(STAX_BINARY) + " " + args + " >" + o.string() + " 2>" + e.string()).c_str());
  return {WEXITSTATUS(st), slurp(o), slurp(e)};
}

fs::path write(const std::string& name, const std::string& text) {
  fs::path p = scratch() / name;
  std::ofstream(p) << text;
  return p;
}

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
  CHECK_THAT(r.out, Catch::StartsWith("VERIFIED (exact)"));
  Run j = run_stax("check " + p.string() + " --transform cse --json");
  REQUIRE(j.code == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["verdict"] == "verified");
  CHECK(doc["class"] == "exact");
}

TEST_CASE("tv finds a wrong fusion from outside and reports it Alive2-style") {
  fs::path src = write("tv_src.stx", kSrc);
  // A "compiler" that fused the two maps and dropped the bf16 rounding.
  fs::path bad = write("tv_bad.stx", "input x : bf16[16]\nlet y = map(fn(v) => mul(div(v, 3.0), 3.0), x)\noutput y\n");
  Run r = run_stax("tv " + src.string() + " " + bad.string() + " --class exact --trials 8");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("ERROR: value mismatch") && Catch::Contains("output y at index") &&
                        Catch::Contains("source:") && Catch::Contains("target:") &&
                        Catch::Contains("source program:") && Catch::Contains("target program:"));
  Run j = run_stax("tv " + src.string() + " " + bad.string() + " --json");
  CHECK(j.code == 1);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["verdict"] == "counterexample");
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
