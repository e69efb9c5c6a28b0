// Kernel chains (backends/cpu/chains.h): kernels that read each other only
// at their own rows run a block of rows at a time. The planner finds the
// row-local reads through composed views and refuses the others; a chain
// gives the interpreter's bits at any chunk and thread count, and reports
// the failure of the first kernel in program order; the wrong case runs a
// chain across a transposed read and gets other bits. Storage folding keeps
// a chunk's rows of the outputs only the chain reads; the wrong case folds
// one that a later kernel reads and gets other bits.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/cpu/chains.h"
#include "backends/cpu/cpu_backend.h"
#include "oracle/fuzz.h"
#include "semantics/evaluator.h"
#include "semantics/random_inputs.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

// Layer norm over 256 rows of 512 (bench/programs/layer_norm_rows.stx, smaller).
const char* kLayerNorm =
    "input x : f32[256, 512]\ninput w : f32[512]\ninput b : f32[512]\n"
    "let s : f32[256] = red(sum, 0.0, [512], x)\n"
    "let q : f32[256] = red(sum, 0.0, [512],\n"
    "    map(fn(a, m) => mul(sub(a, div(m, 512.0)), sub(a, div(m, 512.0))), x, view(s, [256, 512], (i, j) -> (i))))\n"
    "let y : f32[256, 512] = map(fn(a, m, v, g, c) =>\n"
    "    add(mul(mul(sub(a, div(m, 512.0)), rsqrt(add(div(v, 512.0), 1e-05))), g), c),\n"
    "    x, view(s, [256, 512], (i, j) -> (i)), view(q, [256, 512], (i, j) -> (i)),\n"
    "    view(w, [256, 512], (i, j) -> (j)), view(b, [256, 512], (i, j) -> (j)))\n"
    "output y\n";

// e is read transposed by t: no chain may join them.
const char* kTransposed =
    "input x : f32[256, 256]\n"
    "let e : f32[256, 256] = map(fn(a) => mul(a, a), x)\n"
    "let t : f32[256, 256] = map(fn(a, c) => add(a, c), e, view(e, [256, 256], (i, j) -> (j, i)))\n"
    "output t\n";

// Softmax over rows: m, e, s and y chained.
const char* kSoftmax =
    "input x : f32[64, 128]\n"
    "let m : f32[64] = red(max, -inf, [128], x)\n"
    "let e : f32[64, 128] = map(fn(a, b) => exp(sub(a, b)), x, view(m, [64, 128], (i, j) -> (i)))\n"
    "let s : f32[64] = red(sum, 0.0, [128], e)\n"
    "let y : f32[64, 128] = map(fn(a, c) => div(a, c), e, view(s, [64, 128], (i, j) -> (i)))\n"
    "output y\n";

// The same, and t reads e transposed after the chain.
const char* kSoftmaxThenTranspose =
    "input x : f32[128, 128]\n"
    "let m : f32[128] = red(max, -inf, [128], x)\n"
    "let e : f32[128, 128] = map(fn(a, b) => exp(sub(a, b)), x, view(m, [128, 128], (i, j) -> (i)))\n"
    "let s : f32[128] = red(sum, 0.0, [128], e)\n"
    "let y : f32[128, 128] = map(fn(a, c) => div(a, c), e, view(s, [128, 128], (i, j) -> (i)))\n"
    "let t : f32[128, 128] = map(fn(a, c) => add(a, c), y, view(e, [128, 128], (i, j) -> (j, i)))\n"
    "output t\n";

std::vector<cpu::KernelSpec> specs_of(const cpu::CompiledProgram& cp) {
  std::vector<cpu::KernelSpec> s;
  for (const Binding& b : cp.program().bindings) s.push_back(cpu::make_spec(cp.program(), b));
  return s;
}

/// cp's outcome against the interpreter's on the inputs of `seed`, as
/// outcome_difference says (neither run may fail); `out` must be an output.
std::optional<std::string> difference(const cpu::CompiledProgram& cp, const Program& p, uint64_t seed,
                                      const std::string& out) {
  Inputs in = random_inputs(p, seed);
  IeeeOutcome b = cp.run(in), a = eval_ieee(p, in);
  REQUIRE(!a.failure);
  REQUIRE(!b.failure);
  CHECK(b.outputs.count(out));
  return oracle::outcome_difference(p, a, b);
}

