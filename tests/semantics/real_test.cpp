// The Real domain (Theorem 6.3; docs/design.md §3) against the Ieee domain: a single
// correctly rounded IEEE op is the real result rounded once, so the two must
// agree bit for bit after rounding the Real value to the format; sums are
// exact (mpfr_sum), float casts are the identity, the precision is a knob.
#include <catch2/catch.hpp>

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "semantics/dtype.h"
#include "semantics/evaluator.h"
#include "semantics/parser.h"
#include "semantics/real_domain.h"
#include "semantics/tensor.h"
#include "tests/test_util.h"

using namespace stax::sem;
using namespace stax::test;

namespace {

struct Both {
  IeeeOutcome ieee;
  RealOutcome real;
};
/// Runs a program in both domains; fails the test on ⊥ in either.
Both run_both(const std::string& text, const Inputs& in, long prec = 256) {
  Program p = parse_ok(text);
  auto bad = check_inputs(p, in);
  if (bad) FAIL("inputs rejected: " << *bad);
  Both b{eval_ieee(p, in), eval_real(p, in, prec)};
  if (b.ieee.failure) FAIL("Ieee failed: " << b.ieee.failure->str());
  if (b.real.failure) FAIL("Real failed: " << b.real.failure->str());
  return b;
}
const RealTensor& run_real(const std::string& text, const Inputs& in, long prec, RealOutcome& keep,
                           const std::string& out = "y") {
  Program p = parse_ok(text);
  keep = eval_real(p, in, prec);
  if (keep.failure) FAIL("Real failed: " << keep.failure->str());
  return *keep.outputs.at(out);
}

/// The Real value rounded once to f32 / f64 (MPFR does the rounding,
/// subnormals and overflow included).
H32 real_f32(const RVal& v) { return b32(mpfr_get_flt(v.f, MPFR_RNDN)); }
H64 real_f64(const RVal& v) { return b64(mpfr_get_d(v.f, MPFR_RNDN)); }

bool nan32(H32 h) { return std::isnan(std::bit_cast<float>(h.v)); }
bool nan64(H64 h) { return std::isnan(std::bit_cast<double>(h.v)); }

/// f32 operands: random bit patterns (every exponent, subnormals, specials),
/// moderate values, subnormal pairs and near-equal pairs (cancellation).
void random_pairs(std::vector<float>& a, std::vector<float>& b, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<uint32_t> sub(0, 0x007fffff);
  std::uniform_real_distribution<float> m(-2.0f, 2.0f);
  std::uniform_int_distribution<int> e(-30, 30);
  for (int i = 0; i < n; ++i) {
    float x, y;
    switch (i % 5) {
      case 0: x = std::bit_cast<float>(bits(rng)); y = std::bit_cast<float>(bits(rng)); break;
      case 1: x = std::ldexp(m(rng), e(rng)); y = std::ldexp(m(rng), e(rng)); break;
      case 2:  // subnormal operands (and results)
        x = std::bit_cast<float>(sub(rng) | (bits(rng) & 0x80000000u));
        y = std::bit_cast<float>(sub(rng) | (bits(rng) & 0x80000000u));
        if (i % 2) y = std::ldexp(m(rng), -1 - int(bits(rng) % 8));
        break;
      case 3:  // near-equal: sub cancels, div is near 1
        x = std::ldexp(m(rng), e(rng));
        y = std::bit_cast<float>(std::bit_cast<uint32_t>(x) + (bits(rng) % 7) - 3);
        break;
      default:  // tiny results of mul/div
        x = std::ldexp(m(rng), -70 - int(bits(rng) % 15));
        y = std::ldexp(m(rng), -60 - int(bits(rng) % 15));
        break;
    }
    a.push_back(x);
    b.push_back(y);
  }
  a.insert(a.end(), {0.0f, -0.0f, kInf, -kInf, 1.0f, 0x1p-149f, std::numeric_limits<float>::max(), 0.0f});
  b.insert(b.end(), {-0.0f, -0.0f, kInf, kInf, 0.0f, 0.5f, 2.0f, 0.0f});
}

}  // namespace

