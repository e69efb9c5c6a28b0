// The GPU backend's CUDA C (issue 18): NVRTC compiles every supported
// example and a few generated programs to PTX with the exactness flags, and
// ptxas (where the toolkit has it) assembles that PTX for sm_90, so an
// invalid kernel fails here without a GPU; the source never contracts
// (no fma but the program's own fma op); transcendental ops are refused
// and rand with a clear message; block-reduction kernels (warp shuffles,
// __shared__ memory, barriers) and their mutants assemble. Each check has
// its wrong case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/cpu/jit.h"
#include "backends/gpu/block_reduce.h"
#include "backends/gpu/gpu_backend.h"
#include "backends/gpu/nvrtc.h"
#include "oracle/program_gen.h"
#include "semantics/mutants.h"
#include "tests/backends/gpu_test_util.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
namespace gpu = stax::backends::gpu;

namespace {

Program parse(const std::string& s) { return test::parse_ok(s, "<gpu-codegen-test>"); }

std::string source_of(const Program& p) { return gpu::emit_cuda(gpu::gpu_normal_form(p)).text; }

/// ptxas's verdict on `ptx` for sm_90: "" when it assembles, its output when
/// not, "no ptxas" when none is found (gpu::find_ptxas).
std::string ptxas(const std::string& ptx) {
  std::string tool = gpu::find_ptxas();
  if (tool.empty()) return "no ptxas";
  auto dir = test::scratch("gpu_ptxas");
  std::ofstream(dir / "k.ptx") << ptx;
  std::string cmd = tool + " -arch=sm_90 " + (dir / "k.ptx").string() + " -o " + (dir / "k.cubin").string() + " > " +
                    (dir / "log").string() + " 2>&1";
  if (std::system(cmd.c_str()) == 0) return "";
  std::ifstream log(dir / "log");
  return std::string(std::istreambuf_iterator<char>(log), {}) + "(ptxas failed)";
}

/// "" when the program's kernels compile to PTX and assemble.
std::string compiles(const Program& p) {
  gpu::PtxResult r = gpu::compile_ptx(source_of(p));
  if (!r.ok) return "NVRTC: " + r.log;
  std::string a = ptxas(r.ptx);
  return a == "no ptxas" ? "" : a;
}

}  // namespace

TEST_CASE("the NVRTC options carry the exactness flags") {
  std::vector<std::string> o = gpu::nvrtc_options("compute_90");
  for (const char* f : {"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false",
                        "--gpu-architecture=compute_90"})
    CHECK(std::find(o.begin(), o.end(), f) != o.end());
  CHECK(std::find(o.begin(), o.end(), "--fmad=true") == o.end());
}

TEST_CASE("NVRTC compiles every supported example and generated programs; ptxas assembles them") {
  if (!gpu::have_nvrtc()) {
    WARN("NVRTC not found, only the refusal is checked: " << gpu::nvrtc_status());
    CHECK(gpu::compile_ptx("").log.find("no NVRTC") != std::string::npos);
    return;
  }
  int n = 0;
  for (const auto& [name, p] : test::gpu_examples()) {
    INFO(name);
    CHECK(compiles(p) == "");
    ++n;
  }
  CHECK(n >= 5);
  oracle::GenOptions opt;  // f16/bf16 included
  int g = 0;
  for (uint64_t seed = 1; g < 10 && seed < 100; ++seed) {
    Program p = oracle::generate_program(seed, opt);
    if (gpu::gpu_unsupported(p)) continue;
    INFO("seed " << seed);
    CHECK(compiles(p) == "");
    ++g;
  }
  CHECK(g == 10);
  // The wrong case: a kernel that does not compile is reported, not hidden.
  gpu::PtxResult bad = gpu::compile_ptx(source_of(parse("input x : f32[4]\nlet y : f32[4] = map(neg, x)\noutput y\n")) +
                                        "\nextern \"C\" __global__ void broken() { undeclared(); }\n");
  CHECK_FALSE(bad.ok);
  CHECK(bad.log.find("undeclared") != std::string::npos);
}

