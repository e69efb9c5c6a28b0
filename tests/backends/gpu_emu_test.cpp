// The GPU backend's CUDA C on the host emulator against the interpreter, bit
// for bit: every example, generated programs (transcendental ops
// on every float dtype and rand included), every math function on f64, f32,
// f16 and bf16, rand on every float dtype, lanes recomputed after their
// rounding test failed (binary32 and binary64), special values, integer
// wrap and ⊥, the grid-stride loop; and the deliberately wrong cases: codegen
// mutants (fmaxf for maximum, a*b+c contracted to fma, 32-bit index
// arithmetic, negative indices unwrapped), a slow lane kept without its
// recompute, a perturbed device hash.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "backends/gpu/cuda_math.h"
#include "backends/gpu/emulator.h"
#include "backends/gpu/gpu_backend.h"
#include "mathlib/f64_impl.h"
#include "oracle/fuzz.h"
#include "oracle/gen/program_gen.h"
#include "semantics/ieee_scalar.h"
#include "semantics/input_gen.h"
#include "semantics/mutants.h"
#include "tests/backends/gpu_test_util.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace gpu = stax::backends::gpu;

namespace {

/// The first difference between the interpreter and the emulated kernels.
std::string difference(const Program& p, uint64_t seed, const gpu::GpuOptions& opt = {}) {
  return test::gpu_difference(p, seed, opt);
}

Program parse(const std::string& s) { return test::parse_ok(s, "<gpu-emu-test>"); }

/// What a generated program contains: rand leaves, binary64 transcendental
/// ops (sigmoid included).
struct Features {
  bool rand = false, math64 = false;
};
void features(const Expr& e, Features& f) {
  if (std::holds_alternative<RandE>(e->p)) f.rand = true;
  if (const auto* x = std::get_if<MapE>(&e->p)) {
    for (const Instr& in : x->fn.code)
      if (in.kind == Instr::Kind::Op && (ieee::cr_fn(in.op) || in.op == ScalarOp::Sigmoid) &&
          compute_type(in.type) == DType::F64)
        f.math64 = true;
    for (const Expr& a : x->args) features(a, f);
  } else if (const auto* v = std::get_if<ViewE>(&e->p)) {
    features(v->src, f);
  } else if (const auto* r = std::get_if<RedE>(&e->p)) {
    features(r->src, f);
  } else if (const auto* l = std::get_if<LetE>(&e->p)) {
    features(l->value, f);
    features(l->body, f);
  }
}
Features features(const Program& p) {
  Features f;
  for (const Binding& b : p.bindings) features(b.expr, f);
  return f;
}

/// `in` has two lanes whose math fast path declines on the device: the run
/// gives the interpreter's bits after recomputing their binding on the
/// host; the deliberately wrong case, the recompute switched off, does not;
/// `easy` inputs recompute nothing.
void check_recomputed(const Program& p, const Inputs& in, const Inputs& easy) {
  IeeeOutcome ref = eval_ieee(p, in);
  gpu::GpuProgram gp(p);
  CHECK(oracle::outcome_difference(p, ref, gp.run(in)) == std::nullopt);
  CHECK(gp.slow_lanes() == 2);
  CHECK(gp.recomputed_bindings() == 1);
  gpu::GpuOptions keep;
  keep.recompute_slow = false;
  gpu::GpuProgram gk(p, keep);
  CHECK(oracle::outcome_difference(p, ref, gk.run(in)) != std::nullopt);
  CHECK(gk.slow_lanes() == 2);
  CHECK(oracle::outcome_difference(p, eval_ieee(p, easy), gp.run(easy)) == std::nullopt);
  CHECK(gp.recomputed_bindings() == 0);
}

}  // namespace

TEST_CASE("every supported example runs bit-identically on the GPU emulator") {
  int n = 0;
  for (const auto& [name, p] : test::gpu_examples()) {
    INFO(name);
    CHECK(difference(p, 7) == "");
    ++n;
  }
  CHECK(n >= 5);
}

