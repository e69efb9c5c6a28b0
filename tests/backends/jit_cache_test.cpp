// The JIT's kernel cache is bounded and releases what it evicts: in a long
// campaign every program compiles new kernels, so resident memory and the
// process's memory mappings must stay flat (a campaign of ~13,000 programs
// used to end in "Unable to allocate section memory" at the kernel's
// vm.max_map_count). A kernel evicted while a compiled program still holds
// it keeps running; the deliberately wrong case is the unbounded cache,
// whose mappings grow with every compile.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "oracle/fuzz.h"
#include "oracle/gen/program_gen.h"
#include "semantics/input_gen.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

int64_t mapping_count() {
  std::ifstream f("/proc/self/maps");
  std::string line;
  int64_t n = 0;
  while (std::getline(f, line)) ++n;
  return n;
}

/// Resident memory in KiB (VmRSS).
int64_t resident_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

/// A program whose kernel text is distinct for every k.
Program distinct_program(int k) {
  return test::parse_ok("input x : f32[64]\nlet y = map(fn(a) => add(mul(a, " + std::to_string(k) +
                        ".0), 1.0), x)\noutput y\n");
}

/// Compiles and runs programs [from, to); every result checked.
void compile_range(int from, int to) {
  for (int k = from; k < to; ++k) {
    Program p = distinct_program(k);
    cpu::CompiledProgram cp(p, {1, false, 0});
    std::vector<float> v(64);
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
    Inputs in;
    in["x"] = test::f32({64}, v);
    IeeeOutcome o = cp.run(in);
    REQUIRE(!o.failure);
    REQUIRE(o.outputs.at("y")->get_double(3) == 3.0 * k + 1.0);
  }
}

}  // namespace

TEST_CASE("jit cache: bounded, releases evicted kernels, keeps those still held") {
  cpu::Jit& jit = cpu::Jit::instance();
  jit.set_capacity(16);
  Program held_p = distinct_program(-7);
  cpu::CompiledProgram held(held_p, {1, false, 0});

  compile_range(0, 100);  // warm-up: allocator pools, LLVM's own tables
  int64_t maps0 = mapping_count(), rss0 = resident_kib();
  compile_range(100, 2100);
  int64_t maps1 = mapping_count(), rss1 = resident_kib();
  CHECK(jit.cached_count() <= 16);
  INFO("mappings after 100 compiles: " << maps0 << ", after 2,100: " << maps1 << "; resident " << rss0 << " -> "
                                       << rss1 << " KiB");
  CHECK(maps1 - maps0 < 60);
  // AddressSanitizer keeps freed memory in its quarantine (256 MB): the
  // resident size says nothing there, the mappings still do.
  if (test::time_scale() == 1) CHECK(rss1 - rss0 < 32 * 1024);

  // The held kernel was evicted from the cache long ago, and its engine was
  // replaced after 2,000 compilations (jit.cpp, kEngineCompiles); its code
  // lives on with the old engine.
  Inputs in;
  in["x"] = test::f32({64}, std::vector<float>(64, 2.0f));
  IeeeOutcome o = held.run(in);
  REQUIRE(!o.failure);
  CHECK(o.outputs.at("y")->get_double(0) == -13.0);

  // The deliberately wrong case: an unbounded cache grows with every compile.
  jit.set_capacity(int64_t(1) << 40);
  int64_t before = mapping_count();
  compile_range(1000, 1300);
  int64_t after = mapping_count();
  INFO("mappings before: " << before << ", after 300 more unbounded compiles: " << after);
  CHECK(after - before >= 100);
  jit.set_capacity(512);
  CHECK(jit.cached_count() <= 512);
}

