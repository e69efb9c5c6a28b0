// The correctly rounded binary32 functions (mathlib/f32.cpp) against MPFR:
// bit for bit on random inputs over every exponent, on the special values of
// Annex F and on the thresholds; the vector path against the scalar one; a
// deliberately wrong fast path caught; the fallback counter.
#include <catch2/catch.hpp>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <thread>
#include <cstring>
#include <vector>

#include "mathlib/crmath.h"
#include "mathlib/f32_kernels.h"
#include "mathlib/f32_lanes.h"
#include "mathlib/f32_tables.h"
#include "mathlib/f32_testing.h"
#include "mathlib/f32_vec.h"
#include "mathlib/mpfr_big.h"

namespace m = stax::math;
using m::Fn;

namespace {

constexpr Fn kUnary[] = {Fn::Exp, Fn::Expm1, Fn::Log, Fn::Log2, Fn::Log10, Fn::Log1p,
                         Fn::Tanh, Fn::Erf, Fn::Sin, Fn::Cos};

float bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

/// Equal as results: the same bits, or both NaN (MPFR's NaN has no payload).
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b); }

/// Special and threshold inputs shared by every unary function.
std::vector<float> special_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                          bits(0x00000001), bits(0x80000001), bits(0x007fffff), bits(0x00800000), bits(0x7f7fffff),
                          bits(0xff7fffff), 1.0f, -1.0f, 0.5f, 2.0f, 10.0f, 100.0f, 1e-10f, -1e-10f,
                          // exp/expm1: overflow and underflow thresholds, the last normal and subnormal results
                          88.72283f, 88.722839f, 88.7228394f, -87.33654f, -103.27893f, -103.972076f, -104.0f,
                          -17.32868f, -17.0f, 0.25f, -0.25f, bits(0x3e800001), bits(0xbe800001),
                          // log family: around 1, the log subinterval edges
                          bits(0x3f7fffff), bits(0x3f800001), 0.99609375f, 1.00390625f, 0.70703125f, 1.4140625f,
                          -0.999999940f, -0.5f, 1e30f, 0x1p-9f, -0x1p-9f, bits(0x3b000001),
                          // tanh/erf saturation
                          9.01f, 8.66f, 3.9193f, 3.92f, -3.92f, 4.0f, 5.0f,
                          // sin/cos: pi/2 neighbours, the 2^20 switch, huge arguments
                          1.5707963f, 3.1415927f, 6.2831855f, 0x1p20f, bits(0x49800001), 0x1p24f, 1e10f,
                          bits(0x5922aa80), 1e38f, -1e38f, 0x1.921fb6p127f, 12867.963f, 22.0f, 355.0f};
  return v;
}

/// n inputs: half random bit patterns (every exponent, NaNs included), half
/// with |x| in [2^-8, 2^8) where the functions vary most.
std::vector<float> random_inputs(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t b = g();
    if (i % 2) b = (b & 0x807fffffu) | ((119u + (g() % 16)) << 23);
    v[i] = bits(b);
  }
  return v;
}

/// Counts the inputs where eval_f32 differs from MPFR, reporting the first.
size_t mismatches(Fn f, const std::vector<float>& xs, const std::vector<float>* ys = nullptr) {
  size_t bad = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    float y = ys ? (*ys)[i] : 0.0f;
    float ours = m::eval_f32(f, xs[i], y), ref = m::mpfr_f32(f, xs[i], y);
    if (!same(ours, ref)) {
      if (bad == 0)
        UNSCOPED_INFO(m::fn_name(f) << "(" << std::hexfloat << xs[i] << ", " << y << ") = " << ours << ", MPFR "
                                    << ref << std::defaultfloat);
      ++bad;
    }
  }
  return bad;
}

/// The pow inputs: Annex F's table (every pair of special values) and
/// random x with y of moderate size, negative x with integer y.
void pow_inputs(std::vector<float>& xs, std::vector<float>& ys) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f,
                      0.75f, 1.5f, bits(0x00000001), bits(0x7f7fffff), 0x1p24f, -0x1p24f, 0x1p23f + 1, 1e30f};
  for (float a : sp)
    for (float b : sp) {
      xs.push_back(a);
      ys.push_back(b);
    }
  std::mt19937 g(7);
  for (int i = 0; i < 40000; ++i) {
    float x = bits(g() & 0x7fffffffu);
    uint32_t yb = (g() & 0x807fffffu) | ((115u + g() % 20) << 23);  // |y| in [2^-12, 2^8)
    if (i % 4 == 0) x = -x, yb = bits_of(float(int(g() % 64) - 32));
    if (i % 4 == 1) x = bits((g() & 0x007fffffu) | ((120u + g() % 14) << 23));
    xs.push_back(x);
    ys.push_back(bits(yb));
  }
  // Exact cases: small integers to small integer powers, squares.
  for (int a = 1; a < 40; ++a)
    for (int b = -6; b < 8; ++b) {
      xs.push_back(float(a));
      ys.push_back(float(b));
    }
}

}  // namespace

