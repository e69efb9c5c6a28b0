// Per-format rounding depths of a summand path and their γ coefficients
// (docs/design.md §4): the bookkeeping behind the error-bound analysis
// (oracle/error_bound/analyzer.h).
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "semantics/tensor.h"

namespace stax::oracle::detail {

using namespace sem;

// ---- Precisions: the roundings on a path are counted per format ----

constexpr int kClasses = 4;  // f64, f32, f16, bf16
inline int cls_of(DType t) {
  switch (t) {
    case DType::F64: return 0;
    case DType::F32: return 1;
    case DType::F16: return 2;
    case DType::BF16: return 3;
    default: return 1;
  }
}
constexpr DType kClassDType[kClasses] = {DType::F64, DType::F32, DType::F16, DType::BF16};
inline double class_u(int c) { return unit_roundoff(kClassDType[c]); }

struct Depth {
  std::array<int32_t, kClasses> n{};
  int64_t total() const { return int64_t(n[0]) + n[1] + n[2] + n[3]; }
};

/// γ_p(n) from a table for small n (the common depths), else computed.
struct GammaTable {
  static constexpr int32_t kSize = 1 << 16;
  std::vector<double> t[kClasses];
  GammaTable() {
    for (int k = 0; k < kClasses; ++k) {
      t[k].resize(size_t(kSize));
      for (int32_t n = 0; n < kSize; ++n) t[k][size_t(n)] = gamma_n(n, class_u(k));
    }
  }
  double operator()(int k, int32_t n) const { return n < kSize ? t[k][size_t(n)] : gamma_n(n, class_u(k)); }
};
inline const GammaTable& gammas() {
  static const GammaTable g;
  return g;
}

/// c = Π_p (1 + γ_p(n_p)) − 1, accumulated without cancellation.
inline double coefficient(const Depth& d, int main_cls, const GammaTable& gt) {
  const auto& n = d.n;
  double c = gt(main_cls, n[size_t(main_cls)]);
  for (int k = 0; k < kClasses; ++k)
    if (k != main_cls && n[size_t(k)]) {
      double g = gt(k, n[size_t(k)]);
      c = c + g + c * g;
    }
  return c;
}
inline double coefficient(const Depth& d) { return coefficient(d, 1, gammas()); }

inline std::string depth_text(const Depth& d, int main_cls) {
  std::string s = std::to_string(d.n[size_t(main_cls)]);
  bool other = false;
  for (int k = 0; k < kClasses; ++k) other |= k != main_cls && d.n[size_t(k)] != 0;
  if (!other) return s;
  s += " " + std::string(dtype_name(kClassDType[main_cls]));
  for (int k = 0; k < kClasses; ++k)
    if (k != main_cls && d.n[size_t(k)])
      s += " + " + std::to_string(d.n[size_t(k)]) + " " + std::string(dtype_name(kClassDType[k]));
  return s;
}

inline double min_normal(DType t) {
  switch (t) {
    case DType::F64: return std::numeric_limits<double>::min();
    case DType::F16: return std::ldexp(1.0, -14);
    default: return std::ldexp(1.0, -126);  // f32, bf16
  }
}
inline int max_exponent(DType t) {  // the largest finite value is below 2^max_exponent
  switch (t) {
    case DType::F64: return 1024;
    case DType::F16: return 16;
    default: return 128;
  }
}
inline int min_exponent(DType t) {  // the smallest normal value is 2^min_exponent
  switch (t) {
    case DType::F64: return -1022;
    case DType::F16: return -14;
    default: return -126;
  }
}

inline double read(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32: return double(t.as<float>()[i]);
    case DType::F64: return t.as<double>()[i];
    default: return t.get_double(i);
  }
}

// ---- Structure: scopes, edges (composed views), nodes ----


}  // namespace stax::oracle::detail
