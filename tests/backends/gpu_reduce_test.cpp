// gpu-reduce: the order of one CUDA thread block's reduction as a
// core-language transform. Against a C++ model of the kernel (block-stride
// thread accumulators, __shfl_down_sync trees per warp, a tree over the warp
// results in shared memory), bit for bit; a full 256-lane halving tree (the
// wrong order: it pairs lanes of different warps first) differs; Example 6.2
// with Algorithm 6.1's split (k = 2 on S = 132) keeps its real semantics and
// its error bound, and runs bit-identically on the GPU emulator.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "backends/gpu/gpu_backend.h"
#include "oracle/checker.h"
#include "oracle/fuzz.h"
#include "semantics/evaluator.h"
#include "semantics/input_gen.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;

namespace {

sem::Program transformed(const sem::Program& p, const std::string& spec) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  xform::Context ctx;
  return xform::run_pipeline(p, steps, ctx).program;
}

/// What a CUDA block computes for one row: m threads, warps of w lanes.
float block_sum(const float* x, int64_t n, float init, int m, int w) {
  std::vector<float> v(size_t(m), -0.0f);
  for (int t = 0; t < m; ++t)
    for (int64_t j = t; j < n; j += m) v[size_t(t)] += x[j];
  std::vector<float> warp(size_t(m / w));
  for (int g = 0; g < m / w; ++g) {
    float* l = v.data() + g * w;
    for (int off = w / 2; off >= 1; off /= 2)  // __shfl_down_sync(v, off)
      for (int i = 0; i < off; ++i) l[i] += l[i + off];
    warp[size_t(g)] = l[0];
  }
  for (int h = m / w / 2; h >= 1; h /= 2)
    for (int i = 0; i < h; ++i) warp[size_t(i)] += warp[size_t(i + h)];
  return init + warp[0];
}

}  // namespace

TEST_CASE("gpu-reduce gives the bits of a CUDA block reduction; a full halving tree does not") {
  int differs = 0;
  for (auto [m, w] : {std::pair{256, 32}, std::pair{64, 32}, std::pair{32, 32}, std::pair{128, 8}}) {
    for (int64_t n : {1, 7, 32, 255, 256, 1000, 8192}) {
      std::string text = "input x : f32[3, " + std::to_string(n) + "]\nlet y : f32[3] = red(sum, 0.0, [" +
                         std::to_string(n) + "], x)\noutput y\n";
      sem::Program p = test::parse_ok(text, "<gpu-reduce>");
      sem::Program t = transformed(p, "gpu-reduce:threads=" + std::to_string(m) + ":warp=" + std::to_string(w));
      sem::Program wrong = transformed(p, "interleave-lanes:w=" + std::to_string(m));
      for (sem::InputKind kind : {sem::InputKind::Normal, sem::InputKind::Cancellation}) {
        sem::Inputs in = sem::generate_inputs(p, kind, uint64_t(n) * 7 + uint64_t(m));
        const float* x = in.at("x").as<float>();
        sem::IeeeOutcome got = sem::eval_ieee(t, in), bad = sem::eval_ieee(wrong, in);
        REQUIRE_FALSE(got.failure);
        for (int64_t row = 0; row < 3; ++row) {
          float want = block_sum(x + row * n, n, 0.0f, m, w);
          INFO("m=" << m << " w=" << w << " n=" << n << " row " << row);
          CHECK(std::bit_cast<uint32_t>(got.outputs.at("y")->as<float>()[row]) == std::bit_cast<uint32_t>(want));
          differs += bad.outputs.at("y")->as<float>()[row] != want;
        }
      }
    }
  }
  CHECK(differs > 0);  // the wrong order is caught by the same comparison
}

TEST_CASE("gpu-reduce refuses parameters no CUDA block has") {
  sem::Program p = test::parse_ok("input x : f32[300]\nlet y : f32[] = red(sum, 0.0, [300], x)\noutput y\n");
  for (const char* spec : {"gpu-reduce:threads=96", "gpu-reduce:warp=48", "gpu-reduce:threads=16:warp=32",
                           "gpu-reduce:threads=2048"}) {
    INFO(spec);
    CHECK_THROWS_AS(transformed(p, spec), xform::TransformError);
  }
  CHECK_NOTHROW(transformed(p, "gpu-reduce:threads=1024:warp=32"));
}

TEST_CASE("Example 6.2: Algorithm 6.1's split (k = 2) and the block order, class real and on the GPU emulator") {
  sem::Program p = test::parse_ok(test::slurp(std::string(STAX_SOURCE_DIR) + "/examples/example_6_2.stx"));
  std::string spec = "split-reduction:k=2,gpu-reduce:threads=256:warp=32";
  sem::Program t = transformed(p, spec);
  oracle::CheckOptions opt;
  opt.trials = 3;
  oracle::Verdict v =
      oracle::check_transform(p, std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec)), opt);
  INFO(v.message);
  CHECK(v.status == oracle::Status::Verified);
  CHECK(v.cls == xform::SemClass::Real);
  CHECK(v.bound_checked >= 3 * 64);  // the 64 rows, and their partials
  CHECK(v.max_ratio <= 1.0);
  sem::Inputs in = sem::generate_inputs(p, sem::InputKind::Normal, 62);
  CHECK(oracle::outcome_difference(t, sem::eval_ieee(t, in), backends::gpu::run(t, in)) == std::nullopt);
}