TEST_CASE("every unary binary32 function is correctly rounded (MPFR, bit for bit)") {
  std::vector<float> xs = special_inputs();
  std::vector<float> r = random_inputs(30000, 1);
  xs.insert(xs.end(), r.begin(), r.end());
  for (Fn f : kUnary) {
    INFO(m::fn_name(f));
    CHECK(mismatches(f, xs) == 0);
  }
}

TEST_CASE("the hardest-to-round inputs found by mathlib/tools/hard_cases_f32.cpp") {
  // The three inputs of each function whose exact value lies closest to a
  // midpoint between two floats (margins 2^-25.3 .. 2^-18.8 ulp) among
  // 2^21 random inputs with |x| in [2^-8, 2^8): the rounding test must
  // refuse them or decide them right.
  struct Hard {
    Fn f;
    uint32_t x[3];
  };
  const Hard hard[] = {
      {Fn::Exp, {0xc13d6631u, 0xbef903f8u, 0x3f95f6b1u}},
      {Fn::Expm1, {0x3be2927eu, 0x3f95f6b1u, 0xc11907b7u}},
      {Fn::Log, {0x435da06au, 0x3f04cbfcu, 0x3dec1c1fu}},
      {Fn::Log2, {0x3eba8debu, 0x42254db6u, 0x41f2bd9bu}},
      {Fn::Log10, {0x3bafc0f5u, 0x3fd6ebe0u, 0x43449e45u}},
      {Fn::Log1p, {0x3dab5d4bu, 0x3e63afa5u, 0x4030c4bcu}},
      {Fn::Tanh, {0xbbaeb689u, 0xbf97367cu, 0xbef5b460u}},
      {Fn::Erf, {0xbfb2306au, 0xbe62efa2u, 0xbc830012u}},
      {Fn::Sin, {0xbf86b3d2u, 0xbf27eb40u, 0x3bf4662cu}},
      {Fn::Cos, {0x3f0333dfu, 0xbe710be1u, 0x3f89eb01u}},
  };
  for (const Hard& h : hard)
    for (uint32_t b : h.x) {
      INFO(m::fn_name(h.f) << " 0x" << std::hex << b);
      // 17 copies: the block loops' vector forms and their scalar remainder.
      float x = bits(b), v[17], xs[17];
      std::fill_n(xs, 17, x);
      m::eval_f32_n(h.f, 17, v, xs);
      CHECK(bits_of(m::eval_f32(h.f, x)) == bits_of(m::mpfr_f32(h.f, x)));
      for (float vi : v) CHECK(bits_of(vi) == bits_of(m::mpfr_f32(h.f, x)));
    }
}

TEST_CASE("pow is correctly rounded, Annex F's special values included") {
  std::vector<float> xs, ys;
  pow_inputs(xs, ys);
  CHECK(mismatches(Fn::Pow, xs, &ys) == 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(bits_of(m::eval_f32(Fn::Pow, nan, 0.0f)) == bits_of(1.0f));
  CHECK(bits_of(m::eval_f32(Fn::Pow, 1.0f, nan)) == bits_of(1.0f));
  CHECK(bits_of(m::eval_f32(Fn::Pow, -1.0f, -INFINITY)) == bits_of(1.0f));
  CHECK(bits_of(m::eval_f32(Fn::Pow, -0.0f, -3.0f)) == bits_of(-INFINITY));
  CHECK(bits_of(m::eval_f32(Fn::Pow, -2.0f, 3.0f)) == bits_of(-8.0f));
}

TEST_CASE("a NaN input comes back quieted with its payload") {
  const float snan = bits(0x7fa00001), qnan = bits(0xffc01234);
  for (Fn f : kUnary) {
    INFO(m::fn_name(f));
    CHECK(bits_of(m::eval_f32(f, qnan)) == 0xffc01234u);
    CHECK(bits_of(m::eval_f32(f, snan)) == 0x7fe00001u);
  }
  CHECK(bits_of(m::eval_f32(Fn::Pow, qnan, 2.0f)) == 0xffc01234u);
  CHECK(bits_of(m::eval_f32(Fn::Pow, 2.0f, qnan)) == 0xffc01234u);
}

TEST_CASE("the vector path gives the scalar path's bits, in place too") {
  std::vector<float> xs = special_inputs();
  std::vector<float> r = random_inputs(5000, 2);
  xs.insert(xs.end(), r.begin(), r.end());
  for (Fn f : kUnary) {
    INFO(m::fn_name(f));
    std::vector<float> out(xs.size()), inplace = xs;
    m::eval_f32_n(f, xs.size(), out.data(), xs.data());
    m::eval_f32_n(f, inplace.size(), inplace.data(), inplace.data());
    size_t bad = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      float s = m::eval_f32(f, xs[i]);
      bad += bits_of(out[i]) != bits_of(s) || bits_of(inplace[i]) != bits_of(s);
    }
    CHECK(bad == 0);
  }
  std::vector<float> px, py;
  pow_inputs(px, py);
  std::vector<float> out(px.size());
  m::eval_f32_n(Fn::Pow, px.size(), out.data(), px.data(), py.data());
  size_t bad = 0;
  for (size_t i = 0; i < px.size(); ++i) bad += bits_of(out[i]) != bits_of(m::eval_f32(Fn::Pow, px[i], py[i]));
  CHECK(bad == 0);
}

