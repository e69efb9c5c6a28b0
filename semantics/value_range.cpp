#include "semantics/value_range.h"

#include <algorithm>
#include <limits>

#include "semantics/interval.h"
#include "semantics/lambda_eval.h"

namespace stax::sem {

namespace {

/// A value range: nullopt when nothing tighter than the dtype is known.
using Range = std::optional<Interval>;

I128 type_min(DType t) {
  switch (t) {
    case DType::I32: return std::numeric_limits<int32_t>::min();
    case DType::Bool: return 0;
    default: return std::numeric_limits<int64_t>::min();
  }
}
I128 type_max(DType t) {
  switch (t) {
    case DType::I32: return std::numeric_limits<int32_t>::max();
    case DType::Bool: return 1;
    default: return std::numeric_limits<int64_t>::max();
  }
}

/// Integer results wrap: a range that leaves the dtype becomes the full range.
Range fit(Range r, DType t) {
  if (!is_int(t) && !is_bool(t)) return {};
  if (!r || r->lo < type_min(t) || r->hi > type_max(t)) return Interval{type_min(t), type_max(t)};
  return r;
}
Range full(DType t) { return fit({}, t); }

/// The Interval domain over scalar lambdas (lambda_eval.h): integer ops only;
/// anything else is the full range of its result dtype.
struct IntervalDomain {
  using Value = Range;
  Value param(size_t, size_t, const Value& a) { return a; }
  Value constant(size_t, const Const& c, DType tag) {
    if (is_int(c.dtype) || is_bool(c.dtype)) return fit(Interval{c.as_int(), c.as_int()}, tag);
    return full(tag);
  }
  Value cast(size_t, const Value& v, DType, DType to) { return fit(v, to); }
  Value apply(size_t, ScalarOp op, DType tag, DType operand_tag, std::span<const Value> args) {
    if (!is_int(tag) || !is_int(operand_tag)) return full(tag);
    for (const Value& a : args)
      if (!a) return full(tag);
    const Interval& a = *args[0];
    auto b = [&]() -> const Interval& { return *args[1]; };
    switch (op) {
      case ScalarOp::Add: return fit(a + b(), tag);
      case ScalarOp::Sub: return fit(a - b(), tag);
      case ScalarOp::Mul: return fit(a * b(), tag);
      case ScalarOp::Fma: return fit(a * b() + *args[2], tag);
      case ScalarOp::Neg: return fit(Interval{-a.hi, -a.lo}, tag);
      case ScalarOp::Abs:
        if (a.lo >= 0) return a;
        if (a.hi <= 0) return fit(Interval{-a.hi, -a.lo}, tag);
        return fit(Interval{0, std::max(-a.lo, a.hi)}, tag);
      case ScalarOp::Relu: return Interval{std::max<I128>(a.lo, 0), std::max<I128>(a.hi, 0)};
      case ScalarOp::Maximum: return Interval{std::max(a.lo, b().lo), std::max(a.hi, b().hi)};
      case ScalarOp::Minimum: return Interval{std::min(a.lo, b().lo), std::min(a.hi, b().hi)};
      case ScalarOp::Mod:  // Python's modulo: the sign of the divisor
        if (b().lo > 0) return (a.lo >= 0 && a.hi < b().lo) ? a : Interval{0, b().hi - 1};
        if (b().hi < 0) return (a.hi <= 0 && a.lo > b().hi) ? a : Interval{b().lo + 1, 0};
        return full(tag);  // the divisor may be 0: ⊥ there
      case ScalarOp::FloorDiv:
        if (b().lo > 0 || b().hi < 0) return fit(corners(a, b(), floordiv128), tag);
        return full(tag);
      case ScalarOp::Div:  // truncating: monotone in each operand when b keeps its sign
        if (b().lo > 0 || b().hi < 0) return fit(corners(a, b(), [](I128 x, I128 y) { return x / y; }), tag);
        return full(tag);
      case ScalarOp::Select:
        return Interval{std::min(args[1]->lo, args[2]->lo), std::max(args[1]->hi, args[2]->hi)};
      default: return full(tag);
    }
  }
};

struct Analysis {
  std::map<std::string, Range> env;
  std::map<std::string, std::string> why;