TEST_CASE("generated programs (f16/bf16 and binary32 transcendental ops included) run bit-identically on the GPU emulator") {
  oracle::GenOptions opt;  // f16/bf16 included
  int n = 0;
  for (uint64_t seed = 1; n < 50 && seed < 400; ++seed) {
    Program p = oracle::generate_program(seed, opt);
    REQUIRE_FALSE(gpu::gpu_unsupported(p));  // nothing is refused
    INFO("seed " << seed);
    CHECK(difference(p, seed) == "");
    ++n;
  }
  CHECK(n == 50);
}

TEST_CASE("generated programs with rand and binary64 transcendental ops run bit-identically on the GPU emulator") {
  // The fuzz campaigns' generator (rand leaves on); only the programs that
  // have rand or a binary64 transcendental op, until 8 of each were run.
  oracle::GenOptions opt = oracle::with_rand();
  int with_rand = 0, with_math64 = 0;
  for (uint64_t seed = 1000; (with_rand < 8 || with_math64 < 8) && seed < 3000; ++seed) {
    Program p = oracle::generate_program(seed, opt);
    Features f = features(p);
    if (!(f.rand && with_rand < 8) && !(f.math64 && with_math64 < 8)) continue;
    with_rand += f.rand;
    with_math64 += f.math64;
    INFO("seed " << seed);
    CHECK(difference(p, seed) == "");
  }
  CHECK(with_rand >= 8);
  CHECK(with_math64 >= 8);
}

TEST_CASE("special values, f16/bf16, integer wrap and a grid-stride loop on the GPU emulator") {
  Program p = parse(
      "input x : f32[8]\ninput k : i32[8]\ninput d : f64[300]\ninput h : f16[8]\ninput b : bf16[8]\n"
      "let m : f32[8] = map(fn(a, c) => maximum(a, c), x, view(x, [8], (i) -> (7 - i)))\n"
      "let n : f32[8] = map(fn(a) => minimum(relu(a), neg(a)), x)\n"
      "let kk : i32[8] = map(fn(a) => add(mul(a, 65537), 2147483647), k)\n"
      "let fd : f32[8] = map(fn(a, c) => add(floordiv(a, c), mod(a, c)), x, view(x, [8], (i) -> (7 - i)))\n"
      "let s : f32[] = red(sum, -0.0, [8], x)\n"
      "let am : i64[] = red(argmax, -inf, [8], x)\n"
      "let big : f64[300] = map(fn(a) => fma(a, a, sqrt(a)), d)\n"
      "let hh : f16[8] = map(fn(a, c) => add(mul(a, c), a), h, h)\n"
      "let bb : bf16[8] = map(fn(a) => div(a, 3.0), b)\n"
      "let hd : f16[300] = map(fn(a) => cast(a, f16), d)\n"
      "let hk : bf16[8] = map(fn(a) => cast(mul(a, 1000003), bf16), k)\n"
      "let hs : f16[] = red(sum, 0.0, [8], hh)\n"
      "output m, n, kk, fd, s, am, big, hh, bb, hd, hk, hs\n");
  CHECK(difference(p, 3) == "");
  // One block of one thread: every element through the grid-stride loop.
  CHECK(difference(p, 4, {gpu::Target::Emu, "compute_90", 1, 1}) == "");
}

TEST_CASE("transcendental ops on the GPU emulator: mathlib's fast paths as kernel code, the interpreter's bits") {
  // Every function and sigmoid on f64, f32, f16 and bf16, on random and
  // special inputs (the oracle's kinds: ±0, ±inf, NaN, subnormals, huge
  // values; binary64 huge sin/cos arguments take Payne-Hanek on the device).
  for (const char* t : {"f64", "f32", "f16", "bf16"}) {
    std::string T = t;
    Program p = parse("input x : " + T + "[300]\ninput y : " + T + "[300]\n"
                      "let a : " + T + "[300] = map(fn(u) => add(add(exp(u), expm1(u)), add(log(u), log2(u))), x)\n"
                      "let b : " + T + "[300] = map(fn(u) => add(add(log10(u), log1p(u)), add(tanh(u), erf(u))), x)\n"
                      "let c : " + T + "[300] = map(fn(u, v) => add(add(sin(u), cos(u)), add(pow(u, v), sigmoid(u))), x, y)\n"
                      "output a, b, c\n");
    INFO(T);
    for (uint64_t seed = 1; seed <= 6; ++seed) CHECK(difference(p, seed) == "");
  }
}