/// Elements where the one-register entry points (4 lanes, and 8 where the
/// CPU has AVX2) differ from eval_f32, in place too.
template <Fn F>
size_t lanes_differ(const std::vector<float>& xs, const std::vector<float>& ys) {
  size_t bad = 0;
  auto run = [&](int w, auto lanes) {
    for (size_t i = 0; i + size_t(w) <= xs.size(); i += size_t(w)) {
      float out[8], in[8];
      const float* y = F == Fn::Pow ? ys.data() + i : nullptr;
      lanes(out, xs.data() + i, y);
      std::copy(xs.begin() + long(i), xs.begin() + long(i) + w, in);
      lanes(in, in, y);
      for (int k = 0; k < w; ++k) {
        float s = m::eval_f32(F, xs[i + size_t(k)], y ? y[k] : 0.0f);
        bad += bits_of(out[k]) != bits_of(s) || bits_of(in[k]) != bits_of(s);
      }
    }
  };
  run(4, [](float* o, const float* x, const float* y) { m::f32::eval_lanes4<F>(o, x, y); });
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2"))
    run(8, [](float* o, const float* x, const float* y) { m::f32::eval_lanes8<F>(o, x, y); });
  if constexpr (m::f32::has_vec_form(F))
    if (m::f32::host_has_avx512())
      run(8, [](float* o, const float* x, const float*) { m::f32::eval_lanes8_avx512<F>(o, x); });
#endif
  return bad;
}

TEST_CASE("the one-register entry points of the CPU kernels give eval_f32's bits") {
  std::vector<float> xs = special_inputs(), px, py;
  std::vector<float> r = random_inputs(4000, 3);
  xs.insert(xs.end(), r.begin(), r.end());
  xs.resize(xs.size() / 8 * 8);
  pow_inputs(px, py);
  px.resize(px.size() / 8 * 8);
  std::vector<float> none(xs.size(), 0.0f);
  CHECK(lanes_differ<Fn::Exp>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Expm1>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Log>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Log2>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Log10>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Log1p>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Tanh>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Erf>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Sin>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Cos>(xs, none) == 0);
  CHECK(lanes_differ<Fn::Pow>(px, py) == 0);
  // The deliberately wrong case: the lanes of another function (expm1 for
  // exp, the kind of slip a table of entry points can make) are told apart.
  CHECK_FALSE([] {
    float out[4], x[4] = {0.5f, 1.5f, 2.5f, 3.0f};
    m::f32::eval_lanes4<Fn::Expm1>(out, x, nullptr);
    for (int k = 0; k < 4; ++k)
      if (bits_of(out[k]) != bits_of(m::eval_f32(Fn::Exp, x[k]))) return false;
    return true;
  }());
}

using m::testing::kHardInputs;

/// The scalar kernel's candidate, its slow flag ignored.
float candidate(Fn f, float x) {
  const auto& T = m::f32::tables();
  switch (f) {
    case Fn::Exp: return m::f32::k_exp(x, T, 1.0).out;
    case Fn::Expm1: return m::f32::k_expm1(x, T, 1.0).out;
    case Fn::Tanh: return m::f32::k_tanh(x, T, 1.0).out;
    default: return m::f32::k_erf(x, T, 1.0).out;
  }
}

/// Elements of kHardInputs' function F where eval_lanes8<F> (the input in lane
/// `lane` of eight, the other lanes easy) differs from MPFR.
template <Fn F>
size_t hard_lanes_differ() {
  size_t bad = 0;
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2")) return 0;
  for (const auto& h : kHardInputs) {
    if (h.f != F) continue;
    const float x = std::bit_cast<float>(h.bits);
    for (int lane = 0; lane < 8; lane += 3) {
      float in[8] = {0.5f, 0.25f, 1.5f, -0.75f, 0.125f, 2.0f, -1.0f, 0.375f}, out[8];
      in[lane] = x;
      m::f32::eval_lanes8<F>(out, in, nullptr);
      for (int k = 0; k < 8; ++k) bad += !same(out[k], m::mpfr_f32(F, in[k]));
    }
  }
#endif
  return bad;
}

