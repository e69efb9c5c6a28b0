// Block reductions on the GPU emulator (block_reduce.h): a
// reduction in gpu-reduce's order becomes ONE kernel (block-stride partials,
// __shfl_down_sync per warp, warp results through __shared__ memory and
// __syncthreads(), the tree over them) whose bits are the interpreter's on
// the transformed program — Example 6.2 with Algorithm 6.1's split (19
// kernels before, 2 now), sum/prod/max/min, f64/f16/bf16 and integers,
// multi-dim reductions, identity padding, ⊥; orders that only resemble it
// keep the per-level kernels; and the deliberately wrong kernels: the mutants
// shuffle-wrong-offset (bits differ) and missing-barrier (the race detector).
#include <catch2/catch.hpp>

#include <string>

#include "backends/gpu/emulator.h"
#include "backends/gpu/gpu_backend.h"
#include "semantics/mutants.h"
#include "tests/backends/gpu_test_util.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
namespace gpu = stax::backends::gpu;

namespace {

Program parse(const std::string& s) { return test::parse_ok(s, "<gpu-block-reduce-test>"); }

Program transformed(const Program& p, const std::string& spec) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  xform::Context ctx;
  return xform::run_pipeline(p, steps, ctx).program;
}

int block_kernels(const gpu::GpuProgram& g) {
  int n = 0;
  for (const gpu::GpuKernel& k : g.source().kernels) n += k.threads != 0;
  return n;
}

const std::string kSpec62 = "split-reduction:k=2,gpu-reduce:threads=256:warp=32";

Program example_6_2() {
  return parse(test::slurp(std::string(STAX_SOURCE_DIR) + "/examples/example_6_2.stx"));
}

}  // namespace

TEST_CASE("Example 6.2 with Algorithm 6.1's split: two block-reduction kernels, the interpreter's bits") {
  Program t = transformed(example_6_2(), kSpec62);
  gpu::GpuOptions per_level;
  per_level.block_reductions = false;
  gpu::GpuProgram fused(t), levels(t, per_level);
  CHECK(levels.source().kernels.size() == 19);  // one per tree level, as before
  CHECK(fused.source().kernels.size() == 2);    // the 2 x 64 row halves, then the 64 rows
  CHECK(block_kernels(fused) == 2);
  CHECK(block_kernels(levels) == 0);
  const std::string& src = fused.source().text;
  CHECK(src.find("__shfl_down_sync(0xffffffffu, v, 16, 32)") != std::string::npos);
  CHECK(src.find("__syncthreads();") != std::string::npos);
  CHECK(src.find("STAX_SHARED(float, stax_sm, 8)") != std::string::npos);
  CHECK(test::gpu_difference(t, 62) == "");
  per_level.block_reductions = false;
  CHECK(test::gpu_difference(t, 62, per_level) == "");
}

TEST_CASE("block reductions: ops, dtypes, block shapes, padding and multi-dim reductions, bit for bit") {
  struct Case {
    const char* program;
    const char* spec;
  };
  const Case cases[] = {
      {"input x : f32[3, 1000]\nlet y : f32[3] = red(sum, 0.0, [1000], x)\noutput y\n", "gpu-reduce:threads=256:warp=32"},
      {"input x : f32[3, 1000]\nlet y : f32[3] = red(sum, 1.5, [1000], x)\noutput y\n", "gpu-reduce:threads=64:warp=32"},
      {"input x : f32[3, 1000]\nlet y : f32[3] = red(sum, -0.0, [1000], x)\noutput y\n", "gpu-reduce:threads=32:warp=32"},
      {"input x : f32[2, 7]\nlet y : f32[2] = red(sum, 0.0, [7], x)\noutput y\n", "gpu-reduce:threads=128:warp=8"},
      {"input x : f64[4, 300]\nlet y : f64[4] = red(sum, 0.0, [300], x)\noutput y\n", "gpu-reduce:threads=64:warp=16"},
      {"input x : f32[2, 5, 7]\nlet y : f32[2] = red(sum, 0.0, [5, 7], x)\noutput y\n", "gpu-reduce:threads=16:warp=4"},
      {"input x : f32[300]\nlet y : f32[] = red(sum, 0.0, [300], x)\noutput y\n", "gpu-reduce:threads=256:warp=32"},
      {"input x : f32[3, 500]\nlet y : f32[3] = red(max, -inf, [500], x)\noutput y\n", "gpu-reduce:threads=128:warp=32"},
      {"input x : f32[3, 500]\nlet y : f32[3] = red(min, 0.0, [500], x)\noutput y\n", "gpu-reduce:threads=64:warp=2"},
      {"input x : f32[3, 100]\nlet y : f32[3] = red(prod, 1.0, [100], map(fn(a) => add(1.0, mul(a, 0.01)), x))\noutput y\n",
       "gpu-reduce:threads=32:warp=8"},
      {"input x : i32[3, 999]\nlet y : i32[3] = red(sum, 7, [999], map(fn(a) => mul(a, 65537), x))\noutput y\n",
       "gpu-reduce:threads=256:warp=32"},
      {"input x : i64[2, 64]\nlet y : i64[2] = red(max, 0, [64], x)\noutput y\n", "gpu-reduce:threads=64:warp=1"},
      {"input x : f32[64, 4096]\nlet y : f32[64] = red(sum, 0.0, [4096], map(fn(a) => mul(a, a), x))\noutput y\n",
       "split-reduction:k=4,gpu-reduce:threads=128:warp=32"},
      {"input x : f16[3, 700]\nlet y : f16[3] = red(sum, 0.5, [700], x)\noutput y\n", "gpu-reduce:threads=64:warp=32"},
      {"input x : bf16[3, 700]\nlet y : bf16[3] = red(max, -inf, [700], x)\noutput y\n", "gpu-reduce:threads=32:warp=4"},
      {"input x : bf16[2, 4, 70]\nlet y : bf16[2, 4] = red(sum, 0.0, [70], x)\noutput y\n",
       "split-reduction:k=2,gpu-reduce:threads=16:warp=8"},
  };
  for (const Case& c : cases) {
    INFO(c.program << c.spec);
    Program t = transformed(parse(c.program), c.spec);
    gpu::GpuProgram g(t);
    CHECK(block_kernels(g) >= 1);
    CHECK(test::gpu_difference(t, 3) == "");
  }
}

