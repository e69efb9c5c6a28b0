// Tests of the f16/bf16 storage conversions and the round-to-odd helpers of
// semantics/dtype.h (docs/design.md §2, §3: round to nearest even, subnormals kept,
// NaN stays NaN). Each conversion is compared with a reference written here
// independently (nearest value found in a table of every finite half value,
// ties to the even significand), and each check has a deliberately wrong
// conversion beside it that the same check must reject.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "semantics/dtype.h"
#include "semantics/ir.h"
#include "tests/test_util.h"

using namespace stax::sem;
using stax::test::H16;
using stax::test::H32;

namespace {

// ------------------------------------------------------------ references

/// Every finite non-negative value of a half format, ascending, with its bits.
struct HalfTable {
  std::vector<double> value;
  std::vector<uint16_t> bits;
  double overflow;  ///< |x| at or above this rounds to infinity (midpoint of max and 2^(emax+1))
  uint16_t inf;
};

HalfTable make_table(DType t) {
  HalfTable tab;
  uint16_t max = t == DType::F16 ? 0x7bff : 0x7f7f;
  for (uint32_t b = 0; b <= max; ++b) {
    tab.bits.push_back(uint16_t(b));
    // Decoded from the definition, not through the functions under test.
    int mbits = t == DType::F16 ? 10 : 7;
    int bias = t == DType::F16 ? 15 : 127;
    uint32_t e = b >> mbits, m = b & ((1u << mbits) - 1);
    double v = e == 0 ? std::ldexp(double(m), 1 - bias - mbits) : std::ldexp(double(m | (1u << mbits)), int(e) - bias - mbits);
    tab.value.push_back(v);
  }
  double top = std::ldexp(1.0, t == DType::F16 ? 16 : 128);
  tab.overflow = (tab.value.back() + top) / 2;  // exact in f64
  tab.inf = t == DType::F16 ? 0x7c00 : 0x7f80;
  return tab;
}

const HalfTable& table(DType t) {
  static const HalfTable f16 = make_table(DType::F16), bf16 = make_table(DType::BF16);
  return t == DType::F16 ? f16 : bf16;
}

/// x (not NaN) rounded once to nearest-even in the half format `t`. The
/// differences below are exact (Sterbenz), so ties are found exactly.
uint16_t ref_half(double x, DType t) {
  const HalfTable& tab = table(t);
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a >= tab.overflow) return sign | tab.inf;
  size_t hi = size_t(std::lower_bound(tab.value.begin(), tab.value.end(), a) - tab.value.begin());
  if (hi == tab.value.size()) return sign | tab.bits.back();  // above the max, below the overflow tie
  if (tab.value[hi] == a) return sign | tab.bits[hi];
  size_t lo = hi - 1;  // a > 0 = value[0]
  double dl = a - tab.value[lo], dh = tab.value[hi] - a;
  size_t k = dl < dh ? lo : dh < dl ? hi : (tab.bits[lo] & 1) ? hi : lo;
  return sign | tab.bits[k];
}

bool is_nan16(uint16_t h, DType t) {
  return t == DType::F16 ? (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0 : (h & 0x7f80) == 0x7f80 && (h & 0x007f) != 0;
}

float f32_of(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

/// f32 inputs that matter for a half format: every half value, every
/// midpoint between neighbours (exact ties), and the f32 neighbours of both,
/// for both signs; and random bit patterns.
std::vector<float> probe_values(DType t, int random_count, uint64_t seed) {
  const HalfTable& tab = table(t);
  std::vector<float> v;
  auto add = [&](double d) {
    float f = float(d);
    if (double(f) != d) return;  // midpoints of f16 below 2^-24 etc. are exact in f32; keep only exact ones
    for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, std::numeric_limits<float>::infinity())}) {
      v.push_back(g);
      v.push_back(-g);
    }
  };
  for (size_t i = 0; i < tab.value.size(); ++i) {
    add(tab.value[i]);
    double next = i + 1 < tab.value.size() ? tab.value[i + 1] : std::ldexp(1.0, t == DType::F16 ? 16 : 128);
    add((tab.value[i] + next) / 2);
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < random_count; ++i) v.push_back(f32_of(uint32_t(rng())));
  return v;
}

