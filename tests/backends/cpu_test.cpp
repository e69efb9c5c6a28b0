// The CPU backend against the interpreter, bit for bit (docs/design.md §3, §6): every
// example, generated programs before and after the lane/split transforms,
// special values, f16/bf16, integer wrap and ⊥, thread counts 1 and 2; the
// compile cache; no fast-math flag in the optimised IR; and every codegen
// mutant caught (the deliberately wrong cases).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/codegen.h"
#include "backends/cpu/cpu_backend.h"
#include "mathlib/f32_lanes.h"
#include "oracle/fuzz.h"
#include "oracle/gen/program_gen.h"
#include "semantics/input_gen.h"
#include "semantics/mutants.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

/// The first difference between the interpreter and the CPU backend (with
/// `threads`, at LLVM level `opt`, its kernels compiled in one module when
/// `batch`) on P over the oracle's input kinds, or "".
std::string difference(const Program& p, uint64_t seed, int threads = 1, int opt = 3, bool batch = false) {
  cpu::CompiledProgram cp(p, {threads, false, opt, batch, 0});
  for (sem::InputKind kind : sem::kBackendInputKinds) {
    Inputs in = sem::generate_inputs(p, kind, seed);
    IeeeOutcome ref = eval_ieee(p, in);
    IeeeOutcome got = cp.run(in);
    if (auto d = oracle::outcome_difference(p, ref, got))
      return std::string(sem::input_kind_name(kind)) + " inputs: " + *d;
  }
  return "";
}

/// difference() at one thread, at two and in a batch (seeds s, s + 1, s + 2).
std::string difference_all_ways(const Program& p, uint64_t s) {
  for (const std::string& d : {difference(p, s, 1), difference(p, s + 1, 2), difference(p, s + 2, 2, 3, true)})
    if (!d.empty()) return d;
  return "";
}

/// The report of the one kernel p compiles to (O3, one thread).
cpu::KernelReport only_kernel(const Program& p) {
  cpu::CompiledProgram cp(p, {1, false, 3});
  REQUIRE(cp.kernels().size() == 1);
  return cp.kernels()[0];
}

Program transformed(const Program& p, const std::string& spec) {
  xform::Context ctx;
  return xform::run_pipeline(p, std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec)), ctx).program;
}

Program parse(const std::string& s) { return test::parse_ok(s, "<cpu-test>"); }

/// The report of the one kernel `program` compiles to, after checking its
/// bits against the interpreter's all ways (seeds s, s + 1, s + 2).
cpu::KernelReport checked_kernel(const std::string& program, uint64_t s) {
  INFO(program);
  Program p = parse(program);
  CHECK(difference_all_ways(p, s) == "");
  return only_kernel(p);
}

}  // namespace

TEST_CASE("every example runs bit-identically on the CPU backend, 1 and 2 threads") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(STAX_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".stx") continue;
    ParseResult r = parse_file(e.path().string());
    REQUIRE(std::holds_alternative<Program>(r));
    const Program& p = std::get<Program>(r);
    INFO(e.path().string());
    CHECK(difference(p, 7, 1) == "");
    CHECK(difference(p, 8, 2) == "");
    CHECK(difference(transformed(p, "interleave-lanes:w=16"), 9, 2) == "");
    ++n;
  }
  CHECK(n >= 6);
}

// Bits never depend on the LLVM level; O3 (vectorised, what users run) is
// checked on one program in four, O0 (quick to compile) on the others. Odd
// seeds compile the program's kernels in one module (CpuOptions::batch, as
// campaigns do).
TEST_CASE("1,000 generated programs: CPU bits equal the interpreter's") {
  // Every program is compared; a difference is recorded, not thrown, so that
  // `agreed` counts the programs whose bits agreed.
  int agreed = 0;
  std::vector<std::string> diffs;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    Program p = oracle::generate_program(seed);
    std::string d = difference(p, seed, 1, seed % 4 == 0 ? 3 : 0, seed % 2 == 1);
    if (d.empty()) ++agreed;
    else if (diffs.size() < 3) diffs.push_back("seed " + std::to_string(seed) + ": " + d + "\n" + print_program(p));
  }
  for (const std::string& d : diffs) FAIL_CHECK(d);
  CHECK(agreed == 1000);
}

TEST_CASE("generated programs after split/lane/pairwise transforms: CPU bits equal the interpreter's on T(P)") {
  const char* pipelines[] = {"interleave-lanes:w=16", "split-reduction:k=3", "interleave-lanes:w=4:combine=seq",
                             "pairwise:base=2", "numpy-pairwise", "interleave-lanes:w=32"};
  int agreed = 0;
  std::vector<std::string> diffs;
  for (uint64_t seed = 1; seed <= 250; ++seed) {
    Program p = oracle::generate_program(seed);
    const char* spec = pipelines[seed % std::size(pipelines)];
    Program t = transformed(p, spec);
    std::string d = difference(t, seed, seed % 2 ? 1 : 2, seed % 4 == 0 ? 3 : 0);
    if (d.empty()) ++agreed;
    else if (diffs.size() < 3)
      diffs.push_back("seed " + std::to_string(seed) + " " + spec + ": " + d + "\n" + print_program(t));
  }
  for (const std::string& d : diffs) FAIL_CHECK(d);
  CHECK(agreed == 250);
}

