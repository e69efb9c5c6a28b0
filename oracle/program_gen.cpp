#include "oracle/program_gen.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <span>
#include <variant>
#include <vector>

#include "semantics/parser.h"
#include "semantics/random_inputs.h"
#include "semantics/scalar_op.h"
#include "semantics/views.h"

namespace stax::oracle {

namespace {

using sem::DType;
using sem::RedOp;
using sem::ScalarOp;
using sem::Shape;
using sem::TensorType;

/// Elements per tensor, intermediate ones included.
constexpr int64_t kMaxElements = 300;
constexpr int kNumOps = int(ScalarOp::Fma) + 1;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string list_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string dt_text(DType t) { return std::string(sem::dtype_name(t)); }
std::string type_text(const TensorType& t) { return dt_text(t.dtype) + list_text(t.shape); }

Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

/// A generated tensor expression and its type (tracked here, checked by the parser).
struct TE {
  std::string text;
  TensorType ty;
};

/// A name in scope: an input, a binding or a let-in local.
struct Sym {
  std::string name;
  TensorType ty;
  bool local = false;
  bool index_input = false;  ///< an int input used for gathers: random_inputs draws it in range
  bool ranged = false;       ///< every value lies in [lo, hi]
  int64_t lo = 0, hi = 0;
  bool risky = false;        ///< an index of unknown range (a gather through it may be ⊥)
};

/// The one construct that may make a program ⊥, chosen per program.
enum class Fail { None, FloorDivInput, LambdaDiv, RiskyGather, OobView };

const ScalarOp kUnaryFlt[] = {ScalarOp::Exp,     ScalarOp::Log,   ScalarOp::Log2, ScalarOp::Log10,
                              ScalarOp::Log1p,   ScalarOp::Expm1, ScalarOp::Tanh, ScalarOp::Sigmoid,
                              ScalarOp::Sqrt,    ScalarOp::Rsqrt, ScalarOp::Erf,  ScalarOp::Sin,
                              ScalarOp::Cos,     ScalarOp::Floor};
const ScalarOp kUnaryNum[] = {ScalarOp::Neg, ScalarOp::Abs, ScalarOp::Relu};
const ScalarOp kBinNum[] = {ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul, ScalarOp::Maximum, ScalarOp::Minimum};
const ScalarOp kDivOps[] = {ScalarOp::Div, ScalarOp::Mod, ScalarOp::FloorDiv};
const ScalarOp kOrder[] = {ScalarOp::Lt, ScalarOp::Le, ScalarOp::Gt, ScalarOp::Ge};

bool is_div(ScalarOp op) { return op == ScalarOp::Div || op == ScalarOp::Mod || op == ScalarOp::FloorDiv; }

class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& o) : rng_(seed * 0x2545f4914f6cdd1dull + 0x6a09e667f3bcc909ull), o_(o) {
    o_.max_bindings = std::max(1, o_.max_bindings);
    o_.max_rank = std::clamp(o_.max_rank, 0, 6);
    o_.max_extent = std::clamp<int64_t>(o_.max_extent, 1, kMaxElements);
    o_.max_lambda_depth = std::max(1, o_.max_lambda_depth);
    max_view_rank_ = o_.max_rank + 1;
    seed_ = seed;
  }

  std::string run() {
    choose_failure();
    make_inputs();
    int nb = int(uni(std::max(1, (o_.max_bindings + 1) / 2), o_.max_bindings));
    int fail_at = fail_ == Fail::None ? -1 : int(uni(0, nb - 1));
    for (int i = 0; i < nb; ++i) {
      if (i == fail_at) {
        failing_binding();
        continue;
      }
      int k = weighted({binds_.empty() ? 0.0 : 0.12, o_.allow_gather ? 0.12 : 0.0, 1.0});
      if (k == 0) duplicate_binding();
      else if (k == 1) index_binding();
      else normal_binding();
    }
    make_outputs();
    std::string s = "# stax::oracle::generate_program_text seed " + std::to_string(seed_) + "\n";
    for (const std::string& l : lines_) s += l + "\n";
    return s;
  }