TEST_CASE("a math lane that fails its rounding test is recomputed on the host") {
  // pow(1 + 2^-12, 2) = 1 + 2^-11 + 2^-24 is a rounding midpoint of binary32
  // (ties to the even one below); pow(3 + 2^-22, 2) = 9 + 1.5 ulp + 2^-44
  // lies 2^-44 above a midpoint, far inside the fast path's error bound, so
  // its candidate (the lower end) is one ulp below the correctly rounded
  // result. The fast path flags both.
  Program p = parse("input x : f32[4]\ninput y : f32[4]\nlet z : f32[4] = map(fn(a, b) => pow(a, b), x, y)\noutput z\n");
  Inputs in{{"x", test::f32({4}, {1.000244140625f, 2.0f, 0.5f, std::nextafter(3.0f, 4.0f)})},
            {"y", test::f32({4}, {2, 3, 2, 2})}};
  // The wrong case keeps the fast path's candidate: other bits.
  check_recomputed(p, in, {{"x", test::f32({4}, {2.0f, 3.0f, 0.5f, 4.0f})}, {"y", test::f32({4}, {0.5f, 3, 2, 1.5f})}});
}

TEST_CASE("binary64 math on the GPU emulator: hard cases bit for bit, every branch of the fast paths") {
  // Inputs next to the fast paths' branch points and the reductions' hard
  // cases: exp's thresholds and the subnormal band, log next to 1 and √2,
  // pow near overflow and underflow, Payne-Hanek for sin/cos (2^20 .. 1e300,
  // 6381956970095103 * 2^797 the closest double to a multiple of pi/2), erf
  // at the tiny and large ends, tanh's cut-offs.
  std::vector<double> xs = {0.0, -0.0, 1e-300, 4.9e-324, -4.9e-324, 0x1p-1022, 0x1p-54, -0x1p-54, 0x1.8p-53,
                            -0x1.8p-54, 1.0, -1.0, 0x1.0000000000001p0, 0x1.fffffffffffffp-1, 0x1.6a09e667f3bcdp0,
                            0.5, 2.5, -3.75, 20.5, -20.5, 5.99, 6.0, 1e-320, 709.78, -708.4, -745.1, 746.0, -800.0,
                            0x1p20, -0x1p20, 1e6, 1e22, -1e300, 6381956970095103.0 * 0x1p797, 1.5e308, 3.14159,
                            1.5707963267948966, 355.0, 103993.0};
  int n = int(xs.size());
  std::vector<double> ys;
  for (int i = 0; i < n; ++i) ys.push_back(i % 4 == 0 ? 0.5 : i % 4 == 1 ? -3.0 : i % 4 == 2 ? 2.0 : 1e3);
  std::string N = std::to_string(n);
  Program p = parse("input x : f64[" + N + "]\ninput y : f64[" + N + "]\n"
                    "let a : f64[" + N + "] = map(fn(u) => add(add(exp(u), expm1(u)), add(log(u), log2(u))), x)\n"
                    "let b : f64[" + N + "] = map(fn(u) => add(add(log10(u), log1p(u)), add(tanh(u), erf(u))), x)\n"
                    "let s : f64[" + N + "] = map(sin, x)\nlet c : f64[" + N + "] = map(cos, x)\n"
                    "let e : f64[" + N + "] = map(fn(u) => add(exp(u), sigmoid(u)), x)\n"
                    "let w : f64[" + N + "] = map(fn(u, v) => pow(u, v), x, y)\n"
                    "let z : f64[" + N + "] = map(fn(u, v) => pow(v, u), x, y)\n"
                    "output a, b, s, c, e, w, z\n");
  Inputs in{{"x", test::tensor(DType::F64, {n}, xs)}, {"y", test::tensor(DType::F64, {n}, ys)}};
  IeeeOutcome ref = eval_ieee(p, in);
  gpu::GpuProgram gp(p);
  CHECK(oracle::outcome_difference(p, ref, gp.run(in)) == std::nullopt);
  // The wrong case: the device's fast paths with an error injected beyond
  // their bound and the bound set to zero (mathlib's fault hook, copied into
  // the module when it is built) answer wrong bits with confidence.
  math::f64::g_fault.inject_rel = -0x1p-48;
  math::f64::g_fault.bound_scale = 0;
  gpu::GpuProgram wrong(p);
  math::f64::g_fault = {};
  CHECK(oracle::outcome_difference(p, ref, wrong.run(in)) != std::nullopt);
  CHECK(wrong.slow_lanes() == 0);
  CHECK(oracle::outcome_difference(p, ref, gp.run(in)) == std::nullopt);  // the hook is the module's own
}