TEST_CASE("special values: NaN, signed zeros, subnormals, f16/bf16 rounding, integer wrap") {
  Program p = parse(
      "input x : f32[8]\ninput h : f16[8]\ninput b : bf16[8]\ninput k : i32[8]\n"
      "let m : f32[8] = map(fn(a, c) => maximum(a, c), x, view(x, [8], (i) -> (7 - i)))\n"
      "let n : f32[8] = map(fn(a) => minimum(relu(a), neg(a)), x)\n"
      "let hh : f16[8] = map(fn(a, c) => add(mul(a, c), a), h, h)\n"
      "let bb : bf16[8] = map(fn(a) => div(a, 3.0), b)\n"
      "let kk : i32[8] = map(fn(a) => add(mul(a, 65537), 2147483647), k)\n"
      "let s : f32[] = red(sum, -0.0, [8], x)\n"
      "let am : i64[] = red(argmax, -inf, [8], x)\n"
      "output m, n, hh, bb, kk, s, am\n");
  Inputs in;
  in["x"] = test::f32({8}, {test::kNaN, -0.0f, 0.0f, 1e-45f, -1e-40f, test::kInf, -3.5f, test::kNaN});
  in["h"] = sem::generate_inputs(p, sem::InputKind::Special, 3).at("h");
  in["b"] = sem::generate_inputs(p, sem::InputKind::Special, 4).at("b");
  in["k"] = test::i32({8}, {0, 1, -1, 2147483647, -2147483647 - 1, 32768, 65536, 12345});
  IeeeOutcome ref = eval_ieee(p, in);
  REQUIRE_FALSE(ref.failure);
  IeeeOutcome got = cpu::run(p, in);
  CHECK(oracle::outcome_difference(p, ref, got) == std::nullopt);
  // The deliberately wrong case: the same comparison notices one flipped bit.
  IeeeOutcome bad = got;
  auto t = std::make_shared<Tensor>(*bad.outputs.at("kk"));
  t->data[0] ^= 1;
  bad.outputs["kk"] = t;
  CHECK(oracle::outcome_difference(p, ref, bad) != std::nullopt);
}

TEST_CASE("⊥ on the CPU backend: the same binding fails, with the index") {
  SECTION("integer division by zero") {
    Program p = parse("input a : i32[4]\ninput b : i32[4]\nlet y : i32[4] = map(fn(x, z) => floordiv(x, z), a, b)\noutput y\n");
    Inputs in{{"a", test::i32({4}, {7, -7, 1, 2})}, {"b", test::i32({4}, {2, 2, 0, -1})}};
    IeeeOutcome ref = eval_ieee(p, in), got = cpu::run(p, in);
    REQUIRE(ref.failure);
    REQUIRE(got.failure);
    CHECK(got.failure->binding == "y");
    CHECK(got.failure->index == std::vector<int64_t>{2});
    CHECK(test::contains(got.failure->reason, "by zero"));
  }
  SECTION("gather out of range, negative indices wrap") {
    Program p = parse(
        "input x : f32[5]\ninput j : i64[3]\nlet y : f32[3] = view(x, [3], (i) -> (load(j, i)))\noutput y\n");
    Inputs ok{{"x", test::f32({5}, {1, 2, 3, 4, 5})}, {"j", test::i64({3}, {-1, 0, 4})}};
    IeeeOutcome got = cpu::run(p, ok);
    REQUIRE_FALSE(got.failure);
    CHECK(test::elems<float>(*got.outputs.at("y")) == std::vector<float>{5, 1, 5});
    Inputs bad{{"x", test::f32({5}, {1, 2, 3, 4, 5})}, {"j", test::i64({3}, {0, 5, -6})}};
    IeeeOutcome ref = eval_ieee(p, bad);
    got = cpu::run(p, bad);
    REQUIRE(ref.failure);
    REQUIRE(got.failure);
    CHECK(got.failure->index == std::vector<int64_t>{1});
    CHECK(test::contains(got.failure->reason, "out of range"));
  }
}

TEST_CASE("thread counts 1 and 2 give identical bits on a large reduction") {
  Program p = parse("input x : f32[300, 1000]\nlet y : f32[300] = red(sum, 0.0, [1000], map(exp, x))\noutput y\n");
  Inputs in = sem::generate_inputs(p, sem::InputKind::Normal, 5);
  IeeeOutcome one = cpu::run(p, in, {1}), two = cpu::run(p, in, {2});
  CHECK(oracle::outcome_difference(p, one, two) == std::nullopt);
  CHECK(oracle::outcome_difference(p, eval_ieee(p, in), two) == std::nullopt);
}

TEST_CASE("the compile cache serves a kernel it has seen; the IR carries no fast-math flag") {
  Program p = parse(
      "input x : f32[64, 256]\nlet y : f32[64] = red(sum, 0.0, [256], map(fn(a) => add(mul(a, a), exp(a)), x))\n"
      "output y\n");
  Program t = transformed(p, "interleave-lanes:w=16");
  cpu::CompiledProgram first(t, {1, true});
  cpu::CompiledProgram second(t, {1, true});
  for (const auto& k : second.kernels()) CHECK(k.cached);
  bool lanes = false;
  for (size_t k = 0; k < first.kernels().size(); ++k) {
    lanes |= first.kernels()[k].lanes;
    std::string ir = first.ir(k);
    if (first.kernels()[k].cached) continue;
    REQUIRE_FALSE(ir.empty());
    for (const char* flag : {" fast ", " contract ", " reassoc ", " nnan ", " ninf ", " afn ", " arcp "})
      CHECK_FALSE(test::contains(ir, flag));
  }
  CHECK(lanes);
}

TEST_CASE("max and min folds over 32 lanes (two vector accumulators): NaN payloads and signed zeros kept") {
  for (const char* op : {"max, -inf", "min, inf"}) {
    INFO(op);
    Program p = parse("input x : f32[40, 512]\nlet y : f32[40] = red(" + std::string(op) + ", [512], x)\noutput y\n");
    Program t = transformed(p, "interleave-lanes:w=32");
    cpu::CompiledProgram cp(t, {1, false, 3});
    bool lanes32 = false;
    for (const auto& k : cp.kernels()) lanes32 |= k.lanes;
    CHECK(lanes32);
    CHECK(difference(t, 21, 1) == "");
    CHECK(difference(t, 22, 2) == "");
    ScopedMutant m("max-drops-nan");  // the deliberately wrong fold: a compare and a select
    CHECK(difference(t, 21, 1) != "");
  }
}

