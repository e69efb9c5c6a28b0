// The GPU backend's CUDA C on the host emulator against the interpreter, bit
// for bit (issue 18): every example this slice supports, generated programs
// (binary32 transcendental ops included), every math function on f32, f16
// and bf16, a lane recomputed after its rounding test failed, special
// values, integer wrap and ⊥, the
// grid-stride loop; and codegen mutants (fmaxf for maximum, a*b+c
// contracted to fma, 32-bit index arithmetic, negative indices unwrapped)
// caught — the deliberately wrong cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
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

/// The first difference between the interpreter and the emulated kernels.
std::string difference(const Program& p, uint64_t seed, const gpu::GpuOptions& opt = {}) {
  return test::gpu_difference(p, seed, opt);
}

Program parse(const std::string& s) { return test::parse_ok(s, "<gpu-emu-test>"); }

}  // namespace

TEST_CASE("every supported example runs bit-identically on the GPU emulator") {
  int n = 0;
  for (const auto& [name, p] : test::gpu_examples()) {
    INFO(name);
    CHECK(difference(p, 7) == "");
    ++n;
  }
  CHECK(n >= 5);
}

TEST_CASE("generated programs (f16/bf16 and binary32 transcendental ops included) run bit-identically on the GPU emulator") {
  oracle::GenOptions opt;  // f16/bf16 included
  int n = 0;
  for (uint64_t seed = 1; n < 50 && seed < 400; ++seed) {
    Program p = oracle::generate_program(seed, opt);
    if (gpu::gpu_unsupported(p)) continue;
    INFO("seed " << seed);
    CHECK(difference(p, seed) == "");
    ++n;
  }
  CHECK(n == 50);
}

TEST_CASE("special values, f16/bf16, integer wrap and a grid-stride loop on the GPU emulator") {
  Program p = parse(
      "input x : f32[8]\ninput k : i32[8]\ninput d : f64[300]\ninput h : f16[8]\ninput b : bf16[8]\n"
      "let m : f32[8] = map(fn(a, c) => maximum(a, c), x, view(x, [8], (i) -> (7 - i)))\n"
      "let n : f32[8] = map(fn(a) => minimum(relu(a), neg(a)), x)\n"
      "let kk : i32[8] = map(fn(a) => add(mul(a, 65537), 2147483647), k)\n"
      "let fd : f32[8] = map(fn(a, c) => add(floordiv(a, c), mod(a, c)), x, view(x, [8], (i) -> (7 - i)))\n"
      "let s : f32[] = red(sum, -0.0, [8], x)\n"
      "let am : i64[] = red(argmax, -inf, [8], x)\n"
      "let big : f64[300] = map(fn(a) => fma(a, a, sqrt(a)), d)\n"
      "let hh : f16[8] = map(fn(a, c) => add(mul(a, c), a), h, h)\n"
      "let bb : bf16[8] = map(fn(a) => div(a, 3.0), b)\n"
      "let hd : f16[300] = map(fn(a) => cast(a, f16), d)\n"
      "let hk : bf16[8] = map(fn(a) => cast(mul(a, 1000003), bf16), k)\n"
      "let hs : f16[] = red(sum, 0.0, [8], hh)\n"
      "output m, n, kk, fd, s, am, big, hh, bb, hd, hk, hs\n");
  CHECK(difference(p, 3) == "");
  // One block of one thread: every element through the grid-stride loop.
  CHECK(difference(p, 4, {gpu::Target::Emu, "compute_90", 1, 1}) == "");
}

TEST_CASE("transcendental ops on the GPU emulator: mathlib's fast paths as kernel code, the interpreter's bits") {
  // Every function and sigmoid on f32, f16 and bf16, on random and special
  // inputs (the oracle's kinds: ±0, ±inf, NaN, subnormals, huge values).
  for (const char* t : {"f32", "f16", "bf16"}) {
    std::string T = t;
    Program p = parse("input x : " + T + "[300]\ninput y : " + T + "[300]\n"
                      "let a : " + T + "[300] = map(fn(u) => add(add(exp(u), expm1(u)), add(log(u), log2(u))), x)\n"
                      "let b : " + T + "[300] = map(fn(u) => add(add(log10(u), log1p(u)), add(tanh(u), erf(u))), x)\n"
                      "let c : " + T + "[300] = map(fn(u, v) => add(add(sin(u), cos(u)), add(pow(u, v), sigmoid(u))), x, y)\n"
                      "output a, b, c\n");
    INFO(T);
    for (uint64_t seed = 1; seed <= 6; ++seed) CHECK(difference(p, seed) == "");
  }
}