TEST_CASE("correctly rounded f32 ops: Real rounded to f32 equals Ieee") {
  std::vector<float> a, b;
  random_pairs(a, b, 20000, 11);
  std::string n = std::to_string(a.size());
  std::string text = "input a : f32[" + n + "]\ninput b : f32[" + n +
                     "]\n"
                     "let s = map(add, a, b)\nlet d = map(sub, a, b)\nlet m = map(mul, a, b)\n"
                     "let q = map(div, a, b)\nlet r = map(sqrt, a)\nlet w = map(fn(x, y) => sqrt(abs(y)), a, b)\n"
                     "output s, d, m, q, r, w\n";
  Both o = run_both(text, {{"a", tensor(DType::F32, a)}, {"b", tensor(DType::F32, b)}});
  for (const char* op : {"s", "d", "m", "q", "r", "w"}) {
    INFO("output " << op);
    const Tensor& f = *o.ieee.outputs.at(op);
    const RealTensor& r = *o.real.outputs.at(op);
    REQUIRE(f.size() == r.size());
    std::vector<uint32_t> fb = elems<uint32_t>(f);
    int mismatches = 0, subnormal_results = 0;
    for (size_t i = 0; i < fb.size(); ++i) {
      H32 want{fb[i]}, got = real_f32(r.data[i]);
      subnormal_results += (fb[i] & 0x7f800000u) == 0 && (fb[i] & 0x007fffffu) != 0;
      bool ok = nan32(want) ? nan32(got) : got == want;
      if (!ok && mismatches++ < 5) {
        INFO(std::hexfloat << "a = " << a[i] << ", b = " << b[i]);
        CHECK(got == want);
      }
    }
    CHECK(mismatches == 0);
    if (std::string(op) != "r" && std::string(op) != "w") CHECK(subnormal_results > 0);  // the case is exercised
  }
}

TEST_CASE("transcendental ops: Real rounded to f32 / f64 equals Ieee") {
  // Every function of mathlib/ on random, special and subnormal operands:
  // Ieee(f)(x) == round(Real(f)(x)) in both compute types.
  const char* fns[] = {"exp", "expm1", "log", "log2", "log10", "log1p", "tanh", "erf", "sin", "cos"};
  std::vector<float> a, b;
  random_pairs(a, b, 1500, 23);
  for (float& y : b) y = std::ldexp(std::fmod(std::fabs(y), 1.0f) * 8 - 4, 0);  // pow: moderate exponents
  std::string n = std::to_string(a.size());
  for (const char* dt : {"f32", "f64"}) {
    std::string text = "input a : " + std::string(dt) + "[" + n + "]\ninput b : " + dt + "[" + n + "]\n";
    std::string outs;
    for (const char* f : fns) {
      text += "let " + std::string(f) + "_y = map(" + f + ", a)\n";
      outs += std::string(outs.empty() ? "" : ", ") + f + "_y";
    }
    text += "let pow_y = map(pow, a, b)\noutput " + outs + ", pow_y\n";
    bool f64 = std::string(dt) == "f64";
    std::vector<double> a64(a.begin(), a.end()), b64v(b.begin(), b.end());
    Inputs in = f64 ? Inputs{{"a", tensor(DType::F64, a64)}, {"b", tensor(DType::F64, b64v)}}
                    : Inputs{{"a", tensor(DType::F32, a)}, {"b", tensor(DType::F32, b)}};
    Both o = run_both(text, in);
    for (const auto& [name, f] : o.ieee.outputs) {
      INFO(dt << " " << name);
      const RealTensor& r = *o.real.outputs.at(name);
      int mismatches = 0;
      for (int64_t i = 0; i < f->size(); ++i) {
        bool ok;
        if (f64) {
          H64 want{elems<uint64_t>(*f)[size_t(i)]}, got = real_f64(r.data[size_t(i)]);
          ok = nan64(want) ? nan64(got) : got == want;
        } else {
          H32 want{elems<uint32_t>(*f)[size_t(i)]}, got = real_f32(r.data[size_t(i)]);
          ok = nan32(want) ? nan32(got) : got == want;
        }
        if (!ok && mismatches++ < 3) {
          INFO(std::hexfloat << "a = " << a[size_t(i)] << ", b = " << b[size_t(i)]);
          CHECK(ok);
        }
      }
      CHECK(mismatches == 0);
    }
  }
  // The deliberately wrong reference: glibc 2.36's log10f is one ulp off at
  // 0x1.62e43p-1, so the same comparison against the host libm fails there.
  RealOutcome keep;
  const RealTensor& r = run_real("input a : f32[1]\nlet y = map(log10, a)\noutput y\n",
                                 {{"a", tensor(DType::F32, std::vector<float>{0x1.62e43p-1f})}}, 256, keep);
  volatile float x = 0x1.62e43p-1f;
  CHECK(real_f32(r.data[0]) == b32(-0x1.45fd4cp-3f));
  CHECK_FALSE(real_f32(r.data[0]) == b32(std::log10(float(x))));
}

