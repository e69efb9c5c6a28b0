// semantics/faithful.h: faithful enclosures, the model PyTorch is judged by
// (peers/torch_check.h). Each case that comes from a campaign finding says
// which: those were bugs of the model, each with the deliberately wrong
// value that must stay outside.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "semantics/enclosure_domain.h"
#include "tests/test_util.h"

using namespace stax;
using sem::DType;

namespace {

sem::EnclosureOutcome faithful(const sem::Program& p, const sem::Inputs& in) {
  sem::EnclosureOutcome e = sem::eval_faithful(p, in, sem::FaithfulModel::pytorch_cpu());
  REQUIRE(!e.failure);
  return e;
}

/// Whether output `out`'s element i may be `v` (f32).
bool allows(const sem::EnclosureOutcome& e, const std::string& out, int64_t i, double v) {
  return sem::faithful_contains(e.outputs.at(out)->data[size_t(i)], DType::F32, v);
}

}  // namespace

TEST_CASE("faithful enclosures: grids, NaN flags, one step outside") {
  mpfr_t v;
  mpfr_init2(v, 128);
  mpfr_set_d(v, 1.0, MPFR_RNDN);
  mpfr_add_d(v, v, 1e-30, MPFR_RNDN);
  CHECK(sem::grid_down(v, DType::F32) == 1.0);
  CHECK(sem::grid_up(v, DType::F32) == double(std::nextafter(1.0f, 2.0f)));
  CHECK(sem::grid_up(v, DType::F16) == 1.0 + 1.0 / 1024);
  CHECK(sem::grid_up(v, DType::BF16) == 1.0 + 1.0 / 128);
  mpfr_set_d(v, 70000, MPFR_RNDN);
  CHECK(std::isinf(sem::grid_up(v, DType::F16)));
  CHECK(sem::grid_down(v, DType::F16) == 65504);
  mpfr_clear(v);
  CHECK(sem::grid_step(0.0, DType::F32, -1) == -double(std::numeric_limits<float>::denorm_min()));
  CHECK(sem::grid_distance(1.0, double(std::nextafter(1.0f, 0.0f)), DType::F32) == 1);

  // A sum with cancellation: sequential, reverse and pairwise f32 sums are
  // inside; one grid step past either end is not.
  sem::Program p = test::parse_ok("input x : f32[1000]\nlet s = red(sum, 0.0, [1000], x)\noutput s\n");
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(1000);
  for (auto& v2 : xs) v2 = u(rng) * std::ldexp(1.0f, int(rng() % 20));
  sem::Inputs in{{"x", test::f32({1000}, xs)}};
  sem::EnclosureOutcome enc = faithful(p, in);
  const sem::EVal& e = enc.outputs.at("s")->data[0];
  float fwd = 0, rev = 0;
  for (float v2 : xs) fwd += v2;
  for (auto it = xs.rbegin(); it != xs.rend(); ++it) rev += *it;
  std::vector<float> pw = xs;
  while (pw.size() > 1) {
    std::vector<float> nx;
    for (size_t i = 0; i + 1 < pw.size(); i += 2) nx.push_back(pw[i] + pw[i + 1]);
    if (pw.size() % 2) nx.push_back(pw.back());
    pw = nx;
  }
  for (float s : {fwd, rev, pw[0]}) CHECK(sem::faithful_contains(e, DType::F32, s));
  auto [lo, hi] = sem::faithful_bounds(e);
  CHECK(!sem::faithful_contains(e, DType::F32, sem::grid_step(hi, DType::F32, 1)));
  CHECK(!sem::faithful_contains(e, DType::F32, sem::grid_step(lo, DType::F32, -1)));
  CHECK(!sem::faithful_contains(e, DType::F32, NAN));

  // NaN flags: inf - inf may be NaN; a NaN input is only NaN through maximum.
  sem::Program q = test::parse_ok(
      "input a : f32[2]\ninput b : f32[2]\nlet d = map(sub, a, b)\nlet m = map(maximum, a, b)\noutput d\noutput m\n");
  sem::Inputs in2{{"a", test::f32({2}, {test::kInf, test::kNaN})}, {"b", test::f32({2}, {test::kInf, 1.0f})}};
  sem::EnclosureOutcome e2 = faithful(q, in2);
  CHECK(allows(e2, "d", 0, NAN));
  CHECK(allows(e2, "m", 1, NAN));
  CHECK(!allows(e2, "m", 1, 1.0));
}