TEST_CASE("the one-register entry points resolve the lanes whose rounding test fails") {
  // Each input of kHardInputs takes the slow path somewhere: the counter moves.
  m::reset_fallback_counts();
  for (const auto& h : kHardInputs) (void)m::eval_f32(h.f, std::bit_cast<float>(h.bits));
  uint64_t scalar_slow = 0;
  for (Fn f : {Fn::Exp, Fn::Expm1, Fn::Tanh, Fn::Erf}) scalar_slow += m::fallback_count(f, m::Width::F32);
  CHECK(scalar_slow >= 12);
  CHECK(hard_lanes_differ<Fn::Exp>() == 0);
  CHECK(hard_lanes_differ<Fn::Expm1>() == 0);
  CHECK(hard_lanes_differ<Fn::Tanh>() == 0);
  CHECK(hard_lanes_differ<Fn::Erf>() == 0);
  // The deliberately wrong case: an entry point that ignored the flags would
  // return the fast path's candidate, which is wrong on some of them. (Such
  // a slip was made once: the flags, 0 or 1, read by their sign bit; `stax
  // bench`'s bit check on GELU backward caught it, and this case since.)
  size_t wrong = 0;
  for (const auto& h : kHardInputs) {
    const float x = std::bit_cast<float>(h.bits);
    wrong += !same(candidate(h.f, x), m::mpfr_f32(h.f, x));
  }
  CHECK(wrong > 0);
}

#if defined(__x86_64__)
/// o[0..16) = eval_v16_avx512<F>(x[0..16)): the call is made from AVX-512
/// code, where the 16-lane vector travels in a zmm register as the callee
/// expects. Only where host_has_avx512().
template <Fn F>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void run_v16(const float* x, float* o) {
  m::f32::F32x16 v;
  std::memcpy(&v, x, sizeof v);
  v = m::f32::eval_v16_avx512<F>(v);
  std::memcpy(o, &v, sizeof v);
}


/// Whether the 512-bit forms can run here; where not (no AVX-512, or
/// STAX_CPU_ISA=avx2), reports the test case as skipped.
bool avx512_or_skip() {
  if (m::f32::host_has_avx512()) return true;
  WARN("skipped: needs AVX-512, which this host lacks or STAX_CPU_ISA=avx2 caps away");
  return false;
}

/// Elements where the 16-lane entry point differs from `want`, bit for bit
/// (`nan_any`: any NaN matches any NaN, as MPFR's NaN has no payload); 0
/// where the host has no AVX-512.
template <Fn F>
size_t v16_differs(const std::vector<float>& xs, float (*want)(Fn, float, float), bool nan_any = false) {
  size_t bad = 0;
  if (!m::f32::host_has_avx512()) return 0;
  for (size_t i = 0; i + 16 <= xs.size(); i += 16) {
    float o[16];
    run_v16<F>(xs.data() + i, o);
    for (int k = 0; k < 16; ++k) {
      float w = want(F, xs[i + size_t(k)], 0.0f);
      bad += nan_any ? !same(o[k], w) : bits_of(o[k]) != bits_of(w);
    }
  }
  return bad;
}

/// exp_v16_in_range (mathlib/f32_vec_impl.inc) on x[0..16), by `tier`: 0 the
/// form (both tiers), 1 its first tier alone, 2 the first tier with the
/// second's window of 256 patterns (deliberately wrong: too narrow for the
/// degree-4 polynomial's error). Returns the lanes whose rounding test
/// failed. Only where host_has_avx512(), on registers with |x| <= 87.
__attribute__((target("avx512f,avx512dq,avx512vl"))) unsigned run_exp_tier(const float* x, float* o, int tier) {
  namespace v = m::f32::vec;
  const __m512 in = _mm512_loadu_ps(x);
  __m512 out = _mm512_setzero_ps();
  __mmask16 fail = 0;
  const m::f32::Tables& T = m::f32::tables();
  if (tier == 0) REQUIRE(v::avx512::exp_v16_in_range(in, out, fail, T, 1.0));
  else if (tier == 1) fail = v::avx512::exp_v16_tier<5, (int64_t(1) << 16)>(in, out, v::kExpPoly4, T, 1.0);
  else fail = v::avx512::exp_v16_tier<5, 128>(in, out, v::kExpPoly4, T, 1.0);
  _mm512_storeu_ps(o, out);
  return fail;
}

