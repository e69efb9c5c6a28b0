// Reductions in the Ieee domain (docs/design.md §3): a left fold from `init` in
// lexicographic order of the reduction index, IEEE 754-2019 max/min,
// argmax/argmin with NaN as the greatest value and ties to the smallest index,
// wrap-around integers, and half types accumulated in f32 and rounded once.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "semantics/dtype.h"
#include "semantics/evaluator.h"
#include "semantics/parser.h"
#include "semantics/tensor.h"
#include "tests/test_util.h"

using namespace stax::sem;
// Not bits32: this file's own checks the dtype first.
using stax::test::b32;
using stax::test::bits16;
using stax::test::elems;
using stax::test::H16;
using stax::test::H32;
using stax::test::is_nan32;
using stax::test::kInf;
using stax::test::kNaN;
using stax::test::parse_ok;
using stax::test::run;
using stax::test::tensor;

namespace {

/// stax::test::bits32, insisting on an f32 tensor.
std::vector<H32> bits32(const Tensor& t) {
  REQUIRE(t.dtype == DType::F32);
  return stax::test::bits32(t);
}


/// `y = red(op, init, extents, x)` for an input x of the given dtype and shape.
Tensor red(const std::string& op, const std::string& init, const Shape& ext, const Tensor& x) {
  std::string text = "input x : " + std::string(dtype_name(x.dtype)) + shape_text(x.shape) + "\nlet y = red(" + op +
                     ", " + init + ", " + shape_text(ext) + ", x)\noutput y\n";
  return run(text, {{"x", x}});
}
Tensor f32v(const std::vector<float>& v) { return tensor(DType::F32, {int64_t(v.size())}, v); }

H32 sum1(const std::string& init, const std::vector<float>& v) { return bits32(red("sum", init, {int64_t(v.size())}, f32v(v)))[0]; }

int64_t arg1(const std::string& op, const std::string& init, const std::vector<float>& v) {
  Tensor y = red(op, init, {int64_t(v.size())}, f32v(v));
  REQUIRE(y.dtype == DType::I64);
  REQUIRE(y.shape.empty());
  return elems<int64_t>(y)[0];
}

}  // namespace

TEST_CASE("sum starts from init: 0.0 + -0.0 is +0.0") {
  CHECK(sum1("0.0", {-0.0f, -0.0f}) == H32{0x00000000});
  CHECK(sum1("-0.0", {-0.0f, -0.0f}) == H32{0x80000000});
  CHECK_FALSE(sum1("0.0", {-0.0f, -0.0f}) == sum1("-0.0", {-0.0f, -0.0f}));
  // The result of a rank-1 sum is rank 0.
  Tensor y = red("sum", "0.0", {2}, f32v({1.0f, 2.0f}));
  CHECK(y.shape.empty());
  CHECK(bits32(y) == std::vector<H32>{b32(3.0f)});
}

TEST_CASE("sum folds left in order") {
  // ((((0 + 1e8) + 1) + -1e8) + 1) = 1: the first +1 is absorbed.
  CHECK(sum1("0.0", {1e8f, 1.0f, -1e8f, 1.0f}) == b32(1.0f));
  CHECK_FALSE(sum1("0.0", {1e8f, 1.0f, -1e8f, 1.0f}) == b32(2.0f));  // the exact sum
  CHECK_FALSE(sum1("0.0", {1e8f, 1.0f, -1e8f, 1.0f}) == b32(0.0f));  // pairwise: (1e8+1) + (-1e8+1)
  CHECK(sum1("0.0", {1.0f, 1.0f, 1e8f, -1e8f}) == b32(0.0f));         // 2 + 1e8 rounds to 1e8
  CHECK(sum1("1.0", {1e8f, -1e8f}) == b32(0.0f));                     // the init is folded first

  // Many elements across evaluation blocks: equal to the sequential fold, and
  // (for these inputs) different from the reversed fold.
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> m(-1.0f, 1.0f);
  std::uniform_int_distribution<int> e(-20, 20);
  std::vector<float> v;
  for (int i = 0; i < 5000; ++i) v.push_back(std::ldexp(m(rng), e(rng)));
  float fwd = 0.0f, rev = 0.0f;
  for (float x : v) fwd += x;
  for (size_t i = v.size(); i-- > 0;) rev += v[i];
  CHECK(sum1("0.0", v) == b32(fwd));
  CHECK_FALSE(b32(fwd) == b32(rev));
}