TEST_CASE("a binary64 math lane that falls back is recomputed on the host") {
  // exp in (709.7827, 709.7828], next to overflow, and pow whose y log x
  // falls there: the fast paths decline (mathlib's slow path by design).
  Program p = parse("input x : f64[4]\ninput y : f64[4]\n"
                    "let z : f64[4] = map(fn(a, b) => add(exp(a), pow(b, 1.0)), x, y)\noutput z\n");
  Inputs in{{"x", test::tensor(DType::F64, {4}, std::vector<double>{709.78275, 1.0, 709.78271, -2.0})},
            {"y", test::tensor(DType::F64, {4}, std::vector<double>{2.0, 3.0, 0.5, 4.0})}};
  // The wrong case: without the recompute the lanes keep no value (NaN).
  check_recomputed(p, in, {{"x", test::tensor(DType::F64, {4}, std::vector<double>{1, 2, 3, 4})}, {"y", in.at("y")}});
}

TEST_CASE("rand on the GPU emulator: the interpreter's hash on every float dtype") {
  for (const char* t : {"f64", "f32", "f16", "bf16"}) {
    std::string T = t;
    // rand in a map, under a view (its own flat index, not the output's),
    // and folded by a reduction; two keys.
    Program p = parse("input x : " + T + "[6, 50]\n"
                      "let a : " + T + "[6, 50] = map(fn(u, r) => add(u, r), x, rand(" + T + ", [6, 50], 7))\n"
                      "let b : " + T + "[50, 6] = view(rand(" + T + ", [6, 50], 12345678901), [50, 6], (i, j) -> (j, i))\n"
                      "let c : " + T + "[6] = red(sum, 0.0, [50], rand(" + T + ", [6, 50], 3))\n"
                      "output a, b, c\n");
    INFO(T);
    CHECK(difference(p, 9) == "");
  }
}

TEST_CASE("a perturbed device hash is caught") {
  // The module built from the emitted source directly, then from the same
  // source with one multiplier of the hash changed: the first gives the
  // interpreter's bits, the second does not (the deliberately wrong case).
  Program p = parse("input x : f32[64]\nlet y : f32[64] = map(fn(u, r) => add(u, r), x, rand(f32, [64], 5))\noutput y\n");
  gpu::GpuSource src = gpu::emit_cuda(p);  // one kernel as written (normalize would bind the rand on its own)
  REQUIRE(src.kernels.size() == 1);
  Inputs in{{"x", test::f32({64}, std::vector<float>(64, 0.0f))}};
  const Tensor ref = *eval_ieee(p, in).outputs.at("y");
  auto run = [&](const std::string& text) {
    gpu::EmuModule mod(text);
    std::memcpy(mod.tables(), gpu::cuda_math_tables(), gpu::cuda_math_tables_size());
    Tensor out = Tensor::uninitialized(DType::F32, {64});
    std::vector<void*> bufs{out.data.data(), const_cast<uint8_t*>(in.at("x").data.data())};
    gpu::StaxFail fail{-1, INT64_MAX, 0, 0};
    mod.launcher(src.kernels[0].name)(bufs.data(), 0, 64, &fail, 0, 2, 32);
    CHECK(fail.pos == INT64_MAX);
    return out.data == ref.data;
  };
  CHECK(run(src.text));
  std::string bad = src.text;
  size_t at = bad.find("0xbf58476d1ce4e5b9ULL");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 21, "0xbf58476d1ce4e5bbULL");
  CHECK_FALSE(run(bad));
}