  Range range(const Expr& e) {
    DType t = e->type.dtype;
    if (!is_int(t) && !is_bool(t)) return {};
    return std::visit(
        [&](const auto& x) -> Range {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, NameE>) {
            auto it = env.find(x.name);
            return it == env.end() ? full(t) : it->second;
          } else if constexpr (std::is_same_v<T, ViewE>) {
            return range(x.src);  // a view moves values, it makes none
          } else if constexpr (std::is_same_v<T, MapE>) {
            std::vector<Range> args;
            for (const Expr& a : x.args) args.push_back(range(a));
            IntervalDomain d;
            std::vector<Range> regs;
            return fit(eval_lambda(x.fn, d, std::span<const Range>(args), regs), t);
          } else if constexpr (std::is_same_v<T, RedE>) {
            I128 n = 1;
            for (int64_t k : x.extents) n *= k;
            if (red_is_arg(x.op)) return Interval{0, std::max<I128>(n - 1, 0)};
            Range s = range(x.src);
            I128 init = x.init.as_int();
            if (n == 0) return fit(Interval{init, init}, t);
            if (!s) return full(t);
            switch (x.op) {
              case RedOp::Sum: return fit(Interval{init + n * s->lo, init + n * s->hi}, t);
              case RedOp::Max: return Interval{std::max(init, s->lo), std::max(init, s->hi)};
              case RedOp::Min: return Interval{std::min(init, s->lo), std::min(init, s->hi)};
              default: return full(t);
            }
          } else if constexpr (std::is_same_v<T, IotaE>) {
            int64_t n = e->type.shape[size_t(x.dim)];
            return fit(Interval{0, std::max<int64_t>(n - 1, 0)}, t);
          } else if constexpr (std::is_same_v<T, FullE>) {
            return fit(Interval{x.value.as_int(), x.value.as_int()}, t);
          } else if constexpr (std::is_same_v<T, LetE>) {
            Range v = range(x.value);
            auto saved = env.find(x.name) == env.end() ? std::optional<Range>() : std::optional<Range>(env[x.name]);
            env[x.name] = v;
            Range r = range(x.body);
            if (saved) env[x.name] = *saved;
            else env.erase(x.name);
            return r;
          } else {
            return full(t);
          }
        },
        e->p);
  }
};

}  // namespace

ValueRange dtype_range(DType t) {
  Range r = full(is_int(t) || is_bool(t) ? t : DType::I64);
  return {int64_t(r->lo), int64_t(r->hi), true, "any " + std::string(dtype_name(t)) + " value (read from memory)"};
}

std::map<std::string, ValueRange> value_ranges(const Program& p) {
  std::map<std::string, ValueRange> out;
  Analysis a;
  for (const Input& in : p.inputs) {
    out[in.name] = dtype_range(in.type.dtype);
    out[in.name].why = "input " + in.name + " : " + type_str(in.type) + ": any value";
  }
  for (const Binding& b : p.bindings) {
    Range r = a.range(b.expr);
    DType t = b.expr->type.dtype;
    if (!r || (r->lo == type_min(t) && r->hi == type_max(t) && (is_int(t) || is_bool(t)))) {
      out[b.name] = dtype_range(t);
      out[b.name].why = "binding " + b.name + ": no tighter range derived";
      a.env[b.name] = full(t);
      continue;
    }
    a.env[b.name] = r;
    out[b.name] = {int64_t(r->lo), int64_t(r->hi), false, "Interval analysis of binding " + b.name + ": " + interval_text(*r)};
  }
  return out;
}

}  // namespace stax::sem
