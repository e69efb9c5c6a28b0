// The GPU backend on a real device, hidden from the normal suite
// (tag [.gpu]: there is no GPU in CI) and run by scripts/gpu_check.sh: every
// example and STAX_GPU_PROGRAMS generated programs (default 1000, the
// campaigns' generator: transcendental ops and rand included) with
// Target::Device against the interpreter, bit for bit, ⊥ included, over the
// oracle's input kinds; the codegen mutants must be caught on the device as
// well; block reductions (Example 6.2 after gpu-reduce) and the
// shuffle-wrong-offset mutant; every binary64 function on its hard cases, a
// declining lane recomputed, and rand on every float dtype. A JSON summary
// goes to STAX_GPU_REPORT when set.
//
// STAX_GPU_SHARD=K/N (gpu_check.sh runs N processes side by side: NVRTC's
// compile of each program is the slow part, about 0.5 s): this process
// checks the examples and generated programs whose index is K modulo N, and
// shard 0 alone the block reductions, the mutants and the binary64 case.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/gpu/gpu_backend.h"
#include "oracle/fuzz.h"
#include "oracle/gen/program_gen.h"
#include "semantics/input_gen.h"
#include "semantics/mutants.h"
#include "tests/backends/gpu_test_util.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
namespace gpu = stax::backends::gpu;

namespace {

struct Shard {
  int k = 0, n = 1;
  bool mine(int i) const { return i % n == k; }
  bool first() const { return k == 0; }
};

/// STAX_GPU_SHARD ("K/N", 0 <= K < N), else the whole run.
Shard shard_from_env() {
  Shard s;
  const char* env = std::getenv("STAX_GPU_SHARD");
  if (!env) return s;
  int k = -1, n = 0;
  if (std::sscanf(env, "%d/%d", &k, &n) != 2 || n < 1 || k < 0 || k >= n)
    FAIL("STAX_GPU_SHARD must be K/N with 0 <= K < N, not '" << env << "'");
  return {k, n};
}

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
  const Shard shard = shard_from_env();
  int examples = 0, programs = 0, skipped = 0, mutants_caught = 0, index = 0;
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
    if (!shard.mine(index++)) continue;
    INFO(name);
    check(name, p, 7);
    ++examples;
  }
  const char* env = std::getenv("STAX_GPU_PROGRAMS");
  int want = env ? std::atoi(env) : 1000;
  oracle::GenOptions opt = oracle::with_rand();  // f16/bf16 and rand included
  // The shards split the first `want` supported programs between them.
  for (int64_t seed = 1, supported = 0; supported < want && seed < int64_t(want) * 8; ++seed) {
    Program p = oracle::generate_program(uint64_t(seed), opt);
    if (gpu::gpu_unsupported(p)) {
      ++skipped;
      continue;
    }
    if (!shard.mine(int(supported++))) continue;
    INFO("seed " << seed);
    check("generated seed " + std::to_string(seed), p, uint64_t(seed));
    ++programs;
  }
  int blocks = 0, mutants_total = 0;
  if (shard.first()) {
    // Block reductions (warp shuffles, __shared__ memory, barriers: one kernel
    // per gpu-reduce order) on the hardware; Example 6.2 is the golden case.
    Program ex62 = test::parse_ok(test::slurp(std::string(STAX_SOURCE_DIR) + "/examples/example_6_2.stx"));
    auto transformed = [](const Program& p, const std::string& spec) {
      xform::Context ctx;
      return xform::run_pipeline(p, std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec)), ctx).program;
    };
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
    mutants_total = int(std::size(mutant_programs));
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (const char* path = std::getenv("STAX_GPU_REPORT")) {
    std::ofstream j(path);
    j << "{\n  \"examples\": " << examples << ",\n  \"generated_programs\": " << programs
      << ",\n  \"generated_skipped_unsupported\": " << skipped << ",\n  \"block_reduction_programs\": " << blocks
      << ",\n  \"mutants_caught\": " << mutants_caught
      << ",\n  \"mutants\": " << mutants_total
      << ",\n  \"shard\": \"" << shard.k << "/" << shard.n << "\"" << ",\n  \"seconds\": " << secs << ",\n  \"failures\": [";
    for (size_t i = 0; i < failures.size(); ++i) j << (i ? ", " : "") << "\"" << json_escape(failures[i]) << "\"";
    j << "]\n}\n";
  }
}

TEST_CASE("binary64 math and rand on the device: mathlib's fast paths and the interpreter's hash", "[.gpu]") {
  if (!shard_from_env().first()) return;
  // The emulator's hard cases (thresholds, subnormal results, Payne-Hanek
  // arguments up to 1.5e308), every function and sigmoid over the oracle's
  // input kinds, and rand on every float dtype.
  std::vector<double> xs = {0.0, -0.0, 1e-300, 4.9e-324, 0x1p-1022, 0x1p-54, -0x1p-54, 1.0, 0x1.0000000000001p0,
                            0x1.6a09e667f3bcdp0, 2.5, -3.75, 20.5, 5.99, 1e-320, 709.78, -708.4, -745.1,
                            0x1p20, 1e22, -1e300, 6381956970095103.0 * 0x1p797, 1.5e308, 355.0, 709.78275};
  int n = int(xs.size());
  std::string N = std::to_string(n);
  Program p = test::parse_ok(
      "input x : f64[" + N + "]\n"
      "let a : f64[" + N + "] = map(fn(u) => add(add(exp(u), expm1(u)), add(log(u), log2(u))), x)\n"
      "let b : f64[" + N + "] = map(fn(u) => add(add(log10(u), log1p(u)), add(tanh(u), erf(u))), x)\n"
      "let c : f64[" + N + "] = map(fn(u) => add(add(sin(u), cos(u)), add(pow(u, 0.75), sigmoid(u))), x)\n"
      "output a, b, c\n",
      "<gpu-device-test>");
  Inputs in{{"x", test::tensor(DType::F64, {n}, xs)}};
  gpu::GpuOptions opt;
  opt.target = gpu::Target::Device;
  gpu::GpuProgram gp(p, opt);
  CHECK(oracle::outcome_difference(p, eval_ieee(p, in), gp.run(in)) == std::nullopt);
  CHECK(gp.slow_lanes() >= 1);  // exp(709.78275) declines: recomputed on the host
  CHECK(device_difference(p, 3) == "");
  for (const char* t : {"f64", "f32", "f16", "bf16"}) {
    std::string T = t;
    Program r = test::parse_ok("input x : " + T + "[6, 50]\n"
                               "let a : " + T + "[6, 50] = map(fn(u, q) => add(u, q), x, rand(" + T + ", [6, 50], 7))\n"
                               "let c : " + T + "[6] = red(sum, 0.0, [50], rand(" + T + ", [6, 50], 3))\n"
                               "output a, c\n",
                               "<gpu-device-test>");
    INFO(T);
    CHECK(device_difference(r, 9) == "");
  }
}
