// Small kernels (KernelShape::whole, backends/cpu/codegen.h): under
// kMaxWholeWork elements of work a kernel is run as one task over its whole
// range and compiled with constant loop bounds, which is most of what makes
// fuzzing at O3 compile quickly. Same bits as the interpreter at any thread
// count; a whole kernel called over part of its range refuses (returns 1
// with its reason) instead of computing elements it was not asked for.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/cpu/codegen.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/jit.h"
#include "semantics/random_inputs.h"
#include "semantics/evaluator.h"
#include "semantics/printer.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

Program parse(const std::string& s) { return test::parse_ok(s, "<whole-test>"); }

const char* kSmall =
    "input x : f32[6, 5]\ninput y : f32[5]\n"
    "let a : f32[6, 5] = map(fn(u, v) => add(mul(u, v), u), x, view(y, [6, 5], (i, j) -> (j)))\n"
    "let s : f32[6] = red(sum, 0.0, [5], a)\noutput s\n";

}  // namespace

TEST_CASE("small kernels run whole, with the interpreter's bits at any thread count") {
  Program p = parse(kSmall);
  for (int threads : {1, 2})
    for (int level : {0, 3}) {
      INFO("threads " << threads << ", O" << level);
      cpu::CpuOptions opt{threads, false, level};
      opt.min_parallel_work = 0;  // a split kernel would be split here
      cpu::CompiledProgram cp(p, opt);
      for (const cpu::KernelReport& k : cp.kernels()) CHECK(k.whole);
      Inputs in = random_inputs(p, 7);
      IeeeOutcome a = eval_ieee(p, in), b = cp.run(in);
      REQUIRE(!a.failure);
      REQUIRE(!b.failure);
      CHECK(test::bits32(*a.outputs.at("s")) == test::bits32(*b.outputs.at("s")));
    }
  // At kMaxWholeWork elements of work a kernel is split again.
  Program big = parse("input x : f32[64, 64]\nlet y : f32[64, 64] = map(neg, x)\noutput y\n");
  cpu::CompiledProgram cb(big, {1, false, 3});
  CHECK(!cb.kernels().at(0).whole);
}

TEST_CASE("a whole kernel called over part of its range refuses") {
  Program p = parse(kSmall);
  cpu::KernelSpec spec = cpu::make_spec(p, p.bindings[0]);
  REQUIRE(cpu::kernel_shape(spec).whole);
  REQUIRE(cpu::kernel_shape(spec).parallel_extent == 6);
  cpu::CompiledKernel k = cpu::Jit::instance().compile(
      cpu::kernel_key(spec) + "whole-range test\n",
      [&](llvm::Module& m, const std::string& f) { return cpu::emit_kernel(m, f, spec); }, 3);
  std::vector<float> out(30, -1.0f), x(30, 2.0f), y(5, 3.0f);
  std::vector<void*> bufs{out.data(), x.data(), y.data()};
  cpu::FailRecord whole;
  CHECK(k.fn(bufs.data(), 0, 6, &whole) == 0);
  CHECK(whole.reason < 0);
  CHECK(out[29] == 8.0f);  // 2 * 3 + 2
  // The wrong call: rows [2, 6) of 6. It must not run (nor run all rows).
  std::vector<float> out2(30, -1.0f);
  bufs[0] = out2.data();
  cpu::FailRecord part;
  CHECK(k.fn(bufs.data(), 2, 6, &part) == 1);
  REQUIRE(part.reason >= 0);
  CHECK(test::contains(k.reasons.at(size_t(part.reason)), "whole-range kernel"));
  CHECK(out2[0] == -1.0f);
  CHECK(out2[29] == -1.0f);
}
