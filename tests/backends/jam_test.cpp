// Jammed chain members (backends/cpu/jam.h): softmax's division over chunk
// c - 1 runs in the loop of its exponential over chunk c. The jam gives the
// interpreter's bits at any chunk (the last one short), thread count and
// with the jam off; it is planned only for an earlier member that calls the
// math library, and never where a member may fail. The wrong case keeps one
// slot of the folded buffers: chunk c's exponentials overwrite those that
// the division of chunk c - 1 still reads, and the bits differ.
#include <catch2/catch.hpp>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "oracle/fuzz.h"
#include "semantics/evaluator.h"
#include "semantics/random_inputs.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

// Softmax over 67 rows (a prime: the last chunk is short).
const char* kSoftmax =
    "input x : f32[67, 128]\n"
    "let m : f32[67] = red(max, -inf, [128], x)\n"
    "let e : f32[67, 128] = map(fn(a, b) => exp(sub(a, b)), x, view(m, [67, 128], (i, j) -> (i)))\n"
    "let s : f32[67] = red(sum, 0.0, [128], e)\n"
    "let y : f32[67, 128] = map(fn(a, c) => div(a, c), e, view(s, [67, 128], (i, j) -> (i)))\n"
    "output y\n";

const cpu::KernelReport& report(const cpu::CompiledProgram& cp, const std::string& binding) {
  for (const cpu::KernelReport& k : cp.kernels())
    if (k.binding == binding) return k;
  FAIL("no kernel " << binding);
  throw;
}

/// cp against the interpreter on the inputs of seed 11, after a run on other
/// inputs (a row read before it is written then holds a stale value).
std::optional<std::string> difference(const cpu::CompiledProgram& cp, const Program& p) {
  REQUIRE(!cp.run(random_inputs(p, 12)).failure);
  Inputs in = random_inputs(p, 11);
  IeeeOutcome b = cp.run(in), a = eval_ieee(p, in);
  REQUIRE(!a.failure);
  REQUIRE(!b.failure);
  return oracle::outcome_difference(p, a, b);
}

}  // namespace

TEST_CASE("a jammed softmax gives the interpreter's bits at any chunk and thread count") {
  Program p = test::parse_ok(kSoftmax);
  for (int threads : {1, 2})
    for (int64_t bytes : {int64_t(1), int64_t(4096), int64_t(12000), int64_t(40000)})
      for (bool jam : {true, false}) {
        cpu::CpuOptions opt{threads, false, 3};
        opt.min_parallel_work = 0;
        opt.chain_bytes = bytes;
        opt.jam = jam;
        cpu::CompiledProgram cp(p, opt);
        const cpu::KernelReport& e = report(cp, "e");
        REQUIRE(e.chain == 0);
        INFO("threads " << threads << ", " << e.chain_rows << " rows a chunk, jam " << jam);
        CHECK(e.jammed_with == (jam ? "y" : ""));
        CHECK(report(cp, "y").jammed_with == (jam ? "e" : ""));
        CHECK(report(cp, "y").jam_late == jam);
        CHECK(!e.jam_late);
        std::optional<std::string> diff = difference(cp, p);
        INFO(diff.value_or(""));
        CHECK(!diff);
      }
}

/// e (defined by `e_def` over the inputs `inputs`), its row sums s, and e / s.
Program over_row_sums(const std::string& inputs, const std::string& e_def) {
  return test::parse_ok(inputs + "let e : f32[64, 128] = " + e_def + "\n" +
                        "let s : f32[64] = red(sum, 0.0, [128], e)\n"
                        "let y : f32[64, 128] = map(fn(a, c) => div(a, c), e, view(s, [64, 128], (i, j) -> (i)))\n"
                        "output y\n");
}

TEST_CASE("no jam without a math call before the last member, or where a member may fail") {
  cpu::CpuOptions opt{1, false, 3};
  opt.chain_bytes = 4096;
  auto jammed_with = [&](const Program& p) {
    cpu::CompiledProgram cp(p, opt);
    REQUIRE(report(cp, "e").chain == 0);
    return report(cp, "e").jammed_with;
  };
  const std::string x = "input x : f32[64, 128]\n";
  // The earlier pointwise member only multiplies: nothing to overlap with.
  CHECK(jammed_with(over_row_sums(x, "map(fn(a) => mul(a, a), x)")).empty());
  // e reads x through an index load, which may fail.
  CHECK(jammed_with(over_row_sums(x + "input ix : i64[64]\n",
                               "map(exp, view(x, [64, 128], (i, j) -> (load(ix, i), j)))")).empty());
  // The same without the load: jammed.
  CHECK(jammed_with(over_row_sums(x, "map(exp, x)")) == "y");
}

TEST_CASE("wrong case: a jam with one slot of folded storage") {
  Program p = test::parse_ok(kSoftmax);
  cpu::CpuOptions opt{1, false, 3};
  opt.chain_bytes = 12000;
  opt.jam_one_slot = true;
  cpu::CompiledProgram cp(p, opt);
  REQUIRE(report(cp, "e").jammed_with == "y");
  REQUIRE(report(cp, "e").folded);
  std::optional<std::string> diff = difference(cp, p);
  INFO(diff.value_or("no difference"));
  CHECK(diff.has_value());
}