// ------------------------------------------------------ wrong conversions

/// f32 -> f16 by truncating the significand (round toward zero).
uint16_t f16_truncating(float x) {
  uint32_t b = bits_of(x);
  uint16_t sign = uint16_t((b >> 16) & 0x8000);
  int e = int((b >> 23) & 0xff) - 127;
  if (e > 15) return sign | 0x7c00;
  if (e < -14) return sign;  // flushes subnormals too
  return sign | uint16_t(((e + 15) << 10) | ((b & 0x7fffff) >> 13));
}
/// f32 -> bf16 by dropping the low half (round toward zero).
uint16_t bf16_truncating(float x) { return uint16_t(bits_of(x) >> 16); }
/// f32 -> bf16 rounding half away from zero.
uint16_t bf16_half_away(float x) { return uint16_t((bits_of(x) + 0x8000) >> 16); }
/// f32 -> bf16 with the round-to-even addition but no NaN case.
uint16_t bf16_rne_no_nan_case(float x) {
  uint32_t b = bits_of(x);
  return uint16_t((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}
/// f64 -> half through an f32 rounded to nearest: two roundings.
uint16_t f16_double_rounding(double x) { return f32_to_f16_bits(float(x)); }
uint16_t bf16_double_rounding(double x) { return f32_to_bf16_bits(float(x)); }

/// Counts the inputs on which `f` differs from the reference (NaNs skipped).
template <class F>
int count_wrong(const std::vector<float>& xs, DType t, F f) {
  int wrong = 0;
  for (float x : xs)
    if (!std::isnan(x) && f(x) != ref_half(double(x), t)) ++wrong;
  return wrong;
}

}  // namespace

// --------------------------------------------------------- the reference

TEST_CASE("dtype: the reference rounding itself gets the textbook cases") {
  CHECK(H16{ref_half(1.0, DType::F16)} == H16{0x3c00});
  CHECK(H16{ref_half(65504.0, DType::F16)} == H16{0x7bff});
  CHECK(H16{ref_half(65520.0, DType::F16)} == H16{0x7c00});  // tie between max and 2^16: even is inf
  CHECK(H16{ref_half(65519.99, DType::F16)} == H16{0x7bff});
  CHECK(H16{ref_half(0x1p-24, DType::F16)} == H16{0x0001});
  CHECK(H16{ref_half(0x1p-25, DType::F16)} == H16{0x0000});  // tie with zero: even
  CHECK(H16{ref_half(-0.0, DType::F16)} == H16{0x8000});
  CHECK(H16{ref_half(1.0, DType::BF16)} == H16{0x3f80});
  CHECK(H16{ref_half(1.0 + 0x1p-8, DType::BF16)} == H16{0x3f80});
  CHECK(H16{ref_half(1.0 + 3 * 0x1p-8, DType::BF16)} == H16{0x3f82});
  // The deliberately wrong case: the reference does tell values apart.
  CHECK(ref_half(1.0 + 0x1p-7, DType::BF16) != ref_half(1.0, DType::BF16));
}

// ------------------------------------------------------------------ f16

TEST_CASE("dtype: f32 -> f16 equals the reference on every half value, midpoint and neighbour, both signs") {
  std::vector<float> xs = probe_values(DType::F16, 1 << 20, 16);
  int checked = 0, wrong = 0;
  for (float x : xs) {
    if (std::isnan(x)) continue;
    ++checked;
    if (f32_to_f16_bits(x) != ref_half(double(x), DType::F16) && ++wrong <= 5)
      FAIL_CHECK("x = " << H32{bits_of(x)} << " (" << x << "): got " << H16{f32_to_f16_bits(x)} << ", want "
                        << H16{ref_half(double(x), DType::F16)});
  }
  CHECK(wrong == 0);
  CHECK(checked > 1 << 20);
  // The deliberately wrong conversion fails the same comparison, on ties and on subnormals.
  CHECK(count_wrong(xs, DType::F16, f16_truncating) > 1000);
  CHECK(f16_truncating(1.0f + 0x1.8p-11f) != ref_half(1.0 + 0x1.8p-11, DType::F16));
  CHECK(f16_truncating(0x1p-24f) != ref_half(0x1p-24, DType::F16));
}

TEST_CASE("dtype: f16 ties go to the even significand, for negative values too") {
  // 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10 (odd).
  CHECK(H16{f32_to_f16_bits(1.0f + 0x1p-11f)} == H16{0x3c00});
  CHECK(H16{f32_to_f16_bits(-(1.0f + 0x1p-11f))} == H16{0xbc00});
  // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  CHECK(H16{f32_to_f16_bits(1.0f + 3 * 0x1p-11f)} == H16{0x3c02});
  CHECK(H16{f32_to_f16_bits(-(1.0f + 3 * 0x1p-11f))} == H16{0xbc02});
  // Subnormal ties, and the carry from the largest subnormal into the smallest normal.
  CHECK(H16{f32_to_f16_bits(3 * 0x1p-25f)} == H16{0x0002});
  CHECK(H16{f32_to_f16_bits(-3 * 0x1p-25f)} == H16{0x8002});
  CHECK(H16{f32_to_f16_bits(0x1p-14f - 0x1p-26f)} == H16{0x0400});
  CHECK(H16{f32_to_f16_bits(-0x1p-40f)} == H16{0x8000});  // underflow keeps the sign
  CHECK(H16{f32_to_f16_bits(-65520.0f)} == H16{0xfc00});
  CHECK(H16{f32_to_f16_bits(-1e30f)} == H16{0xfc00});
  // Negation commutes with the conversion on every probe.
  int asym = 0;
  for (float x : probe_values(DType::F16, 0, 0))
    if (!std::isnan(x)) asym += f32_to_f16_bits(-x) != (f32_to_f16_bits(x) ^ 0x8000);
  CHECK(asym == 0);
  // The deliberately wrong case: rounding half away from zero gives the odd neighbour on these ties.
  auto half_away = [](float x) {
    float a = std::fabs(x);
    uint16_t lo = f16_truncating(a);
    float l = f16_bits_to_f32(lo), h = f16_bits_to_f32(uint16_t(lo + 1));
    uint16_t r = (a - l >= h - a) ? uint16_t(lo + 1) : lo;
    return uint16_t(r | (std::signbit(x) ? 0x8000 : 0));
  };
  CHECK(H16{half_away(-(1.0f + 0x1p-11f))} != H16{f32_to_f16_bits(-(1.0f + 0x1p-11f))});
  CHECK(H16{half_away(1.0f + 0x1p-11f)} != H16{f32_to_f16_bits(1.0f + 0x1p-11f)});
}

TEST_CASE("dtype: every f16 bit pattern widens exactly and narrows back to itself") {
  int checked = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = uint16_t(b);
    float f = f16_bits_to_f32(h);
    if (is_nan16(h, DType::F16)) {
      CHECK(std::isnan(f));
      CHECK(std::signbit(f) == bool(h & 0x8000));
      continue;
    }
    ++checked;
    uint16_t mag = h & 0x7fff;
    double want = mag == 0x7c00 ? std::numeric_limits<double>::infinity() : table(DType::F16).value[mag];
    if (h & 0x8000) want = -want;
    if (double(f) != want || std::signbit(f) != std::signbit(want)) FAIL_CHECK("f16 " << H16{h} << " widened to " << f);
    if (f32_to_f16_bits(f) != h) FAIL_CHECK("f16 " << H16{h} << " does not round-trip");
  }
  CHECK(checked == 0x10000 - 2 * 0x3ff);
  // The deliberately wrong case: a widening that forgets subnormals (exponent 0 read as 2^-15·1.m) is caught.
  auto wrong_widen = [](uint16_t h) {
    return std::bit_cast<float>(uint32_t(h & 0x8000) << 16 | uint32_t(((h >> 10) & 0x1f) + 112) << 23 |
                                uint32_t(h & 0x3ff) << 13);
  };
  CHECK(wrong_widen(0x0001) != f16_bits_to_f32(0x0001));
  CHECK(f32_to_f16_bits(wrong_widen(0x0000)) != 0x0000);
}

