#include "semantics/ir.h"

#include "semantics/index_eval.h"
#include "semantics/ir_visit.h"

#include "semantics/rand_bits.h"
#include "semantics/views.h"

#include <algorithm>
#include <cfenv>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace stax::sem {

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool too_many_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d > 0 && n > kMaxElements / d) return true;
    n *= std::max<int64_t>(d, 1);
  }
  return false;
}

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) t += ", ";
    t += std::to_string(s[i]);
  }
  return t + "]";
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

std::string type_str(const TensorType& t) {
  std::string s(dtype_name(t.dtype));
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

// ---------------------------------------------------------------- constants

Const Const::f32(float v) { return {DType::F32, std::bit_cast<uint32_t>(v)}; }
Const Const::f64(double v) { return {DType::F64, std::bit_cast<uint64_t>(v)}; }
Const Const::i64(int64_t v, DType t) {
  if (t == DType::I32) v = int64_t(int32_t(uint32_t(uint64_t(v))));
  return {t, uint64_t(v)};
}
Const Const::boolean(bool v) { return {DType::Bool, v ? 1u : 0u}; }

double Const::as_double() const {
  switch (dtype) {
    case DType::F32: return std::bit_cast<float>(uint32_t(bits));
    case DType::F64: return std::bit_cast<double>(bits);
    case DType::F16: return f16_bits_to_f32(uint16_t(bits));
    case DType::BF16: return bf16_bits_to_f32(uint16_t(bits));
    case DType::I32:
    case DType::I64: return double(int64_t(bits));
    case DType::Bool: return bits ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Const::as_int() const {
  if (is_float(dtype)) return int64_t(as_double());
  return int64_t(bits);
}

namespace {

// Decimal -> f64 rounded to odd: read toward zero and upward; when they differ
// the value is inexact and the odd neighbour is the round-to-odd result. Used
// so that a second rounding to f16/bf16 is correct (no double rounding).
double strtod_round_odd(const std::string& s) {
  int old = std::fegetround();
  // Downward and upward (not toward zero, which is upward for a negative
  // literal): the two neighbours of an inexact value; the odd one is the result.
  std::fesetround(FE_DOWNWARD);
  double lo = std::strtod(s.c_str(), nullptr);
  std::fesetround(FE_UPWARD);
  double hi = std::strtod(s.c_str(), nullptr);
  std::fesetround(old);
  if (lo == hi) return lo;
  uint64_t bl = std::bit_cast<uint64_t>(lo);
  return (bl & 1) ? lo : hi;
}

bool is_number_text(std::string_view t) {
  if (t.empty()) return false;
  size_t i = (t[0] == '-' || t[0] == '+') ? 1 : 0;
  return i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.');
}

}  // namespace

std::variant<Const, std::string> const_from_literal(std::string_view text, DType t) {
  std::string s(text);
  if (t == DType::Bool) {
    if (s == "true") return Const::boolean(true);
    if (s == "false") return Const::boolean(false);
    return "expected a bool constant (true or false), got '" + s + "'";
  }
  if (s == "true" || s == "false")
    return "a bool constant '" + s + "' cannot have dtype " + std::string(dtype_name(t));
  if (is_int(t)) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      return "expected an integer constant for dtype " + std::string(dtype_name(t)) + ", got '" + s + "'";
    if (t == DType::I32 && (v < INT32_MIN || v > INT32_MAX))
      return "integer constant " + s + " does not fit in i32";
    return Const::i64(v, t);
  }
  // Floats.
  std::string body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    neg = body[0] == '-';
    body = body.substr(1);
  }
  double special = 0;
  bool is_special = false;
  if (body == "nan") special = std::numeric_limits<double>::quiet_NaN(), is_special = true;
  if (body == "inf") special = std::numeric_limits<double>::infinity(), is_special = true;
  if (!is_special && !is_number_text(body)) return "expected a numeric constant, got '" + s + "'";
  if (!is_special) {
    char* end = nullptr;
    (void)std::strtod(body.c_str(), &end);
    if (end != body.c_str() + body.size()) return "malformed numeric constant '" + s + "'";
  }
  if (is_special) {
    double v = neg ? -special : special;
    switch (t) {
      case DType::F32: return Const::f32(float(v));
      case DType::F64: return Const::f64(v);
      case DType::F16: return Const{t, f64_to_f16_bits(v)};
      case DType::BF16: return Const{t, f64_to_bf16_bits(v)};
      default: break;
    }
  }
  switch (t) {
    case DType::F32: return Const::f32(std::strtof(s.c_str(), nullptr));
    case DType::F64: return Const::f64(std::strtod(s.c_str(), nullptr));
    case DType::F16: return Const{t, f64_to_f16_bits(strtod_round_odd(s))};
    case DType::BF16: return Const{t, f64_to_bf16_bits(strtod_round_odd(s))};
    default: break;
  }
  return "bad constant";
}

std::string const_to_string(const Const& c) {
  auto fmt_float = [](double v, bool single) -> std::string {
    if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    auto r = single ? std::to_chars(buf, buf + sizeof buf, float(v)) : std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, r.ptr);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  };
  // Half types: the shortest text that reads back to the same bits, from the
  // fewest significant digits (f16 0.1 prints as 0.1, not as its f32 value
  // 0.099975586); the f32 text always reads back and is the fallback.
  auto fmt_half = [&](const Const& h) -> std::string {
    double v = h.as_double();
    std::string best = fmt_float(v, true);
    if (std::isnan(v) || std::isinf(v)) return best;
    auto reads_back = [&](const std::string& s) {
      auto r = const_from_literal(s, h.dtype);
      return std::holds_alternative<Const>(r) && std::get<Const>(r) == h;
    };
    for (int p = 1; p < 9; ++p) {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, p);
      std::string s(buf, r.ptr);
      if (!reads_back(s)) continue;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      std::string plain = fmt_float(std::strtod(s.c_str(), nullptr), false);  // 65500.0, not 6.55e+04
      if (reads_back(plain) && plain.size() <= s.size()) s = plain;
      return s.size() <= best.size() ? s : best;
    }
    return best;
  };
  switch (c.dtype) {
    case DType::F64: return fmt_float(c.as_double(), false);
    case DType::F32: return fmt_float(c.as_double(), true);
    case DType::F16:
    case DType::BF16: return fmt_half(c);
    case DType::I32:
    case DType::I64: return std::to_string(int64_t(c.bits));
    case DType::Bool: return c.bits ? "true" : "false";
  }
  return "?";
}

