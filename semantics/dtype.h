// Element types of the tensor core language (docs/design.md §2) and the f16/bf16
// storage conversions. Half types are storage types: a lambda computes on them
// in f32 and rounds at casts and at a map's store (docs/design.md §2, §6.2).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace stax::sem {

#define STAX_DTYPES(X) \
  X(F32, "f32", 4)     \
  X(F64, "f64", 8)     \
  X(F16, "f16", 2)     \
  X(BF16, "bf16", 2)   \
  X(I32, "i32", 4)     \
  X(I64, "i64", 8)     \
  X(Bool, "bool", 1)

enum class DType : uint8_t {
#define X(name, text, bytes) name,
  STAX_DTYPES(X)
#undef X
};

std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view s);
int dtype_bytes(DType t);

inline bool is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
inline bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }
inline bool is_int(DType t) { return t == DType::I32 || t == DType::I64; }
inline bool is_bool(DType t) { return t == DType::Bool; }

/// The type a value of dtype `t` is computed in: half types compute in f32.
inline DType compute_type(DType t) { return is_half(t) ? DType::F32 : t; }

/// Unit roundoff of a float dtype (2^-p).
double unit_roundoff(DType t);

// ---- f16 / bf16 conversions, round to nearest even, subnormals kept ----

/// f32 -> f16 bits (round to nearest even; overflow to inf; NaN stays NaN).
uint16_t f32_to_f16_bits(float x);
/// f64 -> f16 bits, rounded once (not through f32 with RNE).
uint16_t f64_to_f16_bits(double x);
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float x);
uint16_t f64_to_bf16_bits(double x);
inline float bf16_bits_to_f32(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

/// Round an f32 value to the precision of a half dtype and back.
inline float round_to_half(float x, DType half) {
  return half == DType::F16 ? f16_bits_to_f32(f32_to_f16_bits(x))
                            : bf16_bits_to_f32(f32_to_bf16_bits(x));
}

/// f64 -> f32 with round-to-odd: the intermediate that makes a second
/// rounding to a format with at most 22 significand bits correct.
float f64_to_f32_round_odd(double x);
/// int64 -> f32 with round-to-odd (exact for a later rounding to f16/bf16).
float i64_to_f32_round_odd(int64_t x);

}  // namespace stax::sem