 private:
  // ---------------------------------------------------------------- random
  bool coin(double p) { return rng_.uniform() < p; }
  /// Uniform in [lo, hi], inclusive.
  int64_t uni(int64_t lo, int64_t hi) { return hi <= lo ? lo : rng_.range(lo, hi + 1); }
  size_t pick(size_t n) { return size_t(rng_.next() % n); }
  template <class T, size_t N>
  const T& pick(const T (&a)[N]) {
    return a[pick(N)];
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[pick(v.size())];
  }
  /// Index of a weighted choice; zero weights are never chosen (at least one must be positive).
  int weighted(std::initializer_list<double> w) {
    double sum = 0;
    for (double x : w) sum += x;
    double r = rng_.uniform() * sum;
    int i = 0, last = 0;
    for (double x : w) {
      if (x > 0) {
        if (r < x) return i;
        r -= x;
        last = i;
      }
      ++i;
    }
    return last;
  }
  std::vector<int64_t> permutation(size_t n) {
    std::vector<int64_t> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = int64_t(i);
    for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[pick(i)]);
    return p;
  }

  // ---------------------------------------------------------------- dtypes, shapes, constants
  DType pick_float() {
    double h = o_.allow_half ? 1.2 : 0.0;
    switch (weighted({6.0, 1.5, h, h})) {
      case 0: return DType::F32;
      case 1: return DType::F64;
      case 2: return DType::F16;
      default: return DType::BF16;
    }
  }
  DType pick_int() { return coin(0.5) ? DType::I32 : DType::I64; }
  /// Any dtype a value may have.
  DType pick_dtype() {
    switch (weighted({0.72, o_.allow_int ? 0.15 : 0.0, 0.13})) {
      case 0: return pick_float();
      case 1: return pick_int();
      default: return DType::Bool;
    }
  }
  /// An int or float dtype.
  DType pick_num() { return (o_.allow_int && coin(0.2)) ? pick_int() : pick_float(); }

  int rand_rank(int lo = 0) {
    int r = weighted({0.08, 0.3, 0.37, 0.25, 0.08});
    return std::clamp(std::max(r, lo), 0, std::max(lo, o_.max_rank));
  }
  void shrink(Shape& s, int64_t cap) {
    while (numel(s) > cap) {
      auto it = std::max_element(s.begin(), s.end());
      *it = std::max<int64_t>(1, *it / 2);
    }
  }
  Shape rand_shape(int rank, int64_t cap = kMaxElements) {
    Shape s;
    for (int i = 0; i < rank; ++i) s.push_back(uni(1, o_.max_extent));
    shrink(s, cap);
    return s;
  }

  std::string float_const() {
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
  std::string int_const(DType t, bool nonzero = false) {
    static const char* small[] = {"1", "2", "3", "-1", "7", "-5", "100", "-3"};
    if (nonzero) return pick(small);
    switch (weighted({4, 1, 0.4, t == DType::I64 ? 0.3 : 0.0})) {
      case 0: return coin(0.3) ? "0" : pick(small);
      case 1: return std::to_string(uni(-1000, 1000));
      case 2: return coin(0.5) ? "2147483647" : "-2147483648";
      default: return coin(0.5) ? "9223372036854775807" : "-9223372036854775808";
    }
  }
  std::string const_for(DType t, bool nonzero = false) {
    if (t == DType::Bool) return coin(0.5) ? "true" : "false";
    if (sem::is_int(t)) return int_const(t, nonzero);
    return float_const();
  }
  std::string red_init(RedOp op, DType t) {
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

  // ---------------------------------------------------------------- scalar lambdas
  struct Lam {
    std::vector<std::string> names;
    std::vector<DType> types;
    bool unsafe_div = false;  ///< int division by an arbitrary value (may be ⊥)
  };

  std::string sop(ScalarOp op, std::initializer_list<std::string> args) {
    std::string s = std::string(sem::op_name(op)) + "(";
    size_t i = 0;
    for (const std::string& a : args) s += (i++ ? ", " : "") + a;
    return s + ")";
  }
  /// A leaf of tag `want`: a parameter, cast if needed.
  std::string s_leaf(const Lam& L, DType want) {
    std::vector<size_t> same;
    for (size_t i = 0; i < L.types.size(); ++i)
      if (L.types[i] == want) same.push_back(i);
    if (!same.empty() && coin(0.85)) return L.names[pick(same)];
    size_t p = pick(L.types.size());
    if (L.types[p] == want) return L.names[p];
    return "cast(" + L.names[p] + ", " + dt_text(want) + ")";
  }
  /// A typed operand or, sometimes, a constant (the caller guarantees a typed sibling).
  std::string s_or_const(Lam& L, DType want, int depth) {
    return coin(0.35) ? const_for(want) : sx(L, want, depth);
  }
  /// Binary op with one typed operand and one maybe-constant one, in random order.
  std::string s_bin(Lam& L, ScalarOp op, DType t, int depth) {
    std::string a = sx(L, t, depth), b = s_or_const(L, t, depth);
    if (coin(0.3)) std::swap(a, b);
    return sop(op, {a, b});
  }
  /// A divisor that is never zero (int), unless the lambda may fail.
  std::string divisor(Lam& L, DType t, int depth) {
    if (!sem::is_int(t) || L.unsafe_div) return s_or_const(L, t, depth);
    switch (weighted({3, 1, 1})) {
      case 0: return int_const(t, true);
      case 1: return sop(ScalarOp::Maximum, {sx(L, t, depth), "1"});
      default: return sop(ScalarOp::Add, {sop(ScalarOp::Abs, {sx(L, t, depth)}), "1"});
    }
  }
  /// A scalar expression of tag `want` that is never a lone constant.
  std::string sx(Lam& L, DType want, int depth) {
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
    if (flt && coin(0.06)) {
      if (coin(0.5)) return sop(ScalarOp::Log, {sop(ScalarOp::Exp, {sx(L, want, d)})});
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
  std::string select(Lam& L, DType want, int d) {
    std::string a = sx(L, want, d), b = s_or_const(L, want, d);
    if (coin(0.3)) std::swap(a, b);
    return sop(ScalarOp::Select, {sx(L, DType::Bool, d), a, b});
  }
  /// Operand dtype for a comparison: mostly a parameter's, so fewer casts.
  DType operand_type(const Lam& L, bool any) {
    if (coin(0.7)) {
      DType t = L.types[pick(L.types.size())];
      if (any || t != DType::Bool) return t;
    }
    return any && coin(0.2) ? DType::Bool : pick_num();
  }
  /// A lambda over operands of dtypes P whose result has tag `want`.
  std::string lambda(const std::vector<DType>& P, DType want, bool unsafe_div = false) {
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

  // ---------------------------------------------------------------- views
  std::vector<std::string> var_names(size_t n) {
    static const char* letters[] = {"i", "j", "k", "l", "m", "n"};
    int style = int(pick(3));
    std::vector<std::string> v;
    for (size_t i = 0; i < n; ++i) {
      if (style == 0 && n <= 6) v.push_back(letters[i]);
      else v.push_back((style == 2 ? "d" : "i") + std::to_string(i));
    }
    return v;
  }
  /// Whether an index tensor may be gathered into an extent s without ⊥.
  bool index_ok(const Sym& x, int64_t s) const {
    if (!sem::is_int(x.ty.dtype) || s <= 0) return false;
    if (x.index_input) return true;
    if (x.ranged) return x.lo >= -s && x.hi <= s - 1;
    return x.risky && fail_ == Fail::RiskyGather;
  }
  std::vector<const Sym*> index_syms(int64_t s, size_t max_rank) const {
    std::vector<const Sym*> v;
    for (const Sym& x : syms_)
      if (x.ty.shape.size() >= 1 && x.ty.shape.size() <= max_rank && numel(x.ty.shape) > 0 && index_ok(x, s))
        v.push_back(&x);
    return v;
  }

  /// One component of an index map into an extent s, over result dims S; in
  /// range unless `oob`.
  std::string component(int64_t s, const Shape& S, const std::vector<std::string>& v, bool oob) {
    size_t q = S.size();
    if (s <= 0) return "0";  // only for an empty view: never evaluated
    if (oob && q > 0) {
      size_t m = pick(q);
      int64_t off = S[m] <= s ? s - S[m] + 1 : 0;
      return off ? v[m] + " + " + std::to_string(off) : v[m];
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
      int k = weighted({0.6, q ? 3.0 : 0.0, q ? 1.0 : 0.0, q ? 0.8 : 0.0, q > 1 ? 0.8 : 0.0, q ? 1.5 : 0.0,
                        q ? 1.0 : 0.0, q > 1 ? 0.7 : 0.0, o_.allow_gather ? 0.8 : 0.0,
                        q && o_.allow_wide_index ? 0.5 : 0.0});
      size_t m = q ? pick(q) : 0, n = q ? pick(q) : 0;
      switch (k) {
        case 0: return std::to_string(uni(0, s - 1));
        case 1:
          if (S[m] <= s) {
            int64_t off = coin(0.6) ? 0 : uni(0, s - S[m]);
            return off ? v[m] + " + " + std::to_string(off) : v[m];
          }
          break;
        case 2: {
          int64_t a = uni(2, 3);
          if (a * (S[m] - 1) <= s - 1) {
            int64_t off = uni(0, s - 1 - a * (S[m] - 1));
            std::string t = coin(0.5) ? std::to_string(a) + "*" + v[m] : v[m] + "*" + std::to_string(a);
            return off ? t + " + " + std::to_string(off) : t;
          }
          break;
        }
        case 3:
          if (S[m] <= s) return std::to_string(uni(S[m] - 1, s - 1)) + " - " + v[m];
          break;
        case 4:
          if (m != n && (S[m] - 1) + (S[n] - 1) <= s - 1) return v[m] + " + " + v[n];
          break;
        case 5:
          switch (pick(3)) {
            case 0: return v[m] + " % " + std::to_string(s);
            case 1: return "(" + v[m] + " - " + v[n] + ") % " + std::to_string(s);
            default: {
              int64_t a = uni(1, 3), b = uni(1, 3), c = uni(0, 5);
              return "(" + std::to_string(a) + "*" + v[m] + " + " + std::to_string(b) + "*" + v[n] + " + " +
                     std::to_string(c) + ") % " + std::to_string(s);
            }
          }
        case 6: {
          int64_t dv = uni(2, 4), off = uni(0, 2);
          if ((S[m] - 1 + off) / dv <= s - 1)
            return off ? "(" + v[m] + " + " + std::to_string(off) + ") // " + std::to_string(dv)
                       : v[m] + " // " + std::to_string(dv);
          break;
        }
        case 7:
          if (m != n)
            return "(" + std::to_string(S[n]) + "*" + v[m] + " + " + v[n] + ") // " + std::to_string(uni(2, 3)) +
                   " % " + std::to_string(s);
          break;
        case 9: {
          // Intermediates beyond 2^31 (a 32-bit address computation wraps):
          // (i*65537*65537 + c) % s, or a coefficient of 2^31 - 1.
          int64_t c = uni(0, 3);
          std::string t = coin(0.5) ? v[m] + "*65537*65537" : "2147483647*" + v[m];
          if (m != n && coin(0.5)) t += " + " + v[n];
          return "(" + t + (c ? " + " + std::to_string(c) : "") + ") % " + std::to_string(s);
        }
        default: {
          auto ix = index_syms(s, 2);
          if (ix.empty()) break;
          const Sym& I = *pick(ix);
          std::string t = "load(" + I.name;
          for (int64_t nk : I.ty.shape) {
            size_t mm = q ? pick(q) : 0;
            if (q && S[mm] <= nk && coin(0.7)) t += ", " + v[mm];
            else if (q && coin(0.7)) t += ", " + v[mm] + " % " + std::to_string(nk);
            else t += ", " + std::to_string(uni(0, nk - 1));
          }
          return t + ")";
        }
      }
    }
    return q ? v[pick(q)] + " % " + std::to_string(s) : "0";
  }
  /// view(e, S, (vars) -> (...)): an affine or floor/mod map, in bounds unless `oob`.
  TE general_view(const TE& e, const Shape& S, bool oob = false) {
    auto v = var_names(S.size());
    const Shape& src = e.ty.shape;
    size_t bad = oob ? pick(src.size()) : src.size();
    std::string t = "view(" + e.text + ", " + list_text(S) + ", (";
    for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + v[i];
    t += ") -> (";
    for (size_t j = 0; j < src.size(); ++j) t += (j ? ", " : "") + component(src[j], S, v, j == bad);
    return {t + "))", {e.ty.dtype, S}};
  }

  /// A random view of e (one sugar form or a general map); e itself if none applies.
  TE apply_view(const TE& e) {
    const Shape& s = e.ty.shape;
    int r = int(s.size());
    int64_t n = numel(s);
    bool has1 = std::find(s.begin(), s.end(), 1) != s.end();
    bool room = r < max_view_rank_;
    for (int attempt = 0; attempt < 6; ++attempt) {
      int k = weighted({r >= 2 ? 2.0 : 0.0, r >= 1 ? 2.0 : 0.0, 1.5, n > 0 ? 1.5 : 0.0, room ? 1.0 : 0.0,
                        has1 ? 1.5 : 0.0, o_.allow_gather && r >= 1 ? 1.5 : 0.0, n > 0 ? 1.5 : 0.0});
      std::string out;
      sem::ViewResult vr = std::string("none");
      switch (k) {
        case 0: {
          auto p = permutation(s.size());
          out = "permute(" + e.text + ", " + list_text(p) + ")";
          vr = sem::expand_permute(s, p);
          break;
        }
        case 1: {
          int64_t d = int64_t(pick(s.size()));
          int64_t ext = s[size_t(d)];
          int64_t step = weighted({5, 3, 2}) + 1;
          int64_t start = ext > 0 ? uni(0, ext - 1) : 0;
          int64_t len = std::max<int64_t>(1, uni(1, (ext - start + step - 1) / step));
          int64_t stop = start + (len - 1) * step + 1;
          if (coin(0.2)) stop = ext + uni(0, 3);  // clamped
          if (coin(0.02)) stop = start;          // empty
          int64_t pd = coin(0.15) ? d - r : d;
          int64_t pstart = coin(0.15) && start < ext ? start - ext : start;
          int64_t pstop = coin(0.15) && stop < ext && stop > 0 ? stop - ext : stop;
          out = "slice(" + e.text + ", " + std::to_string(pd) + ", " + std::to_string(pstart) + ", " +
                std::to_string(pstop) + ", " + std::to_string(step) + ")";
          vr = sem::expand_slice(s, pd, pstart, pstop, step);
          break;
        }
        case 2: {
          Shape tgt;
          std::vector<std::string> txt;
          if (room && (coin(0.4) || !has1)) {
            tgt.push_back(uni(2, o_.max_extent));
            txt.push_back(std::to_string(tgt.back()));
          }
          for (int64_t x : s) {
            int64_t y = (x == 1 && coin(0.7)) ? uni(1, o_.max_extent) : x;
            tgt.push_back(y);
            txt.push_back(y == x && coin(0.3) ? "-1" : std::to_string(y));
          }
          if (numel(tgt) > kMaxElements || tgt == s) break;
          std::string l = "[";
          for (size_t i = 0; i < txt.size(); ++i) l += (i ? ", " : "") + txt[i];
          out = "expand(" + e.text + ", " + l + "])";
          vr = sem::expand_expand(s, tgt);
          break;
        }
        case 3: {
          auto [tgt, txt] = reshape_target(n);
          out = "reshape(" + e.text + ", " + txt + ")";
          vr = sem::expand_reshape(s, tgt);
          break;
        }
        case 4: {
          int64_t d = uni(0, r);
          int64_t pd = coin(0.2) ? d - (r + 1) : d;
          out = "unsqueeze(" + e.text + ", " + std::to_string(pd) + ")";
          vr = sem::expand_unsqueeze(s, pd);
          break;
        }
        case 5: {
          std::vector<int64_t> ones;
          for (int i = 0; i < r; ++i)
            if (s[size_t(i)] == 1) ones.push_back(i);
          int64_t d = pick(ones);
          int64_t pd = coin(0.2) ? d - r : d;
          out = "squeeze(" + e.text + ", " + std::to_string(pd) + ")";
          vr = sem::expand_squeeze(s, pd);
          break;
        }
        case 6: {
          int64_t d = int64_t(pick(s.size()));
          auto ix = index_syms(s[size_t(d)], 2);
          if (ix.empty()) break;
          const Sym& I = *pick(ix);
          int64_t pd = coin(0.2) ? d - r : d;
          out = "gather(" + e.text + ", " + std::to_string(pd) + ", " + I.name + ")";
          vr = sem::expand_gather(s, pd, I.name, I.ty.shape);
          break;
        }
        default: return general_view(e, rand_shape(rand_rank()));
      }
      if (auto* vs = std::get_if<sem::ViewShape>(&vr))
        if (!out.empty() && numel(vs->shape) <= kMaxElements && int(vs->shape.size()) <= max_view_rank_)
          return {out, {e.ty.dtype, vs->shape}};
    }
    return e;
  }
  /// A random factorisation of n elements (one extent maybe written -1).
  std::pair<Shape, std::string> reshape_target(int64_t n) {
    int rank = int(uni(n == 1 ? 0 : 1, max_view_rank_));
    Shape t;
    int64_t rem = n;
    for (int i = 0; i + 1 < rank; ++i) {
      std::vector<int64_t> divs;
      for (int64_t d = 1; d <= rem; ++d)
        if (rem % d == 0) divs.push_back(d);
      int64_t d = pick(divs);
      t.push_back(d);
      rem /= d;
    }
    if (rank > 0) t.push_back(rem);
    std::string txt = "[";
    size_t neg = (n > 0 && rank > 0 && coin(0.3)) ? pick(t.size()) : t.size();
    for (size_t i = 0; i < t.size(); ++i) txt += (i ? ", " : "") + (i == neg ? std::string("-1") : std::to_string(t[i]));
    return {t, txt + "]"};
  }

  /// Brings e to shape S with views (or a reduction of trailing dims).
  TE coerce_shape(const TE& e, const Shape& S) {
    const Shape& s = e.ty.shape;
    if (s == S) return e;
    int64_t n = numel(s), N = numel(S);
    bool same_n = n == N && n > 0;
    // expand: right-aligned, extent-1 dims broadcast
    bool bcast = s.size() <= S.size();
    for (size_t j = 0; bcast && j < s.size(); ++j) {
      int64_t x = s[j], y = S[S.size() - s.size() + j];
      if (x != y && x != 1) bcast = false;
    }
    bool slicable = s.size() == S.size();
    for (size_t j = 0; slicable && j < s.size(); ++j)
      if (S[j] > s[j] || S[j] == 0) slicable = false;
    bool red = o_.allow_reduce && e.ty.dtype != DType::Bool && s.size() > S.size() &&
               std::equal(S.begin(), S.end(), s.begin());
    bool general = n > 0 || N == 0;
    int k = weighted({same_n ? 3.0 : 0.0, bcast ? 3.0 : 0.0, slicable ? 3.0 : 0.0, red ? 1.0 : 0.0,
                      general ? 2.0 : 0.0, 0.3});
    switch (k) {
      case 0: {
        std::string txt = "[";
        size_t neg = coin(0.3) && !S.empty() ? pick(S.size()) : S.size();
        for (size_t i = 0; i < S.size(); ++i) txt += (i ? ", " : "") + (i == neg ? std::string("-1") : std::to_string(S[i]));
        return {"reshape(" + e.text + ", " + txt + "])", {e.ty.dtype, S}};
      }
      case 1: {
        std::string txt = "[";
        size_t off = S.size() - s.size();
        for (size_t i = 0; i < S.size(); ++i)
          txt += (i ? ", " : "") + (i >= off && s[i - off] == S[i] && coin(0.3) ? std::string("-1") : std::to_string(S[i]));
        return {"expand(" + e.text + ", " + txt + "])", {e.ty.dtype, S}};
      }
      case 2: {
        TE cur = e;
        for (size_t d = 0; d < S.size(); ++d) {
          if (S[d] == s[d]) continue;
          int64_t step = 1;
          for (int64_t st = 3; st > 1; --st)
            if ((S[d] - 1) * st <= s[d] - 1 && coin(0.4)) {
              step = st;
              break;
            }
          int64_t start = uni(0, s[d] - 1 - (S[d] - 1) * step);
          int64_t stop = start + (S[d] - 1) * step + 1;
          cur.text = "slice(" + cur.text + ", " + std::to_string(d) + ", " + std::to_string(start) + ", " +
                     std::to_string(stop) + ", " + std::to_string(step) + ")";
        }
        cur.ty.shape = S;
        return cur;
      }
      case 3: {
        Shape R(s.begin() + std::ptrdiff_t(S.size()), s.end());
        RedOp op = RedOp(pick(4));
        return {"red(" + std::string(sem::red_name(op)) + ", " + red_init(op, e.ty.dtype) + ", " + list_text(R) + ", " +
                    e.text + ")",
                {e.ty.dtype, S}};
      }
      case 4: return general_view(e, S);
      default: {
        // A fresh tensor of the right shape instead.
        return full_or_iota(S, e.ty.dtype);
      }
    }
  }
  TE full_or_iota(const Shape& S, DType dt) {
    // rand: a counter-based stream per key; two keys, so that programs hold
    // rand nodes equal but for their key (CSE must never merge them).
    if (o_.allow_rand && sem::is_float(dt) && coin(0.3))
      return {"rand(" + dt_text(dt) + ", " + list_text(S) + ", " + std::to_string(uni(1, 2)) + ")", {dt, S}};
    if (!S.empty() && dt != DType::Bool && coin(0.5))
      return {"iota(" + dt_text(dt) + ", " + list_text(S) + ", " + std::to_string(pick(S.size())) + ")", {dt, S}};
    return {"full(" + type_text({dt, S}) + ", " + const_for(dt) + ")", {dt, S}};
  }
  /// Brings e to dtype dt with a map (a cast, or a random lambda).
  TE coerce_dtype(const TE& e, DType dt) {
    if (e.ty.dtype == dt) return e;
    std::string f = coin(0.6) ? "fn(a) => cast(a, " + dt_text(dt) + ")" : lambda({e.ty.dtype}, dt);
    return {"map(" + f + ", " + e.text + ")", {dt, e.ty.shape}};
  }

  // ---------------------------------------------------------------- tensor expressions
  /// A name in scope, maybe viewed, brought to shape S and dtype dt.
  TE pool_leaf(const Shape& S, DType dt) {
    std::vector<double> w;
    double sum = 0;
    for (const Sym& x : syms_) {
      double v = 1.0;
      if (x.local) v *= 6;
      if (x.ty.dtype == dt) v *= 3;
      if (x.ty.shape == S) v *= 2;
      if (x.index_input || x.ranged || x.risky) v *= 0.3;
      w.push_back(v);
      sum += v;
    }
    double r = rng_.uniform() * sum;
    size_t i = 0;
    while (i + 1 < w.size() && r >= w[i]) r -= w[i++];
    TE e{syms_[i].name, syms_[i].ty};
    if (coin(0.35)) {
      e = apply_view(e);
      if (coin(0.4)) e = apply_view(e);
    }
    return coerce_dtype(coerce_shape(e, S), dt);
  }

  /// An expression of any shape and dtype, often a chain of views.
  TE gen_any(int depth) {
    TE e;
    if (depth <= 0 || coin(0.5)) {
      const Sym& x = syms_[pick(syms_.size())];
      e = {x.name, x.ty};
    } else {
      Shape S = rand_shape(rand_rank());
      DType t = pick_dtype();
      e = gen_shaped(S, t, depth - 1);
    }
    int nv = weighted({0.2, 0.4, 0.3, 0.1});
    for (int i = 0; i < nv; ++i) e = apply_view(e);
    return e;
  }

  /// An expression of shape S and dtype dt.
  TE gen_shaped(const Shape& S, DType dt, int depth) {
    bool can_red = o_.allow_reduce && dt != DType::Bool && int(S.size()) < max_view_rank_;
    bool can_iota = !S.empty() && dt != DType::Bool;
    if (depth <= 0) {
      int k = weighted({0.8, can_iota ? 0.1 : 0.0, 0.1});
      if (k == 0) return pool_leaf(S, dt);
      return full_or_iota(S, dt);
    }
    int k = weighted({0.3, can_iota ? 0.05 : 0.0, 0.04, 0.32, can_red ? 0.13 : 0.0, 0.12,
                      o_.allow_let_in ? 0.07 : 0.0});
    switch (k) {
      case 0: return pool_leaf(S, dt);
      case 1:
      case 2: return full_or_iota(S, dt);
      case 3: return gen_map(S, dt, depth);
      case 4: return gen_red(S, dt, depth);
      case 5: return coerce_dtype(coerce_shape(gen_any(depth - 1), S), dt);
      default: return gen_let(S, dt, depth);
    }
  }

  TE gen_map(const Shape& S, DType dt, int depth) {
    int nargs = weighted({0.45, 0.4, 0.15}) + 1;
    std::vector<DType> P;
    std::vector<TE> args;
    for (int i = 0; i < nargs; ++i) {
      DType t = (dt != DType::Bool && coin(0.7)) ? dt : pick_dtype();
      if (i > 0 && P[0] == t && args[0].text.rfind("rand(", 0) == 0 && coin(0.5)) {
        // rand nodes equal but for their key: CSE must keep both
        std::string other = args[0].text.find(", 1)") != std::string::npos ? "2" : "1";
        args.push_back({args[0].text.substr(0, args[0].text.rfind(", ") + 2) + other + ")", args[0].ty});
      } else if (i > 0 && coin(0.15) && P[0] == t) {
        args.push_back(args[0]);  // the same subexpression twice (CSE)
      } else {
        args.push_back(gen_shaped(S, t, depth - 1));
      }
      P.push_back(t);
    }
    std::string s = "map(" + lambda(P, dt);
    for (const TE& a : args) s += ", " + a.text;
    return {s + ")", {dt, S}};
  }

  TE gen_red(const Shape& S, DType dt, int depth) {
    bool arg = dt == DType::I64 && coin(0.5);
    RedOp op = arg ? (coin(0.5) ? RedOp::ArgMax : RedOp::ArgMin) : RedOp(pick(4));
    DType src_dt = dt;
    if (arg) src_dt = o_.allow_int && coin(0.2) ? pick_int() : pick_float();
    int64_t room = kMaxElements / std::max<int64_t>(1, numel(S));
    int nr = coin(0.03) ? 0 : int(uni(1, std::min(2, max_view_rank_ - int(S.size()))));
    Shape R = rand_shape(nr, std::max<int64_t>(1, room));
    Shape full = concat(S, R);
    TE src;
    if (full.size() >= 2 && coin(0.3)) {
      // permute first, so that other dims are reduced
      auto p = permutation(full.size());
      Shape inner(full.size());
      for (size_t k = 0; k < p.size(); ++k) inner[size_t(p[k])] = full[k];
      TE in = gen_shaped(inner, src_dt, depth - 1);
      src = {"permute(" + in.text + ", " + list_text(p) + ")", {src_dt, full}};
    } else {
      src = gen_shaped(full, src_dt, depth - 1);
    }
    return {"red(" + std::string(sem::red_name(op)) + ", " + red_init(op, src_dt) + ", " + list_text(R) + ", " +
                src.text + ")",
            {arg ? DType::I64 : dt, S}};
  }

  TE gen_let(const Shape& S, DType dt, int depth) {
    std::string name = "t" + std::to_string(n_locals_++);
    Sym x;
    TE v;
    if (o_.allow_gather && coin(0.25)) {
      v = iota_index(x);
    } else {
      v = gen_any(depth - 1);
    }
    x.name = name;
    x.ty = v.ty;
    x.local = true;
    syms_.push_back(x);
    TE body = gen_shaped(S, dt, depth - 1);
    syms_.pop_back();
    return {"let " + name + " = " + v.text + " in " + body.text, body.ty};
  }

  /// An int tensor computed from iota, with its value range recorded in x.
  TE iota_index(Sym& x) {
    DType it = coin(0.7) ? DType::I64 : DType::I32;
    Shape sh = coin(0.8) ? Shape{uni(1, o_.max_extent)} : Shape{uni(1, o_.max_extent), uni(1, o_.max_extent)};
    int64_t K = uni(1, o_.max_extent);
    int64_t a = uni(1, 3), c = uni(0, 4);
    std::string iota = "iota(" + dt_text(it) + ", " + list_text(sh) + ", " + std::to_string(pick(sh.size())) + ")";
    std::string body;
    x.ranged = true;
    switch (pick(3)) {
      case 0:  // [0, K)
        body = "mod(add(mul(i, " + std::to_string(a) + "), " + std::to_string(c) + "), " + std::to_string(K) + ")";
        x.lo = 0;
        x.hi = K - 1;
        break;
      case 1:  // [-K, 0): wraps Python-style
        body = "sub(mod(mul(i, " + std::to_string(a) + "), " + std::to_string(K) + "), " + std::to_string(K) + ")";
        x.lo = -K;
        x.hi = -1;
        break;
      default:  // [-c, extent - c)
        body = "sub(i, " + std::to_string(c) + ")";
        x.lo = -c;
        x.hi = *std::max_element(sh.begin(), sh.end()) - 1 - c;
        break;
    }
    return {"map(fn(i) => " + body + ", " + iota + ")", {it, sh}};
  }

  // ---------------------------------------------------------------- statements
  void choose_failure() {
    double p = (o_.allow_int || o_.allow_gather) ? 0.22 : 0.0;
    if (!coin(p)) return;
    switch (weighted({o_.allow_int ? 0.5 : 0.0, o_.allow_int ? 0.2 : 0.0, o_.allow_gather ? 0.22 : 0.0,
                      o_.allow_gather ? 0.08 : 0.0})) {
      case 0: fail_ = Fail::FloorDivInput; break;
      case 1: fail_ = Fail::LambdaDiv; break;
      case 2: fail_ = Fail::RiskyGather; break;
      default: fail_ = Fail::OobView; break;
    }
  }

  void add_input(const std::string& name, TensorType ty, bool index) {
    Sym x;
    x.name = name;
    x.ty = ty;
    x.index_input = index;
    syms_.push_back(x);
    lines_.push_back("input " + name + " : " + type_text(ty));
  }
  void make_inputs() {
    int n = int(uni(1, 3));
    for (int i = 0; i < n; ++i) {
      DType t = (i == 0 && coin(0.7)) ? DType::F32 : pick_dtype();
      add_input("x" + std::to_string(i), {t, rand_shape(rand_rank())}, false);
    }
    if (o_.allow_gather && coin(0.45)) {
      Shape sh = coin(0.8) ? Shape{uni(1, o_.max_extent)} : Shape{uni(1, o_.max_extent), uni(1, 3)};
      add_input("idx0", {coin(0.7) ? DType::I64 : DType::I32, sh}, true);
    }
    if (fail_ == Fail::FloorDivInput)
      add_input("x" + std::to_string(n), {pick_int(), rand_shape(rand_rank(1))}, false);
  }

  void bind(const std::string& text, TensorType ty, Sym x = {}) {
    x.name = "v" + std::to_string(n_bind_++);
    x.ty = ty;
    x.local = false;
    std::string decl = coin(0.5) ? " : " + type_text(ty) : "";
    lines_.push_back("let " + x.name + decl + " = " + text);
    binds_.push_back({text, x});
    syms_.push_back(x);
  }

  /// 1/sum of signed zeros: the sign of an exact zero sum (its init, its
  /// padding) becomes ±inf, visible in both semantics.
  void zero_sign_binding() {
    Shape S = rand_shape(int(uni(0, 1)));
    Shape R = rand_shape(1, std::max<int64_t>(1, kMaxElements / std::max<int64_t>(1, numel(S))));
    R[0] = std::max<int64_t>(R[0], 2);
    DType t = pick_float();
    TE src = gen_shaped(concat(S, R), t, 1);
    std::string init = coin(0.7) ? "-0.0" : "0.0";
    bind("map(fn(a) => div(1.0, a), red(sum, " + init + ", " + list_text(R) + ", map(fn(a) => mul(abs(a), -0.0), " +
             src.text + ")))",
         {t, S});
  }

  void normal_binding() {
    int depth = int(uni(2, 3));
    if (o_.allow_reduce && coin(0.06)) {
      zero_sign_binding();
      return;
    }
    if (coin(0.2)) {
      TE e = gen_any(depth);
      bind(e.text, e.ty);
      return;
    }
    Shape S = coin(0.5) ? syms_[pick(syms_.size())].ty.shape : rand_shape(rand_rank());
    if (numel(S) > kMaxElements || int(S.size()) > o_.max_rank) S = rand_shape(rand_rank());
    TE e = gen_shaped(S, pick_dtype(), depth);
    bind(e.text, e.ty);
  }

  void duplicate_binding() {
    Bound b = pick(binds_);
    bind(b.text, b.sym.ty, b.sym);
  }

  void index_binding() {
    if (o_.allow_reduce && coin(0.3)) {
      // argmax/argmin: values in [0, |R|)
      Shape S = rand_shape(int(uni(1, std::max(1, o_.max_rank - 1))));
      Shape R = rand_shape(1, std::max<int64_t>(1, kMaxElements / numel(S)));
      RedOp op = coin(0.5) ? RedOp::ArgMax : RedOp::ArgMin;
      DType t = pick_float();
      TE src = gen_shaped(concat(S, R), t, 1);
      Sym x;
      x.ranged = true;
      x.lo = 0;
      x.hi = numel(R) - 1;
      bind("red(" + std::string(sem::red_name(op)) + ", " + red_init(op, t) + ", " + list_text(R) + ", " + src.text +
               ")",
           {DType::I64, S}, x);
      return;
    }
    Sym x;
    TE e = iota_index(x);
    bind(e.text, e.ty, x);
  }

  void failing_binding() {
    switch (fail_) {
      case Fail::FloorDivInput: {
        // floordiv/mod/div by an int input value: ⊥ where it is zero
        const Sym* div = nullptr;
        for (const Sym& x : syms_)
          if (!x.local && !x.index_input && sem::is_int(x.ty.dtype) && x.name[0] == 'x') div = &x;
        STAX_CHECK(div) << "no int input for the failing division";
        TE d{div->name, div->ty};
        TE a = gen_shaped(d.ty.shape, d.ty.dtype, 1);
        ScalarOp op = weighted({3, 1, 1}) == 0 ? ScalarOp::FloorDiv : pick(kDivOps);
        std::string f = coin(0.5) ? std::string(sem::op_name(op))
                                  : "fn(a, b) => " + std::string(sem::op_name(op)) + "(a, b)";
        bind("map(" + f + ", " + a.text + ", " + d.text + ")", d.ty);
        break;
      }
      case Fail::LambdaDiv: {
        Shape S = rand_shape(rand_rank(1));
        DType t = pick_int();
        std::vector<DType> P;
        std::vector<TE> args;
        int nargs = int(uni(1, 2));
        for (int i = 0; i < nargs; ++i) {
          P.push_back(coin(0.6) ? t : pick_dtype());
          args.push_back(gen_shaped(S, P.back(), 1));
        }
        Lam L;
        L.types = P;
        L.names = {"a", "b"};
        L.names.resize(P.size());
        L.unsafe_div = true;
        ScalarOp op = pick(kDivOps);
        std::string num = sx(L, t, 1);
        std::string den = sx(L, t, 1);
        std::string f = "fn(" + L.names[0] + (P.size() > 1 ? ", " + L.names[1] : "") + ") => " + sop(op, {num, den});
        std::string s = "map(" + f;
        for (const TE& a : args) s += ", " + a.text;
        bind(s + ")", {t, S});
        break;
      }
      case Fail::RiskyGather: {
        // an index cast from floats: huge, infinite or simply too large values are ⊥
        Shape sh{uni(1, o_.max_extent)};
        DType it = coin(0.7) ? DType::I64 : DType::I32;
        DType ft = pick_float();
        TE src = gen_shaped(sh, ft, 1);
        std::string scale = coin(0.5) ? "a" : std::string("mul(a, ") + (coin(0.5) ? "2.0" : "4.0") + ")";
        Sym x;
        x.risky = true;
        bind("map(fn(a) => cast(" + scale + ", " + dt_text(it) + "), " + src.text + ")", {it, sh}, x);
        Sym I = syms_.back();
        Shape S = rand_shape(rand_rank(1), std::max<int64_t>(1, kMaxElements / sh[0]));
        DType t = pick_dtype();
        TE base = gen_shaped(S, t, 1);
        int64_t d = int64_t(pick(S.size()));
        Shape out = S;
        out.erase(out.begin() + d);
        out.insert(out.begin() + d, I.ty.shape.begin(), I.ty.shape.end());
        bind("gather(" + base.text + ", " + std::to_string(d) + ", " + I.name + ")", {t, out});
        break;
      }
      case Fail::OobView: {
        TE e = gen_any(1);
        if (numel(e.ty.shape) == 0 || e.ty.shape.empty()) {
          Shape S0 = rand_shape(rand_rank(1));
          DType t = pick_dtype();
          e = gen_shaped(S0, t, 1);
        }
        Shape S = rand_shape(rand_rank(1));
        TE v = general_view(e, S, true);
        bind(v.text, v.ty);
        break;
      }
      case Fail::None: break;
    }
  }
  void make_outputs() {
    std::vector<std::string> outs;
    for (size_t i = 0; i < binds_.size(); ++i)
      if (coin(0.3) || (i + 1 == binds_.size() && coin(0.8))) outs.push_back(binds_[i].sym.name);
    if (outs.empty()) outs.push_back(pick(binds_).sym.name);
    if (coin(0.02)) outs.push_back(syms_[0].name);  // an input, output as is
    for (size_t i = outs.size(); i > 1; --i)
      if (coin(0.3)) std::swap(outs[i - 1], outs[pick(i)]);
    if (outs.size() > 1 && coin(0.2)) {
      // two output statements
      size_t cut = size_t(uni(1, int64_t(outs.size()) - 1));
      lines_.push_back("output " + join(outs, 0, cut));
      lines_.push_back("output " + join(outs, cut, outs.size()));
    } else {
      lines_.push_back("output " + join(outs, 0, outs.size()));
    }
  }
  static std::string join(const std::vector<std::string>& v, size_t a, size_t b) {
    std::string s;
    for (size_t i = a; i < b; ++i) s += (i > a ? ", " : "") + v[i];
    return s;
  }

  struct Bound {
    std::string text;
    Sym sym;
  };

  sem::Rng rng_;
  GenOptions o_;
  uint64_t seed_ = 0;
  int max_view_rank_ = 4;
  Fail fail_ = Fail::None;
  std::vector<Sym> syms_;  ///< inputs and bindings in order, then the let-in locals in scope
  std::vector<Bound> binds_;
  std::vector<std::string> lines_;
  int n_locals_ = 0, n_bind_ = 0;
};

}  // namespace

std::string generate_program_text(uint64_t seed, const GenOptions& opt) { return Gen(seed, opt).run(); }

sem::Program generate_program(uint64_t seed, const GenOptions& opt) {
  std::string text = generate_program_text(seed, opt);
  sem::ParseResult r = sem::parse_program(text, "<generated seed " + std::to_string(seed) + ">");
  if (auto* d = std::get_if<sem::Diag>(&r)) {
    STAX_CHECK(false) << "generated program does not parse: " << d->str() << "\n" << text;
  }
  return std::get<sem::Program>(std::move(r));
}

}  // namespace stax::oracle