TEST_CASE("blocked lanes: a matrix product and column folds over more than 32 columns, in blocks of 32, 16, 8") {
  // The last output dimension (96 = 3 x 32, 48 = 3 x 16, 40 = 5 x 8) of a
  // rank-2 output is stepped a block of accumulators at a time; each still
  // folds in order.
  const char* programs[] = {
      "input a : f32[12, 20]\ninput b : f32[20, 96]\nlet y : f32[12, 96] = red(sum, 0.0, [20], map(mul, "
      "view(a, [12, 96, 20], (i, j, k) -> (i, k)), view(b, [12, 96, 20], (i, j, k) -> (k, j))))\noutput y\n",
      "input x : f32[3, 64, 48]\nlet y : f32[3, 48] = red(max, -inf, [64], view(x, [3, 48, 64], (b, j, i) -> (b, i, j)))"
      "\noutput y\n",
      "input x : f32[2, 64, 40]\nlet y : f32[2, 40] = red(min, inf, [64], view(x, [2, 40, 64], (b, j, i) -> (b, i, j)))"
      "\noutput y\n",
  };
  for (const char* text : programs) {
    INFO(text);
    Program p = parse(text);
    cpu::CompiledProgram cp(p, {1, false, 3});
    REQUIRE(cp.kernels().size() == 1);
    CHECK(cp.kernels()[0].lanes);
    CHECK(difference(p, 31, 1) == "");
    CHECK(difference(p, 32, 2, 0) == "");
  }
  // The deliberately wrong fold: max without its NaN rule.
  Program p = parse(programs[1]);
  ScopedMutant m("max-drops-nan");
  CHECK(difference(p, 31, 1) != "");
}

TEST_CASE("row blocks: matrix products step 4 or 2 rows of lane blocks together, folds that read only their row do not") {
  // Each row of the block keeps its own accumulators, folding in order; the
  // second operand's column block is loaded once for the rows (packed: copied
  // into a contiguous scratch first, when the fold cannot fail).
  struct Case {
    std::string program;
    int64_t rows, extent, lanes;
    bool pack;
  };
  // red(fold, map(combine, a[i, k], b[k, j])) over k, a: [m, k], b: [k, n].
  auto product = [](const std::string& fold, const std::string& combine, int m, int k, int n) {
    std::string mkn = "[" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + "]";
    return "input a : f32[" + std::to_string(m) + ", " + std::to_string(k) + "]\ninput b : f32[" + std::to_string(k) +
           ", " + std::to_string(n) + "]\nlet y : f32[" + std::to_string(m) + ", " + std::to_string(n) + "] = red(" + fold +
           ", [" + std::to_string(k) + "], map(" + combine + ", view(a, " + mkn + ", (i, j, k) -> (i, k)), view(b, " + mkn +
           ", (i, j, k) -> (k, j))))\noutput y\n";
  };
  // A row block's lanes follow the host's registers (kernel_spec.cpp,
  // row_lanes): 64 with AVX-512, 16 with AVX2; 96 columns are no multiple
  // of 64 and keep the default 32.
  const bool avx512 = math::f32::host_has_avx512();
  const int64_t wide = avx512 ? 64 : 16;
  const Case cases[] = {
      {product("sum, 0.0", "mul", 64, 40, 96), 4, 16, avx512 ? 32 : 16, true},
      {"input a : f32[2, 34, 48]\ninput b : f32[2, 48, 64]\nlet y : f32[2, 34, 64] = red(sum, 0.0, [48], map(mul, "
       "view(a, [2, 34, 64, 48], (h, i, j, k) -> (h, i, k)), view(b, [2, 34, 64, 48], (h, i, j, k) -> (h, k, j))))"
       "\noutput y\n",
       2, 2, wide, true},
      // The max-plus product: a compare-select chain a lane.
      {product("max, -inf", "add", 32, 64, 128), 4, 8, wide, true},
      // A gathered row operand may fail (an index out of range): row
      // blocks, no packing.
      {"input a : f32[64, 40]\ninput g : i64[40]\ninput b : f32[40, 64]\nlet y : f32[64, 64] = red(sum, 0.0, [40], "
       "map(mul, view(a, [64, 64, 40], (i, j, k) -> (i, load(g, k))), view(b, [64, 64, 40], (i, j, k) -> (k, j))))"
       "\noutput y\n",
       4, 16, wide, false},
      // Every read depends on the row: one row at a time.
      {"input x : f32[128, 64, 32]\nlet y : f32[128, 32] = red(max, -inf, [64], view(x, [128, 32, 64], (b, j, i) -> "
       "(b, i, j)))\noutput y\n",
       1, 128, 32, false},
  };
  for (const Case& c : cases) {
    INFO(c.program);
    Program p = parse(c.program);
    const cpu::KernelReport k = only_kernel(p);
    CHECK(k.lanes);
    CHECK(k.row_block == c.rows);
    CHECK(k.parallel_extent == c.extent);
    CHECK(k.lane_block == c.lanes);
    CHECK(k.pack == c.pack);
    CHECK(difference_all_ways(p, 41) == "");
  }
  // The deliberately wrong product: max without its NaN rule.
  Program p = parse(cases[2].program);
  ScopedMutant m("max-drops-nan");
  CHECK(difference(p, 41, 1) != "");
}

