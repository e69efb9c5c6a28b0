#include "semantics/random_inputs.h"

#include <cmath>
#include <limits>

#include "semantics/ir_visit.h"

namespace stax::sem {

double Rng::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

namespace {

double special_value(DType t, Rng& rng) {
  double maxv, minn, subn;
  switch (t) {
    case DType::F64: maxv = std::numeric_limits<double>::max(); minn = std::numeric_limits<double>::min(); subn = std::numeric_limits<double>::denorm_min(); break;
    case DType::F16: maxv = 65504.0; minn = std::ldexp(1.0, -14); subn = std::ldexp(1.0, -24); break;
    case DType::BF16: maxv = std::ldexp(255.0, 120); minn = std::ldexp(1.0, -126); subn = std::ldexp(1.0, -133); break;
    default: maxv = std::numeric_limits<float>::max(); minn = std::numeric_limits<float>::min(); subn = std::numeric_limits<float>::denorm_min(); break;
  }
  double sign = (rng.next() & 1) ? -1.0 : 1.0;
  switch (rng.next() % 8) {
    case 0: return sign * 0.0;
    case 1: return sign * std::numeric_limits<double>::infinity();
    case 2: return std::numeric_limits<double>::quiet_NaN();
    case 3: return sign * subn * double(1 + rng.next() % 7);  // subnormals
    case 4: return sign * maxv * (0.5 + 0.5 * rng.uniform());  // huge
    case 5: return sign * minn * (1.0 + rng.uniform());        // tiny normal
    case 6: return sign * maxv;
    default: return sign * std::ldexp(1.0, int(rng.next() % 40) - 20) * (1.0 + std::ldexp(1.0, -10));
  }
}

void collect_loads(const IExpr& e, const std::string& name, int64_t extent, int64_t& best) {
  if (extent <= 0) return;
  for_each_inode(e, [&](const IExprNode& n) {
    if (n.kind == IExprNode::Kind::Load && n.name == name) best = best ? std::min(best, extent) : extent;
  });
}

void scan(const Expr& e, const std::string& name, int64_t& best) {
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, ViewE>) {
          for (size_t j = 0; j < x.map.exprs.size(); ++j)
            collect_loads(x.map.exprs[j], name, x.src->type.shape[j], best);
          scan(x.src, name, best);
        } else if constexpr (std::is_same_v<X, MapE>) {
          for (const Expr& a : x.args) scan(a, name, best);
        } else if constexpr (std::is_same_v<X, RedE>) {
          scan(x.src, name, best);
        } else if constexpr (std::is_same_v<X, LetE>) {
          scan(x.value, name, best);
          scan(x.body, name, best);
        }
      },
      e->p);
}

}  // namespace

int64_t index_extent_hint(const Program& p, const std::string& name) {
  int64_t best = 0;
  for (const Binding& b : p.bindings) scan(b.expr, name, best);
  return best;
}

Tensor random_tensor(const TensorType& ty, Rng& rng, const RandomOptions& opt, int64_t index_extent) {
  // The evaluator's limit (2^32 elements): beyond it, a clear usage error
  // rather than an allocation that fails (std::bad_alloc) or swaps.
  double elems = 1;  // no overflow: a graph's shape may have 8 extents of 2^40
  for (int64_t d : ty.shape) elems *= double(d);
  if (elems > 0x1p32)
    throw ResourceError{"cannot draw a random " + type_str(ty) + ": more than 2^32 elements (give it with --input)"};
  Tensor t(ty.dtype, ty.shape);
  int64_t n = t.size();
  for (int64_t i = 0; i < n; ++i) {
    switch (ty.dtype) {
      case DType::F32:
      case DType::F64:
      case DType::F16:
      case DType::BF16: {
        double v = rng.uniform() < opt.special_fraction ? special_value(ty.dtype, rng) : rng.normal();
        if (ty.dtype == DType::F32) t.as<float>()[i] = float(v);
        else if (ty.dtype == DType::F64) t.as<double>()[i] = v;
        else if (ty.dtype == DType::F16) t.as<uint16_t>()[i] = f64_to_f16_bits(v);
        else t.as<uint16_t>()[i] = f64_to_bf16_bits(v);
        break;
      }
      case DType::I32:
      case DType::I64: {
        int64_t v;
        if (index_extent > 0) {
          v = rng.range(-index_extent, index_extent);
        } else if (rng.uniform() < opt.special_fraction) {
          bool i32 = ty.dtype == DType::I32;
          int64_t ext[] = {0, -1, 1, i32 ? INT32_MIN : INT64_MIN, i32 ? INT32_MAX : INT64_MAX};
          v = ext[rng.next() % 5];
        } else {
          v = rng.range(-100, 100);
        }
        if (ty.dtype == DType::I32) t.as<int32_t>()[i] = int32_t(v);
        else t.as<int64_t>()[i] = v;
        break;
      }
      case DType::Bool: t.as<uint8_t>()[i] = rng.next() & 1; break;
    }
  }
  return t;
}

Inputs random_inputs(const Program& p, uint64_t seed, const RandomOptions& opt) {
  Inputs in;
  uint64_t k = 0;
  for (const Input& i : p.inputs) {
    Rng rng(seed * 0x100000001b3ull + (++k) * 0x9e3779b97f4a7c15ull);
    int64_t hint = is_int(i.type.dtype) ? index_extent_hint(p, i.name) : 0;
    in[i.name] = random_tensor(i.type, rng, opt, hint);
  }
  return in;
}

}  // namespace stax::sem