TEST_CASE("multi-dim reductions reduce the trailing dims in lexicographic order") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> m(-1.0f, 1.0f);
  std::uniform_int_distribution<int> e(-24, 24);
  const int A = 5, B = 30, C = 40;  // 6000 elements, rows cross block boundaries
  std::vector<float> v(A * B * C);
  for (float& x : v) x = std::ldexp(m(rng), e(rng));
  Tensor x = tensor(DType::F32, {A, B, C}, v);

  Tensor y2 = red("sum", "0.0", {B, C}, x);
  REQUIRE(y2.shape == Shape{A});
  std::vector<H32> want2, colmajor;
  for (int a = 0; a < A; ++a) {
    float s = 0.0f, t = 0.0f;
    for (int b = 0; b < B; ++b)
      for (int c = 0; c < C; ++c) s += v[size_t((a * B + b) * C + c)];
    for (int c = 0; c < C; ++c)
      for (int b = 0; b < B; ++b) t += v[size_t((a * B + b) * C + c)];
    want2.push_back(b32(s));
    colmajor.push_back(b32(t));
  }
  CHECK(bits32(y2) == want2);
  CHECK_FALSE(want2 == colmajor);  // the order is observable

  Tensor y1 = red("sum", "0.0", {C}, x);
  REQUIRE(y1.shape == (Shape{A, B}));
  std::vector<H32> want1;
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b) {
      float s = 0.0f;
      for (int c = 0; c < C; ++c) s += v[size_t((a * B + b) * C + c)];
      want1.push_back(b32(s));
    }
  CHECK(bits32(y1) == want1);

  // Reducing every dim gives a rank-0 result.
  Tensor y3 = red("max", "-inf", {A, B, C}, x);
  CHECK(y3.shape.empty());
  float mx = -kInf;
  for (float f : v) mx = std::fmax(mx, f);
  CHECK(bits32(y3) == std::vector<H32>{b32(mx)});
}

TEST_CASE("NaN in sum, prod, max, min") {
  CHECK(is_nan32(sum1("0.0", {1.0f, kNaN, 2.0f})));
  CHECK(is_nan32(bits32(red("prod", "1.0", {3}, f32v({1.0f, kNaN, 0.0f})))[0]));
  // maximum/minimum propagate NaN wherever it is, even before larger values.
  CHECK(is_nan32(bits32(red("max", "-inf", {3}, f32v({kNaN, kInf, 1.0f})))[0]));
  CHECK(is_nan32(bits32(red("max", "-inf", {3}, f32v({1.0f, 2.0f, kNaN})))[0]));
  CHECK(is_nan32(bits32(red("min", "inf", {3}, f32v({-kInf, kNaN, 1.0f})))[0]));
  // A NaN init propagates too.
  CHECK(is_nan32(bits32(red("max", "nan", {2}, f32v({1.0f, 2.0f})))[0]));
  CHECK(bits32(red("max", "-inf", {3}, f32v({1.0f, 3.0f, 2.0f}))) == std::vector<H32>{b32(3.0f)});
}

TEST_CASE("max/min reductions order -0 below +0") {
  auto mx = [](std::vector<float> v) { return bits32(red("max", "-inf", {int64_t(v.size())}, f32v(v)))[0]; };
  auto mn = [](std::vector<float> v) { return bits32(red("min", "inf", {int64_t(v.size())}, f32v(v)))[0]; };
  CHECK(mx({-0.0f, 0.0f}) == H32{0x00000000});
  CHECK(mx({0.0f, -0.0f}) == H32{0x00000000});
  CHECK(mx({-0.0f, -0.0f}) == H32{0x80000000});
  CHECK(mn({0.0f, -0.0f}) == H32{0x80000000});
  CHECK(mn({-0.0f, 0.0f}) == H32{0x80000000});
  CHECK(mn({0.0f, 0.0f}) == H32{0x00000000});
  // The init takes part: max from +0 over {-0} is +0.
  CHECK(bits32(red("max", "0.0", {1}, f32v({-0.0f}))) == std::vector<H32>{H32{0x00000000}});
  CHECK(bits32(red("min", "-0.0", {1}, f32v({0.0f}))) == std::vector<H32>{H32{0x80000000}});
}