TEST_CASE("column lanes: a rank-1 fold whose reads run along the output steps blocks of outputs together") {
  // column_lanes: out[j] = fold_i x[i, j] reads a piece of a line of x a
  // step for a block of 32 (16, 8) outputs; a read along the fold alone (a
  // per-step scalar) is a broadcast. The range counts the blocks. The
  // deliberately wrong cases: a row fold (its reads run along the fold) is
  // not one, and max without its NaN rule must differ.
  struct Case {
    std::string program;
    int64_t extent;
  };
  const Case cases[] = {
      {"input x : f32[1024, 64]\nlet s : f32[64] = red(prod, 1.0, [1024], view(x, [64, 1024], (i, j) -> (j, i)))"
       "\noutput s\n",
       2},
      {"input mu : f32[64]\nlet s : f32[64] = red(sum, 0.0, [1024], view(mu, [64, 1024], (i, j) -> (i)))\noutput s\n",
       2},
      {"input a : f32[256, 96]\ninput b : f32[256, 96]\ninput m : f32[256]\nlet s : f32[96] = red(sum, 0.0, [256], "
       "map(fn(u, v, w) => mul(sub(u, w), v), permute(a, [1, 0]), permute(b, [1, 0]), view(m, [96, 256], (j, i) -> (i))))"
       "\noutput s\n",
       3},
      {"input x : f64[512, 48]\nlet s : f64[48] = red(max, -inf, [512], permute(x, [1, 0]))\noutput s\n", 3},
  };
  for (const Case& c : cases) {
    INFO(c.program);
    const cpu::KernelReport k = checked_kernel(c.program, 53);
    CHECK(k.lanes);
    CHECK_FALSE(k.transposed);
    CHECK(k.parallel_extent == c.extent);
    CHECK(difference(parse(c.program), 54, 2) == "");
  }
  const cpu::KernelReport row = checked_kernel(
      "input x : f32[64, 1024]\nlet s : f32[64] = red(sum, 0.0, [1024], x)\noutput s\n", 55);
  CHECK(row.transposed);
  ScopedMutant m("max-drops-nan");
  CHECK(difference(parse(cases[3].program), 56, 1) != "");
}

TEST_CASE("transposed folds: a rank-1 output steps 8 rows' folds together, transposed in registers") {
  // Each row keeps its own accumulator (a lane), folding in order; the
  // source is evaluated along 8 rows, an 8 x 8 tile at a time (two tiles a
  // cache line for 4-byte values), and transposed in registers.
  struct Case {
    std::string program;
    bool transposed;
    int64_t extent;
  };
  const Case cases[] = {
      // Example 1.1's shape: a map of two row-wise operands.
      {"input x : f32[64, 1024]\ninput y : f32[64, 1024]\nlet s : f32[64] = red(sum, 0.0, [1024], "
       "map(fn(a, b) => mul(relu(add(a, b)), 2.0), x, y))\noutput s\n",
       true, 8},
      // A read folded itself; a fold of 1032 (one tile a line), 72 rows.
      {"input x : f32[72, 1032]\nlet m : f32[72] = red(max, -inf, [1032], x)\noutput m\n", true, 9},
      {"input x : f32[48, 2048]\nlet s : f32[48] = red(sum, 0.0, [2048], x)\noutput s\n", true, 6},
      {"input x : f64[64, 4096]\nlet s : f64[64] = red(sum, 0.0, [4096], x)\noutput s\n", true, 8},
      // A row-broadcast operand beside a row-wise one.
      {"input x : f32[64, 1024]\ninput mu : f32[64]\nlet q : f32[64] = red(sum, 0.0, [1024], map(fn(a, m) => "
       "mul(sub(a, m), sub(a, m)), x, view(mu, [64, 1024], (i, j) -> (i))))\noutput q\n",
       true, 8},
      {"input x : f64[64, 1024]\nlet s : f64[64] = red(sum, 0.0, [1024], x)\noutput s\n", true, 8},
      {"input x : f16[64, 1024]\nlet s : f16[64] = red(sum, 0.0, [1024], map(fn(a) => mul(a, a), x))\noutput s\n",
       true, 8},
      {"input x : i32[64, 1024]\nlet s : i32[64] = red(sum, 0, [1024], map(fn(a) => mul(a, 3), x))\noutput s\n",
       true, 8},
      // A fold longer than any scratch would hold: 2^17 a row.
      {"input x : f32[8, 131072]\nlet s : f32[8] = red(sum, 0.0, [131072], x)\noutput s\n", true, 1},
      // Rows not a multiple of 8, a gather that may fail, a row-broadcast
      // read alone: one row at a time.
      {"input x : f32[60, 1024]\nlet s : f32[60] = red(sum, 0.0, [1024], x)\noutput s\n", false, 60},
      {"input x : f32[64, 1024]\ninput g : i64[1024]\nlet s : f32[64] = red(sum, 0.0, [1024], "
       "view(x, [64, 1024], (i, j) -> (i, load(g, j))))\noutput s\n",
       false, 64},
  };
  for (const Case& c : cases) {
    INFO(c.program);
    const cpu::KernelReport k = checked_kernel(c.program, 51);
    CHECK(k.transposed == c.transposed);
    CHECK(k.lanes == c.transposed);
    CHECK(!k.pack);
    CHECK(k.parallel_extent == c.extent);
    CHECK(k.row_block == 1);
  }
  // The deliberately wrong fold: max without its NaN rule, on a read and
  // on a block of 8 rows of 1024.
  ScopedMutant m("max-drops-nan");
  CHECK(difference(parse(cases[1].program), 51, 1) != "");
  CHECK(difference(parse("input x : f32[64, 1024]\nlet m : f32[64] = red(max, -inf, [1024], x)\noutput m\n"), 51, 1) !=
        "");
}