TEST_CASE("a math lane that fails its rounding test is recomputed on the host") {
  // pow(1 + 2^-12, 2) = 1 + 2^-11 + 2^-24 is a rounding midpoint of binary32
  // (ties to the even one below); pow(3 + 2^-22, 2) = 9 + 1.5 ulp + 2^-44
  // lies 2^-44 above a midpoint, far inside the fast path's error bound, so
  // its candidate (the lower end) is one ulp below the correctly rounded
  // result. The fast path flags both.
  Program p = parse("input x : f32[4]\ninput y : f32[4]\nlet z : f32[4] = map(fn(a, b) => pow(a, b), x, y)\noutput z\n");
  Inputs in{{"x", test::f32({4}, {1.000244140625f, 2.0f, 0.5f, std::nextafter(3.0f, 4.0f)})},
            {"y", test::f32({4}, {2, 3, 2, 2})}};
  IeeeOutcome ref = eval_ieee(p, in);
  gpu::GpuProgram gp(p);
  IeeeOutcome got = gp.run(in);
  CHECK(oracle::outcome_difference(p, ref, got) == std::nullopt);
  CHECK(gp.slow_lanes() == 2);
  CHECK(gp.recomputed_bindings() == 1);
  // The wrong case: keeping the fast path's candidate gives other bits.
  gpu::GpuOptions keep;
  keep.recompute_slow = false;
  gpu::GpuProgram gk(p, keep);
  CHECK(oracle::outcome_difference(p, ref, gk.run(in)) != std::nullopt);
  // Without such lanes nothing is recomputed.
  Inputs easy{{"x", test::f32({4}, {2.0f, 3.0f, 0.5f, 4.0f})}, {"y", test::f32({4}, {0.5f, 3, 2, 1.5f})}};
  CHECK(oracle::outcome_difference(p, eval_ieee(p, easy), gp.run(easy)) == std::nullopt);
  CHECK(gp.recomputed_bindings() == 0);
}

TEST_CASE("⊥ on the GPU emulator: the interpreter's binding, index and reason") {
  SECTION("integer division by zero") {
    Program p = parse("input a : i32[4]\ninput b : i32[4]\nlet y : i32[4] = map(fn(x, z) => floordiv(x, z), a, b)\noutput y\n");
    Inputs in{{"a", test::i32({4}, {7, -7, 1, 2})}, {"b", test::i32({4}, {2, 0, 0, -1})}};
    IeeeOutcome ref = eval_ieee(p, in), got = gpu::run(p, in);
    REQUIRE(ref.failure);
    REQUIRE(got.failure);
    CHECK(got.failure->binding == "y");
    CHECK(got.failure->index == std::vector<int64_t>{1});
    CHECK(test::contains(got.failure->reason, "by zero"));
  }
  SECTION("gather out of range, negative indices wrap") {
    Program p = parse(
        "input x : f32[5]\ninput j : i64[3]\nlet y : f32[3] = view(x, [3], (i) -> (load(j, i)))\noutput y\n");
    Inputs ok{{"x", test::f32({5}, {1, 2, 3, 4, 5})}, {"j", test::i64({3}, {-1, 0, 4})}};
    IeeeOutcome got = gpu::run(p, ok);
    REQUIRE_FALSE(got.failure);
    CHECK(test::elems<float>(*got.outputs.at("y")) == std::vector<float>{5, 1, 5});
    Inputs bad{{"x", test::f32({5}, {1, 2, 3, 4, 5})}, {"j", test::i64({3}, {0, 5, -6})}};
    IeeeOutcome ref = eval_ieee(p, bad);
    got = gpu::run(p, bad);
    REQUIRE(ref.failure);
    REQUIRE(got.failure);
    CHECK(oracle::outcome_difference(p, ref, got) == std::nullopt);
    CHECK(got.failure->index == std::vector<int64_t>{1});
  }
}

TEST_CASE("GPU codegen mutants are caught by the emulator") {
  struct Case {
    const char* mutant;
    const char* program;
  };
  for (const Case& c : {
           Case{"max-drops-nan", "input x : f32[64]\nlet z : f32[64] = map(fn(a) => maximum(a, 0.5), x)\noutput z\n"},
           Case{"addr32-overflow", "input a : f32[7]\nlet y : f32[64] = view(a, [64], (i) -> ((i * 4294967311) % 7))\noutput y\n"},
           Case{"neg-index-unwrapped", "input a : f32[8]\ninput j : i64[8]\nlet y : f32[8] = view(a, [8], (i) -> (load(j, i)))\noutput y\n"},
           Case{"fma-contract", "input x : f32[64]\ninput y : f32[64]\nlet z : f32[64] = map(fn(a, b) => add(mul(a, b), b), x, y)\noutput z\n"},
       }) {
    INFO(c.mutant);
    Program p = parse(c.program);
    CHECK(difference(p, 11) == "");  // the product is right
    ScopedMutant m(c.mutant);
    CHECK(difference(p, 11) != "");  // the mutant is not
  }
}

TEST_CASE("several emulated programs loaded at once keep their own kernels") {
  // glibc matches a loaded object by inode: a module whose file were freed
  // could be handed to the next one (same kernel names, other code).
  Program neg = parse("input x : f32[4]\nlet y : f32[4] = map(neg, x)\noutput y\n");
  Program dbl = parse("input x : f32[4]\nlet y : f32[4] = map(fn(a) => add(a, a), x)\noutput y\n");
  std::vector<std::unique_ptr<gpu::GpuProgram>> live;
  for (int i = 0; i < 4; ++i) live.push_back(std::make_unique<gpu::GpuProgram>(i % 2 ? dbl : neg));
  Inputs in{{"x", test::f32({4}, {1, 2, 3, 4})}};
  for (int i = 0; i < 4; ++i)
    CHECK(test::elems<float>(*live[size_t(i)]->run(in).outputs.at("y")) ==
          (i % 2 ? std::vector<float>{2, 4, 6, 8} : std::vector<float>{-1, -2, -3, -4}));
}

TEST_CASE("zero extents on the GPU emulator: empty outputs, empty folds") {
  Program p = parse(
      "input x : f32[0, 3]\ninput w : f32[2, 0]\nlet y : f32[0, 3] = map(neg, x)\n"
      "let s : f32[2] = red(sum, 0.0, [0], w)\nlet t : f32[0] = red(sum, 0.0, [3], x)\noutput y, s, t\n");
  CHECK(difference(p, 5) == "");
}
