// The random program generator (docs/design.md §2, §6), private to
// oracle/gen/*.cpp: the generator's state and its steps. Every choice
// draws from one splitmix64 stream (sem::Rng) in a fixed order, so the same
// seed and options always give the same text; a step that moves between
// units keeps its draws. Each concept lives in its own unit:
//   program_gen.cpp  program assembly: inputs, bindings, the failing construct, outputs
//   lambdas.cpp      dtypes, constants and scalar lambdas
//   views.cpp        views and index maps; bringing a tensor to a shape or a dtype
//   tensors.cpp      shapes, leaves and tensor expressions (maps, reductions, lets)
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "oracle/gen/program_gen.h"
#include "semantics/random_inputs.h"

namespace stax::oracle::generator {

using sem::DType;
using sem::RedOp;
using sem::ScalarOp;
using sem::Shape;
using sem::TensorType;

/// Elements per tensor, intermediate ones included.
constexpr int64_t kMaxElements = 300;
constexpr int kNumOps = int(ScalarOp::Fma) + 1;

inline std::string dt_text(DType t) { return std::string(sem::dtype_name(t)); }
inline std::string type_text(const TensorType& t) { return dt_text(t.dtype) + sem::shape_text(t.shape); }

inline Shape concat(const Shape& a, const Shape& b) {
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

inline constexpr ScalarOp kUnaryFlt[] = {ScalarOp::Exp,     ScalarOp::Log,   ScalarOp::Log2, ScalarOp::Log10,
                                         ScalarOp::Log1p,   ScalarOp::Expm1, ScalarOp::Tanh, ScalarOp::Sigmoid,
                                         ScalarOp::Sqrt,    ScalarOp::Rsqrt, ScalarOp::Erf,  ScalarOp::Sin,
                                         ScalarOp::Cos,     ScalarOp::Floor};
inline constexpr ScalarOp kUnaryNum[] = {ScalarOp::Neg, ScalarOp::Abs, ScalarOp::Relu};
inline constexpr ScalarOp kBinNum[] = {ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul, ScalarOp::Maximum,
                                       ScalarOp::Minimum};
inline constexpr ScalarOp kDivOps[] = {ScalarOp::Div, ScalarOp::Mod, ScalarOp::FloorDiv};
inline constexpr ScalarOp kOrder[] = {ScalarOp::Lt, ScalarOp::Le, ScalarOp::Gt, ScalarOp::Ge};

inline bool is_div(ScalarOp op) { return op == ScalarOp::Div || op == ScalarOp::Mod || op == ScalarOp::FloorDiv; }

class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& o);
  std::string run();

 private:
  // ---- random
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

  // ---- dtypes and constants (lambdas.cpp)
  DType pick_float();
  DType pick_int() { return coin(0.5) ? DType::I32 : DType::I64; }
  DType pick_dtype();
  /// An int or float dtype.
  DType pick_num() { return (o_.allow_int && coin(0.2)) ? pick_int() : pick_float(); }
  std::string float_const();
  std::string int_const(DType t, bool nonzero = false);
  std::string const_for(DType t, bool nonzero = false);
  std::string red_init(RedOp op, DType t);

  // ---- scalar lambdas (lambdas.cpp)
  struct Lam {
    std::vector<std::string> names;
    std::vector<DType> types;
    bool unsafe_div = false;  ///< int division by an arbitrary value (may be ⊥)
  };
  std::string sop(ScalarOp op, std::initializer_list<std::string> args);
  std::string s_leaf(const Lam& L, DType want);
  std::string s_or_const(Lam& L, DType want, int depth);
  std::string s_bin(Lam& L, ScalarOp op, DType t, int depth);
  std::string divisor(Lam& L, DType t, int depth);
  std::string sx(Lam& L, DType want, int depth);
  std::string select(Lam& L, DType want, int d);
  DType operand_type(const Lam& L, bool any);
  std::string lambda(const std::vector<DType>& P, DType want, bool unsafe_div = false);

  // ---- views (views.cpp)
  std::vector<std::string> var_names(size_t n);
  bool index_ok(const Sym& x, int64_t s) const;
  std::vector<const Sym*> index_syms(int64_t s, size_t max_rank) const;
  std::string component(int64_t s, const Shape& S, const std::vector<std::string>& v, bool oob);
  TE general_view(const TE& e, const Shape& S, bool oob = false);
  TE apply_view(const TE& e);
  std::pair<Shape, std::string> reshape_target(int64_t n);
  TE coerce_shape(const TE& e, const Shape& S);
  TE coerce_dtype(const TE& e, DType dt);

  // ---- shapes, tensor expressions (tensors.cpp)
  int rand_rank(int lo = 0);
  void shrink(Shape& s, int64_t cap);
  Shape rand_shape(int rank, int64_t cap = kMaxElements);
  TE full_or_iota(const Shape& S, DType dt);
  TE pool_leaf(const Shape& S, DType dt);
  TE gen_any(int depth);
  TE gen_shaped(const Shape& S, DType dt, int depth);
  TE gen_map(const Shape& S, DType dt, int depth);
  TE gen_red(const Shape& S, DType dt, int depth);
  TE gen_let(const Shape& S, DType dt, int depth);
  TE iota_index(Sym& x);

  // ---- program assembly (program_gen.cpp)
  void choose_failure();
  void add_input(const std::string& name, TensorType ty, bool index);
  void make_inputs();
  void bind(const std::string& text, TensorType ty, Sym x = {});
  void zero_sign_binding();
  void normal_binding();
  void duplicate_binding();
  void index_binding();
  void failing_binding();
  void fail_division_by_input();
  void fail_lambda_division();
  void fail_risky_gather();
  void fail_oob_view();
  void make_outputs();
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

}  // namespace stax::oracle::generator