/// A two-tier form over xs, `lanes` a register, through run(x, o, tier)
/// (0 the form, 1 its first tier, 2 the first tier with the second's
/// narrow window): the first tier's failed lanes, the form's failed lanes,
/// and the lanes each gave wrong bits on while passing its test (MPFR).
struct TierCounts {
  size_t tier1_fails = 0, slow = 0, wrong = 0, wrong_narrow = 0;
};
TierCounts count_tiers(Fn f, const std::vector<float>& xs, int lanes, unsigned (*run)(const float*, float*, int)) {
  TierCounts c;
  for (size_t i = 0; i + size_t(lanes) <= xs.size(); i += size_t(lanes)) {
    float o[16], o1[16], o2[16];
    const unsigned fail = run(&xs[i], o, 0);
    c.tier1_fails += size_t(std::popcount(run(&xs[i], o1, 1)));
    const unsigned narrow = run(&xs[i], o2, 2);
    c.slow += size_t(std::popcount(fail));
    for (int k = 0; k < lanes; ++k) {
      const float want = m::mpfr_f32(f, xs[i + size_t(k)]);
      c.wrong += !(fail >> k & 1) && bits_of(o[k]) != bits_of(want);
      c.wrong_narrow += !(narrow >> k & 1) && bits_of(o2[k]) != bits_of(want);
    }
  }
  return c;
}
/// The second tier left fewer lanes, none wrong; the narrow window
/// (deliberately wrong) accepted wrong roundings.
void check_tiers(const TierCounts& c) {
  UNSCOPED_INFO("first tier fails on " << c.tier1_fails << " lanes, the form on " << c.slow
                                       << ", the narrow window " << c.wrong_narrow << " wrong");
  CHECK(c.slow < c.tier1_fails);
  CHECK(c.wrong == 0);
  CHECK(c.wrong_narrow > 0);
}

TEST_CASE("exp's sixteen-lane form: the second tier rounds what the first cannot; without it, wrong bits") {
  if (!avx512_or_skip()) return;
  std::mt19937 g(41);
  std::uniform_real_distribution<float> soft(-87.0f, 0.0f), any(-87.0f, 87.0f);
  std::vector<float> xs(size_t(1) << 20);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = i % 4 ? soft(g) : any(g);
  const TierCounts c = count_tiers(Fn::Exp, xs, 16, run_exp_tier);
  CHECK(c.tier1_fails > 0);  // about 2^-12 of the lanes: the second tier ran
  check_tiers(c);
}

/// erf_v8_small (mathlib/f32_vec_impl.inc) on x[0..8), all in [0, 2], by
/// `tier`: 0 the form (both tiers), 1 its first tier alone (kErfPoly12,
/// its window), 2 the first tier with the second's window of 1040 patterns
/// (deliberately wrong: too narrow for the degree-12 polynomial's error).
/// Returns the lanes whose rounding test failed. Only where
/// host_has_avx512().
__attribute__((target("avx512f,avx512dq,avx512vl"))) unsigned run_erf_tier(const float* x, float* o, int tier) {
  namespace v = m::f32::vec;
  const __m256 in = _mm256_loadu_ps(x);
  __m256 out = _mm256_setzero_ps();
  unsigned fail = 0;
  if (tier == 0) REQUIRE(v::avx512::erf_v8_small(in, out, fail, 1.0));
  else if (tier == 1) fail = v::avx512::erf_v8_tier<v::kErfTier1Half>(in, v::kErfPoly12, out, 1.0);
  else fail = v::avx512::erf_v8_tier<1040>(in, v::kErfPoly12, out, 1.0);
  _mm256_storeu_ps(o, out);
  return fail;
}

TEST_CASE("erf's eight-lane polynomial form: the second tier rounds what the first cannot; without it, wrong bits") {
  if (!avx512_or_skip()) return;
  std::mt19937 g(43);
  std::uniform_real_distribution<float> d(0.0f, 2.0f);
  std::vector<float> xs(size_t(1) << 20);
  for (float& x : xs) x = d(g);
  const TierCounts c = count_tiers(Fn::Erf, xs, 8, run_erf_tier);
  CHECK(c.tier1_fails > 0);  // about 2^-11 of the lanes (2^-10 of the patterns): the second tier ran
  check_tiers(c);
}

/// Whether erf_v16_small takes the register x[0..16).
__attribute__((target("avx512f,avx512dq,avx512vl"))) bool erf16_takes(const float* x) {
  __m512 out;
  __mmask16 fail;
  return m::f32::vec::avx512::erf_v16_small(_mm512_loadu_ps(x), out, fail, 1.0);
}

/// erf_v16_small (mathlib/f32_vec_impl.inc) on x[0..16), all in [-2, 2],
/// by `tier` as run_erf_tier: 0 the form, 1 its first tier alone, 2 the
/// first tier with a window of 2^10 patterns (deliberately wrong).
__attribute__((target("avx512f,avx512dq,avx512vl"))) unsigned run_erf16_tier(const float* x, float* o, int tier) {
  namespace v = m::f32::vec;
  const __m512 in = _mm512_loadu_ps(x);
  __m512 out = _mm512_setzero_ps();
  __mmask16 fail = 0;
  if (tier == 0) REQUIRE(v::avx512::erf_v16_small(in, out, fail, 1.0));
  else if (tier == 1) REQUIRE(v::avx512::erf_v16_small<v::kErfTier1Half, false>(in, out, fail, 1.0));
  else REQUIRE(v::avx512::erf_v16_small<512, false>(in, out, fail, 1.0));
  _mm512_storeu_ps(o, out);
  return fail;
}