TEST_CASE("faithful enclosures: NaN where an interval leaves a function's domain (a campaign finding)") {
  // stax fuzz --target torch-inductor, graph seed 19000016: erf(x) may exceed 1
  // by its model's error, -2·erf(x) then reaches below -1, log1p is outside its
  // domain on part of the interval, and pow(·, 0.5) of a partly negative base
  // may be NaN. The enclosure said [-inf, inf] without NaN; Inductor and eager
  // both give NaN.
  sem::Program p = test::parse_ok(
      "input x : f32[2]\nlet a = map(erf, x)\nlet b = map(fn(v) => mul(v, -2.0), a)\nlet c = map(log1p, b)\n"
      "let d = map(fn(v) => pow(v, 0.5), c)\nlet s = map(sqrt, c)\nlet l = map(log, c)\noutput d\noutput s\noutput l\n");
  sem::Inputs in{{"x", test::f32({2}, {0.3f, 5.0f})}};
  sem::EnclosureOutcome e = faithful(p, in);
  for (const char* o : {"d", "s", "l"})
    for (int i = 0; i < 2; ++i) {
      INFO(o << i << " " << sem::faithful_text(e.outputs.at(o)->data[size_t(i)], DType::F32));
      CHECK(allows(e, o, i, NAN));
    }
  // A point outside the domain is NaN only.
  sem::EnclosureOutcome pt = faithful(test::parse_ok("input x : f32[1]\nlet d = map(fn(v) => pow(v, 0.5), x)\noutput d\n"),
                                      {{"x", test::f32({1}, {-2.0f})}});
  CHECK(allows(pt, "d", 0, NAN));
  CHECK(!allows(pt, "d", 0, 0.0));
}

TEST_CASE("faithful enclosures: x / -0 and pow(-0, -1) may be -inf (a campaign finding)") {
  // stax fuzz --target torch-eager, graph seed 19000581: pow(-0, -1) is -inf in
  // PyTorch and in our Ieee domain; the enclosure lost the zero's sign and
  // allowed only [max, +inf].
  sem::Program p = test::parse_ok(
      "input x : f32[2]\nlet d = map(fn(v) => pow(v, -1.0), x)\nlet q = map(fn(v) => div(1.0, v), x)\n"
      "output d\noutput q\n");
  sem::Inputs in{{"x", test::f32({2}, {-0.0f, 0.0f})}};
  sem::EnclosureOutcome e = faithful(p, in);
  for (const char* o : {"d", "q"}) {
    CHECK(allows(e, o, 0, -INFINITY));
    CHECK(allows(e, o, 1, INFINITY));
  }
}

TEST_CASE("faithful enclosures: a fused dot product over an overflowing product (a campaign finding)") {
  // stax fuzz --target torch-inductor, graph seed 19000164 (mm): the terms
  // 1757293.8·inf, 3e38·-5807.967 and -inf·-1.8458154. Rounded one by one the
  // middle product overflows to -inf and the sum is NaN; MKL's fused dot
  // product keeps it finite and gives +inf. The enclosure said "only NaN".
  sem::Program p = test::parse_ok(
      "input x : f32[3]\ninput y : f32[3]\nlet d = red(sum, 0.0, [3], map(mul, x, y))\n"
      "let n = red(sum, 0.0, [3], map(add, x, y))\noutput d\noutput n\n");
  sem::Inputs in{{"x", test::f32({3}, {1757293.8f, 3e38f, -test::kInf})},
                 {"y", test::f32({3}, {test::kInf, -5807.967f, -1.8458154f})}};
  sem::EnclosureOutcome e = faithful(p, in);
  CHECK(allows(e, "d", 0, INFINITY));
  CHECK(allows(e, "d", 0, NAN));
  // A NaN term makes the sum NaN in any order.
  sem::Inputs in2{{"x", test::f32({3}, {1.0f, test::kNaN, 2.0f})}, {"y", test::f32({3}, {1.0f, 1.0f, 1.0f})}};
  sem::EnclosureOutcome e2 = faithful(p, in2);
  CHECK(allows(e2, "n", 0, NAN));
  CHECK(!allows(e2, "n", 0, 5.0));
}