TEST_CASE("tiled pointwise kernels: a transposed read is stepped in 16 x 16 tiles") {
  // A pointwise kernel that reads an operand through a transpose steps its
  // last two dimensions a tile at a time (each tile reads 16 lines of the
  // operand); every element is still computed by the same expression.
  struct Case {
    std::string program;
    int64_t tile;
    int64_t extent;
  };
  const Case cases[] = {
      {"input x : f32[256, 128]\nlet t : f32[128, 256] = view(x, [128, 256], (i, j) -> (j, i))\noutput t\n", 16, 8},
      // Batched (the heads of attention): the range counts the batch.
      {"input x : f32[4, 64, 128]\nlet t : f32[4, 128, 64] = view(x, [4, 128, 64], (b, i, j) -> (b, j, i))\n"
       "output t\n",
       16, 4},
      // A transposed read beside a row-wise one and a row broadcast, with
      // products whose rounding shows.
      {"input x : f32[256, 128]\ninput y : f32[128, 256]\ninput m : f32[128]\nlet z : f32[128, 256] = "
       "map(fn(a, b, c) => add(mul(a, b), c), view(x, [128, 256], (i, j) -> (j, i)), y, "
       "view(m, [128, 256], (i, j) -> (i)))\noutput z\n",
       16, 8},
      {"input x : f64[128, 256]\nlet t : f64[256, 128] = view(x, [256, 128], (i, j) -> (j, i))\noutput t\n", 16, 16},
      {"input x : f16[128, 256]\nlet t : f16[256, 128] = map(fn(a) => mul(a, a), view(x, [256, 128], (i, j) -> "
       "(j, i)))\noutput t\n",
       16, 16},
      {"input x : i32[128, 256]\nlet t : i32[256, 128] = map(fn(a) => mul(a, 3), view(x, [256, 128], (i, j) -> "
       "(j, i)))\noutput t\n",
       16, 16},
      // Not tiled: a row-wise read with a row broadcast (softmax's last
      // kernel), sides not multiples of 16, and a small transpose.
      {"input x : f32[128, 256]\ninput s : f32[128]\nlet y : f32[128, 256] = map(fn(a, c) => div(a, c), x, "
       "view(s, [128, 256], (i, j) -> (i)))\noutput y\n",
       0, 128},
      {"input x : f32[250, 128]\nlet t : f32[128, 250] = view(x, [128, 250], (i, j) -> (j, i))\noutput t\n", 0, 128},
      {"input x : f32[64, 64]\nlet t : f32[64, 64] = view(x, [64, 64], (i, j) -> (j, i))\noutput t\n", 0, 64},
  };
  for (const Case& c : cases) {
    INFO(c.program);
    const cpu::KernelReport k = checked_kernel(c.program, 53);
    CHECK(k.tile == c.tile);
    CHECK(k.parallel_extent == c.extent);
  }
  // The deliberately wrong kernel: a*b+c fused, in a tiled kernel.
  ScopedMutant m("fma-contract");
  CHECK(difference(parse(cases[2].program), 53, 1) != "");
}

TEST_CASE("every codegen mutant is caught by the bit-for-bit comparison") {
  struct Case {
    const char* mutant;
    const char* program;
  };
  const Case cases[] = {
      {"fma-contract", "input a : f32[64]\ninput b : f32[64]\nlet y : f32[64] = map(fn(x, z) => add(mul(x, z), 0.1), a, b)\noutput y\n"},
      {"max-drops-nan", "input a : f32[64]\nlet y : f32[64] = map(fn(x) => maximum(x, 0.5), a)\noutput y\n"},
      {"addr32-overflow",
       "input a : f32[7]\nlet y : f32[64] = view(a, [64], (i) -> ((i * 4294967311) % 7))\noutput y\n"},
      {"neg-index-unwrapped",
       "input a : f32[8]\ninput j : i64[8]\nlet y : f32[8] = view(a, [8], (i) -> (load(j, i)))\noutput y\n"},
      {"log-exp", "input a : f32[64]\nlet y : f32[64] = map(fn(x) => log(exp(mul(x, 100.0))), a)\noutput y\n"},
      {"argmax-tie-last",
       "input a : f32[8, 6]\nlet m : f32[8, 6] = map(fn(x) => floor(x), a)\nlet y = red(argmax, -inf, [6], m)\n"
       "output y\n"},
      {"bf16-truncate", "input b : bf16[64]\nlet y : bf16[64] = map(fn(a) => div(a, 3.0), b)\noutput y\n"},
      {"broadcast-stride", "input a : f32[4, 1, 3]\nlet y : f32[4, 2, 3] = expand(a, [4, 2, 3])\noutput y\n"},
      {"reshape-index-i32",
       "input a : f32[7]\nlet y : f32[64] = view(a, [64], (i) -> ((i * 4294967311) % 7))\noutput y\n"},
  };
  for (const Case& c : cases) {
    INFO(c.mutant);
    Program p = parse(c.program);
    CHECK(difference(p, 11) == "");  // the product is right
    ScopedMutant m(c.mutant);
    CHECK(difference(p, 11) != "");  // the mutant is not
    CHECK(difference(p, 11, 1, 0, true) != "");  // also compiled in a batch (at O0: not a cache hit)
  }
}

TEST_CASE("fuzz: codegen mutants are found by a short seeded campaign on cpu-o0") {
  // The fuzzer's own path (generator, pipelines, backend trials with the
  // products inputs), not a hand program: each within 600 seeds (fma-contract
  // at seed 440, the others before 40).
  std::vector<oracle::BackendRunner> runners = {
      {"cpu-o0", [](const Program& q, const Inputs& in) { return cpu::run(q, in, {1, false, 0}); }}};
  for (const char* mutant : {"fma-contract", "argmax-tie-last", "bf16-truncate", "broadcast-stride", "reshape-index-i32"}) {
    DYNAMIC_SECTION(mutant) {
      oracle::FuzzOptions opt;
      std::optional<oracle::IterationResult> hit;
      {
        ScopedMutant m(mutant);
        for (uint64_t seed = 1; seed <= 600 && !hit; ++seed) {
          oracle::IterationResult r = oracle::fuzz_one(seed, opt, runners);
          if (r.finding && r.finding->kind == oracle::FindingKind::Backend) hit = r;
        }
      }
      REQUIRE(hit);
      CHECK(hit->finding->component == "cpu-o0");
      // The same seed is clean without the mutant.
      CHECK(!oracle::fuzz_one(hit->seed, opt, runners).finding);
      WARN(mutant << ": found at seed " << hit->seed);
    }
  }
}