void check_same_bits(const Program& p, const cpu::CpuOptions& opt, const std::string& out) {
  cpu::CompiledProgram cp(p, opt);
  // Buffers of a run on other inputs first, so that a kernel reading a row
  // before it is written reads a stale value, not the interpreter's.
  REQUIRE(!cp.run(random_inputs(p, 12)).failure);
  std::optional<std::string> diff = difference(cp, p, 11, out);
  INFO(diff.value_or(""));
  CHECK(!diff);
}

}  // namespace

TEST_CASE("reads at the consumer's own row, through composed views") {
  Program p = test::parse_ok(kLayerNorm);
  cpu::KernelSpec q = cpu::make_spec(p, p.bindings[1]), y = cpu::make_spec(p, p.bindings[2]);
  CHECK(cpu::reads_own_rows(q, "s"));
  CHECK(cpu::reads_own_rows(y, "s"));
  CHECK(cpu::reads_own_rows(y, "q"));
  CHECK(!cpu::reads_own_rows(y, "w"));  // read at column j

  Program t = test::parse_ok(kTransposed);
  CHECK(!cpu::reads_own_rows(cpu::make_spec(t, t.bindings[1]), "e"));
  // A view of a view: (i, j) -> (j, i) twice is the identity.
  Program vv = test::parse_ok(
      "input x : f32[16, 16]\nlet e : f32[16, 16] = map(neg, x)\n"
      "let t : f32[16, 16] = map(fn(a) => a, view(view(e, [16, 16], (i, j) -> (j, i)), [16, 16], (i, j) -> (j, i)))\n"
      "output t\n");
  CHECK(cpu::reads_own_rows(cpu::make_spec(vv, vv.bindings[1]), "e"));
  // A shifted row, and a row through an index load, are not the own row.
  Program sh = test::parse_ok(
      "input x : f32[16, 16]\ninput ix : i64[16]\nlet e : f32[16, 16] = map(neg, x)\n"
      "let t : f32[15, 16] = map(fn(a) => a, view(e, [15, 16], (i, j) -> (i + 1, j)))\n"
      "let u : f32[16, 16] = map(fn(a) => a, view(e, [16, 16], (i, j) -> (load(ix, i), j)))\n"
      "output t\noutput u\n");
  CHECK(!cpu::reads_own_rows(cpu::make_spec(sh, sh.bindings[1]), "e"));
  CHECK(!cpu::reads_own_rows(cpu::make_spec(sh, sh.bindings[2]), "e"));
}

TEST_CASE("the planner chains layer norm's kernels and nothing across a transposed read") {
  cpu::CompiledProgram ln(test::parse_ok(kLayerNorm), {1, false, 3});
  REQUIRE(ln.kernels().size() == 3);
  for (const cpu::KernelReport& k : ln.kernels()) {
    CHECK(k.chain == 0);
    CHECK(k.chain_rows % 8 == 0);  // the transposed folds' rows per unit
  }
  cpu::CpuOptions off{1, false, 3};
  off.chain_bytes = 0;
  cpu::CompiledProgram unchained(test::parse_ok(kLayerNorm), off);
  for (const cpu::KernelReport& k : unchained.kernels()) CHECK(k.chain == -1);

  cpu::CompiledProgram tr(test::parse_ok(kTransposed), {1, false, 3});
  for (const cpu::KernelReport& k : tr.kernels()) CHECK(k.chain == -1);
  std::vector<cpu::KernelShape> shapes;
  for (const cpu::KernelSpec& s : specs_of(tr)) shapes.push_back(cpu::kernel_shape(s));
  CHECK(cpu::plan_chains(specs_of(tr), shapes, 1 << 18).empty());
  CHECK(cpu::plan_chains(specs_of(tr), shapes, 1 << 18, true).size() == 1);
}

TEST_CASE("chains give the interpreter's bits at any chunk and thread count") {
  Program p = test::parse_ok(kLayerNorm);
  for (int threads : {1, 2})
    for (int64_t bytes : {int64_t(1), int64_t(40000), int64_t(1) << 18, int64_t(1) << 30}) {
      INFO("threads " << threads << ", chain bytes " << bytes);
      cpu::CpuOptions opt{threads, false, 3};
      opt.min_parallel_work = 0;
      opt.chain_bytes = bytes;
      check_same_bits(p, opt, "y");
    }
  // Softmax over rows: a chain of four kernels with exp; all but the
  // output folded.
  Program sm = test::parse_ok(kSoftmax);
  for (int threads : {1, 2})
    for (int64_t bytes : {int64_t(1), int64_t(40000)}) {
      cpu::CpuOptions opt{threads, false, 3};
      opt.min_parallel_work = 0;
      opt.chain_bytes = bytes;
      cpu::CompiledProgram cp(sm, opt);
      for (const cpu::KernelReport& k : cp.kernels()) {
        CHECK(k.chain == 0);
        CHECK(k.folded == (k.binding != "y"));
      }
      check_same_bits(sm, opt, "y");
    }
}

