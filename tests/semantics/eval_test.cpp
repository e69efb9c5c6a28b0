// The tensor-level evaluator (docs/design.md §2-3): ⊥ cases and where they are
// reported, strictness, views and their sugar, iota/full, let-in, several
// outputs, and the input checks. Failures are checked in both domains.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "semantics/evaluator.h"
#include "semantics/parser.h"
#include "semantics/tensor.h"
#include "tests/test_util.h"

using namespace stax::sem;
using namespace stax::test;

namespace {

/// Expects ⊥ in both domains, at the same binding and index; returns the Ieee one.
Failure expect_failure(const std::string& text, const Inputs& in) {
  Program p = parse_ok(text);
  REQUIRE_FALSE(check_inputs(p, in));
  IeeeOutcome fo = eval_ieee(p, in);
  RealOutcome ro = eval_real(p, in);
  REQUIRE(fo.failure);
  REQUIRE(ro.failure);
  CHECK(fo.outputs.empty());
  CHECK(ro.failure->binding == fo.failure->binding);
  CHECK(ro.failure->index == fo.failure->index);
  return *fo.failure;
}

/// 0, 1, 2, ... as f32 of a shape.
Tensor counting(Shape s) {
  Tensor t(DType::F32, s);
  for (int64_t i = 0; i < t.size(); ++i) t.as<float>()[i] = float(i);
  return t;
}

}  // namespace

// ------------------------------------------------------------------ ⊥ cases

