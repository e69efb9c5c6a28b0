// The GPU backend's CUDA C: NVRTC compiles every supported
// example and a few generated programs to PTX with the exactness flags, and
// ptxas (where the toolkit has it) assembles that PTX for sm_90, so an
// invalid kernel fails here without a GPU; the source never contracts
// (no fma but the program's own fma op); binary64 transcendental ops
// (mathlib's fast paths, Payne-Hanek's 128-bit products included) and rand
// compile as device code, with the host's table layout; block-reduction
// kernels (warp shuffles, __shared__ memory, barriers) and their mutants
// assemble. Each check has its wrong case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "backends/cpu/jit.h"
#include "backends/gpu/block_reduce.h"
#include "backends/gpu/cuda_math.h"
#include "backends/gpu/gpu_backend.h"
#include "backends/gpu/nvrtc.h"
#include "mathlib/f32_tables.h"
#include "oracle/gen/program_gen.h"
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

TEST_CASE("binary64 transcendental ops and rand compile as device code; ptxas assembles them") {
  Program p = parse(
      "input x : f64[8]\ninput y : f64[8]\ninput h : f16[8]\n"
      "let a : f64[8] = map(fn(u) => add(add(exp(u), expm1(u)), add(log(u), log2(u))), x)\n"
      "let b : f64[8] = map(fn(u) => add(add(log10(u), log1p(u)), add(tanh(u), erf(u))), x)\n"
      "let c : f64[8] = map(fn(u, v) => add(add(sin(u), cos(u)), add(pow(u, v), sigmoid(u))), x, y)\n"
      "let r : f64[8] = map(fn(u, q) => add(u, q), x, rand(f64, [8], 3))\n"
      "let s : f32[8] = rand(f32, [8], 4)\nlet t : f16[8] = map(fn(u, q) => mul(u, q), h, rand(f16, [8], 5))\n"
      "output a, b, c, r, s, t\n");
  REQUIRE_FALSE(gpu::gpu_unsupported(p));  // nothing is refused now
  std::string src = source_of(p);
  // The kernels call mathlib's fast paths and the interpreter's hash, not
  // libdevice's exp or a hash of their own.
  CHECK(test::contains(src, "stax::math::f64::pow_fast(x, y, &r, stax_T.f64, F)"));
  CHECK(test::contains(src, "stax_cr_sin(t"));
  CHECK(test::contains(src, "stax_rand_f64(3ull, "));
  CHECK(test::contains(src, "inline uint32_t rand_bits24(uint64_t key, int64_t flat)"));
  if (!gpu::have_nvrtc()) {
    WARN("NVRTC not found: the binary64 math is compiled by the emulator's tests only");
    return;
  }
  gpu::PtxResult r = gpu::compile_ptx(src);
  INFO(r.log);
  REQUIRE(r.ok);
  std::string a = ptxas(r.ptx);
  if (a == "no ptxas") WARN("no ptxas found: PTX is not assembled");
  else CHECK(a == "");
  // The module's table global has the host's layout: its size is the host's
  // MathTables (binary32, binary64 tables and the fault settings).
  CHECK(test::contains(r.ptx, "stax_T[" + std::to_string(gpu::cuda_math_tables_size()) + "]"));
  // The wrong cases: the binary64 text needs the shim's std names (NVRTC
  // has no standard library: without std::nearbyint the kernels do not
  // compile), and the table size of the binary32 tables alone is not the
  // module's.
  std::string no_shim = src;
  size_t at = no_shim.find("__device__ __forceinline__ double nearbyint(double x)");
  REQUIRE(at != std::string::npos);
  no_shim.insert(at, "// ");
  gpu::PtxResult bad = gpu::compile_ptx(no_shim);
  CHECK_FALSE(bad.ok);
  CHECK(test::contains(bad.log, "nearbyint"));
  CHECK_FALSE(test::contains(r.ptx, "stax_T[" + std::to_string(sizeof(math::f32::Tables)) + "]"));
}

TEST_CASE("the generated programs of the fuzz campaigns (rand, binary64 math) compile with NVRTC") {
  if (!gpu::have_nvrtc()) return;
  oracle::GenOptions opt;
  opt.allow_rand = true;
  // Kernel calls (not the prelude's definitions): "stax_rand_f32(5ull, t3)",
  // "const double t5 = stax_cr_exp(t4, fail);".
  auto math64 = [](const std::string& src) {
    std::istringstream in(src);
    for (std::string line; std::getline(in, line);)
      if (test::contains(line, "const double t") && test::contains(line, "stax_cr_")) return true;
    return false;
  };
  int with_rand = 0, with_math = 0;
  for (uint64_t seed = 500; (with_rand < 3 || with_math < 3) && seed < 900; ++seed) {
    Program p = oracle::generate_program(seed, opt);
    std::string src = source_of(p);
    bool r = test::contains(src, "ull, t"), m = math64(src);
    if (!(r && with_rand < 3) && !(m && with_math < 3)) continue;
    with_rand += r;
    with_math += m;
    INFO("seed " << seed);
    CHECK(compiles(p) == "");
  }
  CHECK(with_rand >= 3);
  CHECK(with_math >= 3);
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
  // binary64 math and rand on the emulator: the interpreter's bits; the
  // wrong case, another rand key, other bits.
  auto exp64 = [](int key) {
    return "input x : f64[4]\nlet y : f64[4] = map(fn(a, r) => add(exp(a), r), x, rand(f64, [4], " +
           std::to_string(key) + "))\noutput y\n";
  };
  std::ofstream(dir / "exp64.stx") << exp64(3);
  std::ofstream(dir / "exp64b.stx") << exp64(4);
  std::string run64 = "run " + (dir / "exp64.stx").string() + " --random-inputs 3 --show 4";
  test::Run e64 = test::run_stax(dir, run64 + " --backend gpu-emu");
  CHECK(e64.code == 0);
  CHECK(e64.out == test::run_stax(dir, run64).out);
  CHECK(e64.out != test::run_stax(dir, "run " + (dir / "exp64b.stx").string() + " --random-inputs 3 --show 4").out);
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