TEST_CASE("argmax/argmin: ties to the smallest index, NaN is the greatest value") {
  CHECK(arg1("argmax", "-inf", {1.0f, 3.0f, 3.0f, 2.0f}) == 1);
  CHECK(arg1("argmin", "inf", {2.0f, 1.0f, 1.0f, 3.0f}) == 1);
  CHECK(arg1("argmax", "-inf", {5.0f, 5.0f}) == 0);
  CHECK(arg1("argmax", "-inf", {-kInf, -kInf}) == 0);
  // argmax: the first NaN wins over everything, including +inf.
  CHECK(arg1("argmax", "-inf", {1.0f, kNaN, kInf, kNaN}) == 1);
  CHECK(arg1("argmax", "-inf", {kInf, 1.0f, kNaN}) == 2);
  // argmin: NaN is never the minimum unless every value is NaN.
  CHECK(arg1("argmin", "inf", {kNaN, 5.0f, 1.0f, 1.0f}) == 2);
  CHECK(arg1("argmin", "inf", {3.0f, kNaN, -kInf}) == 2);
  CHECK(arg1("argmin", "inf", {kNaN, kNaN, kNaN}) == 0);
  CHECK_FALSE(arg1("argmin", "inf", {kNaN, 5.0f}) == 0);
  // Over the trailing dims of a rank-2 operand, per row; int operands too.
  Tensor x = tensor(DType::F32, {3, 3}, std::vector<float>{0.0f, 7.0f, 7.0f, kNaN, 1.0f, kNaN, -1.0f, -2.0f, -2.0f});
  CHECK(elems<int64_t>(red("argmax", "-inf", {3}, x)) == std::vector<int64_t>{1, 0, 0});
  CHECK(elems<int64_t>(red("argmin", "inf", {3}, x)) == std::vector<int64_t>{0, 1, 1});
  Tensor xi = tensor(DType::I32, {4}, std::vector<int32_t>{-5, 9, 9, -5});
  CHECK(elems<int64_t>(red("argmax", "-2147483648", {4}, xi)) == std::vector<int64_t>{1});
  CHECK(elems<int64_t>(red("argmin", "2147483647", {4}, xi)) == std::vector<int64_t>{0});
  // Multi-dim: the index is the flat lexicographic position in the reduced dims.
  Tensor x2 = tensor(DType::F32, {1, 2, 2}, std::vector<float>{0.0f, 1.0f, 4.0f, 2.0f});
  CHECK(elems<int64_t>(red("argmax", "-inf", {2, 2}, x2)) == std::vector<int64_t>{2});
}

TEST_CASE("argmin/argmax agree between Ieee and Real") {
  std::string text =
      "input x : f32[4, 3]\n"
      "let a = red(argmax, -inf, [3], x)\n"
      "let b = red(argmin, inf, [3], x)\n"
      "output a, b\n";
  Program p = parse_ok(text);
  Inputs in{{"x", tensor(DType::F32, {4, 3},
                         std::vector<float>{kNaN, 5.0f, 1.0f, 2.0f, kNaN, 2.0f, kNaN, kNaN, kNaN, -0.0f, 3.0f, -1.0f})}};
  IeeeOutcome fo = eval_ieee(p, in);
  RealOutcome ro = eval_real(p, in);
  REQUIRE_FALSE(fo.failure);
  REQUIRE_FALSE(ro.failure);
  CHECK(elems<int64_t>(*fo.outputs.at("a")) == std::vector<int64_t>{0, 1, 0, 1});
  CHECK(elems<int64_t>(*fo.outputs.at("b")) == std::vector<int64_t>{2, 0, 0, 2});
  for (const char* n : {"a", "b"}) {
    INFO(n);
    const RealTensor& r = *ro.outputs.at(n);
    const Tensor& f = *fo.outputs.at(n);
    REQUIRE(r.size() == f.size());
    for (int64_t i = 0; i < f.size(); ++i) CHECK(r.data[size_t(i)].i == f.get_int(i));
  }
}

TEST_CASE("integer sums and products wrap around") {
  Tensor x = tensor(DType::I32, {3}, std::vector<int32_t>{INT32_MAX, 1, 0});
  Tensor y = red("sum", "0", {3}, x);
  REQUIRE(y.dtype == DType::I32);
  CHECK(elems<int32_t>(y) == std::vector<int32_t>{INT32_MIN});
  CHECK(elems<int32_t>(red("sum", "-4", {3}, tensor(DType::I32, {3}, std::vector<int32_t>{INT32_MIN, 3, 0}))) ==
        std::vector<int32_t>{INT32_MAX});
  CHECK(elems<int32_t>(red("prod", "1", {2}, tensor(DType::I32, {2}, std::vector<int32_t>{65536, 65536}))) ==
        std::vector<int32_t>{0});
  CHECK(elems<int64_t>(red("sum", "0", {2}, tensor(DType::I64, {2}, std::vector<int64_t>{INT64_MAX, 2}))) ==
        std::vector<int64_t>{INT64_MIN + 1});
  CHECK(elems<int32_t>(red("max", "-2147483648", {3}, tensor(DType::I32, {3}, std::vector<int32_t>{-3, 8, 2}))) ==
        std::vector<int32_t>{8});
  CHECK(elems<int32_t>(red("min", "2147483647", {3}, tensor(DType::I32, {3}, std::vector<int32_t>{-3, 8, 2}))) ==
        std::vector<int32_t>{-3});
}