// ------------------------------------------------------------------ lambdas

bool Lambda::may_fail() const {
  for (const Instr& in : code)
    if (in.kind == Instr::Kind::Op && op_may_fail(in.op, in.type)) return true;
  return false;
}

// ---------------------------------------------------------------- index maps

namespace {
IExpr mk(IExprNode::Kind k, int64_t v, std::vector<IExpr> args, std::string name = {}) {
  auto n = std::make_shared<IExprNode>();
  n->kind = k;
  n->value = v;
  n->args = std::move(args);
  n->name = std::move(name);
  return n;
}
void hash_mix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }
}  // namespace

IExpr iconst(int64_t v) { return mk(IExprNode::Kind::Const, v, {}); }
IExpr ivar(int index) { return mk(IExprNode::Kind::Var, index, {}); }
IExpr iadd(IExpr a, IExpr b) { return mk(IExprNode::Kind::Add, 0, {std::move(a), std::move(b)}); }
IExpr isub(IExpr a, IExpr b) { return mk(IExprNode::Kind::Sub, 0, {std::move(a), std::move(b)}); }
IExpr imul(int64_t c, IExpr a) { return mk(IExprNode::Kind::Mul, c, {std::move(a)}); }
IExpr ifloordiv(IExpr a, int64_t c) { return mk(IExprNode::Kind::FloorDiv, c, {std::move(a)}); }
IExpr imod(IExpr a, int64_t c) { return mk(IExprNode::Kind::Mod, c, {std::move(a)}); }
IExpr iload(std::string name, std::vector<IExpr> args) {
  return mk(IExprNode::Kind::Load, 0, std::move(args), std::move(name));
}

bool iexpr_equal(const IExpr& a, const IExpr& b) {
  if (a.get() == b.get()) return true;
  if (a->kind != b->kind || a->value != b->value || a->name != b->name || a->args.size() != b->args.size())
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!iexpr_equal(a->args[i], b->args[i])) return false;
  return true;
}

size_t iexpr_hash(const IExpr& e) {
  size_t h = size_t(e->kind) * 1315423911u;
  hash_mix(h, std::hash<int64_t>{}(e->value));
  if (!e->name.empty()) hash_mix(h, std::hash<std::string>{}(e->name));
  for (const IExpr& a : e->args) hash_mix(h, iexpr_hash(a));
  return h;
}

bool iexpr_has_load(const IExpr& e) {
  return any_inode(e, [](const IExprNode& n) { return n.kind == IExprNode::Kind::Load; });
}

bool IndexMap::operator==(const IndexMap& o) const {
  if (vars.size() != o.vars.size() || exprs.size() != o.exprs.size()) return false;
  for (size_t i = 0; i < exprs.size(); ++i)
    if (!iexpr_equal(exprs[i], o.exprs[i])) return false;
  return true;
}

