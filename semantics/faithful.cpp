#include "semantics/faithful.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "semantics/dtype.h"

namespace stax::sem {

FaithfulModel FaithfulModel::pytorch_cpu() {
  // Inductor calls Vectorized<float>::exp()/log()/tanh()/..., SLEEF's `_u10`
  // functions (documented maximum error 1.0 ULP; docs/pytorch.md), and glibc
  // in scalar code. Eager ATen, built with MKL, calls MKL's vector math in its
  // high-accuracy mode for exp, log, log2, log10, sin, cos, tanh, erf and
  // sqrt (include/ATen/cpu/vml.h), measured within 1 ULP here. Vectorized<float>::erf
  // (what Inductor emits) is Abramowitz–Stegun 7.1.26 — 1.5e-7 absolute for
  // the formula — evaluated in binary32: 1 - r·t·exp(-x²) with r·t·exp(-x²)
  // at most 1 and computed with at most 8 roundings of 2^-24 relative
  // (4.8e-7), and the final rounding (6e-8): 6.9e-7 < 2^-20, the bound used.
  // Measured on torch 2.15 (python/stax_torch/README.md): Inductor's erf is
  // off by up to 5.4e-7, eager's torch.erf by 0.75 ULP. sigmoid and rsqrt
  // are their composite formulas, 1 / (1 + exp(-x)) and 1 / sqrt(x), each
  // step faithful (the Enclosure domain's faithful mode).
  FaithfulModel m;
  for (ScalarOp op : {ScalarOp::Exp, ScalarOp::Expm1, ScalarOp::Log, ScalarOp::Log2, ScalarOp::Log10,
                      ScalarOp::Log1p, ScalarOp::Tanh, ScalarOp::Sin, ScalarOp::Cos, ScalarOp::Pow})
    m.library[op] = {1, 0};
  m.library[ScalarOp::Erf] = {1, std::ldexp(1.0, -20)};
  return m;
}

FaithfulModel FaithfulModel::correctly_rounded() { return FaithfulModel{}; }

std::string FaithfulModel::describe() const {
  if (library.empty()) return "every library function correctly rounded";
  std::string s;
  for (const auto& [op, b] : library) {
    char buf[96];
    if (b.abs > 0) std::snprintf(buf, sizeof buf, "%s: %g ulp + %.3g", std::string(op_name(op)).c_str(), b.ulps, b.abs);
    else std::snprintf(buf, sizeof buf, "%s: %g ulp", std::string(op_name(op)).c_str(), b.ulps);
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  return s;
}

namespace {

// A value of t's grid <-> its ordinal: consecutive grid values have
// consecutive ordinals, ±0 are 0, ±inf the ends.
int64_t ordinal(double v, DType t) {
  int64_t mag;
  bool neg = std::signbit(v);
  switch (t) {
    case DType::F64: mag = int64_t(std::bit_cast<uint64_t>(v) & ~(uint64_t(1) << 63)); break;
    case DType::F32: mag = int64_t(std::bit_cast<uint32_t>(float(v)) & 0x7fffffffu); break;
    case DType::F16: mag = int64_t(f64_to_f16_bits(v) & 0x7fffu); break;
    default: mag = int64_t(f64_to_bf16_bits(v) & 0x7fffu); break;
  }
  return neg ? -mag : mag;
}

int64_t inf_ordinal(DType t) {
  switch (t) {
    case DType::F64: return int64_t(std::bit_cast<uint64_t>(std::numeric_limits<double>::infinity()));
    case DType::F32: return 0x7f800000;
    case DType::F16: return 0x7c00;
    default: return 0x7f80;
  }
}

double from_ordinal(int64_t o, DType t) {
  bool neg = o < 0;
  uint64_t mag = uint64_t(neg ? -o : o);
  double v;
  switch (t) {
    case DType::F64: v = std::bit_cast<double>(mag); break;
    case DType::F32: v = std::bit_cast<float>(uint32_t(mag)); break;
    case DType::F16: v = f16_bits_to_f32(uint16_t(mag)); break;
    default: v = bf16_bits_to_f32(uint16_t(mag)); break;
  }
  return neg ? -v : v;
}

/// RN of a double onto t's grid.
double nearest(double d, DType t) {
  switch (t) {
    case DType::F64: return d;
    case DType::F32: return double(float(d));
    case DType::F16: return f16_bits_to_f32(f64_to_f16_bits(d));
    default: return bf16_bits_to_f32(f64_to_bf16_bits(d));
  }
}

}  // namespace

double grid_down(mpfr_srcptr x, DType t) {
  if (t == DType::F32) return mpfr_get_flt(x, MPFR_RNDD);
  double d = mpfr_get_d(x, MPFR_RNDD);  // t's grid is a subset of the doubles
  if (t == DType::F64 || std::isnan(d)) return d;
  double r = nearest(d, t);
  return r > d ? grid_step(r, t, -1) : r;
}

double grid_up(mpfr_srcptr x, DType t) {
  if (t == DType::F32) return mpfr_get_flt(x, MPFR_RNDU);
  double d = mpfr_get_d(x, MPFR_RNDU);
  if (t == DType::F64 || std::isnan(d)) return d;
  double r = nearest(d, t);
  return r < d ? grid_step(r, t, 1) : r;
}

double grid_step(double v, DType t, int k) {
  if (std::isnan(v) || k == 0) return v;
  int64_t o = ordinal(v, t), end = inf_ordinal(t);
  // +0 and -0 share ordinal 0: a step down from +0 goes to -min, up from -0 to +min.
  int64_t n = o + k;
  if (n > end) n = end;
  if (n < -end) n = -end;
  return from_ordinal(n, t);
}

double grid_max(DType t) { return from_ordinal(inf_ordinal(t) - 1, t); }

double grid_min_normal(DType t) {
  switch (t) {
    case DType::F64: return std::ldexp(1.0, -1022);
    case DType::F16: return std::ldexp(1.0, -14);
    default: return std::ldexp(1.0, -126);  // f32, bf16
  }
}

double grid_distance(double a, double b, DType t) {
  int64_t d = ordinal(a, t) - ordinal(b, t);
  return double(d < 0 ? -d : d);
}

}  // namespace stax::sem