TEST_CASE("erf's sixteen-lane form: signed lanes, the second tier, and a narrow window's wrong bits") {
  if (!avx512_or_skip()) return;
  std::mt19937 g(47);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> xs(size_t(1) << 20);
  for (float& x : xs) x = d(g);
  const TierCounts c = count_tiers(Fn::Erf, xs, 16, run_erf16_tier);
  CHECK(c.tier1_fails > 0);
  check_tiers(c);
  // A register with a lane it does not take (NaN, a subnormal, beyond 2,
  // an infinity) is left to the eight-lane forms: false, nothing computed.
  for (float odd : {std::numeric_limits<float>::quiet_NaN(), 0x1p-140f, 2.0000002f, -3.0f,
                    std::numeric_limits<float>::infinity()}) {
    float x[16];
    std::fill(x, x + 16, 0.5f);
    x[7] = odd;
    CHECK_FALSE(erf16_takes(x));
  }
  float edge[16] = {0.0f, -0.0f, 2.0f, -2.0f, 0x1p-126f, -0x1p-126f, 1.0f, -1.0f,
                    0.5f, -0.5f, 1.5f, -1.5f, 0x1p-20f, -0x1p-20f, 1.9999999f, -1.9999999f};
  CHECK(erf16_takes(edge));
}

TEST_CASE("the 16-lane entry points give eval_f32's bits") {
  if (!avx512_or_skip()) return;
  std::vector<float> xs = special_inputs();
  std::vector<float> r = random_inputs(4000, 6);
  xs.insert(xs.end(), r.begin(), r.end());
  auto scalar = [](Fn f, float x, float y) { return m::eval_f32(f, x, y); };
  auto mpfr = [](Fn f, float x, float y) { return m::mpfr_f32(f, x, y); };
  CHECK(v16_differs<Fn::Exp>(xs, scalar) == 0);
  CHECK(v16_differs<Fn::Expm1>(xs, scalar) == 0);
  CHECK(v16_differs<Fn::Tanh>(xs, scalar) == 0);
  CHECK(v16_differs<Fn::Erf>(xs, scalar) == 0);
  CHECK(v16_differs<Fn::Exp>(r, mpfr, true) == 0);
  // erf's polynomial form (registers whose every lane has |x| <= 2, as
  // GELU's) against MPFR.
  std::vector<float> small;
  std::mt19937 g(29);
  std::normal_distribution<float> gelu(0.0f, 0.70710677f);
  for (int i = 0; i < 4000; ++i) small.push_back(std::clamp(gelu(g), -2.0f, 2.0f));
  CHECK(v16_differs<Fn::Erf>(small, mpfr, true) == 0);
  // exp's sixteen-lane form (registers whose every lane has |x| <= 87, as
  // softmax's x - max; a lane in (87, 88] sends its register to the
  // eight-lane form): the special and random inputs in [-87, 88], packed
  // together, then rows of x - max.
  std::vector<float> soft;
  for (float x : xs)
    if (x >= -87.0f && x <= 88.0f) soft.push_back(x);
  for (float x : {-87.0f, 88.0f, std::nextafter(-87.0f, 0.0f), std::nextafter(88.0f, 0.0f), 0.0f, -0.0f, 0x1p-149f,
                  -0x1p-149f, 0x1p-26f, -0x1p-25f})
    soft.push_back(x);
  std::normal_distribution<float> row(0.0f, 1.0f);
  for (int i = 0; i < 4000; ++i) soft.push_back(std::max(-87.0f, row(g) - 4.0f));
  soft.resize(soft.size() / 16 * 16);
  CHECK(v16_differs<Fn::Exp>(soft, mpfr, true) == 0);
  CHECK(v16_differs<Fn::Exp>(soft, scalar) == 0);
  // The deliberately wrong cases: a perturbed fast path shows in these lanes.
  for (auto [f, in] : {std::pair{Fn::Exp, &r}, std::pair{Fn::Exp, &soft}, std::pair{Fn::Erf, &small}}) {
    m::testing::set_f32_perturbation(f, 0x1p-30);
    size_t wrong = f == Fn::Exp ? v16_differs<Fn::Exp>(*in, mpfr, true) : v16_differs<Fn::Erf>(*in, mpfr, true);
    m::testing::set_f32_perturbation(f, 0.0);
    CHECK(wrong > 0);
  }
}
#endif

