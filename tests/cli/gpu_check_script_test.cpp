// scripts/gpu_check.sh's host-side parts: the script parses, its
// --dry-run (the emulator in place of the device) writes the JSON report
// with the bench reports it consumes — produced by `stax bench --backend
// gpu-emu`, the schema `--backend gpu` writes — the bandwidth section and
// each step's exit code; a failing step or a spent budget still leaves the
// report, with pass false and a non-zero exit (the wrong cases).
#include <catch2/catch.hpp>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/test_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path scratch() { return stax::test::scratch("stax_gpu_check_test"); }
const std::string kScript = std::string(STAX_SOURCE_DIR) + "/scripts/gpu_check.sh";
// The build folder holding STAX_BINARY (<build>/cli/stax).
const std::string kBuild = fs::path(STAX_BINARY).parent_path().parent_path().string();

struct ScriptRun {
  int code;
  std::string out;
  json report;  ///< discarded when there is none
};

/// Runs the script in --dry-run with small programs, its report in `dir`.
ScriptRun dry_run(const std::string& dir, const std::string& env) {
  fs::path d = scratch() / dir;
  fs::remove_all(d);
  fs::create_directories(d);
  fs::path prog = stax::test::write(
      scratch(), "rows.stx",
      "input x : f32[4, 256]\nlet s : f32[4] = red(sum, 0.0, [256], map(fn(a) => mul(a, a), x))\noutput s\n");
  fs::path map = stax::test::write(scratch(), "map.stx",
                                   "input x : f32[65536]\nlet y : f32[65536] = map(fn(v) => add(mul(v, 2.0), 1.0), x)\n"
                                   "output y\n");
  std::string cmd = "OUT=" + d.string() + " BUILD=" + kBuild + " STAX_BW_PROGRAMS='" + map.string() +
                    "' STAX_EX11=" + prog.string() + " STAX_EX62=" + prog.string() + " STAX_GPU_EXAMPLES=" +
                    prog.string() + " STAX_GPU_FUZZ=2 STAX_BENCH_REPEATS=1 " + env + " bash " + kScript +
                    " --dry-run > " + (d / "stdout.txt").string() + " 2>&1";
  int st = std::system(cmd.c_str());
  ScriptRun r{WEXITSTATUS(st), stax::test::slurp(d / "stdout.txt"), json()};
  std::string text = stax::test::slurp(d / "gpu_report.json");
  r.report = json::parse(text, nullptr, false);
  return r;
}

}  // namespace

TEST_CASE("gpu_check.sh: parses, and --help and a bad option behave") {
  CHECK(std::system(("bash -n " + kScript).c_str()) == 0);
  int st = std::system(("bash " + kScript + " --help > /dev/null").c_str());
  CHECK(WEXITSTATUS(st) == 0);
  st = std::system(("bash " + kScript + " --no-such-option > /dev/null 2>&1").c_str());
  CHECK(WEXITSTATUS(st) == 2);
  // --prebuilt is device mode without the build: with --dry-run or --build
  // it is refused, and a build folder without the GPU tests stops it.
  st = std::system(("bash " + kScript + " --prebuilt --dry-run > /dev/null 2>&1").c_str());
  CHECK(WEXITSTATUS(st) == 2);
  st = std::system(("bash " + kScript + " --prebuilt --build > /dev/null 2>&1").c_str());
  CHECK(WEXITSTATUS(st) == 2);
  fs::path d = scratch() / "prebuilt";
  fs::remove_all(d);
  fs::create_directories(d);
  st = std::system(("OUT=" + d.string() + " BUILD=" + (d / "nothing").string() + " bash " + kScript +
                    " --prebuilt > " + (d / "stdout.txt").string() + " 2>&1")
                       .c_str());
  CHECK(WEXITSTATUS(st) == 2);
  CHECK(stax::test::slurp(d / "stdout.txt").find("nothing/cli/stax") != std::string::npos);
}