// -------------------------------------------------------------- NaN payloads

TEST_CASE("dtype: f16 NaNs keep sign and payload, quiet, and never become infinity") {
  // Quiet NaN with a payload: the top 10 payload bits survive.
  CHECK(H16{f32_to_f16_bits(f32_of(0x7fc12345))} == H16{0x7e09});
  CHECK(H16{f32_to_f16_bits(f32_of(0xffc12345))} == H16{0xfe09});
  CHECK(H16{f32_to_f16_bits(f32_of(0x7fc00000))} == H16{0x7e00});
  // A signalling NaN whose payload lies only in the low 13 bits: quietened, still NaN.
  CHECK(H16{f32_to_f16_bits(f32_of(0x7f800001))} == H16{0x7e00});
  CHECK(H16{f32_to_f16_bits(f32_of(0xff800001))} == H16{0xfe00});
  // Widening keeps the payload bits in place.
  CHECK(H32{bits_of(f16_bits_to_f32(0x7e09))} == H32{0x7fc12000});
  CHECK(H32{bits_of(f16_bits_to_f32(0xfe09))} == H32{0xffc12000});
  // Every quiet f16 NaN survives the round trip through f32 bit for bit; a
  // signalling one comes back quiet with its payload.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = uint16_t(b);
    if (!is_nan16(h, DType::F16)) continue;
    uint16_t back = f32_to_f16_bits(f16_bits_to_f32(h));
    if (back != (h | 0x0200)) FAIL_CHECK("f16 NaN " << H16{h} << " came back as " << H16{back});
  }
  // Every f32 NaN (every payload, both signs) is a NaN of the same sign in f16.
  int bad = 0;
  for (uint32_t m = 1; m < (1u << 23); ++m)
    for (uint32_t s : {0u, 0x80000000u}) {
      uint16_t h = f32_to_f16_bits(f32_of(s | 0x7f800000u | m));
      bad += !is_nan16(h, DType::F16) || bool(h & 0x8000) != bool(s);
    }
  CHECK(bad == 0);
  // The deliberately wrong case: a conversion that shifts the payload without
  // forcing the quiet bit turns this NaN into infinity.
  auto shift_only = [](float x) {
    uint32_t b = bits_of(x);
    return uint16_t(((b >> 16) & 0x8000) | 0x7c00 | ((b & 0x7fffff) >> 13));
  };
  CHECK_FALSE(is_nan16(shift_only(f32_of(0x7f800001)), DType::F16));
  CHECK(is_nan16(f32_to_f16_bits(f32_of(0x7f800001)), DType::F16));
}