TEST_CASE("correctly rounded f64 ops and fma: Real rounded equals Ieee") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<uint64_t> bits;
  std::uniform_real_distribution<double> m(-2.0, 2.0);
  std::uniform_int_distribution<int> e(-40, 40);
  std::vector<double> a, b;
  for (int i = 0; i < 4000; ++i) {
    if (i % 2) {
      a.push_back(std::bit_cast<double>(bits(rng)));
      b.push_back(std::bit_cast<double>(bits(rng)));
    } else {
      a.push_back(std::ldexp(m(rng), e(rng)));
      b.push_back(std::ldexp(m(rng), e(rng)));
    }
  }
  std::string n = std::to_string(a.size());
  std::string text = "input a : f64[" + n + "]\ninput b : f64[" + n +
                     "]\nlet s = map(add, a, b)\nlet m = map(mul, a, b)\nlet q = map(div, a, b)\n"
                     "output s, m, q\n";
  Both o = run_both(text, {{"a", tensor(DType::F64, a)}, {"b", tensor(DType::F64, b)}});
  for (const char* op : {"s", "m", "q"}) {
    INFO("output " << op);
    std::vector<uint64_t> fb = elems<uint64_t>(*o.ieee.outputs.at(op));
    const RealTensor& r = *o.real.outputs.at(op);
    int mismatches = 0;
    for (size_t i = 0; i < fb.size(); ++i) {
      H64 want{fb[i]}, got = real_f64(r.data[i]);
      mismatches += nan64(want) ? !nan64(got) : !(got == want);
    }
    CHECK(mismatches == 0);
  }

  // fma on f32 with moderate exponents (exact at 256 bits, then one rounding).
  std::mt19937 r32(8);
  std::uniform_real_distribution<float> mf(-2.0f, 2.0f);
  std::uniform_int_distribution<int> ef(-20, 20);
  std::vector<float> x, y, z;
  for (int i = 0; i < 5000; ++i) {
    x.push_back(std::ldexp(mf(r32), ef(r32)));
    y.push_back(std::ldexp(mf(r32), ef(r32)));
    z.push_back(i % 3 ? -x.back() * y.back() : std::ldexp(mf(r32), ef(r32)));  // cancelling addends too
  }
  std::string k = std::to_string(x.size());
  Both f = run_both("input x : f32[" + k + "]\ninput y : f32[" + k + "]\ninput z : f32[" + k +
                        "]\nlet v = map(fma, x, y, z)\noutput v\n",
                    {{"x", tensor(DType::F32, x)}, {"y", tensor(DType::F32, y)}, {"z", tensor(DType::F32, z)}});
  std::vector<uint32_t> fv = elems<uint32_t>(*f.ieee.outputs.at("v"));
  int mismatches = 0;
  for (size_t i = 0; i < fv.size(); ++i) mismatches += !(real_f32(f.real.outputs.at("v")->data[i]) == H32{fv[i]});
  CHECK(mismatches == 0);
}

TEST_CASE("a Real sum is exact: catastrophic cancellation") {
  std::string text = "input x : f32[3]\nlet y = red(sum, 0.0, [3], x)\noutput y\n";
  Both o = run_both(text, {{"x", tensor(DType::F32, std::vector<float>{1e30f, 1.0f, -1e30f})}});
  CHECK(elems<uint32_t>(*o.ieee.outputs.at("y")) == std::vector<uint32_t>{0x00000000});  // 1e30 + 1 = 1e30
  const RVal& r = o.real.outputs.at("y")->data[0];
  CHECK(mpfr_cmp_ui(r.f, 1) == 0);
  CHECK_FALSE(real_f32(r) == b32(0.0f));
  // Exact even at a precision far below what the terms span (one rounding).
  RealOutcome keep;
  const RealTensor& lo = run_real(text, {{"x", tensor(DType::F32, std::vector<float>{1e30f, 1.0f, -1e30f})}}, 24, keep);
  CHECK(mpfr_cmp_ui(lo.data[0].f, 1) == 0);
  // Many outputs, each summed on its own, with init: 2 rows.
  std::string t2 = "input x : f32[2, 3]\nlet y = red(sum, 0.5, [3], x)\noutput y\n";
  Tensor x2(DType::F32, {2, 3});
  float vals[6] = {1e30f, 1.0f, -1e30f, 0x1p100f, -0x1p100f, 0x1p-100f};
  std::memcpy(x2.data.data(), vals, sizeof vals);
  RealOutcome k2;
  const RealTensor& r2 = run_real(t2, {{"x", x2}}, 256, k2);
  CHECK(mpfr_cmp_d(r2.data[0].f, 1.5) == 0);
  mpfr_t want;
  mpfr_init2(want, 256);
  mpfr_set_d(want, 0.5, MPFR_RNDN);
  mpfr_add_d(want, want, 0x1p-100, MPFR_RNDN);  // exact at 256 bits
  CHECK(mpfr_equal_p(r2.data[1].f, want));
  mpfr_clear(want);
}