TEST_CASE("jit batch: a program's kernels in one module, repeated kernels shared, the cache consulted first") {
  cpu::Jit& jit = cpu::Jit::instance();
  jit.set_capacity(512);
  // Three bindings, two of them the same kernel text (y and z), one new (w).
  Program p = test::parse_ok(
      "input x : f32[64]\nlet y = map(fn(a) => add(mul(a, 3.0), 1.0), x)\n"
      "let z = map(fn(a) => add(mul(a, 3.0), 1.0), x)\nlet w = map(fn(a, b) => sub(a, b), y, z)\n"
      "let v = map(fn(a) => mul(a, 0.5), w)\noutput w\noutput v\n");
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.37f;
  Inputs in;
  in["x"] = test::f32({64}, v);
  cpu::CompiledProgram one(p, {1, false, 1, false});
  cpu::CompiledProgram batch(p, {1, false, 2, true});
  IeeeOutcome a = one.run(in), b = batch.run(in), ref = eval_ieee(p, in);
  REQUIRE(!a.failure);
  REQUIRE(!b.failure);
  for (const char* o : {"w", "v"}) {
    CHECK(test::bits32(*ref.outputs.at(o)) == test::bits32(*b.outputs.at(o)));
    CHECK(test::bits32(*a.outputs.at(o)) == test::bits32(*b.outputs.at(o)));
  }
  // Compiled again in a batch: every kernel comes from the cache.
  cpu::CompiledProgram again(p, {1, false, 2, true});
  for (const cpu::KernelReport& r : again.kernels()) CHECK(r.cached);
  // The deliberately wrong case: a program whose kernels differ in one
  // constant gives other bits, batch or not (the kernels are not confused).
  Program q = test::parse_ok(
      "input x : f32[64]\nlet y = map(fn(a) => add(mul(a, 3.0), 1.0), x)\n"
      "let z = map(fn(a) => add(mul(a, 3.0), 1.5), x)\nlet w = map(fn(a, b) => sub(a, b), y, z)\n"
      "let v = map(fn(a) => mul(a, 0.5), w)\noutput w\noutput v\n");
  cpu::CompiledProgram other(q, {1, false, 2, true});
  IeeeOutcome c = other.run(in);
  REQUIRE(!c.failure);
  CHECK(test::bits32(*b.outputs.at("w")) != test::bits32(*c.outputs.at("w")));
  CHECK(test::bits32(*eval_ieee(q, in).outputs.at("w")) == test::bits32(*c.outputs.at("w")));
}

TEST_CASE("kernel pipeline: the bits of LLVM's pipelines; the lane loops the code generator marks unrolled") {
  cpu::Jit& jit = cpu::Jit::instance();
  REQUIRE(jit.pipeline() == cpu::Pipeline::Kernel);  // the default (STAX_JIT_PIPELINE unset in tests)
  // Row sums with 16 lanes: the lane loops carry llvm.loop.unroll.full, so
  // their accumulators become registers; and generated programs.
  Program rows = test::parse_ok(
      "input x : f32[64, 256]\nlet s : f32[64] = red(sum, 0.0, [256], x)\n"
      "let y = map(fn(a) => mul(exp(a), 0.5), s)\noutput y\n");
  xform::Context ctx;
  rows = xform::run_pipeline(rows, std::get<std::vector<xform::Step>>(xform::parse_pipeline("interleave-lanes:w=16")), ctx)
             .program;
  std::vector<Program> programs{rows};
  for (uint64_t seed = 0; seed < 12; ++seed) programs.push_back(oracle::generate_program(9100 + seed));
  for (const Program& p : programs)
    for (int level = 1; level <= 3; ++level)
      for (cpu::Pipeline pl : {cpu::Pipeline::Kernel, cpu::Pipeline::Llvm}) {
        jit.set_pipeline(pl);
        cpu::CompiledProgram cp(p, {1, false, level, level == 2});
        jit.set_pipeline(cpu::Pipeline::Kernel);
        for (sem::InputKind kind : sem::kBackendInputKinds) {
          Inputs in = sem::generate_inputs(p, kind, 17);
          INFO(print_program(p) << "O" << level << (pl == cpu::Pipeline::Llvm ? " (LLVM's pipeline)" : ""));
          CHECK(oracle::outcome_difference(p, eval_ieee(p, in), cp.run(in)).value_or("") == "");
        }
      }
  // The optimised lane kernel keeps no accumulator in memory at O1..O3. The
  // deliberately wrong case: at O0 (no pass unrolls the marked loops) the
  // accumulators stay in an alloca, which the same check sees.
  auto lane_kernel_ir = [&](int level) {
    cpu::CompiledProgram cp(rows, {1, true, level});
    for (size_t k = 0; k < cp.kernels().size(); ++k)
      if (cp.kernels()[k].lanes) return cp.ir(k);
    return std::string();
  };
  for (int level = 1; level <= 3; ++level) {
    std::string ir = lane_kernel_ir(level);
    REQUIRE(!ir.empty());
    CHECK(ir.find("alloca") == std::string::npos);
  }
  CHECK(lane_kernel_ir(0).find("alloca") != std::string::npos);
}