TEST_CASE("prod folds left from init") {
  CHECK(bits32(red("prod", "1.0", {3}, f32v({2.0f, 3.0f, 0.5f}))) == std::vector<H32>{b32(3.0f)});
  CHECK(bits32(red("prod", "2.0", {2}, f32v({3.0f, 4.0f}))) == std::vector<H32>{b32(24.0f)});
  // 0x1p-100 * 0x1p-100 underflows to 0 before the 0x1p100 factors arrive.
  CHECK(bits32(red("prod", "1.0", {4}, f32v({0x1p-100f, 0x1p-100f, 0x1p100f, 0x1p100f}))) ==
        std::vector<H32>{b32(0.0f)});
  CHECK(bits32(red("prod", "1.0", {4}, f32v({0x1p-100f, 0x1p100f, 0x1p-100f, 0x1p100f}))) ==
        std::vector<H32>{b32(1.0f)});
  CHECK(bits32(red("prod", "-1.0", {1}, f32v({0.0f}))) == std::vector<H32>{H32{0x80000000}});
}

TEST_CASE("empty reductions give init") {
  Tensor x(DType::F32, {3, 0});
  CHECK(bits32(red("sum", "-0.0", {0}, x)) == std::vector<H32>(3, H32{0x80000000}));
  CHECK(bits32(red("prod", "1.0", {0}, x)) == std::vector<H32>(3, b32(1.0f)));
  CHECK(bits32(red("max", "-inf", {0}, x)) == std::vector<H32>(3, b32(-kInf)));
  CHECK(bits32(red("min", "2.5", {0}, x)) == std::vector<H32>(3, b32(2.5f)));
  CHECK(elems<int64_t>(red("argmax", "-inf", {0}, x)) == std::vector<int64_t>(3, 0));
  Tensor xi(DType::I32, {0});
  CHECK(elems<int32_t>(red("sum", "7", {0}, xi)) == std::vector<int32_t>{7});
  // An empty operand with an empty result is fine too.
  Tensor e(DType::F32, {0, 4});
  CHECK(red("sum", "0.0", {4}, e).size() == 0);
}

TEST_CASE("half reductions accumulate in f32 and round once") {
  // f16: 2048 + 1 + 1 = 2050 in f32, exact in f16 (0x6801). Rounding to f16 at
  // each step would stick at 2048 (2049 is a tie, to even 2048).
  auto h = [](std::vector<uint16_t> v) { return tensor(DType::F16, {int64_t(v.size())}, v); };
  Tensor y = red("sum", "0.0", {3}, h({0x6800, 0x3c00, 0x3c00}));
  REQUIRE(y.dtype == DType::F16);
  CHECK(bits16(y) == std::vector<H16>{H16{0x6801}});
  CHECK_FALSE(bits16(y) == std::vector<H16>{H16{0x6800}});
  // One rounding at the end: 2048 + 1 is a tie (to 2048); 2048 + 1 + 0.5 is not.
  CHECK(bits16(red("sum", "0.0", {2}, h({0x6800, 0x3c00}))) == std::vector<H16>{H16{0x6800}});
  CHECK(bits16(red("sum", "0.0", {3}, h({0x6800, 0x3c00, 0x3800}))) == std::vector<H16>{H16{0x6801}});
  // bf16: 256 + 1 + 1 = 258 (0x4381); per-step bf16 rounding would give 256.
  Tensor yb = red("sum", "0.0", {3}, tensor(DType::BF16, {3}, std::vector<uint16_t>{0x4380, 0x3f80, 0x3f80}));
  CHECK(bits16(yb) == std::vector<H16>{H16{0x4381}});

  // A map feeding the reduction rounds at its store first, then the sum
  // accumulates in f32: compare with both references on random rows.
  const int R = 64, C = 64;
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> u(0x3800, 0x4400);  // [0.5, 4]
  std::vector<uint16_t> v(R * C);
  for (uint16_t& b : v) b = uint16_t(u(rng));
  Tensor x = tensor(DType::F16, {R, C}, v);
  Tensor got = run("input x : f16[64, 64]\nlet y = red(sum, 0.0, [64], map(fn(a) => mul(a, a), x))\noutput y\n",
                   {{"x", x}});
  std::vector<H16> want, unrounded;
  for (int r = 0; r < R; ++r) {
    float s = 0.0f, t = 0.0f;
    for (int c = 0; c < C; ++c) {
      float a = f16_bits_to_f32(v[size_t(r * C + c)]);
      s += round_to_half(a * a, DType::F16);
      t += a * a;
    }
    want.push_back({f32_to_f16_bits(s)});
    unrounded.push_back({f32_to_f16_bits(t)});
  }
  CHECK(bits16(got) == want);
  CHECK_FALSE(want == unrounded);
}