TEST_CASE("dtype: bf16 NaNs keep sign and payload, quiet, and never become infinity or zero") {
  CHECK(H16{f32_to_bf16_bits(f32_of(0x7fc12345))} == H16{0x7fc1});
  CHECK(H16{f32_to_bf16_bits(f32_of(0xffc12345))} == H16{0xffc1});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x7f800001))} == H16{0x7fc0});  // signalling, payload in the dropped half
  CHECK(H16{f32_to_bf16_bits(f32_of(0x7fffffff))} == H16{0x7fff});  // the largest payload does not carry out
  CHECK(H16{f32_to_bf16_bits(f32_of(0xffffffff))} == H16{0xffff});
  CHECK(H32{bits_of(bf16_bits_to_f32(0x7fc1))} == H32{0x7fc10000});
  CHECK(H32{bits_of(bf16_bits_to_f32(0xff81))} == H32{0xff810000});  // widening keeps a signalling payload
  int bad = 0;
  for (uint32_t m = 1; m < (1u << 23); ++m)
    for (uint32_t s : {0u, 0x80000000u}) {
      uint32_t b = s | 0x7f800000u | m;
      uint16_t h = f32_to_bf16_bits(f32_of(b));
      bad += !is_nan16(h, DType::BF16) || bool(h & 0x8000) != bool(s);
      bad += (h & 0x7f) != (((b >> 16) & 0x7f) | 0x40);  // the payload bits that fit, quiet bit set
    }
  CHECK(bad == 0);
  // The deliberately wrong cases: the round-to-even addition without a NaN
  // case makes a signalling NaN infinity and carries the largest NaN into -0.
  CHECK(H16{bf16_rne_no_nan_case(f32_of(0x7f800001))} == H16{0x7f80});
  CHECK(H16{bf16_rne_no_nan_case(f32_of(0x7fffffff))} == H16{0x8000});
  CHECK_FALSE(is_nan16(bf16_rne_no_nan_case(f32_of(0x7f800001)), DType::BF16));
}

