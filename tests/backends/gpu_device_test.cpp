// The GPU backend on a real device (issue 18), hidden from the normal suite
// (tag [.gpu]: there is no GPU in CI) and run by scripts/gpu_check.sh: every
// supported example and STAX_GPU_PROGRAMS generated programs (default 1000,
// no transcendental ops, no rand) with Target::Device against the
// interpreter, bit for bit, ⊥ included, over the oracle's input kinds; the
// codegen mutants must be caught on the device as well; block reductions
// (Example 6.2 after gpu-reduce) and the shuffle-wrong-offset mutant too. A JSON summary goes
// to STAX_GPU_REPORT when set.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/gpu/gpu_backend.h"
#include "oracle/fuzz.h"
#include "oracle/input_gen.h"
#include "oracle/program_gen.h"
#include "semantics/mutants.h"
#include "tests/backends/gpu_test_util.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
namespace gpu = stax::backends::gpu;

namespace {

std::string device_difference(const Program& p, uint64_t seed) {
  gpu::GpuOptions opt;
  opt.target = gpu::Target::Device;
  return test::gpu_difference(p, seed, opt);
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') o += "\\n";
    else if (uint8_t(c) >= 0x20) o += c;
  }
  return o;
}

}  // namespace

TEST_CASE("the GPU backend on the device: examples, generated programs and mutants against the interpreter", "[.gpu]") {
  auto t0 = std::chrono::steady_clock::now();
  int examples = 0, programs = 0, skipped = 0, mutants_caught = 0;
  std::vector<std::string> failures;
  auto check = [&](const std::string& what, const Program& p, uint64_t seed) {
    std::string d;
    try {
      d = device_difference(p, seed);
    } catch (const std::exception& e) {
      d = std::string("exception: ") + e.what();
    }
    if (!d.empty()) failures.push_back(what + ": " + d);
    CHECK(d == "");
  };
  for (const auto& [name, p] : test::gpu_examples()) {
    INFO(name);
    check(name, p, 7);
    ++examples;
  }
  const char* env = std::getenv("STAX_GPU_PROGRAMS");
  int want = env ? std::atoi(env) : 1000;
  oracle::GenOptions opt;  // f16/bf16 included
  for (uint64_t seed = 1; programs < want && seed < uint64_t(want) * 8; ++seed) {
    Program p = oracle::generate_program(seed, opt);
    if (gpu::gpu_unsupported(p)) {
      ++skipped;
      continue;
    }
    INFO("seed " << seed);
    check("generated seed " + std::to_string(seed), p, seed);
    ++programs;
  }
  // Block reductions (warp shuffles, __shared__ memory, barriers: one kernel
  // per gpu-reduce order) on the hardware; Example 6.2 is the golden case.
  Program ex62 = test::parse_ok(test::slurp(std::string(STAX_SOURCE_DIR) + "/examples/example_6_2.stx"));
  auto transformed = [](const Program& p, const std::string& spec) {
    xform::Context ctx;
    return xform::run_pipeline(p, std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec)), ctx).program;
  };
  int blocks = 0;
  for (const char* spec : {"split-reduction:k=2,gpu-reduce:threads=256:warp=32", "gpu-reduce:threads=1024:warp=32",
                           "split-reduction:k=4,gpu-reduce:threads=128:warp=8"}) {
    check(std::string("example_6_2.stx with ") + spec, transformed(ex62, spec), 62);
    ++blocks;
  }
  {
    ScopedMutant m("shuffle-wrong-offset");
    std::string d;
    try {
      d = device_difference(transformed(ex62, "split-reduction:k=2,gpu-reduce:threads=256:warp=32"), 11);
    } catch (const std::exception& e) {
      failures.push_back(std::string("mutant shuffle-wrong-offset: exception: ") + e.what());
    }
    if (d.empty()) failures.push_back("mutant not caught: shuffle-wrong-offset");
    CHECK(d != "");
  }
  const char* mutant_programs[][2] = {
      {"max-drops-nan", "input x : f32[64]\nlet z : f32[64] = map(fn(a) => maximum(a, 0.5), x)\noutput z\n"},
      {"addr32-overflow", "input a : f32[7]\nlet y : f32[64] = view(a, [64], (i) -> ((i * 4294967311) % 7))\noutput y\n"},
      {"neg-index-unwrapped", "input a : f32[8]\ninput j : i64[8]\nlet y : f32[8] = view(a, [8], (i) -> (load(j, i)))\noutput y\n"},
      {"fma-contract", "input x : f32[64]\ninput y : f32[64]\nlet z : f32[64] = map(fn(a, b) => add(mul(a, b), b), x, y)\noutput z\n"}};
  for (auto& [name, text] : mutant_programs) {
    Program p = test::parse_ok(text, "<gpu-device-test>");
    ScopedMutant m(name);
    bool caught = false;
    try {
      caught = device_difference(p, 11) != "";
    } catch (const std::exception& e) {
      failures.push_back(std::string("mutant ") + name + ": exception: " + e.what());
    }
    mutants_caught += caught;
    if (!caught) failures.push_back(std::string("mutant not caught: ") + name);
    CHECK(caught);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (const char* path = std::getenv("STAX_GPU_REPORT")) {
    std::ofstream j(path);
    j << "{\n  \"examples\": " << examples << ",\n  \"generated_programs\": " << programs
      << ",\n  \"generated_skipped_unsupported\": " << skipped << ",\n  \"block_reduction_programs\": " << blocks
      << ",\n  \"mutants_caught\": " << mutants_caught
      << ",\n  \"mutants\": " << std::size(mutant_programs) << ",\n  \"seconds\": " << secs << ",\n  \"failures\": [";
    for (size_t i = 0; i < failures.size(); ++i) j << (i ? ", " : "") << "\"" << json_escape(failures[i]) << "\"";
    j << "]\n}\n";
  }
}