TEST_CASE("products inputs make the rounding of a*b visible to a + and a -") {
  // c = -fl(a*b) on many elements: unfused gives 0, fused the product's error.
  for (const char* dt : {"f32", "f64"}) {
    INFO(dt);
    std::string t = std::string(dt) + "[256]";
    Program p = parse("input x : " + t + "\ninput y : " + t + "\ninput z : " + t + "\nlet s : " + t +
                      " = map(fn(a, b, c) => add(mul(a, b), c), x, y, z)\nlet d : " + t +
                      " = map(fn(a, b, c) => sub(mul(a, b), c), x, y, z)\noutput s\noutput d\n");
    Inputs in = sem::generate_inputs(p, sem::InputKind::Products, 5);
    IeeeOutcome ref = eval_ieee(p, in);
    CHECK(oracle::outcome_difference(p, ref, cpu::run(p, in, {1})) == std::nullopt);
    ScopedMutant m("fma-contract");
    CHECK(oracle::outcome_difference(p, ref, cpu::run(p, in, {1})) != std::nullopt);
  }
  // The pool is shared by the call's tensors and differs between calls.
  Program q = parse("input x : f32[64]\ninput y : f32[64]\nlet s : f32[64] = map(add, x, y)\noutput s\n");
  Inputs a = sem::generate_inputs(q, sem::InputKind::Products, 1);
  Inputs b = sem::generate_inputs(q, sem::InputKind::Products, 2);
  std::set<float> ax(a.at("x").as<float>(), a.at("x").as<float>() + 64);
  std::set<float> ay(a.at("y").as<float>(), a.at("y").as<float>() + 64);
  std::set<float> bx(b.at("x").as<float>(), b.at("x").as<float>() + 64);
  int shared = 0, across = 0;
  for (float v : ax) shared += int(ay.count(v));
  for (float v : ax) across += int(bx.count(v));
  CHECK(shared >= 3);
  CHECK(across == 0);
}

TEST_CASE("stax run/check/bench with --backend cpu, end to end") {
  auto dir = test::scratch("cpu_cli");
  std::string ex = std::string(STAX_SOURCE_DIR) + "/examples/example_5_1_forward.stx";
  test::Run interp = test::run_stax(dir, "run " + ex + " --random-inputs 3 --show 4");
  test::Run cpu = test::run_stax(dir, "run " + ex + " --random-inputs 3 --show 4 --backend cpu --threads 2");
  REQUIRE(interp.code == 0);
  CHECK(cpu.code == 0);
  CHECK(cpu.out == interp.out);  // the same values, printed with their bits

  test::Run check = test::run_stax(dir, "check " + ex + " --transform normalize,interleave-lanes:w=4 --backend cpu --trials 4");
  CHECK(check.code == 0);
  CHECK(test::contains(check.out, "bit-identical to the interpreter"));

  auto small = test::write(dir, "small.stx",
                           "input x : f32[64, 256]\nlet y : f32[64] = red(sum, 0.0, [256], map(exp, x))\noutput y\n");
  test::Run bench = test::run_stax(dir, "bench " + small.string() + " --transform interleave-lanes:w=16 --repeats 2 --json");
  CHECK(bench.code == 0);
  CHECK(test::contains(bench.out, "\"ratio_to_copy\""));
  CHECK(test::contains(bench.out, "identical to the interpreter"));

  // Deliberately wrong uses: an unknown backend, the real semantics on a
  // compiled backend, a missing file.
  CHECK(test::run_stax(dir, "run " + ex + " --backend tpu --random-inputs 1").code == 2);
  CHECK(test::run_stax(dir, "run " + ex + " --backend cpu --semantics real --random-inputs 1").code == 2);
  test::Run missing = test::run_stax(dir, "bench " + (dir / "nope.stx").string());
  CHECK(missing.code == 2);
  CHECK_FALSE(missing.err.empty());
}

namespace {
/// The optimised IR of the one kernel `p` compiles to (O3, one thread), and
/// its row block.
std::string only_kernel_ir(const Program& p, int64_t* row_block = nullptr, int64_t* lane_block = nullptr) {
  cpu::CompiledProgram cp(p, {1, true, 3});
  REQUIRE(cp.kernels().size() == 1);
  if (row_block) *row_block = cp.kernels()[0].row_block;
  if (lane_block) *lane_block = cp.kernels()[0].lane_block;
  return cp.ir(0);
}
/// The prefetch calls in a kernel's IR.
size_t prefetch_calls(const std::string& ir) {
  size_t calls = 0;
  for (size_t at = ir.find("call void @llvm.prefetch"); at != std::string::npos;
       at = ir.find("call void @llvm.prefetch", at + 1))
    ++calls;
  return calls;
}
}  // namespace

TEST_CASE("a kernel's entry point realigns its stack to a cache line") {
  // GELU's erf loop spills 512-bit registers; from a 16-byte aligned stack a
  // slot could straddle two lines (codegen.cpp: kSpillAlign). Every entry
  // point carries alignstack(64), and the internal body, inlined, none.
  Program p = parse("input x : f32[4096]\nlet y : f32[4096] = map(fn(a) => mul(a, erf(mul(a, 0.70710677))), x)\n"
                    "output y\n");
  const std::string ir = only_kernel_ir(p);
  CHECK(ir.find("alignstack(64)") != std::string::npos);
  CHECK(ir.find("alignstack=64") != std::string::npos);
  CHECK(difference(p, 5, 1) == "");
}