TEST_CASE("dtype: f64 NaNs stay NaN of the same sign in f16 and bf16") {
  for (uint64_t b : {0x7ff8000000000000ull, 0x7ff0000000000001ull, 0x7fffffffffffffffull, 0x7ff4000000000000ull}) {
    for (uint64_t s : {0ull, 0x8000000000000000ull}) {
      double x = std::bit_cast<double>(b | s);
      INFO(std::hex << (b | s));
      CHECK(is_nan16(f64_to_f16_bits(x), DType::F16));
      CHECK(is_nan16(f64_to_bf16_bits(x), DType::BF16));
      CHECK(bool(f64_to_f16_bits(x) & 0x8000) == bool(s));
      CHECK(bool(f64_to_bf16_bits(x) & 0x8000) == bool(s));
      CHECK(std::isnan(f64_to_f32_round_odd(x)));
    }
  }
  // The deliberately wrong case: narrowing an f64 NaN by shifting its payload,
  // without forcing the quiet bit, makes a NaN with a low payload infinity.
  auto shift_only = [](double x) {
    uint64_t b = std::bit_cast<uint64_t>(x);
    return uint16_t(((b >> 48) & 0x8000) | 0x7c00 | ((b >> 42) & 0x3ff));
  };
  double low_payload = std::bit_cast<double>(0x7ff0000000000001ull);
  CHECK_FALSE(is_nan16(shift_only(low_payload), DType::F16));
  CHECK(is_nan16(f64_to_f16_bits(low_payload), DType::F16));
}

// ---------------------------------------------------------------------- bf16

