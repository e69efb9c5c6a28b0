// `stax prove` and `stax rewrite` end to end (docs/design.md §8): exit codes 0 / 1 /
// 3 / 2, the listing, --json, --transform.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Run {
  int code = -1;
  std::string out;
};

Run stax(const std::string& args) {
  std::string cmd = std::string(STAX_BINARY) + " " + args + " 2>&1";
  Run r;
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  int st = pclose(f);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

fs::path write(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("stax_prove_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string example(const std::string& name) { return std::string(STAX_SOURCE_DIR) + "/examples/" + name; }

}  // namespace

TEST_CASE("prove: Example 6.3 g2 is all proved (exit 0), g1 keeps its runtime check (exit 3)") {
  Run g2 = stax("prove " + example("example_6_3_g2.stx"));
  INFO(g2.out);
  CHECK(g2.code == 0);
  CHECK(g2.out.find("load(idx, ...) ∈ [0, 127]") != std::string::npos);
  Run g1 = stax("prove " + example("example_6_3_g1.stx"));
  INFO(g1.out);
  CHECK(g1.code == 3);
  CHECK(g1.out.find("kept: runtime check") != std::string::npos);
}

TEST_CASE("prove: an out-of-bounds view is a bug (exit 1) with its counterexample; --json") {
  fs::path p = write("oob.stx", "input x : f32[5]\nlet y = view(x, [5], (i) -> (i + 1))\noutput y\n");
  Run r = stax("prove " + p.string());
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(r.out.find("counterexample: i = 4") != std::string::npos);
  Run j = stax("prove " + p.string() + " --json");
  REQUIRE(j.code == 1);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["summary"]["errors"] == 1);
  bool found = false;
  for (const auto& o : doc["obligations"])
    if (o["kind"] == "in-bounds") {
      found = true;
      CHECK(o["verdict"] == "refuted");
      CHECK(o.contains("counterexample"));
      CHECK(o["ms"].is_number());
    }
  CHECK(found);
  CHECK(stax("prove " + write("bad.stx", "input x : f32[5\n").string()).code == 2);
  CHECK(stax("prove " + p.string() + " --transform frobnicate").code == 2);
}

TEST_CASE("prove --transform lists the transformed program's obligations too") {
  Run r = stax("prove " + example("example_6_1.stx") + " --transform normalize --json");
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto doc = nlohmann::json::parse(r.out);
  bool transformed = false;
  for (const auto& o : doc["obligations"]) transformed = transformed || o["group"] == "transformed";
  CHECK(transformed);
}

TEST_CASE("rewrite: exit 0 proved, 1 refuted with hex inputs, 2 malformed; --json") {
  CHECK(stax("rewrite 'mul(x, 2.0) => add(x, x)'").code == 0);
  Run r = stax("rewrite 'div(x, x) => 1.0'");
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(r.out.find("x = ") != std::string::npos);
  CHECK(r.out.find("(0x") != std::string::npos);
  CHECK(stax("rewrite 'div(x, x) =>'").code == 2);
  CHECK(stax("rewrite 'x => x' --dtype i32").code == 2);
  Run j = stax("rewrite 'log(exp(x)) => x' --json");
  REQUIRE(j.code != 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["verdict"] != "proved");
  CHECK(doc["uninterpreted"].size() == 2);
}