TEST_CASE("gpu_check.sh --dry-run: the report, its steps and its benches") {
  ScriptRun r = dry_run("ok", "");
  INFO(r.out);
  REQUIRE(!r.report.is_discarded());
  const json& j = r.report;
  CHECK(r.code == 0);
  CHECK(j["mode"] == "dry");
  CHECK(j["backend"] == "gpu-emu");
  CHECK(j["gpu_driver"] == "not used");
  CHECK(j["pass"] == true);
  CHECK(j["cli_examples_identical"] == 1);
  CHECK(j["cli_examples_different"].empty());
  CHECK(j["example_6_2_gpu_order_exit"] == 0);
  CHECK(j["fuzz_exit"] == 0);
  // Every step recorded with its exit code.
  std::set<std::string> steps;
  for (const json& s : j["steps"]) {
    steps.insert(s["name"].get<std::string>());
    CHECK(s["exit"] == 0);
  }
  for (const char* s : {"run_examples", "check_example_6_2", "bench_bw_map", "bench_bw_wide_map", "bench_example_1_1",
                        "bench_example_1_1_gpu_reduce", "bench_example_6_2_gpu_order", "fuzz"})
    CHECK(steps.count(s) == 1);
  // The benches: stax bench's own JSON, bits identical, a copy ratio each.
  for (const char* b : {"bw_map", "bw_wide_map", "example_1_1", "example_1_1_gpu_reduce", "example_6_2_gpu_order"}) {
    INFO(b);
    const json& doc = j["bench"][b];
    REQUIRE(doc.is_object());
    CHECK(doc["bits_identical"] == true);
    CHECK(doc["time_source"] == "emulator: host wall time");
    REQUIRE(!doc["kernels"].empty());
    CHECK(doc["kernels"][0]["ratio_to_copy"].get<double>() > 0);
    CHECK(doc["kernels"][0]["launch"]["block"].get<int>() >= 1);
  }
  CHECK(j["bench"]["example_6_2_gpu_order"]["compile_base_ms"].is_number());
  CHECK(j["bench"]["example_6_2_gpu_order"]["kernels"][0]["compile_own_ms"].is_number());
  bool block = false;
  for (const json& k : j["bench"]["example_1_1_gpu_reduce"]["kernels"]) block |= k["launch"]["block"] == 256;
  CHECK(block);
  // The bandwidth section: the smallest ratio of each program, the target.
  REQUIRE(j["bandwidth"]["programs"].size() == 1);
  const json& bw = j["bandwidth"]["programs"][0];
  CHECK(bw["min_ratio_to_copy"].is_number());
  CHECK(bw["wide_min_ratio_to_copy"].is_number());
  CHECK(bw["best_ratio_to_copy"].get<double>() >= bw["min_ratio_to_copy"].get<double>());
  CHECK(bw["best_ratio_to_copy"].get<double>() >= bw["wide_min_ratio_to_copy"].get<double>());
  CHECK(bw["bits_identical"] == true);
  CHECK(bw["wide_bits_identical"] == true);
  // The wide launch: one thread per element, 256 per block.
  CHECK(j["bench"]["bw_wide_map"]["kernels"][0]["launch"]["block"] == 256);
  CHECK(j["bench"]["bw_wide_map"]["kernels"][0]["launch"]["grid"] == 65536 / 256);
  CHECK(j["bandwidth"]["target_ratio_to_copy"] == 0.85);
  CHECK(j["bandwidth"]["target_met"].is_boolean());
  CHECK(r.out.find("verdict: PASS") != std::string::npos);
}

TEST_CASE("gpu_check.sh --dry-run: a failing step or a spent budget keeps the report, exit non-zero") {
  // A bandwidth program that does not exist: its bench fails (exit 2).
  ScriptRun bad = dry_run("bad", "STAX_BW_PROGRAMS=/nonexistent/prog.stx");
  INFO(bad.out);
  REQUIRE(!bad.report.is_discarded());
  CHECK(bad.code != 0);
  CHECK(bad.report["pass"] == false);
  CHECK(bad.report["bandwidth"]["target_met"] == false);
  CHECK(bad.report["bench"]["bw_prog"].is_null());
  bool recorded = false;
  for (const json& s : bad.report["steps"])
    if (s["name"] == "bench_bw_prog") recorded = s["exit"] == 2;
  CHECK(recorded);
  // The later steps still ran.
  CHECK(bad.report["bench"]["example_6_2_gpu_order"].is_object());
  CHECK(bad.out.find("verdict: FAIL") != std::string::npos);

  // No budget: every step skipped, recorded as such; not a pass.
  ScriptRun none = dry_run("none", "STAX_GPU_BUDGET_S=0");
  INFO(none.out);
  REQUIRE(!none.report.is_discarded());
  CHECK(none.code != 0);
  CHECK(none.report["pass"] == false);
  REQUIRE(!none.report["steps"].empty());
  for (const json& s : none.report["steps"]) CHECK(s["skipped"] == true);
}