TEST_CASE("a lanes fold over rows from memory prefetches ahead, once a cache line, with the same bits") {
  // Example 1.1 with 16 lanes a row (interleave-lanes:w=16 by hand): each
  // step reads one line of each input; the lane that starts it prefetches
  // the line kPrefetchBytes ahead (Emitter::prefetch_ahead), the others
  // none. A fold that reads only a folded chain buffer prefetches nothing.
  Program p = parse("input a : f32[64, 256]\ninput b : f32[64, 256]\n"
                    "let y : f32[64, 16] = red(sum, 0.0, [16], map(fn(u, v) => mul(relu(add(u, v)), 2.0), "
                    "view(a, [64, 16, 16], (i, l, s) -> (i, s * 16 + l)), view(b, [64, 16, 16], (i, l, s) -> (i, s * 16 + l))))\n"
                    "output y\n");
  CHECK(prefetch_calls(only_kernel_ir(p)) == 2);  // one line of a, one of b, a step
  CHECK(difference(p, 7, 1) == "");
  CHECK(difference(p, 8, 2, 0) == "");
  // A matrix product (row blocks) prefetches nothing ahead for reading: the
  // branches kept its rows and lanes from being vectorised together. Each
  // block of rows asks for its output's lines for writing, before its fold
  // (Emitter::prefetch_write): one a line of each row, and the same bits.
  Program mm = parse("input a : f32[64, 48]\ninput b : f32[48, 64]\n"
                     "let y : f32[64, 64] = red(sum, 0.0, [48], map(fn(u, v) => mul(u, v), "
                     "view(a, [64, 64, 48], (i, j, k) -> (i, k)), view(b, [64, 64, 48], (i, j, k) -> (k, j))))\n"
                     "output y\n");
  int64_t row_block = 0, lane_block = 0;
  const std::string mm_ir = only_kernel_ir(mm, &row_block, &lane_block);
  CHECK(row_block > 1);
  // A row's lanes by the host's registers (64 with AVX-512, 16 with AVX2).
  CHECK(lane_block == (math::f32::host_has_avx512() ? 64 : 16));
  size_t writes = 0;
  for (size_t at = mm_ir.find("call void @llvm.prefetch"); at != std::string::npos;
       at = mm_ir.find("call void @llvm.prefetch", at + 1))
    writes += mm_ir.substr(at, mm_ir.find('\n', at) - at).find(", i32 1, i32 3, i32 1)") != std::string::npos;
  CHECK(writes == prefetch_calls(mm_ir));
  CHECK(writes == size_t(row_block * lane_block) / 16);  // 16 lanes of binary32 a line
  CHECK(difference(mm, 9, 1) == "");
  CHECK(difference(mm, 10, 2, 0) == "");
}

TEST_CASE("a transposed fold prefetches the next block, skews rows a multiple of 4 KiB long, same bits") {
  // Plain Example 1.1 (row sums in order: a transposed fold): a block of 8
  // rows steps two lines of each row together; each (step, row) prefetches
  // its share of the next block's lines of a and b, in address order
  // (Emitter::transposed_fold), the source's values dead. Rows whose length
  // allows only a step of 8 elements (40) prefetch one line of each. Rows
  // of 4 KiB (1024) would read one step in two L1 sets: row l reads step
  // s - l, and -0 (a sum's identity) outside its row; 1040 are not skewed.
  auto row_sums = [](int m, int n, const char* init = "0.0", const char* f = "mul(relu(add(u, v)), 2.0)") {
    const std::string M = std::to_string(m), N = std::to_string(n);
    return parse("input a : f32[" + M + ", " + N + "]\ninput b : f32[" + M + ", " + N + "]\n"
                 "let y : f32[" + M + "] = red(sum, " + init + ", [" + N + "], map(fn(u, v) => " + f + ", a, b))\n"
                 "output y\n");
  };
  for (auto [m, n] : {std::pair{64, 1024}, std::pair{2048, 40}, std::pair{64, 1040}}) {
    Program p = row_sums(m, n);
    cpu::CompiledProgram cp(p, {1, true, 3});
    REQUIRE(cp.kernels().size() == 1);
    CHECK(cp.kernels()[0].transposed);
    CHECK(cp.kernels()[0].skewed == (n == 1024));
    // Lines a step, each of a and b, for each row of the block (the row
    // loop kept or unrolled).
    const size_t per_row = n % 32 == 0 ? 4 : 2, calls = prefetch_calls(cp.ir(0));
    CHECK(calls > 0);
    CHECK((calls == per_row || calls == per_row * 8));
    CHECK(difference(p, 14 + uint64_t(n), 1) == "");
    CHECK(difference(p, 15 + uint64_t(n), 2, 0) == "");
  }
  CHECK(cpu::transposed_skew(RedOp::Prod, 1024, 32));
  CHECK(cpu::transposed_skew(RedOp::Sum, 512, 64));  // f64 rows of 4 KiB
  CHECK_FALSE(cpu::transposed_skew(RedOp::Max, 1024, 32));  // no identity: not skewed
  CHECK_FALSE(cpu::transposed_skew(RedOp::Sum, 4352, 32));  // two rows a part of the period
  CHECK_FALSE(cpu::transposed_skew(RedOp::Sum, 32, 32));  // one step
  for (const char* prog : {"input x : f64[64, 1024]\nlet s : f64[64] = red(sum, 0.0, [1024], x)\noutput s\n",
                           "input x : i32[64, 1024]\nlet s : i32[64] = red(sum, 0, [1024], map(fn(a) => mul(a, 3), x))\noutput s\n",
                           "input x : f16[64, 2048]\nlet s : f16[64] = red(sum, 0.0, [2048], x)\noutput s\n",
                           "input x : f32[64, 1024]\nlet s : f32[64] = red(prod, 1.0, [1024], x)\noutput s\n"}) {
    INFO(prog);
    CHECK(checked_kernel(prog, 61).skewed);
  }
  // Rows of -0 from an initial -0 sum to -0 only if the padding is -0; the
  // wrong case, an initial +0, gives +0: the sign tells them apart.
  for (const char* init : {"-0.0", "0.0"}) {
    Program p = row_sums(64, 1024, init, "mul(abs(add(u, v)), -0.0)");
    Inputs in = sem::generate_inputs(p, sem::InputKind::Normal, 3);
    IeeeOutcome got = cpu::run(p, in);
    REQUIRE_FALSE(got.failure);
    for (float y : test::elems<float>(*got.outputs.at("y"))) CHECK(std::signbit(y) == (init[0] == '-'));
    CHECK(oracle::outcome_difference(p, eval_ieee(p, in), got) == std::nullopt);
  }
}

