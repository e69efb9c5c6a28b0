#include "backends/cpu/runtime.h"

#include <cmath>
#include <cstring>

#include "backends/cpu/vecmath.h"
#include "semantics/dtype.h"
#include "semantics/ieee_scalar.h"
#include "semantics/ir.h"

namespace stax::backends::cpu {
namespace {

using namespace stax::sem;

extern "C" {
// Half precision: loads upcast exactly, stores and casts round to nearest even.
float stax_rt_f16_to_f32(uint16_t h) { return f16_bits_to_f32(h); }
uint16_t stax_rt_f32_to_f16(float x) { return f32_to_f16_bits(x); }
uint16_t stax_rt_f32_to_bf16(float x) { return f32_to_bf16_bits(x); }
float stax_rt_round_f16(float x) { return round_to_half(x, DType::F16); }
float stax_rt_round_bf16(float x) { return round_to_half(x, DType::BF16); }
float stax_rt_f64_to_f16(double x) { return f16_bits_to_f32(f64_to_f16_bits(x)); }
float stax_rt_f64_to_bf16(double x) { return bf16_bits_to_f32(f64_to_bf16_bits(x)); }
float stax_rt_i64_to_f16(int64_t x) { return round_to_half(i64_to_f32_round_odd(x), DType::F16); }
float stax_rt_i64_to_bf16(int64_t x) { return round_to_half(i64_to_f32_round_odd(x), DType::BF16); }

// NumPy's divmod for floats.
float stax_rt_floordiv_f32(float a, float b) { float m; return ieee::divmod(a, b, m); }
float stax_rt_mod_f32(float a, float b) { float m; ieee::divmod(a, b, m); return m; }
double stax_rt_floordiv_f64(double a, double b) { double m; return ieee::divmod(a, b, m); }
double stax_rt_mod_f64(double a, double b) { double m; ieee::divmod(a, b, m); return m; }

// Saturating float -> int, NaN -> 0.
int32_t stax_rt_f32_to_i32(float x) { return ieee::float_to_int<int32_t>(x); }
int64_t stax_rt_f32_to_i64(float x) { return ieee::float_to_int<int64_t>(x); }
int32_t stax_rt_f64_to_i32(double x) { return ieee::float_to_int<int32_t>(x); }
int64_t stax_rt_f64_to_i64(double x) { return ieee::float_to_int<int64_t>(x); }

// rand(key) at a flat index, as the interpreter computes it: 24 random bits
// in the compute type, scaled by 2^-24 (exact), then rounded to the tag.
float stax_rt_rand_f32(uint64_t key, int64_t flat) {
  return std::ldexp(float(int64_t(rand_value(key, flat) * 0x1.0p24)), -24);
}
double stax_rt_rand_f64(uint64_t key, int64_t flat) {
  return std::ldexp(double(int64_t(rand_value(key, flat) * 0x1.0p24)), -24);
}
// Zero, as a value the optimiser cannot know (KernelShape::salt_broadcasts):
// kernels add it, times a vector's number, to an index.
const int64_t stax_index_zero = 0;
}  // extern "C"

template <class F>
RuntimeSymbol sym(const char* name, F* f) {
  return {name, reinterpret_cast<void*>(f)};
}

}  // namespace

const std::vector<RuntimeSymbol>& runtime_symbols() {
  static const std::vector<RuntimeSymbol> syms = [] {
    std::vector<RuntimeSymbol> s = {
        sym("stax_rt_f16_to_f32", &stax_rt_f16_to_f32),
        sym("stax_rt_f32_to_f16", &stax_rt_f32_to_f16),
        sym("stax_rt_f32_to_bf16", &stax_rt_f32_to_bf16),
        sym("stax_rt_round_f16", &stax_rt_round_f16),
        sym("stax_rt_round_bf16", &stax_rt_round_bf16),
        sym("stax_rt_f64_to_f16", &stax_rt_f64_to_f16),
        sym("stax_rt_f64_to_bf16", &stax_rt_f64_to_bf16),
        sym("stax_rt_i64_to_f16", &stax_rt_i64_to_f16),
        sym("stax_rt_i64_to_bf16", &stax_rt_i64_to_bf16),
        sym("stax_rt_floordiv_f32", &stax_rt_floordiv_f32),
        sym("stax_rt_mod_f32", &stax_rt_mod_f32),
        sym("stax_rt_floordiv_f64", &stax_rt_floordiv_f64),
        sym("stax_rt_mod_f64", &stax_rt_mod_f64),
        sym("stax_rt_f32_to_i32", &stax_rt_f32_to_i32),
        sym("stax_rt_f32_to_i64", &stax_rt_f32_to_i64),
        sym("stax_rt_f64_to_i32", &stax_rt_f64_to_i32),
        sym("stax_rt_f64_to_i64", &stax_rt_f64_to_i64),
        sym("stax_rt_rand_f32", &stax_rt_rand_f32),
        sym("stax_rt_rand_f64", &stax_rt_rand_f64),
        // The optimiser turns loops into these (loop idiom recognition).
        sym("memset", static_cast<void* (*)(void*, int, size_t)>(&std::memset)),
        sym("memcpy", static_cast<void* (*)(void*, const void*, size_t)>(&std::memcpy)),
        sym("memmove", static_cast<void* (*)(void*, const void*, size_t)>(&std::memmove)),
        {"stax_index_zero", const_cast<int64_t*>(&stax_index_zero)},
    };
    // The correctly rounded math (and the host libm, for measurement).
    for (RuntimeSymbol& m : math_symbols()) s.push_back(std::move(m));
    return s;
  }();
  return syms;
}

}  // namespace stax::backends::cpu