namespace {

/// The affine domain of the index evaluator (index_eval.h): coefficients per
/// variable and a constant, or nothing for floor division, modulo, loads and
/// coefficients that overflow int64 (no UB).
struct AffineDomain {
  struct Row {
    std::vector<int64_t> coef;
    int64_t c = 0;
  };
  using Value = std::optional<Row>;
  size_t rank;

  Value constant(const IExprNode&, int64_t v) { return Row{std::vector<int64_t>(rank, 0), v}; }
  Value var(const IExprNode&, int64_t k) {
    if (k < 0 || size_t(k) >= rank) return std::nullopt;
    Row r{std::vector<int64_t>(rank, 0), 0};
    r.coef[size_t(k)] = 1;
    return r;
  }
  Value add(const IExprNode&, Value a, const Value& b) { return combine(std::move(a), b, 1); }
  Value sub(const IExprNode&, Value a, const Value& b) { return combine(std::move(a), b, -1); }
  Value mul(const IExprNode&, int64_t k, Value a) {
    if (!a) return a;
    for (int64_t& x : a->coef)
      if (__builtin_mul_overflow(x, k, &x)) return std::nullopt;
    if (__builtin_mul_overflow(a->c, k, &a->c)) return std::nullopt;
    return a;
  }
  Value floordiv(const IExprNode&, const Value&, int64_t) { return std::nullopt; }
  Value mod(const IExprNode&, const Value&, int64_t) { return std::nullopt; }
  template <class F>
  Value load(const IExprNode&, F&&) {
    return std::nullopt;
  }
  static Value combine(Value a, const Value& b, int64_t sign) {
    if (!a || !b) return std::nullopt;
    for (size_t k = 0; k < a->coef.size(); ++k) {
      int64_t t = 0;
      if (__builtin_mul_overflow(b->coef[k], sign, &t) || __builtin_add_overflow(a->coef[k], t, &a->coef[k]))
        return std::nullopt;
    }
    int64_t t = 0;
    if (__builtin_mul_overflow(b->c, sign, &t) || __builtin_add_overflow(a->c, t, &a->c)) return std::nullopt;
    return a;
  }
};

}  // namespace

std::optional<Affine> as_affine(const IndexMap& m, int result_rank) {
  Affine af;
  for (const IExpr& e : m.exprs) {
    AffineDomain dom{size_t(std::max(result_rank, 0))};
    AffineDomain::Value row = eval_iexpr(e, dom);
    if (!row) return std::nullopt;
    af.a.push_back(std::move(row->coef));
    af.c.push_back(row->c);
  }
  return af;
}

// ---------------------------------------------------------------- reductions

std::string_view red_name(RedOp op) {
  switch (op) {
    case RedOp::Sum: return "sum";
    case RedOp::Prod: return "prod";
    case RedOp::Max: return "max";
    case RedOp::Min: return "min";
    case RedOp::ArgMax: return "argmax";
    case RedOp::ArgMin: return "argmin";
  }
  return "?";
}

std::optional<RedOp> red_from_name(std::string_view s) {
  for (RedOp op : {RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min, RedOp::ArgMax, RedOp::ArgMin})
    if (red_name(op) == s) return op;
  return std::nullopt;
}

// ------------------------------------------------------------- expressions

namespace {
size_t hash_lambda(const Lambda& f) {
  size_t h = 77;
  for (DType t : f.param_types) hash_mix(h, size_t(t));
  for (const Instr& in : f.code) {
    hash_mix(h, size_t(in.kind) | size_t(in.op) << 8 | size_t(in.type) << 16);
    hash_mix(h, size_t(in.a) ^ (size_t(in.b) << 20) ^ (size_t(in.c) << 40));
    hash_mix(h, in.value.bits);
  }
  return h;
}
size_t hash_shape(const Shape& s) {
  size_t h = s.size();
  for (int64_t d : s) hash_mix(h, size_t(d));
  return h;
}
}  // namespace