TEST_CASE("a packed matrix product reads its left operand at an address of its own for each vector, same bits") {
  // KernelShape::salt_broadcasts: on AVX-512 the left operand's index in
  // the fold gets z times the lane's vector (z: the runtime's opaque zero),
  // so that each broadcast folds into its multiplication. A product too
  // long to pack (K * 64 lanes above the scratch) is not salted: the check
  // tells them apart.
  auto product = [](int k) {
    const std::string K = std::to_string(k);
    return parse("input a : f32[64, " + K + "]\ninput b : f32[" + K + ", 128]\n"
                 "let y : f32[64, 128] = red(sum, 0.0, [" + K + "], map(fn(u, v) => mul(u, v), "
                 "view(a, [64, 128, " + K + "], (i, j, k) -> (i, k)), view(b, [64, 128, " + K + "], (i, j, k) -> (k, j))))\n"
                 "output y\n");
  };
  const bool avx512 = math::f32::host_has_avx512();
  Program packed = product(48), long_fold = product(2048);
  int64_t rows = 0;
  const std::string ir = only_kernel_ir(packed, &rows);
  CHECK(rows > 1);
  CHECK((ir.find("@stax_index_zero") != std::string::npos) == avx512);
  CHECK(only_kernel_ir(long_fold, &rows).find("@stax_index_zero") == std::string::npos);
  CHECK(rows > 1);
  CHECK(difference(packed, 11, 1) == "");
  CHECK(difference(packed, 12, 2, 0) == "");
  CHECK(difference(long_fold, 13, 1) == "");
}

TEST_CASE("a product whose right side is read through a transpose packs it along the fold, same bits") {
  // KernelShape::pack_along_fold: b[j, k] read as the right side of a x
  // b^T steps along the fold in memory; a product of a and b as it is does
  // not (the deliberately wrong case for the detection).
  const std::string head = "input a : f32[64, 64]\ninput b : f32[128, 64]\ninput c : f32[64, 128]\n";
  Program t = parse(head + "let y : f32[64, 128] = red(sum, 0.0, [64], map(fn(u, v) => mul(u, v), "
                           "view(a, [64, 128, 64], (i, j, k) -> (i, k)), view(b, [64, 128, 64], (i, j, k) -> (j, k))))\n"
                           "output y\n");
  Program n = parse(head + "let y : f32[64, 128] = red(sum, 0.0, [64], map(fn(u, v) => mul(u, v), "
                           "view(a, [64, 128, 64], (i, j, k) -> (i, k)), view(c, [64, 128, 64], (i, j, k) -> (k, j))))\n"
                           "output y\n");
  cpu::CompiledProgram ct(t, {1, true, 3}), cn(n, {1, true, 3});
  REQUIRE(ct.kernels().size() == 1);
  REQUIRE(cn.kernels().size() == 1);
  CHECK(ct.kernels()[0].pack);
  CHECK(ct.kernels()[0].pack_along_fold);
  CHECK(cn.kernels()[0].pack);
  CHECK_FALSE(cn.kernels()[0].pack_along_fold);
  CHECK(difference(t, 21, 1) == "");
  CHECK(difference(t, 22, 2, 0) == "");
  CHECK(difference(n, 23, 1) == "");
  // A boolean operand read through a transpose is packed a step at a time
  // (its i1 lanes are not bytes for the transpose's vector stores).
  Program b = parse("input a : f32[64, 64]\ninput m : bool[128, 64]\nlet y : f32[64, 128] = red(sum, 0.0, [64], "
                    "map(fn(u, c) => mul(u, cast(c, f32)), view(a, [64, 128, 64], (i, j, k) -> (i, k)), "
                    "view(m, [64, 128, 64], (i, j, k) -> (j, k))))\noutput y\n");
  cpu::CompiledProgram cb(b, {1, true, 3});
  REQUIRE(cb.kernels().size() == 1);
  CHECK(cb.kernels()[0].pack);
  CHECK_FALSE(cb.kernels()[0].pack_along_fold);
  CHECK(difference(b, 24, 1) == "");
}

TEST_CASE("max and min folds: signed zeros, NaN payloads and infinities in every order, the interpreter's bits") {
  // fold_maximum's cases: x NaN (acc + x), x the winning zero, acc NaN from
  // a NaN initial value (the plain fmaximum). Rows of 64: 8 rows a
  // transposed fold, and 16 lanes a step after interleave-lanes-like views.
  const float snan = std::bit_cast<float>(0x7fa00001u), qnan1 = std::bit_cast<float>(0x7fc00123u),
              nnan = std::bit_cast<float>(0xffc00456u);
  const std::vector<float> pool = {0.0f, -0.0f, 1.0f, -1.0f, test::kInf, -test::kInf, qnan1, nnan, snan, 2.5f, -0.0f, 0.0f};
  std::mt19937 g(7);
  for (int round = 0; round < 6; ++round) {
    std::vector<float> v(64 * 64);
    for (float& e : v) e = g() % 3 ? pool[g() % 4] : pool[g() % pool.size()];  // mostly zeros and ones
    for (int row = 0; row < 64; row += 5) std::fill_n(v.begin() + row * 64, 64, row % 2 ? -0.0f : 0.0f);
    Inputs in{{"x", test::f32({64, 64}, v)}};
    for (const char* op : {"max, -inf", "min, inf", "max, nan", "min, -0.0", "max, 0.0"}) {
      for (const char* src : {"x", "view(x, [64, 16, 4], (i, l, s) -> (i, s * 16 + l))"}) {
        const bool lanes = std::string(src) != "x";
        std::string text = "input x : f32[64, 64]\nlet y : f32[64" + std::string(lanes ? ", 16] = red(" : "] = red(") + op +
                           ", [" + (lanes ? "4" : "64") + "], " + src + ")\noutput y\n";
        INFO(text << "round " << round);
        Program p = parse(text);
        IeeeOutcome ref = eval_ieee(p, in);
        for (int opt : {0, 3}) {
          cpu::CompiledProgram cp(p, {1, false, opt});
          std::optional<std::string> d = oracle::outcome_difference(p, ref, cp.run(in));
          INFO("O" << opt << ": " << d.value_or(""));
          CHECK(!d);
        }
      }
    }
  }
}