TEST_CASE("integer division by zero fails, naming the binding and the index") {
  std::string text =
      "input a : i32[2, 3]\ninput b : i32[2, 3]\n"
      "let ok = map(add, a, b)\nlet q = map(div, a, b)\noutput ok, q\n";
  Inputs in{{"a", i32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", i32({2, 3}, {1, 1, 1, 1, 1, 0})}};
  Failure f = expect_failure(text, in);
  CHECK(f.binding == "q");
  CHECK(f.index == std::vector<int64_t>{1, 2});
  CHECK(contains(f.reason, "by zero"));
  CHECK(contains(f.str(), "binding 'q' failed at index [1, 2]"));
  // The first failing element in row-major order is reported.
  in["b"] = i32({2, 3}, {1, 0, 1, 0, 1, 0});
  CHECK(expect_failure(text, in).index == std::vector<int64_t>{0, 1});
  // No zero divisor: no failure.
  in["b"] = i32({2, 3}, {1, 1, 1, 1, 1, -1});
  CHECK_FALSE(eval(text, in).failure);
  // Inside a fused lambda, and for mod and floordiv too.
  Failure g = expect_failure(
      "input a : i64[4]\nlet y = map(fn(x) => add(mod(x, sub(x, 2)), floordiv(x, 1)), a)\noutput y\n",
      {{"a", i64({4}, {5, 3, 2, 1})}});
  CHECK(g.binding == "y");
  CHECK(g.index == std::vector<int64_t>{2});
  // Float division by zero is not ⊥.
  CHECK_FALSE(eval("input a : f32[1]\nlet y = map(fn(x) => div(x, 0.0), a)\noutput y\n", {{"a", f32({1}, {1.0f})}}).failure);
}

TEST_CASE("indirect indices wrap negatives Python-style, then must be in range") {
  std::string text = "input x : f32[4]\ninput idx : i64[3]\nlet y = view(x, [3], (i) -> (load(idx, i)))\noutput y\n";
  Tensor x = f32({4}, {10.0f, 11.0f, 12.0f, 13.0f});
  // -1 is the last element, -4 the first.
  Tensor y = run(text, {{"x", x}, {"idx", i64({3}, {-1, 0, -4})}});
  CHECK(elems<float>(y) == std::vector<float>{13.0f, 10.0f, 10.0f});
  // -s-1 is out of range even after wrapping; so is s.
  Failure f = expect_failure(text, {{"x", x}, {"idx", i64({3}, {0, -5, 1})}});
  CHECK(f.binding == "y");
  CHECK(f.index == std::vector<int64_t>{1});
  CHECK(contains(f.reason, "out of range"));
  Failure g = expect_failure(text, {{"x", x}, {"idx", i64({3}, {0, 1, 4})}});
  CHECK(g.index == std::vector<int64_t>{2});
  // The gather sugar has the same meaning.
  std::string gt = "input x : f32[2, 4]\ninput idx : i32[3]\nlet y = gather(x, 1, idx)\noutput y\n";
  Tensor x2 = counting({2, 4});
  CHECK(elems<float>(run(gt, {{"x", x2}, {"idx", i32({3}, {3, -1, 0})}})) ==
        std::vector<float>{3, 3, 0, 7, 7, 4});
  Failure h = expect_failure(gt, {{"x", x2}, {"idx", i32({3}, {3, -1, -5})}});
  CHECK(h.index == std::vector<int64_t>{0, 2});
}

TEST_CASE("a load index out of range fails at the view's index") {
  std::string text = "input x : f32[4]\ninput idx : i64[4]\nlet y = view(x, [4], (i) -> (load(idx, i + 1)))\noutput y\n";
  Inputs in{{"x", counting({4})}, {"idx", i64({4}, {0, 1, 2, 3})}};
  Failure f = expect_failure(text, in);
  CHECK(f.binding == "y");
  CHECK(f.index == std::vector<int64_t>{3});
  CHECK(contains(f.reason, "load(idx)"));
  // In range: the values of idx shifted by one.
  std::string ok = "input x : f32[4]\ninput idx : i64[4]\nlet y = view(x, [3], (i) -> (load(idx, i + 1)))\noutput y\n";
  CHECK(elems<float>(run(ok, in)) == std::vector<float>{1, 2, 3});
}

TEST_CASE("an out-of-range view fails at the first bad index") {
  // Affine but out of range: (i) -> (i + 1) over extent 4 fails at [3].
  Failure f = expect_failure("input x : f32[4]\nlet y = view(x, [4], (i) -> (i + 1))\noutput y\n", {{"x", counting({4})}});
  CHECK(f.binding == "y");
  CHECK(f.index == std::vector<int64_t>{3});
  // Non-affine: i // 2 + 1 over x[3] reaches 3 at i = 4.
  Failure g = expect_failure("input x : f32[3]\nlet y = view(x, [6], (i) -> (i // 2 + 1))\noutput y\n", {{"x", counting({3})}});
  CHECK(g.index == std::vector<int64_t>{4});
  // Rank 2: i + j over x[3] first reaches 3 at [1, 2].
  Failure h = expect_failure("input x : f32[3]\nlet y = view(x, [2, 3], (i, j) -> (i + j))\noutput y\n", {{"x", counting({3})}});
  CHECK(h.index == std::vector<int64_t>{1, 2});
  // Negative affine indices do not wrap.
  Failure k = expect_failure("input x : f32[4]\nlet y = view(x, [4], (i) -> (i - 1))\noutput y\n", {{"x", counting({4})}});
  CHECK(k.index == std::vector<int64_t>{0});
  // In range, the same non-affine map gives the repeated values.
  CHECK(elems<float>(run("input x : f32[3]\nlet y = view(x, [6], (i) -> (i // 2))\noutput y\n", {{"x", counting({3})}})) ==
        std::vector<float>{0, 0, 1, 1, 2, 2});
  CHECK(elems<float>(run("input x : f32[3]\nlet y = view(x, [5], (i) -> (i % 3))\noutput y\n", {{"x", counting({3})}})) ==
        std::vector<float>{0, 1, 2, 0, 1});
}

TEST_CASE("a failure inside a nested expression names its own domain index") {
  // The failing map is the operand of a reduction; the index is in the map's domain.
  Failure f = expect_failure(
      "input a : i32[2, 3]\ninput b : i32[2, 3]\nlet s = red(sum, 0, [3], map(div, a, b))\noutput s\n",
      {{"a", i32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", i32({2, 3}, {1, 1, 1, 1, 0, 1})}});
  CHECK(f.binding == "s");
  CHECK(f.index == std::vector<int64_t>{1, 1});
  CHECK(contains(f.where, "map"));
}

TEST_CASE("evaluation is strict: an unused failing binding fails the program") {
  std::string text =
      "input a : i32[2]\ninput b : i32[2]\n"
      "let unused = map(div, a, b)\nlet y = map(add, a, a)\noutput y\n";
  Inputs in{{"a", i32({2}, {1, 2})}, {"b", i32({2}, {1, 0})}};
  Failure f = expect_failure(text, in);
  CHECK(f.binding == "unused");
  CHECK(f.index == std::vector<int64_t>{1});
  in["b"] = i32({2}, {1, 1});
  CHECK(elems<int32_t>(run(text, in)) == std::vector<int32_t>{2, 4});
  // A let-in whose value is unused in the body is evaluated too.
  Failure g = expect_failure("input a : i32[2]\ninput b : i32[2]\nlet y = let t = map(div, a, b) in map(add, a, a)\noutput y\n",
                             {{"a", i32({2}, {1, 2})}, {"b", i32({2}, {0, 1})}});
  CHECK(g.binding == "y");
  CHECK(g.index == std::vector<int64_t>{0});
  // An out-of-range view of a computed value that is only partly read still fails.
  Failure h = expect_failure(
      "input a : i32[3]\ninput b : i32[3]\nlet y = view(map(div, a, b), [1], (i) -> (i))\noutput y\n",
      {{"a", i32({3}, {1, 2, 3})}, {"b", i32({3}, {1, 1, 0})}});
  CHECK(h.index == std::vector<int64_t>{2});
}

// -------------------------------------------------------------------- views

TEST_CASE("view sugar: permute, slice, expand, reshape, unsqueeze, squeeze") {
  Inputs in{{"x", counting({2, 3})}};
  auto v = [&](const std::string& e) {
    return elems<float>(run("input x : f32[2, 3]\nlet y = " + e + "\noutput y\n", in));
  };
  CHECK(v("permute(x, [1, 0])") == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(v("slice(x, 1, 0, 3, 2)") == std::vector<float>{0, 2, 3, 5});
  CHECK(v("slice(x, 1, -2, 3, 1)") == std::vector<float>{1, 2, 4, 5});
  CHECK(v("slice(x, 0, 1, 2, 1)") == std::vector<float>{3, 4, 5});
  CHECK(v("reshape(x, [3, 2])") == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(v("permute(reshape(x, [3, 2]), [1, 0])") == std::vector<float>{0, 2, 4, 1, 3, 5});
  CHECK(v("expand(unsqueeze(x, 0), [2, 2, 3])") == std::vector<float>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  CHECK(v("expand(unsqueeze(x, 2), [2, 3, 2])") == std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5});
  CHECK(v("squeeze(unsqueeze(x, 1), 1)") == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(v("view(x, [3], (i) -> (1, 2 - i))") == std::vector<float>{5, 4, 3});
  CHECK(v("view(x, [6], (i) -> (i // 3, i % 3))") == std::vector<float>{0, 1, 2, 3, 4, 5});
  // Negative check: permute is not the identity on the flat data.
  CHECK_FALSE(v("permute(x, [1, 0])") == v("reshape(x, [3, 2])"));
  // The shapes come out right.
  Tensor t = run("input x : f32[2, 3]\nlet y = permute(x, [1, 0])\noutput y\n", in);
  CHECK(t.shape == (Shape{3, 2}));
  // A view of a computed value (materialised first), and a map over views.
  CHECK(v("permute(map(fn(a) => mul(a, 2.0), x), [1, 0])") == std::vector<float>{0, 6, 2, 8, 4, 10});
  CHECK(v("map(add, x, view(x, [2, 3], (i, j) -> (1 - i, 2 - j)))") == std::vector<float>{5, 5, 5, 5, 5, 5});
}

TEST_CASE("iota and full") {
  Tensor a = run("let y = iota(f32, [2, 3], 1)\noutput y\n", {});
  CHECK(a.dtype == DType::F32);
  CHECK(elems<float>(a) == std::vector<float>{0, 1, 2, 0, 1, 2});
  CHECK(elems<int64_t>(run("let y = iota(i64, [2, 3], 0)\noutput y\n", {})) == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(elems<int32_t>(run("let y = iota(i32, [4], 0)\noutput y\n", {})) == std::vector<int32_t>{0, 1, 2, 3});
  // iota into f16 rounds: 2049 is a tie, to 2048.
  Tensor h = run("let y = view(iota(f16, [2050], 0), [2], (i) -> (i + 2048))\noutput y\n", {});
  CHECK(elems<uint16_t>(h) == std::vector<uint16_t>{0x6800, 0x6800});
  Tensor f = run("let y = full(f32[2, 2], 1.5)\noutput y\n", {});
  CHECK(f.shape == (Shape{2, 2}));
  CHECK(elems<float>(f) == std::vector<float>(4, 1.5f));
  CHECK(elems<uint16_t>(run("let y = full(f16[2], 0.1)\noutput y\n", {})) == std::vector<uint16_t>{0x2e66, 0x2e66});
  CHECK(elems<float>(run("let y = full(f32[], -0.0)\noutput y\n", {})) == std::vector<float>{-0.0f});
  CHECK(elems<uint32_t>(run("let y = full(f32[], -0.0)\noutput y\n", {})) == std::vector<uint32_t>{0x80000000});
  CHECK(elems<uint8_t>(run("let y = full(bool[3], true)\noutput y\n", {})) == std::vector<uint8_t>{1, 1, 1});
  // iota and full inside maps.
  CHECK(elems<float>(run("let y = map(add, iota(f32, [3], 0), full(f32[3], 0.5))\noutput y\n", {})) ==
        std::vector<float>{0.5f, 1.5f, 2.5f});
}

TEST_CASE("let-in binds a local name") {
  Inputs in{{"x", f32({3}, {1, 2, 3})}};
  CHECK(elems<float>(run("input x : f32[3]\nlet y = let t = map(add, x, x) in map(mul, t, t)\noutput y\n", in)) ==
        std::vector<float>{4, 16, 36});
  // Nested lets, the inner one using the outer.
  CHECK(elems<float>(run("input x : f32[3]\n"
                         "let y = let t = map(add, x, x) in let u = map(add, t, x) in map(sub, u, t)\noutput y\n",
                         in)) == std::vector<float>{1, 2, 3});
  // A let-bound value can be viewed and reduced.
  Tensor r = run("input x : f32[3]\nlet y = let t = view(x, [3], (i) -> (2 - i)) in red(sum, 0.0, [3], map(mul, t, x))\noutput y\n",
                 in);
  CHECK(elems<float>(r) == std::vector<float>{3 + 4 + 3});
}

TEST_CASE("several outputs, in any order, and bindings used by later ones") {
  std::string text =
      "input x : f32[2]\n"
      "let a = map(neg, x)\n"
      "let b : f32[] = red(sum, 0.0, [2], a)\n"
      "let c = map(fn(p, q) => mul(p, q), a, x)\n"
      "output c, a\noutput b\n";
  IeeeOutcome o = eval(text, {{"x", f32({2}, {1.5f, -2.0f})}});
  REQUIRE_FALSE(o.failure);
  CHECK(o.outputs.size() == 3);
  CHECK(elems<float>(*o.outputs.at("a")) == std::vector<float>{-1.5f, 2.0f});
  CHECK(elems<float>(*o.outputs.at("b")) == std::vector<float>{0.5f});
  CHECK(elems<float>(*o.outputs.at("c")) == std::vector<float>{-2.25f, -4.0f});
  CHECK(o.outputs.at("b")->shape.empty());
  // An input can be an output.
  IeeeOutcome p = eval("input x : f32[2]\noutput x\n", {{"x", f32({2}, {7.0f, 8.0f})}});
  CHECK(elems<float>(*p.outputs.at("x")) == std::vector<float>{7.0f, 8.0f});
  // Real outputs line up with the Ieee ones.
  RealOutcome r = eval_real(parse_ok(text), {{"x", f32({2}, {1.5f, -2.0f})}});
  REQUIRE_FALSE(r.failure);
  CHECK(r.outputs.size() == 3);
  CHECK(mpfr_cmp_d(r.outputs.at("b")->data[0].f, 0.5) == 0);
}

TEST_CASE("check_inputs rejects wrong dtype, shape, missing and extra inputs") {
  Program p = parse_ok("input x : f32[2, 3]\ninput n : i64[]\nlet y = map(add, x, x)\noutput y\n");
  Tensor good_x(DType::F32, {2, 3}), good_n(DType::I64, {});
  CHECK_FALSE(check_inputs(p, {{"x", good_x}, {"n", good_n}}));

  auto bad = check_inputs(p, {{"x", Tensor(DType::F64, {2, 3})}, {"n", good_n}});
  REQUIRE(bad);
  CHECK(contains(*bad, "'x'"));
  CHECK(contains(*bad, "f32[2, 3]"));

  bad = check_inputs(p, {{"x", Tensor(DType::F32, {3, 2})}, {"n", good_n}});
  REQUIRE(bad);
  CHECK(contains(*bad, "'x'"));

  bad = check_inputs(p, {{"x", Tensor(DType::F32, {2, 3, 1})}, {"n", good_n}});
  CHECK(bad);

  bad = check_inputs(p, {{"x", good_x}, {"n", Tensor(DType::I64, {1})}});  // rank 1 is not rank 0
  REQUIRE(bad);
  CHECK(contains(*bad, "'n'"));

  bad = check_inputs(p, {{"x", good_x}});
  REQUIRE(bad);
  CHECK(contains(*bad, "missing"));
  CHECK(contains(*bad, "'n'"));

  bad = check_inputs(p, {{"x", good_x}, {"n", good_n}, {"z", good_x}});
  REQUIRE(bad);
  CHECK(contains(*bad, "'z'"));

  // A binding name is not an input either.
  CHECK(check_inputs(p, {{"x", good_x}, {"n", good_n}, {"y", good_x}}));
}

TEST_CASE("rand: deterministic values in [0, 1], half types rounded once from the f32 value") {
  Tensor f = run("let y = rand(f32, [256], 3)\noutput y\n", {});
  CHECK(run("let y = rand(f32, [256], 3)\noutput y\n", {}).data == f.data);
  CHECK_FALSE(run("let y = rand(f32, [256], 4)\noutput y\n", {}).data == f.data);
  for (DType dt : {DType::F16, DType::BF16, DType::F64}) {
    INFO(dtype_name(dt));
    Tensor h = run("let y = rand(" + std::string(dtype_name(dt)) + ", [256], 3)\noutput y\n", {});
    REQUIRE(h.dtype == dt);
    int mismatches = 0;
    for (int64_t i = 0; i < h.size(); ++i) {
      double v = h.get_double(i);
      CHECK((v >= 0.0 && v <= 1.0));
      float x = f.as<float>()[i];
      double want = dt == DType::F16    ? double(f16_bits_to_f32(f32_to_f16_bits(x)))
                    : dt == DType::BF16 ? double(bf16_bits_to_f32(f32_to_bf16_bits(x)))
                                        : double(x);
      mismatches += v != want;
    }
    CHECK(mismatches == 0);
  }
}