TEST_CASE("a wrong fast path is caught by the comparison with MPFR") {
  // Each fast path's result off by 2^-30 relative, far beyond its claimed
  // bound: the rounding test then accepts wrong roundings, which MPFR shows.
  std::vector<float> xs = random_inputs(20000, 3);
  for (Fn f : kUnary) {
    INFO(m::fn_name(f));
    m::testing::set_f32_perturbation(f, 0x1p-30);
    CHECK(mismatches(f, xs) > 0);
    m::testing::set_f32_perturbation(f, 0.0);
  }
  std::vector<float> px, py;
  pow_inputs(px, py);
  m::testing::set_f32_perturbation(Fn::Pow, 0x1p-30);
  CHECK(mismatches(Fn::Pow, px, &py) > 0);
  m::testing::set_f32_perturbation(Fn::Pow, 0.0);
  CHECK(mismatches(Fn::Pow, px, &py) == 0);
}

TEST_CASE("the block loops (the vector forms) against MPFR; their wrong fast path is caught") {
  // eval_f32_n runs the explicit vector forms where the host has them (the
  // AVX-512 ones with their own exp core and exp's rounding test on the
  // bits), so they are held to MPFR directly, not only to eval_f32.
  std::vector<float> xs = special_inputs();
  std::vector<float> r = random_inputs(30000, 5);
  xs.insert(xs.end(), r.begin(), r.end());
  for (float a = -120.0f; a < 100.0f; a += 0.37f) xs.push_back(a);  // exp's range and both of its tests
  auto block_mismatches = [&](Fn f) {
    std::vector<float> out(xs.size());
    m::eval_f32_n(f, xs.size(), out.data(), xs.data());
    size_t bad = 0;
    for (size_t i = 0; i < xs.size(); ++i) bad += !same(out[i], m::mpfr_f32(f, xs[i]));
    return bad;
  };
  for (Fn f : kUnary) {
    INFO(m::fn_name(f));
    CHECK(block_mismatches(f) == 0);
    m::testing::set_f32_perturbation(f, 0x1p-30);
    CHECK(block_mismatches(f) > 0);
    m::testing::set_f32_perturbation(f, 0.0);
  }
}

TEST_CASE("the fallback counter counts the slow path, and only it") {
  m::reset_fallback_counts();
  CHECK(m::eval_f32(Fn::Exp, 1.0f) == m::mpfr_f32(Fn::Exp, 1.0f));
  CHECK(m::fallback_count(Fn::Exp, m::Width::F32) == 0);
  // Beyond 2^20 sin reduces by Payne-Hanek, not by MPFR.
  CHECK(same(m::eval_f32(Fn::Sin, 1e30f), m::mpfr_f32(Fn::Sin, 1e30f)));
  CHECK(m::fallback_count(Fn::Sin, m::Width::F32) == 0);
  // pow(x, 2) whose exact square is a midpoint between two floats: no
  // interval around it decides the rounding, so the slow path must.
  float h = 1.0f + 0x1p-12f;  // h^2 = 1 + 2^-11 + 2^-24: exactly the midpoint of two floats
  CHECK(bits_of(m::eval_f32(Fn::Pow, h, 2.0f)) == bits_of(m::mpfr_f32(Fn::Pow, h, 2.0f)));
  CHECK(m::fallback_count(Fn::Pow, m::Width::F32) == 1);
  m::reset_fallback_counts();
  CHECK(m::fallback_count(Fn::Pow, m::Width::F32) == 0);
}

TEST_CASE("each thread's fallback count is its own (stax mathcheck's chunks)") {
  // Two threads, each with inputs that must take the slow path (exact
  // midpoints of pow), at the same time: each sees its own count, the
  // shared counter both.
  const float h = 1.0f + 0x1p-12f;
  const uint64_t shared0 = m::fallback_count(Fn::Pow, m::Width::F32);
  uint64_t own[2] = {0, 0};
  auto work = [&](int t, int n) {
    const uint64_t before = m::thread_fallback_count(Fn::Pow, m::Width::F32);
    for (int i = 0; i < n; ++i) (void)m::eval_f32(Fn::Pow, h, 2.0f);
    own[t] = m::thread_fallback_count(Fn::Pow, m::Width::F32) - before;
  };
  std::thread a(work, 0, 300), b(work, 1, 500);
  a.join();
  b.join();
  CHECK(own[0] == 300);
  CHECK(own[1] == 500);
  const uint64_t shared = m::fallback_count(Fn::Pow, m::Width::F32) - shared0;
  CHECK(shared == 800);
  // The deliberately wrong case: the shared counter is not a thread's share.
  CHECK(shared != own[0]);
}

