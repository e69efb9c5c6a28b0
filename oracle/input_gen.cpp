#include "oracle/input_gen.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "semantics/random_inputs.h"

namespace stax::oracle {

using namespace sem;

std::string_view input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::Normal: return "normal";
    case InputKind::Uniform: return "uniform";
    case InputKind::Cancellation: return "cancellation";
    case InputKind::Special: return "special";
    case InputKind::Extreme: return "extreme";
    case InputKind::Solver: return "solver";
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
    case InputKind::Solver: break;
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

Tensor draw_tensor(const TensorType& ty, InputKind kind, Rng& rng, int64_t index_extent) {
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
    switch (ty.dtype) {
      case DType::F32: t.as<float>()[i] = float(v); break;
      case DType::F64: t.as<double>()[i] = v; break;
      case DType::F16: t.as<uint16_t>()[i] = f64_to_f16_bits(v); break;
      case DType::BF16: t.as<uint16_t>()[i] = f64_to_bf16_bits(v); break;
      default: break;
    }
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
    in[i.name] = draw_tensor(i.type, kind, rng, hint);
  }
  return in;
}

}  // namespace stax::oracle
