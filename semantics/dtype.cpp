#include "semantics/dtype.h"

#include <cmath>
#include <cstring>

namespace stax::sem {

std::string_view dtype_name(DType t) {
  switch (t) {
#define X(name, text, bytes) \
  case DType::name:          \
    return text;
    STAX_DTYPES(X)
#undef X
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view s) {
#define X(name, text, bytes) \
  if (s == text) return DType::name;
  STAX_DTYPES(X)
#undef X
  return std::nullopt;
}

int dtype_bytes(DType t) {
  switch (t) {
#define X(name, text, bytes) \
  case DType::name:          \
    return bytes;
    STAX_DTYPES(X)
#undef X
  }
  return 0;
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::F64: return std::ldexp(1.0, -53);
    case DType::F32: return std::ldexp(1.0, -24);
    case DType::F16: return std::ldexp(1.0, -11);
    case DType::BF16: return std::ldexp(1.0, -8);
    default: return 0.0;
  }
}

namespace {

// Round the magnitude bits `m` (an unsigned integer holding the value
// m * 2^-shift) to an integer, nearest even.
uint32_t round_shift_rne(uint32_t m, int shift) {
  if (shift <= 0) return m << -shift;
  if (shift > 31) return 0;
  uint32_t q = m >> shift;
  uint32_t rem = m & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  return q;
}

}  // namespace

uint16_t f32_to_f16_bits(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  uint16_t sign = uint16_t((b >> 16) & 0x8000);
  uint32_t exp = (b >> 23) & 0xff;
  uint32_t man = b & 0x7fffff;
  if (exp == 0xff) {
    if (man == 0) return sign | 0x7c00;
    return sign | 0x7e00 | uint16_t(man >> 13);  // quiet NaN, payload kept where it fits
  }
  // Value = 1.man * 2^(exp-127) for normals; f16 normal exponent range [-14, 15].
  int e = int(exp) - 127;
  if (exp == 0) return sign;  // f32 subnormals are far below f16's smallest subnormal
  uint32_t sig = man | 0x800000;  // 24-bit significand, value sig * 2^(e-23)
  if (e >= -14) {
    // Normal f16 candidate: keep 11 bits.
    uint32_t r = round_shift_rne(sig, 13);  // sig has 24 bits -> 11 bits (may carry to 12)
    int ee = e;
    if (r == 0x800) {
      r >>= 1;
      ++ee;
    }
    if (ee > 15) return sign | 0x7c00;
    return sign | uint16_t(((ee + 15) << 10) | (r & 0x3ff));
  }
  // Subnormal f16: value = q * 2^-24, q = sig * 2^(e-23+24).
  int shift = 13 + (-14 - e);  // extra shift past the normal case
  uint32_t q = round_shift_rne(sig, shift);
  // q may reach 0x400, which is exactly the smallest normal: encoding carries over.
  return sign | uint16_t(q);
}

float f16_bits_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (man << 13));
  if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t f32_to_bf16_bits(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  if ((b & 0x7fffffff) > 0x7f800000) return uint16_t((b >> 16) | 0x40);  // quiet NaN
  uint32_t lsb = (b >> 16) & 1;
  b += 0x7fff + lsb;  // round half to even; overflow carries into inf correctly
  return uint16_t(b >> 16);
}

float f64_to_f32_round_odd(double x) {
  if (std::isnan(x) || std::isinf(x)) return float(x);
  float f = float(x);
  if (double(f) == x) return f;
  // Truncate toward zero, then set the sticky bit.
  if (std::fabs(double(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  uint32_t b = std::bit_cast<uint32_t>(f);
  if ((b & 0x7f800000) == 0x7f800000) b -= 1;  // inf after truncation cannot happen, be safe
  return std::bit_cast<float>(b | 1u);
}

uint16_t f64_to_f16_bits(double x) { return f32_to_f16_bits(f64_to_f32_round_odd(x)); }
uint16_t f64_to_bf16_bits(double x) { return f32_to_bf16_bits(f64_to_f32_round_odd(x)); }

float i64_to_f32_round_odd(int64_t x) {
  if (x == 0) return 0.0f;
  bool neg = x < 0;
  uint64_t m = neg ? uint64_t(0) - uint64_t(x) : uint64_t(x);
  int msb = 63 - __builtin_clzll(m);
  float r;
  if (msb < 24) {
    r = float(m);
  } else {
    int drop = msb - 23;
    uint64_t q = m >> drop;
    if (m & ((uint64_t(1) << drop) - 1)) q |= 1;
    r = std::ldexp(float(q), drop);
  }
  return neg ? -r : r;
}

}  // namespace stax::sem
