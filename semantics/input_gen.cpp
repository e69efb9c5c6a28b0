#include "semantics/input_gen.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "semantics/random_inputs.h"

namespace stax::sem {

std::string_view input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::Normal: return "normal";
    case InputKind::Uniform: return "uniform";
    case InputKind::Cancellation: return "cancellation";
    case InputKind::Special: return "special";
    case InputKind::Extreme: return "extreme";
    case InputKind::Solver: return "solver";
    case InputKind::Products: return "products";
  }
  return "?";
}

std::optional<Inputs> adapt_inputs(const Program& p, const Inputs& in) {
  Inputs r;
  for (const Input& i : p.inputs) {
    auto it = in.find(i.name);
    if (it == in.end() || it->second.dtype != i.type.dtype || it->second.shape != i.type.shape) return std::nullopt;
    r.emplace(i.name, it->second);
  }
  return r;
}

namespace {

// A float value of the kind, before rounding to the dtype.
double draw(InputKind kind, Rng& rng) {
  switch (kind) {
    case InputKind::Normal: return rng.normal();
    case InputKind::Uniform: return rng.uniform();
    case InputKind::Cancellation: {
      // Large values of both signs that nearly cancel, and small ones.
      double big = std::ldexp(1.0, 10 + int(rng.next() % 10));
      switch (rng.next() % 3) {
        case 0: return big * (1.0 + rng.uniform() * 1e-3);
        case 1: return -big * (1.0 + rng.uniform() * 1e-3);
        default: return rng.normal() * 1e-3;
      }
    }
    case InputKind::Special:  // draw_tensor handles these
    case InputKind::Extreme:
    case InputKind::Solver:
    case InputKind::Products: break;
  }
  return 0.0;
}

/// The bit layout of a float dtype: exponent and fraction widths.
std::pair<int, int> float_layout(DType t) {
  switch (t) {
    case DType::F16: return {5, 10};
    case DType::BF16: return {8, 7};
    case DType::F32: return {8, 23};
    default: return {11, 52};
  }
}

/// One extreme pattern for a whole float tensor (InputKind::Extreme).
Tensor extreme_tensor(const TensorType& ty, Rng& rng) {
  Tensor t(ty.dtype, ty.shape);
  auto [eb, fb] = float_layout(ty.dtype);
  uint64_t sign = 1ull << (eb + fb), exp_all = ((1ull << eb) - 1) << fb, frac_all = (1ull << fb) - 1;
  int pattern = int(rng.next() % 6);
  size_t bytes = size_t(dtype_bytes(ty.dtype));
  for (int64_t i = 0; i < t.size(); ++i) {
    uint64_t bits = 0;
    switch (pattern) {
      case 0: bits = sign; break;                                // all -0.0
      case 1: bits = (rng.next() & 1) ? sign : 0; break;         // ±0
      case 2:                                                    // NaNs, payloads and signs differ
        bits = exp_all | (1 + rng.next() % frac_all) | ((rng.next() & 1) ? sign : 0);
        break;
      case 3: bits = exp_all | ((i & 1) ? sign : 0); break;      // +inf, -inf, ...
      case 4:                                                    // subnormals
        bits = (1 + rng.next() % frac_all) | ((rng.next() & 1) ? sign : 0);
        break;
      default: bits = (exp_all - (1ull << fb)) | frac_all | ((rng.next() & 1) ? sign : 0); break;  // ±max finite
    }
    std::memcpy(t.data.data() + size_t(i) * bytes, &bits, bytes);  // little-endian
  }
  return t;
}

/// The value of `v` in dtype t (f16/bf16 rounded, as a double).
double in_dtype(double v, DType t) {
  switch (t) {
    case DType::F32: return double(float(v));
    case DType::F16: return double(f16_bits_to_f32(f64_to_f16_bits(v)));
    case DType::BF16: return double(bf16_bits_to_f32(f64_to_bf16_bits(v)));
    default: return v;
  }
}

/// The Products pool of a float dtype (InputKind::Products): p and q of the
/// dtype whose product rounds in the compute type (f32 for f32, f64 for f64;
/// the half formats compute in f32, where their products are exact, so
/// theirs are only p, q and the rounded products), the rounded products
/// fl(p*q), -fl(p*q), -fl(p*p), and ±r with r*r inexact. The same for every
/// tensor of the call; 90 % of a tensor's elements are drawn from it.
std::vector<double> products_pool(DType t, uint64_t seed) {
  Rng rng(seed ^ (uint64_t(t) + 1) * 0xd6e8feb86659fd93ull);
  auto prod = [&](double a, double b) {
    if (t == DType::F64) return a * b;
    return in_dtype(double(float(a) * float(b)), t);  // rounded as the compute type, then to t
  };
  double p = 1.0, q = 1.0;
  for (int k = 0; k < 64; ++k) {
    p = in_dtype(rng.normal() * std::ldexp(1.0, int(rng.next() % 5) - 2), t);
    q = in_dtype(rng.normal() * std::ldexp(1.0, int(rng.next() % 5) - 2), t);
    bool inexact = t == DType::F64 ? std::fma(p, q, -(p * q)) != 0.0 : double(float(p) * float(q)) != p * q;
    if (inexact || is_half(t)) break;
  }
  // r = 1 + k*2^-e (k odd): r*r needs more bits than the dtype has, and
  // r*r - r (x = r) and r*r + (-r) (x = -r) cancel, so even a one-operand
  // `x*x - x` or `x*x + x` shows the rounding of its product.
  int e = t == DType::F64 ? 27 : (t == DType::F32 ? 12 : 4);
  double r = in_dtype(1.0 + std::ldexp(double(2 * (rng.next() % 64) + 1), -e), t);
  return {p, q, prod(p, q), -prod(p, q), -prod(p, p), r, -r};
}

/// Element i of a float tensor set to v rounded to its dtype.
void set_float(Tensor& t, int64_t i, double v) {
  switch (t.dtype) {
    case DType::F32: t.as<float>()[i] = float(v); break;
    case DType::F64: t.as<double>()[i] = v; break;
    case DType::F16: t.as<uint16_t>()[i] = f64_to_f16_bits(v); break;
    case DType::BF16: t.as<uint16_t>()[i] = f64_to_bf16_bits(v); break;
    default: break;
  }
}

Tensor products_tensor(const TensorType& ty, Rng& rng, uint64_t pool_seed) {
  std::vector<double> pool = products_pool(ty.dtype, pool_seed);
  Tensor t(ty.dtype, ty.shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = rng.uniform() < 0.9 ? pool[size_t(rng.next() % pool.size())] : rng.normal();
    set_float(t, i, v);
  }
  return t;
}

Tensor draw_tensor(const TensorType& ty, InputKind kind, Rng& rng, int64_t index_extent, uint64_t pool_seed) {
  if (kind == InputKind::Products && is_float(ty.dtype)) return products_tensor(ty, rng, pool_seed);
  if (kind == InputKind::Products) kind = InputKind::Normal;
  if (kind == InputKind::Extreme && is_float(ty.dtype)) return extreme_tensor(ty, rng);
  if (kind == InputKind::Extreme) kind = InputKind::Special;
  if (kind == InputKind::Special && is_float(ty.dtype)) {
    Tensor t = random_tensor(ty, rng, RandomOptions{0.6}, index_extent);
    if (is_half(ty.dtype)) return t;
    // Rounding ties of the half formats, as values of the wider dtype.
    for (int64_t i = 0; i < t.size(); ++i) {
      if (rng.uniform() >= 0.15) continue;
      int p = (rng.next() & 1) ? 11 : 8;
      double tie = std::ldexp(1.0 + std::ldexp(double(2 * (rng.next() % 4) + 1), -p), int(rng.next() % 8) - 4);
      if (rng.next() & 1) tie = -tie;
      if (ty.dtype == DType::F32) t.as<float>()[i] = float(tie);
      else t.as<double>()[i] = tie;
    }
    return t;
  }
  if (!is_float(ty.dtype)) {
    RandomOptions opt{kind == InputKind::Special ? 0.3 : 0.0};
    if (kind == InputKind::Special && index_extent > 0 && rng.uniform() < 0.5) index_extent *= 2;  // some out of range
    return random_tensor(ty, rng, opt, index_extent);
  }
  Tensor t(ty.dtype, ty.shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = draw(kind, rng);
    set_float(t, i, v);
  }
  return t;
}

}  // namespace

Inputs generate_inputs(const Program& p, InputKind kind, uint64_t seed) {
  Inputs in;
  uint64_t k = 0;
  for (const Input& i : p.inputs) {
    Rng rng(seed * 0x2545f4914f6cdd1dull + (++k) * 0x9e3779b97f4a7c15ull + uint64_t(kind) * 0x632be59bd9b4e019ull);
    int64_t hint = is_int(i.type.dtype) ? index_extent_hint(p, i.name) : 0;
    in[i.name] = draw_tensor(i.type, kind, rng, hint, seed * 0x94d049bb133111ebull + uint64_t(kind));
  }
  return in;
}

}  // namespace stax::sem