TEST_CASE("float casts and half stores are the identity in Real") {
  // cast to f16 of 1 + 2^-11: Ieee rounds to 1.0 (a tie), Real keeps the value.
  std::string text = "input x : f32[2]\nlet y = map(fn(a) => cast(a, f16), x)\noutput y\n";
  Inputs in{{"x", tensor(DType::F32, std::vector<float>{1.0f + 0x1p-11f, 70000.0f})}};
  Both o = run_both(text, in);
  CHECK(elems<uint16_t>(*o.ieee.outputs.at("y")) == std::vector<uint16_t>{0x3c00, 0x7c00});
  const RealTensor& r = *o.real.outputs.at("y");
  CHECK(r.dtype == DType::F16);
  CHECK(mpfr_cmp_d(r.data[0].f, 1.0 + 0x1p-11) == 0);
  CHECK(mpfr_cmp_d(r.data[1].f, 70000.0) == 0);  // no overflow to inf in the reals
  // A map over f16 adds exactly, with no rounding at the store.
  Inputs h{{"a", tensor(DType::F16, std::vector<uint16_t>{0x3c00})}, {"b", tensor(DType::F16, std::vector<uint16_t>{0x1000})}};
  Both o2 = run_both("input a : f16[1]\ninput b : f16[1]\nlet y = map(add, a, b)\noutput y\n", h);
  CHECK(elems<uint16_t>(*o2.ieee.outputs.at("y")) == std::vector<uint16_t>{0x3c00});
  CHECK(mpfr_cmp_d(o2.real.outputs.at("y")->data[0].f, 1.0 + 0x1p-11) == 0);
  // f32 -> f64 -> f32 round trips are the identity as well.
  RealOutcome keep;
  const RealTensor& r3 =
      run_real("input x : f64[1]\nlet y = map(fn(a) => cast(cast(a, f32), f64), x)\noutput y\n",
               {{"x", tensor(DType::F64, std::vector<double>{0.1})}}, 256, keep);
  CHECK(mpfr_cmp_d(r3.data[0].f, 0.1) == 0);
  // Float -> int casts still truncate.
  const RealTensor& r4 = run_real("input x : f32[2]\nlet y = map(fn(a) => cast(a, i32), x)\noutput y\n",
                                  {{"x", tensor(DType::F32, std::vector<float>{-2.5f, 3e9f})}}, 256, keep);
  CHECK(r4.data[0].i == -2);
  CHECK(r4.data[1].i == INT32_MAX);
}