TEST_CASE("storage folding keeps program outputs and values read outside the chain") {
  // Layer norm: s and q, read by later members at their own rows, folded.
  cpu::CpuOptions opt{1, false, 3};
  cpu::CompiledProgram ln(test::parse_ok(kLayerNorm), opt);
  for (const cpu::KernelReport& k : ln.kernels()) CHECK(k.folded == (k.binding != "y"));
  // e also read transposed by t, after the chain: e keeps its full buffer.
  Program p = test::parse_ok(kSoftmaxThenTranspose);
  cpu::CompiledProgram cp(p, opt);
  REQUIRE(cp.kernels().at(1).binding == "e");
  CHECK(cp.kernels().at(1).chain == 0);
  CHECK(!cp.kernels().at(1).folded);
  CHECK(cp.kernels().at(0).folded);
  CHECK(cp.kernels().at(4).chain == -1);
  check_same_bits(p, opt, "t");
  // Without folding, the same bits.
  opt.fold_storage = false;
  cpu::CompiledProgram off(p, opt);
  for (const cpu::KernelReport& k : off.kernels()) CHECK(!k.folded);
  check_same_bits(p, opt, "t");
}

TEST_CASE("wrong case: folding a value that a kernel after the chain reads") {
  Program p = test::parse_ok(kSoftmaxThenTranspose);
  cpu::CpuOptions opt{1, false, 3};
  opt.fold_unchecked = true;
  cpu::CompiledProgram cp(p, opt);
  REQUIRE(cp.kernels().at(1).folded);
  // t reads e's full buffer, which the chain never wrote.
  std::optional<std::string> diff = difference(cp, p, 5, "t");
  INFO(diff.value_or("no difference"));
  CHECK(diff.has_value());
}

TEST_CASE("a chain reports the failure of the first kernel in program order") {
  // a fails at row 200 (its index load), b at row 0: the interpreter
  // reports a, which a chain runs after b's failing chunk.
  Program p = test::parse_ok(
      "input x : f32[256, 64]\ninput ix : i64[256]\ninput jx : i64[256]\n"
      "let a : f32[256, 64] = map(neg, view(x, [256, 64], (i, j) -> (load(ix, i), j)))\n"
      "let b : f32[256, 64] = map(fn(u, v) => add(u, v), a, view(x, [256, 64], (i, j) -> (load(jx, i), j)))\n"
      "output b\n");
  Inputs in = random_inputs(p, 3);
  Tensor ix = Tensor::uninitialized(DType::I64, {256}), jx = ix;
  for (int64_t i = 0; i < 256; ++i) {
    ix.as<int64_t>()[i] = i == 200 ? 1000000 : i;
    jx.as<int64_t>()[i] = i == 0 ? 1000000 : i;
  }
  in["ix"] = ix;
  in["jx"] = jx;
  IeeeOutcome ref = eval_ieee(p, in);
  REQUIRE(ref.failure);
  REQUIRE(ref.failure->binding == "a");
  for (int threads : {1, 2}) {
    cpu::CpuOptions opt{threads, false, 3};
    opt.min_parallel_work = 0;
    opt.chain_bytes = 1;
    cpu::CompiledProgram cp(p, opt);
    REQUIRE(cp.kernels().at(1).chain == 0);
    IeeeOutcome got = cp.run(in);
    REQUIRE(got.failure);
    CHECK(got.failure->binding == "a");
    CHECK(got.failure->index == ref.failure->index);
  }
}

TEST_CASE("wrong case: a chain across a transposed read reads rows not yet written") {
  Program p = test::parse_ok(kTransposed);
  cpu::CpuOptions opt{1, false, 3};
  opt.chain_bytes = 1;
  opt.chain_unchecked = true;
  cpu::CompiledProgram cp(p, opt);
  REQUIRE(cp.kernels().at(1).chain == 0);
  // A first run on other inputs leaves its e in the buffer the second run
  // reuses: what t reads there before e's row is written is stale.
  REQUIRE(!cp.run(random_inputs(p, 6)).failure);
  std::optional<std::string> diff = difference(cp, p, 5, "t");
  INFO(diff.value_or("no difference"));
  CHECK(diff.has_value());
}