/// An eight-lane register form of F against MPFR and eval_f32 on `xs`
/// (whole registers), and on `xs` with one lane in each register of 64
/// elements replaced by a value of `odd` in turn; then the deliberately
/// wrong case: the test hook's perturbation of F's fast path must show on
/// `xs`.
template <Fn F>
void check_eight_lane_form(std::vector<float> xs, const std::vector<float>& odd) {
  for (const auto& hi : kHardInputs)
    if (hi.f == F) xs.push_back(std::bit_cast<float>(hi.bits));
  xs.resize(xs.size() / 8 * 8);
  std::vector<float> mixed = xs;
  for (size_t i = 0; i < mixed.size(); i += 64) mixed[i + (i / 64) % 8] = odd[(i / 64) % odd.size()];
  auto mismatches = [](const std::vector<float>& in) {
    std::vector<float> out(in.size());
    m::eval_f32_n(F, in.size(), out.data(), in.data());
    size_t bad = 0;
    for (size_t i = 0; i < in.size(); ++i)
      bad += !same(out[i], m::mpfr_f32(F, in[i])) || bits_of(out[i]) != bits_of(m::eval_f32(F, in[i]));
    return bad;
  };
  CHECK(mismatches(xs) == 0);
  CHECK(mismatches(mixed) == 0);
  CHECK(hard_lanes_differ<F>() == 0);
  m::testing::set_f32_perturbation(F, 0x1p-30);
  const size_t wrong = mismatches(xs);
  m::testing::set_f32_perturbation(F, 0.0);
  CHECK(wrong > 0);
}

TEST_CASE("exp's in-range form (eight lanes, every |x| <= 87) gives MPFR's bits; its wrong fast path is caught") {
  // Registers whose lanes are all in range take exp_v8_in_range; a register
  // with one lane outside (a special, or |x| > 87) takes the general form.
  // Both kinds, and the known hard inputs among easy lanes.
  std::vector<float> xs;
  std::mt19937 g(17);
  std::uniform_real_distribution<float> wide(-87.0f, 87.0f), narrow(-0.05f, 0.05f);
  for (int i = 0; i < 40000; ++i) xs.push_back(i % 2 ? wide(g) : narrow(g));
  for (float a = -87.0f; a <= 87.0f; a += 0.0625f) xs.push_back(a);  // every table index, both signs of k
  // Lanes the in-range form decides itself (|x| >= 104: +inf or +0) and
  // lanes that send the register to the general form (NaN, 87 < |x| < 104);
  // the deliberately wrong case on in-range registers only.
  const float inf = std::numeric_limits<float>::infinity();
  check_eight_lane_form<Fn::Exp>(xs, {std::numeric_limits<float>::quiet_NaN(), -inf, 88.5f, -100.0f, 87.00001f, inf,
                                      -1e30f, 104.0f, -104.0f, 103.99999f, -103.99999f, 3e38f});
}

TEST_CASE("erf's eight-lane polynomial form (every |x| <= 2) gives MPFR's bits; its wrong fast path is caught") {
  // Registers whose lanes are all 0 or 2^-126 <= |x| <= 2 take
  // erf_v8_small and its test on the bits; a register with a NaN, a
  // subnormal or |x| > 2 takes erf_v. Both kinds, and the hard inputs.
  std::vector<float> xs;
  std::mt19937 g(23);
  std::normal_distribution<float> gelu(0.0f, 0.70710677f);
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  for (int i = 0; i < 40000; ++i) xs.push_back(i % 2 ? gelu(g) : unit(g));
  for (float a : {0.0f, -0.0f, 0x1p-126f, -0x1p-126f, 0x1.000002p-126f, 1e-30f, 2.0f, -2.0f, 1.9999999f, 0.5f})
    xs.push_back(a);
  check_eight_lane_form<Fn::Erf>(xs, {std::numeric_limits<float>::quiet_NaN(), 0x1p-127f, -0x1p-149f, 2.0000002f,
                                      -3.5f, std::numeric_limits<float>::infinity()});
}

TEST_CASE("erf's polynomial form beyond 2 (AVX-512: |x| in (2, 4] and beyond) gives MPFR's bits; its wrong fast path is caught") {
  // Registers with lanes beyond 2 take kErfBigPoly there (erf_v8_big), the
  // first tier's polynomial for the others: all beyond 2, mixed with GELU's
  // inputs, the boundaries and the last floats below 1; a NaN or a
  // subnormal sends the register to erf_v.
  std::vector<float> xs;
  std::mt19937 g(31);
  std::uniform_real_distribution<float> big(2.0f, 4.0f), far(4.0f, 12.0f);
  std::normal_distribution<float> gelu(0.0f, 1.4f);
  for (int i = 0; i < 40000; ++i) {
    const float x = i % 3 == 0 ? big(g) : i % 3 == 1 ? gelu(g) : (i % 7 ? big(g) : far(g));
    xs.push_back(i % 2 ? -x : x);
  }
  for (float a : {2.0f, 2.0000002f, 3.0f, 3.9192059f, 3.919206f, 3.9192064f, 4.0f, 4.0000005f, 3.9999998f, 1e30f,
                  std::numeric_limits<float>::infinity()}) {
    xs.push_back(a);
    xs.push_back(-a);
  }
  check_eight_lane_form<Fn::Erf>(xs, {std::numeric_limits<float>::quiet_NaN(), 0x1p-127f, -0x1p-149f, 0.5f});
}