TEST_CASE("⊥ on the GPU emulator: the interpreter's binding, index and reason") {
  SECTION("integer division by zero") {
    Program p = parse("input a : i32[4]\ninput b : i32[4]\nlet y : i32[4] = map(fn(x, z) => floordiv(x, z), a, b)\noutput y\n");
    Inputs in{{"a", test::i32({4}, {7, -7, 1, 2})}, {"b", test::i32({4}, {2, 0, 0, -1})}};
    IeeeOutcome ref = eval_ieee(p, in), got = gpu::run(p, in);
    REQUIRE(ref.failure);
    REQUIRE(got.failure);
    CHECK(got.failure->binding == "y");
    CHECK(got.failure->index == std::vector<int64_t>{1});
    CHECK(test::contains(got.failure->reason, "by zero"));
  }
  SECTION("gather out of range, negative indices wrap") {
    Program p = parse(
        "input x : f32[5]\ninput j : i64[3]\nlet y : f32[3] = view(x, [3], (i) -> (load(j, i)))\noutput y\n");
    Inputs ok{{"x", test::f32({5}, {1, 2, 3, 4, 5})}, {"j", test::i64({3}, {-1, 0, 4})}};
    IeeeOutcome got = gpu::run(p, ok);
    REQUIRE_FALSE(got.failure);
    CHECK(test::elems<float>(*got.outputs.at("y")) == std::vector<float>{5, 1, 5});
    Inputs bad{{"x", test::f32({5}, {1, 2, 3, 4, 5})}, {"j", test::i64({3}, {0, 5, -6})}};
    IeeeOutcome ref = eval_ieee(p, bad);
    got = gpu::run(p, bad);
    REQUIRE(ref.failure);
    REQUIRE(got.failure);
    CHECK(oracle::outcome_difference(p, ref, got) == std::nullopt);
    CHECK(got.failure->index == std::vector<int64_t>{1});
  }
}

TEST_CASE("GPU codegen mutants are caught by the emulator") {
  struct Case {
    const char* mutant;
    const char* program;
  };
  for (const Case& c : {
           Case{"max-drops-nan", "input x : f32[64]\nlet z : f32[64] = map(fn(a) => maximum(a, 0.5), x)\noutput z\n"},
           Case{"addr32-overflow", "input a : f32[7]\nlet y : f32[64] = view(a, [64], (i) -> ((i * 4294967311) % 7))\noutput y\n"},
           Case{"neg-index-unwrapped", "input a : f32[8]\ninput j : i64[8]\nlet y : f32[8] = view(a, [8], (i) -> (load(j, i)))\noutput y\n"},
           Case{"fma-contract", "input x : f32[64]\ninput y : f32[64]\nlet z : f32[64] = map(fn(a, b) => add(mul(a, b), b), x, y)\noutput z\n"},
       }) {
    INFO(c.mutant);
    Program p = parse(c.program);
    CHECK(difference(p, 11) == "");  // the product is right
    ScopedMutant m(c.mutant);
    CHECK(difference(p, 11) != "");  // the mutant is not
  }
}

TEST_CASE("several emulated programs loaded at once keep their own kernels") {
  // glibc matches a loaded object by inode: a module whose file were freed
  // could be handed to the next one (same kernel names, other code).
  Program neg = parse("input x : f32[4]\nlet y : f32[4] = map(neg, x)\noutput y\n");
  Program dbl = parse("input x : f32[4]\nlet y : f32[4] = map(fn(a) => add(a, a), x)\noutput y\n");
  std::vector<std::unique_ptr<gpu::GpuProgram>> live;
  for (int i = 0; i < 4; ++i) live.push_back(std::make_unique<gpu::GpuProgram>(i % 2 ? dbl : neg));
  Inputs in{{"x", test::f32({4}, {1, 2, 3, 4})}};
  for (int i = 0; i < 4; ++i)
    CHECK(test::elems<float>(*live[size_t(i)]->run(in).outputs.at("y")) ==
          (i % 2 ? std::vector<float>{2, 4, 6, 8} : std::vector<float>{-1, -2, -3, -4}));
}

TEST_CASE("zero extents on the GPU emulator: empty outputs, empty folds") {
  Program p = parse(
      "input x : f32[0, 3]\ninput w : f32[2, 0]\nlet y : f32[0, 3] = map(neg, x)\n"
      "let s : f32[2] = red(sum, 0.0, [0], w)\nlet t : f32[0] = red(sum, 0.0, [3], x)\noutput y, s, t\n");
  CHECK(difference(p, 5) == "");
}