TEST_CASE("dtype: f32 -> bf16 equals the reference on every bf16 value, midpoint and neighbour, both signs") {
  std::vector<float> xs = probe_values(DType::BF16, 1 << 20, 17);
  int checked = 0, wrong = 0;
  for (float x : xs) {
    if (std::isnan(x)) continue;
    ++checked;
    if (f32_to_bf16_bits(x) != ref_half(double(x), DType::BF16) && ++wrong <= 5)
      FAIL_CHECK("x = " << H32{bits_of(x)} << ": got " << H16{f32_to_bf16_bits(x)} << ", want "
                        << H16{ref_half(double(x), DType::BF16)});
  }
  CHECK(wrong == 0);
  CHECK(checked > 1 << 20);
  // Named cases: ties to even (down and up), overflow at the tie above the max, subnormal ties, negatives.
  CHECK(H16{f32_to_bf16_bits(f32_of(0x3f808000))} == H16{0x3f80});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x3f818000))} == H16{0x3f82});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x3f808001))} == H16{0x3f81});
  CHECK(H16{f32_to_bf16_bits(f32_of(0xbf818000))} == H16{0xbf82});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x7f7f7fff))} == H16{0x7f7f});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x7f7f8000))} == H16{0x7f80});
  CHECK(H16{f32_to_bf16_bits(f32_of(0xff7f8000))} == H16{0xff80});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x00008000))} == H16{0x0000});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x00018000))} == H16{0x0002});
  CHECK(H16{f32_to_bf16_bits(f32_of(0x80008001))} == H16{0x8001});
  CHECK(H16{f32_to_bf16_bits(-0.0f)} == H16{0x8000});
  // Every bf16 pattern widens exactly and narrows back to itself.
  int trip = 0;
  for (uint32_t b = 0; b < 0x10000; ++b)
    if (!is_nan16(uint16_t(b), DType::BF16)) trip += f32_to_bf16_bits(bf16_bits_to_f32(uint16_t(b))) != b;
  CHECK(trip == 0);
  // The deliberately wrong conversions: truncation and half-away-from-zero fail the same comparison.
  CHECK(count_wrong(xs, DType::BF16, bf16_truncating) > 1000);
  CHECK(count_wrong(xs, DType::BF16, bf16_half_away) > 100);
  CHECK(H16{bf16_truncating(f32_of(0x3f818000))} != H16{f32_to_bf16_bits(f32_of(0x3f818000))});
  CHECK(H16{bf16_half_away(f32_of(0x3f808000))} != H16{f32_to_bf16_bits(f32_of(0x3f808000))});
}

// ---------------------------------------------------------------- round to odd

TEST_CASE("dtype: f64 -> f32 round-to-odd keeps exact values and otherwise gives the odd neighbour") {
  CHECK(H32{bits_of(f64_to_f32_round_odd(1.0))} == H32{0x3f800000});
  CHECK(H32{bits_of(f64_to_f32_round_odd(double(0.1f)))} == H32{bits_of(0.1f)});
  CHECK(H32{bits_of(f64_to_f32_round_odd(-0.0))} == H32{0x80000000});
  CHECK(H32{bits_of(f64_to_f32_round_odd(1.0 + 0x1p-30))} == H32{0x3f800001});
  CHECK(H32{bits_of(f64_to_f32_round_odd(1.0 + 0x1p-23 + 0x1p-30))} == H32{0x3f800001});
  CHECK(H32{bits_of(f64_to_f32_round_odd(1.0 + 0x1p-22 + 0x1p-30))} == H32{0x3f800003});
  CHECK(H32{bits_of(f64_to_f32_round_odd(1.0 + 0x1p-22 - 0x1p-30))} == H32{0x3f800001});  // below an even value
  CHECK(H32{bits_of(f64_to_f32_round_odd(-(1.0 + 0x1p-30)))} == H32{0xbf800001});
  CHECK(H32{bits_of(f64_to_f32_round_odd(0x1p-160))} == H32{0x00000001});    // below every f32: the odd subnormal
  CHECK(H32{bits_of(f64_to_f32_round_odd(-0x1p-160))} == H32{0x80000001});
  CHECK(H32{bits_of(f64_to_f32_round_odd(1e300))} == H32{0x7f7fffff});       // overflow: the largest finite (odd)
  CHECK(H32{bits_of(f64_to_f32_round_odd(-1e300))} == H32{0xff7fffff});
  CHECK(f64_to_f32_round_odd(std::numeric_limits<double>::infinity()) == std::numeric_limits<float>::infinity());
  // On random doubles of every magnitude: exact, or odd and strictly between its neighbours.
  std::mt19937_64 rng(6);
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    double x = std::ldexp(1.0 + double(rng() >> 12) * 0x1p-52, int(rng() % 300) - 160);
    if (rng() & 1) x = -x;
    float r = f64_to_f32_round_odd(x);
    if (double(r) == x) continue;
    const float inf = std::numeric_limits<float>::infinity();
    float down = std::nextafter(r, 0.0f), up = std::nextafter(r, x < 0 ? -inf : inf);
    bool ok = (bits_of(r) & 1) && std::fabs(double(down)) < std::fabs(x) && std::fabs(x) < std::fabs(double(up));
    if (std::fabs(x) > double(std::numeric_limits<float>::max())) ok = (bits_of(r) & 0x7fffffff) == 0x7f7fffff;
    bad += !ok;
  }
  CHECK(bad == 0);
  // The deliberately wrong case: round-to-odd is not round-to-nearest.
  CHECK(bits_of(f64_to_f32_round_odd(1.0 + 0x1p-25)) != bits_of(float(1.0 + 0x1p-25)));
}