TEST_CASE("block reductions: ⊥ in the operand is the interpreter's failure") {
  Program p = parse(
      "input a : f32[50]\ninput j : i64[2, 300]\n"
      "let y : f32[2] = red(sum, 0.0, [300], view(a, [2, 300], (i, k) -> (load(j, i, k))))\noutput y\n");
  Program t = transformed(p, "gpu-reduce:threads=64:warp=32");
  gpu::GpuProgram g(t);
  REQUIRE(block_kernels(g) == 1);
  Inputs in{{"a", test::f32({50}, std::vector<float>(50, 0.25f))}, {"j", test::i64({2, 300}, std::vector<int64_t>(600, 3))}};
  IeeeOutcome ok = g.run(in);
  REQUIRE_FALSE(ok.failure);
  CHECK(test::elems<float>(*ok.outputs.at("y")) == std::vector<float>{75.0f, 75.0f});
  std::vector<int64_t> bad(600, 3);
  bad[300 + 77] = 50;  // row 1, out of range
  Inputs in_bad{{"a", test::f32({50}, std::vector<float>(50, 0.25f))}, {"j", test::i64({2, 300}, bad)}};
  IeeeOutcome ref = eval_ieee(t, in_bad), got = g.run(in_bad);
  REQUIRE(ref.failure);
  REQUIRE(got.failure);
  CHECK(got.failure->index == std::vector<int64_t>{1});
  CHECK(got.failure->reason.find("out of range") != std::string::npos);
}

TEST_CASE("orders that only resemble a block reduction keep their per-level kernels") {
  Program p = parse("input x : f32[3, 1000]\nlet y : f32[3] = red(sum, 0.0, [1000], x)\noutput y\n");
  for (const char* spec : {"interleave-lanes:w=256", "pairwise", "split-reduction:k=4", "torch-sum"}) {
    INFO(spec);
    Program t = transformed(p, spec);
    gpu::GpuProgram g(t);
    CHECK(block_kernels(g) == 0);
    CHECK(test::gpu_difference(t, 9) == "");
  }
  // gpu-reduce's order with one tree level's pairing changed: re-derivation
  // finds no reduction it comes from.
  Program t = transformed(p, "gpu-reduce:threads=64:warp=32");
  CHECK(block_kernels(gpu::GpuProgram(parse(print_program(t)))) == 1);  // printed and parsed back: still
  std::string text = print_program(t);
  size_t at = text.find("i2 + 16*i3");
  REQUIRE(at != std::string::npos);
  text.replace(at, 10, "2*i2 + i3");  // adjacent pairs: not the order
  Program wrong = parse(text);
  CHECK(block_kernels(gpu::GpuProgram(wrong)) == 0);
  CHECK(test::gpu_difference(wrong, 9) == "");
}

TEST_CASE("block-reduction mutants are caught by the emulator; the product passes") {
  Program t = transformed(example_6_2(), kSpec62);
  Program small = transformed(parse("input x : f32[3, 1000]\nlet y : f32[3] = red(sum, 0.0, [1000], x)\noutput y\n"),
                              "gpu-reduce:threads=128:warp=32");
  for (const Program* p : {&t, &small}) CHECK(test::gpu_difference(*p, 5) == "");
  {
    ScopedMutant m("shuffle-wrong-offset");
    for (const Program* p : {&t, &small}) CHECK(test::gpu_difference(*p, 5) != "");
  }
  {
    ScopedMutant m("missing-barrier");
    for (const Program* p : {&t, &small}) {
      try {
        std::string d = test::gpu_difference(*p, 5);
        FAIL("no race reported; difference: " << d);
      } catch (const gpu::EmuError& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find("__shared__ element") != std::string::npos);
      }
    }
  }
}