Expr make_expr(TensorType type, ExprPayload p, SourceLoc loc) {
  auto n = std::make_shared<ExprNode>();
  n->type = std::move(type);
  n->p = std::move(p);
  n->loc = loc;
  size_t h = n->p.index() * 0x51ed27u;
  hash_mix(h, size_t(n->type.dtype));
  hash_mix(h, hash_shape(n->type.shape));
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, NameE>) {
          hash_mix(h, std::hash<std::string>{}(x.name));
        } else if constexpr (std::is_same_v<T, MapE>) {
          hash_mix(h, hash_lambda(x.fn));
          for (const Expr& a : x.args) hash_mix(h, a->hash);
        } else if constexpr (std::is_same_v<T, ViewE>) {
          hash_mix(h, x.src->hash);
          for (const IExpr& e : x.map.exprs) hash_mix(h, iexpr_hash(e));
        } else if constexpr (std::is_same_v<T, RedE>) {
          hash_mix(h, size_t(x.op));
          hash_mix(h, x.init.bits);
          hash_mix(h, hash_shape(x.extents));
          hash_mix(h, x.src->hash);
        } else if constexpr (std::is_same_v<T, IotaE>) {
          hash_mix(h, size_t(x.dim));
        } else if constexpr (std::is_same_v<T, RandE>) {
          hash_mix(h, size_t(x.key));
        } else if constexpr (std::is_same_v<T, FullE>) {
          hash_mix(h, x.value.bits);
        } else if constexpr (std::is_same_v<T, LetE>) {
          hash_mix(h, std::hash<std::string>{}(x.name));
          hash_mix(h, x.value->hash);
          hash_mix(h, x.body->hash);
        }
      },
      n->p);
  n->hash = h;
  return n;
}

bool expr_equal(const Expr& a, const Expr& b) {
  if (a.get() == b.get()) return true;
  if (a->hash != b->hash || a->p.index() != b->p.index() || !(a->type == b->type)) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b->p);
        if constexpr (std::is_same_v<T, NameE>) {
          return x.name == y.name;
        } else if constexpr (std::is_same_v<T, MapE>) {
          if (!(x.fn == y.fn) || x.args.size() != y.args.size()) return false;
          for (size_t i = 0; i < x.args.size(); ++i)
            if (!expr_equal(x.args[i], y.args[i])) return false;
          return true;
        } else if constexpr (std::is_same_v<T, ViewE>) {
          return x.map == y.map && expr_equal(x.src, y.src);
        } else if constexpr (std::is_same_v<T, RedE>) {
          return x.op == y.op && x.init == y.init && x.extents == y.extents && expr_equal(x.src, y.src);
        } else if constexpr (std::is_same_v<T, IotaE>) {
          return x.dim == y.dim;
        } else if constexpr (std::is_same_v<T, RandE>) {
          return x.key == y.key;
        } else if constexpr (std::is_same_v<T, FullE>) {
          return x.value == y.value;
        } else {
          return x.name == y.name && expr_equal(x.value, y.value) && expr_equal(x.body, y.body);
        }
      },
      a->p);
}

void collect_free_names(const Expr& e, std::vector<std::string>& out) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, NameE>) {
          out.push_back(x.name);
        } else if constexpr (std::is_same_v<T, MapE>) {
          for (const Expr& a : x.args) collect_free_names(a, out);
        } else if constexpr (std::is_same_v<T, ViewE>) {
          collect_free_names(x.src, out);
          for (const IExpr& ie : x.map.exprs)
            for_each_inode(ie, [&](const IExprNode& n) {
              if (n.kind == IExprNode::Kind::Load) out.push_back(n.name);
            });
        } else if constexpr (std::is_same_v<T, RedE>) {
          collect_free_names(x.src, out);
        } else if constexpr (std::is_same_v<T, LetE>) {
          collect_free_names(x.value, out);
          std::vector<std::string> inner;
          collect_free_names(x.body, inner);
          for (auto& n : inner)
            if (n != x.name) out.push_back(n);
        }
      },
      e->p);
}

bool expr_may_fail(const Expr& e) {
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, MapE>) {
          if (x.fn.may_fail()) return true;
          for (const Expr& a : x.args)
            if (expr_may_fail(a)) return true;
          return false;
        } else if constexpr (std::is_same_v<T, ViewE>) {
          if (!view_statically_in_bounds(x.src->type.shape, e->type.shape, x.map)) return true;
          return expr_may_fail(x.src);
        } else if constexpr (std::is_same_v<T, RedE>) {
          return expr_may_fail(x.src);
        } else if constexpr (std::is_same_v<T, LetE>) {
          return expr_may_fail(x.value) || expr_may_fail(x.body);
        } else {
          return false;
        }
      },
      e->p);
}

int64_t type_bytes(const TensorType& t) { return num_elements(t.shape) * dtype_bytes(t.dtype); }

double rand_value(uint64_t key, int64_t flat) { return double(rand_bits24(key, flat)) * 0x1.0p-24; }

const TensorType* Program::type_of(const std::string& name) const {
  for (const Input& in : inputs)
    if (in.name == name) return &in.type;
  for (const Binding& b : bindings)
    if (b.name == name) return &b.expr->type;
  return nullptr;
}

}  // namespace stax::sem
