// Small kernels (KernelShape::whole, backends/cpu/codegen.h): under
// kMaxWholeWork elements of work a kernel is run as one task over its whole
// range and compiled with constant loop bounds, which is most of what makes
// fuzzing at O3 compile quickly. Same bits as the interpreter at any thread
// count (the codegen mutants of cpu_test, on small programs, are caught in
// whole kernels); a whole kernel computes its whole range whatever range it
// is given, a split one only the rows given.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
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

TEST_CASE("a whole kernel computes its whole range whatever range it is given") {
  Program p = parse(kSmall);
  cpu::KernelSpec spec = cpu::make_spec(p, p.bindings[0]);
  REQUIRE(cpu::kernel_shape(spec).whole);
  REQUIRE(cpu::kernel_shape(spec).parallel_extent == 6);
  cpu::CompiledKernel k = cpu::Jit::instance().compile(
      cpu::kernel_key(spec) + "whole-range test\n",
      [&](llvm::Module& m, const std::string& f) { return cpu::emit_kernel(m, f, spec); }, 3);
  std::vector<float> x(30, 2.0f), y(5, 3.0f);
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 6}, {2, 6}, {0, 1}}) {
    INFO("range [" << b << ", " << e << ")");
    std::vector<float> out(30, -1.0f);
    std::vector<void*> bufs{out.data(), x.data(), y.data()};
    cpu::FailRecord fail;
    CHECK(k.fn(bufs.data(), b, e, &fail) == 0);
    CHECK(fail.reason < 0);
    CHECK(out[0] == 8.0f);  // 2 * 3 + 2, rows 0 and 5 alike
    CHECK(out[29] == 8.0f);
  }
  // The deliberately wrong case: a kernel of the same program over 4096
  // elements is split, and computes only the rows it is given.
  Program big = parse("input x : f32[64, 64]\nlet y : f32[64, 64] = map(neg, x)\noutput y\n");
  cpu::KernelSpec bs = cpu::make_spec(big, big.bindings[0]);
  REQUIRE(!cpu::kernel_shape(bs).whole);
  cpu::CompiledKernel kb = cpu::Jit::instance().compile(
      cpu::kernel_key(bs), [&](llvm::Module& m, const std::string& f) { return cpu::emit_kernel(m, f, bs); }, 3);
  std::vector<float> bx(4096, 1.0f), bout(4096, 0.0f);
  std::vector<void*> bb{bout.data(), bx.data()};
  cpu::FailRecord bf;
  CHECK(kb.fn(bb.data(), 2, 64, &bf) == 0);
  CHECK(bout[0] == 0.0f);  // row 0 not computed
  CHECK(bout[4095] == -1.0f);
}
