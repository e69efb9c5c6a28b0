// Dtypes, constants and scalar lambdas of the random program generator
// (docs/design.md §2, §6): well-typed lambda bodies over every scalar op, with the
// shapes compilers rewrite (a product added to a value, log(exp(x))) and
// integer divisors that are never zero unless the program is meant to fail.
#include <cstdio>

#include "oracle/gen/internal.h"
#include "semantics/scalar_op.h"

namespace stax::oracle::generator {

DType Gen::pick_float() {
  double h = o_.allow_half ? 1.2 : 0.0;
  switch (weighted({6.0, 1.5, h, h})) {
    case 0: return DType::F32;
    case 1: return DType::F64;
    case 2: return DType::F16;
    default: return DType::BF16;
  }
}

/// Any dtype a value may have.
DType Gen::pick_dtype() {
  switch (weighted({0.72, o_.allow_int ? 0.15 : 0.0, 0.13})) {
    case 0: return pick_float();
    case 1: return pick_int();
    default: return DType::Bool;
  }
}

std::string Gen::float_const() {
  static const char* k[] = {"0.0",   "-0.0",   "1.0",  "-1.0",     "0.5",    "2.0",     "-2.0",
                            "3.0",   "0.25",   "1e-3", "-1e-3",    "1e-7",   "1e30",    "-1e30",
                            "65504.0", "3.4e38", "1e300", "0.7071067811865476", "3.140625", "0x1.8p+3",
                            "-0x1.4p-2", "100", "inf", "-inf", "5e-324", "1e-40", "nan"};
  if (coin(0.25)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", double(uni(-4000, 4000)) / 64.0);
    return buf;
  }
  return pick(k);
}

std::string Gen::int_const(DType t, bool nonzero) {
  static const char* small[] = {"1", "2", "3", "-1", "7", "-5", "100", "-3"};
  if (nonzero) return pick(small);
  switch (weighted({4, 1, 0.4, t == DType::I64 ? 0.3 : 0.0})) {
    case 0: return coin(0.3) ? "0" : pick(small);
    case 1: return std::to_string(uni(-1000, 1000));
    case 2: return coin(0.5) ? "2147483647" : "-2147483648";
    default: return coin(0.5) ? "9223372036854775807" : "-9223372036854775808";
  }
}

std::string Gen::const_for(DType t, bool nonzero) {
  if (t == DType::Bool) return coin(0.5) ? "true" : "false";
  if (sem::is_int(t)) return int_const(t, nonzero);
  return float_const();
}

std::string Gen::red_init(RedOp op, DType t) {
  if (sem::is_int(t)) {
    bool i32 = t == DType::I32;
    std::string lo = i32 ? "-2147483648" : "-9223372036854775808";
    std::string hi = i32 ? "2147483647" : "9223372036854775807";
    if (coin(0.25)) return int_const(t);
    switch (op) {
      case RedOp::Sum: return "0";
      case RedOp::Prod: return "1";
      case RedOp::Max:
      case RedOp::ArgMax: return coin(0.7) ? lo : "-100";
      default: return coin(0.7) ? hi : "100";
    }
  }
  if (coin(0.25)) {
    static const char* k[] = {"0.0", "-0.0", "-inf", "inf", "1.0", "2.0", "-1.5", "0.5", "nan", "1e30"};
    return pick(k);
  }
  switch (op) {
    case RedOp::Sum: return coin(0.6) ? "0.0" : "-0.0";
    case RedOp::Prod: return "1.0";
    case RedOp::Max:
    case RedOp::ArgMax: return "-inf";
    default: return "inf";
  }
}

std::string Gen::sop(ScalarOp op, std::initializer_list<std::string> args) {
  std::string s = std::string(sem::op_name(op)) + "(";
  size_t i = 0;
  for (const std::string& a : args) s += (i++ ? ", " : "") + a;
  return s + ")";
}

/// A leaf of tag `want`: a parameter, cast if needed.
std::string Gen::s_leaf(const Lam& L, DType want) {
  std::vector<size_t> same;
  for (size_t i = 0; i < L.types.size(); ++i)
    if (L.types[i] == want) same.push_back(i);
  if (!same.empty() && coin(0.85)) return L.names[pick(same)];
  size_t p = pick(L.types.size());
  if (L.types[p] == want) return L.names[p];
  return "cast(" + L.names[p] + ", " + dt_text(want) + ")";
}

/// A typed operand or, sometimes, a constant (the caller guarantees a typed sibling).
std::string Gen::s_or_const(Lam& L, DType want, int depth) {
  return coin(0.35) ? const_for(want) : sx(L, want, depth);
}

/// Binary op with one typed operand and one maybe-constant one, in random order.
std::string Gen::s_bin(Lam& L, ScalarOp op, DType t, int depth) {
  std::string a = sx(L, t, depth), b = s_or_const(L, t, depth);
  if (coin(0.3)) std::swap(a, b);
  return sop(op, {a, b});
}

/// A divisor that is never zero (int), unless the lambda may fail.
std::string Gen::divisor(Lam& L, DType t, int depth) {
  if (!sem::is_int(t) || L.unsafe_div) return s_or_const(L, t, depth);
  switch (weighted({3, 1, 1})) {
    case 0: return int_const(t, true);
    case 1: return sop(ScalarOp::Maximum, {sx(L, t, depth), "1"});
    default: return sop(ScalarOp::Add, {sop(ScalarOp::Abs, {sx(L, t, depth)}), "1"});
  }
}

/// A scalar expression of tag `want` that is never a lone constant.
std::string Gen::sx(Lam& L, DType want, int depth) {
  if (depth <= 0 || coin(0.2)) return s_leaf(L, want);
  int d = depth - 1;
  if (want == DType::Bool) {
    switch (weighted({3, 1.2, 1.5, 0.8, 0.4, 0.5})) {
      case 0: {  // lt/le/gt/ge over numbers
        DType t = operand_type(L, false);
        return s_bin(L, pick(kOrder), t, d);
      }
      case 1: {  // eq/ne over any dtype
        DType t = operand_type(L, true);
        return s_bin(L, coin(0.5) ? ScalarOp::Eq : ScalarOp::Ne, t, d);
      }
      case 2: return s_bin(L, coin(0.5) ? ScalarOp::And : ScalarOp::Or, DType::Bool, d);
      case 3: return sop(ScalarOp::Not, {sx(L, DType::Bool, d)});
      case 4: return select(L, want, d);
      default: {
        DType t = operand_type(L, false);
        return "cast(" + sx(L, t, d) + ", bool)";
      }
    }
  }
  bool flt = sem::is_float(want);
  // Shapes compilers rewrite: a product added to a value (FMA contraction)
  // and log(exp(x)) (a peephole that is wrong for overflow and NaN).
  if (flt && coin(0.12)) {
    if (coin(0.3)) return sop(ScalarOp::Log, {sop(ScalarOp::Exp, {sx(L, want, d)})});
    if (coin(0.5)) {
      // On the operands themselves, so that inputs drawn from one pool
      // (sem::InputKind::Products) meet c = -fl(a*b) and the product's rounding shows.
      std::string a = s_leaf(L, want), b = s_leaf(L, want), c = s_leaf(L, want);
      return sop(coin(0.5) ? ScalarOp::Add : ScalarOp::Sub, {sop(ScalarOp::Mul, {a, b}), c});
    }
    return sop(ScalarOp::Add, {sop(ScalarOp::Mul, {sx(L, want, d), s_or_const(L, want, d)}), s_or_const(L, want, d)});
  }
  switch (weighted({1.2, flt ? 3.5 : 0.0, 4, 1.2, flt ? 0.4 : 0.0, 0.5, 0.7, 0.7})) {
    case 0: {
      ScalarOp op = pick(kUnaryNum);
      return sop(op, {sx(L, want, d)});
    }
    case 1: {
      ScalarOp op = pick(kUnaryFlt);
      return sop(op, {sx(L, want, d)});
    }
    case 2: return s_bin(L, pick(kBinNum), want, d);
    case 3: {
      ScalarOp op = pick(kDivOps);
      return sop(op, {sx(L, want, d), divisor(L, want, d)});
    }
    case 4: return s_bin(L, ScalarOp::Pow, want, d);
    case 5: {
      std::string a = sx(L, want, d), b = s_or_const(L, want, d), c = s_or_const(L, want, d);
      int rot = int(pick(3));
      if (rot == 1) std::swap(a, b);
      if (rot == 2) std::swap(a, c);
      return sop(ScalarOp::Fma, {a, b, c});
    }
    case 6: return select(L, want, d);
    default: {
      DType t = pick_dtype();
      if (t == want) t = coin(0.5) ? DType::Bool : (want == DType::F64 ? DType::F32 : DType::F64);
      return "cast(" + sx(L, t, d) + ", " + dt_text(want) + ")";
    }
  }
}

std::string Gen::select(Lam& L, DType want, int d) {
  std::string a = sx(L, want, d), b = s_or_const(L, want, d);
  if (coin(0.3)) std::swap(a, b);
  return sop(ScalarOp::Select, {sx(L, DType::Bool, d), a, b});
}

/// Operand dtype for a comparison: mostly a parameter's, so fewer casts.
DType Gen::operand_type(const Lam& L, bool any) {
  if (coin(0.7)) {
    DType t = L.types[pick(L.types.size())];
    if (any || t != DType::Bool) return t;
  }
  return any && coin(0.2) ? DType::Bool : pick_num();
}

/// A lambda over operands of dtypes P whose result has tag `want`.
std::string Gen::lambda(const std::vector<DType>& P, DType want, bool unsafe_div) {
  if (coin(0.25)) {
    std::vector<ScalarOp> ops;
    for (int i = 0; i < kNumOps; ++i) {
      auto op = ScalarOp(i);
      if (sem::op_arity(op) != int(P.size())) continue;
      auto ty = sem::type_op(op, P);
      if (!ty.result || *ty.result != want) continue;
      if (is_div(op) && sem::is_int(want) && !unsafe_div) continue;
      ops.push_back(op);
    }
    if (!ops.empty()) return std::string(sem::op_name(pick(ops)));
  }
  static const char* sets[][3] = {{"a", "b", "c"}, {"x", "y", "z"}, {"p", "q", "r"}, {"u", "v", "w"}};
  const auto& set = sets[pick(4)];
  Lam L;
  L.types = P;
  L.unsafe_div = unsafe_div;
  std::string s = "fn(";
  for (size_t i = 0; i < P.size(); ++i) {
    L.names.push_back(i < 3 ? set[i] : "a" + std::to_string(i));
    s += (i ? ", " : "") + L.names.back();
  }
  return s + ") => " + sx(L, want, int(uni(1, o_.max_lambda_depth)));
}

}  // namespace stax::oracle::generator
