// The GPU backend on a real device (issue 18), hidden from the normal suite
// (tag [.gpu]: there is no GPU in CI) and run by scripts/gpu_check.sh: every
// supported example and STAX_GPU_PROGRAMS generated programs (default 1000,
// no transcendental ops, no rand) with Target::Device against the
// interpreter, bit for bit, ⊥ included, over the oracle's input kinds; the
// codegen mutants must be caught on the device as well. A JSON summary goes
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
      << ",\n  \"generated_skipped_unsupported\": " << skipped << ",\n  \"mutants_caught\": " << mutants_caught
      << ",\n  \"mutants\": " << std::size(mutant_programs) << ",\n  \"seconds\": " << secs << ",\n  \"failures\": [";
    for (size_t i = 0; i < failures.size(); ++i) j << (i ? ", " : "") << "\"" << json_escape(failures[i]) << "\"";
    j << "]\n}\n";
  }
}