TEST_CASE("dtype: f64 -> f16/bf16 round once (round-to-odd intermediate), not twice") {
  // Just above an f16 tie by less than half an f32 ulp: one rounding goes up,
  // two roundings (f64 -> f32 -> f16, both nearest) land on the tie and go to even.
  double x = 1.0 + 0x1p-11 + 0x1p-40;
  CHECK(H16{f64_to_f16_bits(x)} == H16{0x3c01});
  CHECK(H16{f64_to_f16_bits(-x)} == H16{0xbc01});
  CHECK(H16{f16_double_rounding(x)} == H16{0x3c00});  // the deliberately wrong conversion
  double y = 1.0 + 0x1p-8 + 0x1p-40;
  CHECK(H16{f64_to_bf16_bits(y)} == H16{0x3f81});
  CHECK(H16{f64_to_bf16_bits(-y)} == H16{0xbf81});
  CHECK(H16{bf16_double_rounding(y)} == H16{0x3f80});
  // Just below a tie (f32 nearest would round up to the tie, then to even, the wrong way up).
  double z = 1.0 + 3 * 0x1p-11 - 0x1p-40;  // just below the tie between 0x3c01 and 0x3c02
  CHECK(H16{f64_to_f16_bits(z)} == H16{0x3c01});
  CHECK(H16{f16_double_rounding(z)} == H16{0x3c02});
  // Around every half value and every midpoint, at several distances below f32 resolution.
  int wrong16 = 0, wrong_bf = 0, naive16 = 0, naive_bf = 0, checked = 0;
  for (DType t : {DType::F16, DType::BF16}) {
    const HalfTable& tab = table(t);
    for (size_t i = 0; i + 1 < tab.value.size(); ++i) {
      double m = (tab.value[i] + tab.value[i + 1]) / 2;
      for (double d : {0.0, 0x1p-30, -0x1p-30, 0x1p-45, -0x1p-45})
        for (double s : {1.0, -1.0}) {
          double v = s * (m + d * m);
          uint16_t want = ref_half(v, t);
          ++checked;
          if (t == DType::F16) {
            wrong16 += f64_to_f16_bits(v) != want;
            naive16 += f16_double_rounding(v) != want;
          } else {
            wrong_bf += f64_to_bf16_bits(v) != want;
            naive_bf += bf16_double_rounding(v) != want;
          }
        }
    }
  }
  CHECK(checked > 300000);
  CHECK(wrong16 == 0);
  CHECK(wrong_bf == 0);
  CHECK(naive16 > 1000);  // double rounding is wrong on these inputs, so they do test something
  CHECK(naive_bf > 1000);
}

