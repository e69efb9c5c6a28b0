#include "backends/cpu/runtime.h"

#include <cmath>
#include <cstring>

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
}  // extern "C"

template <class F>
RuntimeSymbol sym(const char* name, F* f) {
  return {name, reinterpret_cast<void*>(f)};
}

}  // namespace

const std::vector<RuntimeSymbol>& runtime_symbols() {
  // libm entry points by address: the very functions std::exp etc. call in
  // the Ieee domain (float overloads → expf, double → exp).
  static const std::vector<RuntimeSymbol> syms = {
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
      sym("stax_libm_expf", static_cast<float (*)(float)>(&::expf)),
      sym("stax_libm_exp", static_cast<double (*)(double)>(&::exp)),
      sym("stax_libm_logf", static_cast<float (*)(float)>(&::logf)),
      sym("stax_libm_log", static_cast<double (*)(double)>(&::log)),
      sym("stax_libm_log2f", static_cast<float (*)(float)>(&::log2f)),
      sym("stax_libm_log2", static_cast<double (*)(double)>(&::log2)),
      sym("stax_libm_log10f", static_cast<float (*)(float)>(&::log10f)),
      sym("stax_libm_log10", static_cast<double (*)(double)>(&::log10)),
      sym("stax_libm_log1pf", static_cast<float (*)(float)>(&::log1pf)),
      sym("stax_libm_log1p", static_cast<double (*)(double)>(&::log1p)),
      sym("stax_libm_expm1f", static_cast<float (*)(float)>(&::expm1f)),
      sym("stax_libm_expm1", static_cast<double (*)(double)>(&::expm1)),
      sym("stax_libm_tanhf", static_cast<float (*)(float)>(&::tanhf)),
      sym("stax_libm_tanh", static_cast<double (*)(double)>(&::tanh)),
      sym("stax_libm_erff", static_cast<float (*)(float)>(&::erff)),
      sym("stax_libm_erf", static_cast<double (*)(double)>(&::erf)),
      sym("stax_libm_sinf", static_cast<float (*)(float)>(&::sinf)),
      sym("stax_libm_sin", static_cast<double (*)(double)>(&::sin)),
      sym("stax_libm_cosf", static_cast<float (*)(float)>(&::cosf)),
      sym("stax_libm_cos", static_cast<double (*)(double)>(&::cos)),
      sym("stax_libm_powf", static_cast<float (*)(float, float)>(&::powf)),
      sym("stax_libm_pow", static_cast<double (*)(double, double)>(&::pow)),
  };
  return syms;
}

}  // namespace stax::backends::cpu