TEST_CASE("faithful enclosures: an undecided comparison selects the hull of both branches") {
  // f32(0.1) + f32(0.15) in any order is within γ(1)·Σ|x| of the real sum,
  // an interval around 0.25: gt(s, 0.25) is undecided, not a verdict on the
  // whole program.
  sem::Program p = test::parse_ok(
      "input x : f32[2]\nlet s = red(sum, 0.0, [2], x)\n"
      "let y = map(fn(v) => select(gt(v, 0.25), v, add(v, 1.0)), s)\n"
      "let z = map(fn(v) => cast(gt(v, 0.25), f32), s)\n"
      "let w = map(fn(v) => select(logical_or(gt(v, 0.25), lt(v, 1.0)), v, add(v, 1.0)), s)\n"
      "output y\noutput z\noutput w\n");
  sem::EnclosureOutcome e =
      faithful(p, {{"x", test::f32({2}, {0.1f, 0.15f})}});
  CHECK(!e.indeterminate);
  CHECK(allows(e, "y", 0, 0.25));
  CHECK(allows(e, "y", 0, 1.25));
  CHECK(!allows(e, "y", 0, 3.0));
  CHECK(!allows(e, "y", 0, NAN));
  CHECK(allows(e, "z", 0, 0.0));
  CHECK(allows(e, "z", 0, 1.0));
  // unknown or true is true: only the first branch.
  CHECK(!allows(e, "w", 0, 1.25));
  CHECK(allows(e, "w", 0, 0.25));
}

TEST_CASE("faithful enclosures: a float product in any order is within γ(n)·|Πx| while it stays normal") {
  // 200 factors near 1 (their product stays far from under- and overflow):
  // the forward, reverse and pairwise f32 products are inside, one grid step
  // past either end of the enclosure is not; it is far narrower than "any value".
  sem::Program p = test::parse_ok("input x : f32[200]\nlet q = red(prod, 1.0, [200], x)\noutput q\n");
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  std::vector<float> xs(200);
  for (auto& v : xs) v = (rng() % 2 ? -1.0f : 1.0f) * u(rng);
  sem::EnclosureOutcome enc = faithful(p, {{"x", test::f32({200}, xs)}});
  const sem::EVal& e = enc.outputs.at("q")->data[0];
  float fwd = 1, rev = 1;
  for (float v : xs) fwd *= v;
  for (auto it = xs.rbegin(); it != xs.rend(); ++it) rev *= *it;
  std::vector<float> pw = xs;
  while (pw.size() > 1) {
    std::vector<float> nx;
    for (size_t i = 0; i + 1 < pw.size(); i += 2) nx.push_back(pw[i] * pw[i + 1]);
    if (pw.size() % 2) nx.push_back(pw.back());
    pw = nx;
  }
  for (float v : {fwd, rev, pw[0]}) CHECK(sem::faithful_contains(e, DType::F32, v));
  auto [lo, hi] = sem::faithful_bounds(e);
  CHECK(sem::grid_distance(lo, hi, DType::F32) < 1000);  // γ(200) ≈ 200 u each side
  CHECK(!sem::faithful_contains(e, DType::F32, sem::grid_step(hi, DType::F32, 1)));
  CHECK(!sem::faithful_contains(e, DType::F32, sem::grid_step(lo, DType::F32, -1)));
  CHECK(!sem::faithful_contains(e, DType::F32, -fwd));  // the wrong sign
  CHECK(!sem::faithful_contains(e, DType::F32, NAN));

  // A partial product that may underflow (1e-30 · 1e-30 in some order) or a
  // zero factor: any value, as before the model.
  sem::Program q = test::parse_ok("input x : f32[3]\nlet q = red(prod, 1.0, [3], x)\noutput q\n");
  sem::EnclosureOutcome tiny = faithful(q, {{"x", test::f32({3}, {1e-30f, 1e-30f, 1e30f})}});
  CHECK(sem::faithful_contains(tiny.outputs.at("q")->data[0], DType::F32, 12345.0));
  sem::EnclosureOutcome zero = faithful(q, {{"x", test::f32({3}, {0.0f, 2.0f, 3.0f})}});
  CHECK(sem::faithful_contains(zero.outputs.at("q")->data[0], DType::F32, 12345.0));
  // Three factors in range: 2·3·5 = 30 in every order is inside, 31 is not.
  sem::EnclosureOutcome small = faithful(q, {{"x", test::f32({3}, {2.0f, 3.0f, 5.0f})}});
  CHECK(sem::faithful_contains(small.outputs.at("q")->data[0], DType::F32, 30.0));
  CHECK(!sem::faithful_contains(small.outputs.at("q")->data[0], DType::F32, 31.0));
}