TEST_CASE("dtype: i64 -> f32 round-to-odd, and i64 -> f16/bf16 through it") {
  CHECK(i64_to_f32_round_odd(0) == 0.0f);
  CHECK_FALSE(std::signbit(i64_to_f32_round_odd(0)));
  CHECK(i64_to_f32_round_odd(16777216) == 16777216.0f);
  CHECK(i64_to_f32_round_odd(16777217) == 16777218.0f);  // inexact: the odd neighbour (RNE gives 2^24)
  CHECK(i64_to_f32_round_odd(-16777217) == -16777218.0f);
  CHECK(i64_to_f32_round_odd(16777219) == 16777218.0f);  // truncated to 2^24+2, already odd
  CHECK(i64_to_f32_round_odd(INT64_MIN) == -0x1p63f);
  CHECK(H32{bits_of(i64_to_f32_round_odd(INT64_MAX))} == H32{0x5effffff});  // 2^63 - 1: truncated, odd
  // i64 -> bf16: 2^24 + 2^16 + 1 is just above the tie between 2^24 and 2^24 + 2^17.
  int64_t k = (int64_t(1) << 24) + (1 << 16) + 1;
  CHECK(H16{f32_to_bf16_bits(i64_to_f32_round_odd(k))} == H16{0x4b81});
  CHECK(H16{f32_to_bf16_bits(i64_to_f32_round_odd(-k))} == H16{0xcb81});
  CHECK(H16{f32_to_bf16_bits(float(k))} == H16{0x4b80});  // the deliberately wrong, twice-rounded conversion
  // Random integers below 2^53 (exact in f64) against the reference, both signs.
  std::mt19937_64 rng(53);
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    int64_t v = int64_t(rng() >> (11 + rng() % 40));
    if (rng() & 1) v = -v;
    float r = i64_to_f32_round_odd(v);
    bad += f32_to_bf16_bits(r) != ref_half(double(v), DType::BF16);
    bad += f32_to_f16_bits(r) != ref_half(double(v), DType::F16);
  }
  CHECK(bad == 0);
}

// ------------------------------------------------ decimal literals (ir.cpp)

// Half literals are read as f64 rounded to odd, then rounded once more
// (semantics/ir.cpp, strtod_round_odd). A decimal just beyond a tie by less
// than one f64 ulp must round away from the tie, whatever its sign.
TEST_CASE("dtype: a positive half literal just above a tie rounds up") {
  auto c = const_from_literal("1.00048828125000000001", DType::F16);  // 1 + 2^-11 + 1e-20
  REQUIRE(std::holds_alternative<Const>(c));
  CHECK(H16{uint16_t(std::get<Const>(c).bits)} == H16{0x3c01});
  auto b = const_from_literal("1.00390625000000000001", DType::BF16);  // 1 + 2^-8 + 1e-20
  REQUIRE(std::holds_alternative<Const>(b));
  CHECK(H16{uint16_t(std::get<Const>(b).bits)} == H16{0x3f81});
  // The deliberately wrong reading: strtod to nearest lands on the tie, which goes to even.
  CHECK(H16{f64_to_f16_bits(std::strtod("1.00048828125000000001", nullptr))} == H16{0x3c00});
}

// A literal is read to f64 with round-to-odd (its two neighbours, downward and
// upward), so that the half rounding sees no false tie. Reading a negative
// literal toward zero and upward gave the same value twice: it was truncated,
// and -1.00048828125000000001 became the tie -1.00048828125 and went to even.
TEST_CASE("dtype: a negative half literal just beyond a tie rounds away from it") {
  auto c = const_from_literal("-1.00048828125000000001", DType::F16);
  REQUIRE(std::holds_alternative<Const>(c));
  CHECK(H16{uint16_t(std::get<Const>(c).bits)} == H16{0xbc01});
  auto b = const_from_literal("-1.00390625000000000001", DType::BF16);
  REQUIRE(std::holds_alternative<Const>(b));
  CHECK(H16{uint16_t(std::get<Const>(b).bits)} == H16{0xbf81});
  // The deliberately wrong reading: truncation toward zero lands on the tie.
  CHECK(H16{f64_to_f16_bits(-1.00048828125)} == H16{0xbc00});
}