TEST_CASE("--arch: sm_NN or compute_NN as NVRTC's virtual architecture; anything else refused") {
  CHECK(gpu::nvrtc_arch("sm_90") == "compute_90");
  CHECK(gpu::nvrtc_arch("compute_80") == "compute_80");
  for (const char* bad : {"sm_4", "sm_", "sm_9x", "compute", "banana", "sm_123456", ""}) {
    INFO(bad);
    CHECK_FALSE(gpu::nvrtc_arch(bad).has_value());
  }
  auto dir = test::scratch("gpu_arch_cli");
  std::string ex = std::string(STAX_SOURCE_DIR) + "/examples/example_6_1.stx";
  test::Run bad = test::run_stax(dir, "run " + ex + " --random-inputs 3 --backend gpu-emu --arch banana");
  CHECK(bad.code == 2);
  CHECK(test::contains(bad.err, "--arch expects sm_NN or compute_NN"));
  CHECK(test::run_stax(dir, "run " + ex + " --random-inputs 3 --backend gpu-emu --arch sm_80").code == 0);
  if (gpu::have_nvrtc()) {  // another architecture compiles too
    gpu::PtxResult r = gpu::compile_ptx(source_of(parse("input x : f32[4]\nlet y : f32[4] = map(exp, x)\noutput y\n")),
                                        "compute_80");
    CHECK(r.ok);
    CHECK(test::contains(r.ptx, ".target sm_80"));
  }
}

TEST_CASE("ptxas rejects invalid PTX (when one is found)") {
  std::string v = ptxas(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n");
  if (v == "no ptxas") WARN("no ptxas found: PTX is not assembled");
  else CHECK(v != "");
}

TEST_CASE("NVRTC is found at run time or its absence is explained") {
  std::string s = gpu::nvrtc_status();
  INFO(s);
  CHECK_FALSE(s.empty());
  if (!gpu::have_nvrtc()) CHECK(s.find("no NVRTC") != std::string::npos);
  else CHECK(s.find("nvrtc") != std::string::npos);
}

TEST_CASE("the emitted source never contracts; the fma-contract mutant does") {
  Program p = parse(
      "input x : f32[16]\ninput y : f64[16]\n"
      "let a : f32[16] = map(fn(u) => add(mul(u, u), u), x)\n"
      "let b : f64[16] = map(fn(u) => sub(mul(u, 3.0), div(u, 7.0)), y)\n"
      "output a, b\n");
  std::string s = source_of(p);
  CHECK(s.find("fma") == std::string::npos);
  CHECK(s.find("contract") == std::string::npos);
  ScopedMutant m("fma-contract");
  CHECK(source_of(p).find("fmaf(") != std::string::npos);
}

TEST_CASE("binary64 transcendental ops and rand are refused with a clear message") {
  for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
           {"input x : f64[4]\nlet y : f64[4] = map(exp, x)\noutput y\n", "exp on f64"},
           {"input x : f64[4]\nlet y : f64[4] = map(sigmoid, x)\noutput y\n", "sigmoid on f64"},
           {"input x : f32[4]\nlet y : f32[4] = map(fn(a, b) => add(a, b), x, rand(f32, [4], 3))\noutput y\n", "rand"}}) {
    Program p = parse(text);
    REQUIRE(gpu::gpu_unsupported(p) == what);
    try {
      gpu::GpuProgram gp(p);
      FAIL("compiled a program the slice cannot run exactly");
    } catch (const backends::cpu::CompileError& e) {
      CHECK(std::string(e.what()) == "not supported by the GPU backend yet: " + what);
    }
  }
  // The wrong case: supported programs are not refused (binary32 and half
  // transcendental ops run mathlib's fast paths as device code).
  CHECK_FALSE(gpu::gpu_unsupported(parse("input x : f32[4]\nlet y : f32[4] = map(sqrt, x)\noutput y\n")));
  CHECK_FALSE(gpu::gpu_unsupported(parse("input x : f32[4]\nlet y : f32[4] = map(exp, x)\noutput y\n")));
  CHECK_FALSE(gpu::gpu_unsupported(parse("input x : bf16[4]\nlet y : bf16[4] = map(erf, x)\noutput y\n")));
}