TEST_CASE("the Real precision is configurable") {
  std::string text = "input a : f32[2]\ninput b : f32[2]\nlet y = map(add, a, b)\nlet q = map(div, a, b)\noutput y, q\n";
  Inputs in{{"a", tensor(DType::F32, std::vector<float>{1.0f, 1.0f})},
            {"b", tensor(DType::F32, std::vector<float>{0x1p-30f, 3.0f})}};
  RealOutcome k24, k256;
  const RealTensor& y24 = run_real(text, in, 24, k24);
  const RealTensor& y256 = run_real(text, in, 256, k256);
  CHECK(mpfr_get_prec(y24.data[0].f) == 24);
  CHECK(mpfr_get_prec(y256.data[0].f) == 256);
  CHECK(mpfr_cmp_d(y24.data[0].f, 1.0) == 0);                // 1 + 2^-30 rounded to 24 bits
  CHECK(mpfr_cmp_d(y256.data[0].f, 1.0 + 0x1p-30) == 0);     // exact
  CHECK_FALSE(mpfr_equal_p(y24.data[0].f, y256.data[0].f));
  const RealTensor& q24 = *k24.outputs.at("q");
  const RealTensor& q256 = *k256.outputs.at("q");
  CHECK_FALSE(mpfr_equal_p(q24.data[1].f, q256.data[1].f));
  CHECK(real_f32(q24.data[1]) == b32(1.0f / 3.0f));  // at 24 bits, the f32 result
  // 1/3 at 256 bits is within 2^-256 relative of 1/3.
  mpfr_t third, err;
  mpfr_init2(third, 512);
  mpfr_init2(err, 64);
  mpfr_set_ui(third, 1, MPFR_RNDN);
  mpfr_div_ui(third, third, 3, MPFR_RNDN);
  mpfr_sub(err, q256.data[1].f, third, MPFR_RNDN);
  mpfr_abs(err, err, MPFR_RNDN);
  CHECK(mpfr_cmp_d(err, 0x1p-256) < 0);
  mpfr_clear(third);
  mpfr_clear(err);
}

TEST_CASE("Real transcendental functions and the extended reals") {
  std::string text =
      "input x : f64[3]\nlet e = map(exp, x)\nlet m = red(max, -inf, [0], view(x, [3, 0], (i, j) -> (i)))\n"
      "let l = map(log, x)\noutput e, m, l\n";
  RealOutcome keep;
  const RealTensor& e = run_real(text, {{"x", tensor(DType::F64, std::vector<double>{1.0, 0.0, -INFINITY})}}, 256, keep, "e");
  CHECK(real_f64(e.data[0]) == b64(0x1.5bf0a8b145769p+1));  // e rounded to f64
  CHECK(mpfr_cmp_ui(e.data[1].f, 1) == 0);
  CHECK(mpfr_zero_p(e.data[2].f));
  const RealTensor& l = *keep.outputs.at("l");
  CHECK(mpfr_zero_p(l.data[0].f));
  CHECK((mpfr_inf_p(l.data[1].f) && mpfr_sgn(l.data[1].f) < 0));
  const RealTensor& m = *keep.outputs.at("m");
  REQUIRE(m.size() == 3);
  for (const RVal& v : m.data) CHECK((mpfr_inf_p(v.f) && mpfr_sgn(v.f) < 0));  // the init, -inf
}

TEST_CASE("Real integers wrap like Ieee, also through reductions") {
  // An i32 sum that wraps, then used as a value: both domains must agree.
  std::string text =
      "input x : i32[2]\nlet s = red(sum, 0, [2], x)\nlet p = red(prod, 1, [2], x)\n"
      "let y = map(fn(a) => cast(a, f64), s)\nlet z = map(fn(a, b) => lt(a, b), s, p)\noutput s, y, z\n";
  Both o = run_both(text, {{"x", tensor(DType::I32, std::vector<int32_t>{INT32_MAX, 2})}});
  CHECK(elems<int32_t>(*o.ieee.outputs.at("s")) == std::vector<int32_t>{INT32_MIN + 1});
  CHECK(o.real.outputs.at("s")->data[0].i == int64_t(INT32_MIN) + 1);
  CHECK(mpfr_cmp_si(o.real.outputs.at("y")->data[0].f, long(INT32_MIN) + 1) == 0);
  // prod = MAX * 2 wraps to -2; s = MIN + 1 < -2.
  CHECK(elems<uint8_t>(*o.ieee.outputs.at("z")) == std::vector<uint8_t>{1});
  CHECK(o.real.outputs.at("z")->data[0].i == 1);
  // Integer ops in a lambda wrap the same way.
  Both o2 = run_both("input x : i32[1]\nlet y = map(fn(a) => add(a, 1), x)\noutput y\n",
                     {{"x", tensor(DType::I32, std::vector<int32_t>{INT32_MAX})}});
  CHECK(o2.real.outputs.at("y")->data[0].i == INT32_MIN);
  // to_tensor_f64 keeps ints and rounds floats to f64.
  RealDomain dom(256);
  Tensor t = dom.to_tensor_f64(*o.real.outputs.at("s"));
  CHECK(t.dtype == DType::I32);
  CHECK(t.get_int(0) == int64_t(INT32_MIN) + 1);
}