TEST_CASE("stax check --backend gpu-emu compares T(P) on the emulator") {
  auto dir = test::scratch("gpu_check_cli");
  std::string ex = std::string(STAX_SOURCE_DIR) + "/examples/example_6_2.stx";
  test::Run ok = test::run_stax(dir, "check " + ex + " --transform normalize --backend gpu-emu --no-prove --trials 5");
  CHECK(ok.code == 0);
  CHECK(test::contains(ok.out, "backend gpu-emu: bit-identical"));
  test::Run bad = test::run_stax(dir, "check " + ex + " --transform normalize --backend gpu-nope --no-prove");
  CHECK(bad.code == 2);
}

TEST_CASE("stax run --backend gpu-emu and gpu, end to end") {
  auto dir = test::scratch("gpu_cli");
  std::string ex = std::string(STAX_SOURCE_DIR) + "/examples/example_6_1.stx";
  test::Run interp = test::run_stax(dir, "run " + ex + " --random-inputs 3 --show 4");
  test::Run emu = test::run_stax(dir, "run " + ex + " --random-inputs 3 --show 4 --backend gpu-emu");
  CHECK(interp.code == 0);
  CHECK(emu.code == 0);
  CHECK(emu.out == interp.out);
  // Example 5.1 (GELU: erf) on the emulator: the interpreter's bits.
  std::string gelu = std::string(STAX_SOURCE_DIR) + "/examples/example_5_1_forward.stx";
  CHECK(test::run_stax(dir, "run " + gelu + " --random-inputs 3 --show 4 --backend gpu-emu").out ==
        test::run_stax(dir, "run " + gelu + " --random-inputs 3 --show 4").out);
  std::ofstream(dir / "exp64.stx") << "input x : f64[4]\nlet y : f64[4] = map(exp, x)\noutput y\n";
  test::Run refused = test::run_stax(dir, "run " + (dir / "exp64.stx").string() + " --random-inputs 3 --backend gpu-emu");
  CHECK(refused.code == 2);
  CHECK(test::contains(refused.err, "not supported by the GPU backend yet"));
  // Without a driver (this machine), a clear message and exit 2; with one, the interpreter's bits.
  test::Run dev = test::run_stax(dir, "run " + ex + " --random-inputs 3 --show 4 --backend gpu");
  if (dev.code == 2) CHECK(test::contains(dev.err, "no GPU driver"));
  else CHECK(dev.out == interp.out);
}

TEST_CASE("block-reduction kernels (shuffles, shared memory, barriers) compile and assemble; so do their mutants") {
  Program p = parse(test::slurp(std::string(STAX_SOURCE_DIR) + "/examples/example_6_2.stx"));
  auto steps = std::get<std::vector<xform::Step>>(
      xform::parse_pipeline("split-reduction:k=2,gpu-reduce:threads=256:warp=32"));
  xform::Context ctx;
  Program t = xform::run_pipeline(p, steps, ctx).program;
  Program small = parse("input x : i64[3, 100]\nlet y : i64[3] = red(max, 0, [100], x)\noutput y\n");
  small = xform::run_pipeline(small, std::get<std::vector<xform::Step>>(xform::parse_pipeline("gpu-reduce:threads=16:warp=8")), ctx).program;
  auto block_source = [](const Program& q) {
    gpu::BlockPlan plan = gpu::plan_block_reductions(q);
    CHECK_FALSE(plan.blocks.empty());
    return gpu::emit_cuda(plan.program, plan.blocks).text;
  };
  if (!gpu::have_nvrtc()) {
    WARN("NVRTC not found: " << gpu::nvrtc_status());
    return;
  }
  for (const char* mutant : {"", "shuffle-wrong-offset", "missing-barrier"}) {
    ScopedMutant m(mutant);
    for (const Program* q : {&t, &small}) {
      INFO("mutant '" << mutant << "'");
      std::string src = block_source(*q);
      CHECK(src.find("__shfl_down_sync(") != std::string::npos);
      gpu::PtxResult r = gpu::compile_ptx(src);
      REQUIRE(r.ok);
      CHECK(r.ptx.find("shfl.sync.down") != std::string::npos);
      CHECK(r.ptx.find("bar.sync") != std::string::npos);
      std::string a = ptxas(r.ptx);
      CHECK((a == "" || a == "no ptxas"));
    }
  }
}
