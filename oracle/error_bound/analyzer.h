// The error-bound analysis of reductions (§6.5, docs/design.md §4), private to
// oracle/error_bound/*.cpp: the summand graph (reduction nodes, linear maps,
// leaves, and the edges through views between them), the per-element
// accumulators, and the Analyzer that builds and walks them. The model and
// the bound are stated in oracle/error_bound/error_bound.h; each concept
// lives in its own unit:
//   error_bound.cpp  entry point: graphs of the roots, the evaluated program
//   structure.cpp    linear maps, sum DAGs, root discovery
//   graph.cpp        the summand graph: slots, nodes, edges, index mapping
//   visit.cpp        per-element rounding depths of every summand
//   rows.cpp         one row per root: measured error against the bound
//   report.cpp       the report as a table and as JSON
//   exact_sum.h, precision_depth.h  the exact sums and the per-format depths
#pragma once

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/error_bound/error_bound.h"
#include "oracle/error_bound/exact_sum.h"
#include "oracle/error_bound/precision_depth.h"
#include "semantics/ieee_scalar.h"

namespace stax::oracle::bound_analysis {

using namespace sem;
using namespace detail;  // precisions and depths (oracle/error_bound/precision_depth.h), ExactSum

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// Folds at most this long read their elements once (visit.cpp).
constexpr int64_t kSmallFold = 64;
/// Summand paths visited per analysis, at most (a 2^24 sum has 2^24).
constexpr double kMaxPaths = double(int64_t(1) << 30);

enum class Family { Sum, Prod, Max, Min, None };
inline Family family_of(RedOp op) {
  switch (op) {
    case RedOp::Sum: return Family::Sum;
    case RedOp::Prod: return Family::Prod;
    case RedOp::Max: return Family::Max;
    case RedOp::Min: return Family::Min;
    default: return Family::None;
  }
}

/// The let-bindings in scope, innermost first; a frame is shared by every
/// walk through the same let in the same outer scope.
struct Frame {
  const LetE* let;
  std::shared_ptr<const Frame> parent;
  int id;
};
using Scope = std::shared_ptr<const Frame>;
inline int scope_id(const Scope& s) { return s ? s->id : 0; }

/// The analysis cannot run (analyze_bounds reports it; nothing is checked).
struct AnalysisError {
  std::string message;
};

// ---- The summand graph ----

struct ViewStep {
  const IndexMap* map = nullptr;
  Shape src, out;
  std::vector<bool> wrap;
  std::map<std::string, int> loads;  // load name -> slot
};

/// From the consumer's index space (a red's operand, a map's domain) to the
/// flat index of the target node's output, through the views in between.
struct Edge {
  enum class Kind { Identity, Affine, General };
  int target = -1;
  Shape consumer, target_shape;
  std::vector<ViewStep> views;
  Kind kind = Kind::Identity;
  int64_t base = 0;
  std::vector<int64_t> stride;  // per consumer dim (Affine)
  // cursor state (an edge belongs to one node, which is never re-entered
  // while it iterates: the structure is a DAG)
  mutable std::vector<int64_t> idx;
  mutable int64_t off = 0, flat = 0;
};

/// A linear lambda: terms are the occurrences of params/constants on the
/// paths from the result, each with its sign and the rounding instructions
/// above it.
struct Term {
  int param = -1;  // or -1 for a constant
  double cval = 0;
  double sign = 1;
  std::vector<int> path;
};
struct LinInfo {
  std::vector<Term> terms;
  std::vector<int8_t> round_cls;  // per instruction: precision class of its rounding, or -1 (exact)
};

struct Node {
  enum class Kind { Red, Lin, Leaf };
  Kind kind = Kind::Leaf;
  Family fam = Family::Sum;
  DType dtype = DType::F32;
  Shape shape;
  int value_slot = -1;  // a tensor of this node's values, where needed
  bool narrow_check = false;  // its output is rounded to a narrower format: check for subnormals
  double narrow_min_normal = 0;  // the smallest normal of that format (0: the node's own dtype)
  // Red
  RedOp op = RedOp::Sum;
  double init = 0;
  bool init_zero = true, init_unit = false;
  int64_t n = 0;
  Edge child;
  int acc_cls = 1, store_cls = -1;
  // Lin
  const Lambda* fn = nullptr;
  const LinInfo* lin = nullptr;
  std::vector<Edge> args;
  mutable std::vector<uint8_t> z, rnd, argz;
  mutable std::vector<double> argv;
  mutable std::vector<int64_t> argi;
  // Leaf
  int slot = -1;
  std::string label;
};

/// A tensor the analysis reads: an input, a binding, or a hoisted
/// subexpression evaluated as an extra output.
struct Slot {
  std::string name;  // binding/input name, or the hoisted name
  Expr hoist;        // null: fetched by name
  Scope scope;
  bool input = false;
  const Tensor* t = nullptr;
};

struct RootSpec {
  Expr e;
  Scope sc;
  Family fam;
  std::string name, owner;
  bool top = false;
};

// ---- Per-element accumulators ----

struct Cand {
  double term, value;
  Depth depth;
  int leaf;  // node id, or -1 for a constant (init or lambda constant)
  int64_t off;
  bool operator<(const Cand& o) const { return term > o.term; }  // min-heap on term
};

struct SumAcc {
  ExactSum ex;
  double bound = 0, sum_abs = 0;
  int64_t count = 0, nonzero = 0;
  bool nonfinite = false, underflow = false;
  int main_cls = 1;
  const GammaTable* gt = &gammas();
  int32_t max_eff = 0;
  Depth max_st;
  std::vector<Cand>* top = nullptr;
  size_t top_k = 0;
  void reset() {
    ex.reset();
    bound = sum_abs = 0;
    count = nonzero = 0;
    nonfinite = underflow = false;
    max_eff = 0;
    max_st = Depth{};
  }
};

struct ProdAcc {
  mpfr_t p;
  int64_t D = 0, S = 0, count = 0;
  double lo = 0, hi = 0;  // log2 of the smallest / largest partial product of the nonzero factors
  bool zero = false, nonfinite = false;
  ProdAcc() { mpfr_init2(p, 512); }
  ~ProdAcc() { mpfr_clear(p); }
  ProdAcc(const ProdAcc&) = delete;
  ProdAcc& operator=(const ProdAcc&) = delete;
  void reset() {
    mpfr_set_ui(p, 1, MPFR_RNDN);
    D = S = count = 0;
    lo = hi = 0;
    zero = nonfinite = false;
  }
  void factor(double v) {
    ++count;
    if (!std::isfinite(v)) {
      nonfinite = true;
      return;
    }
    if (v == 0) {
      zero = true;
      return;
    }
    double l = std::log2(std::fabs(v));
    if (l < 0) lo += l;
    else hi += l;
    mpfr_mul_d(p, p, v, MPFR_RNDN);
  }
};

struct MaxAcc {
  bool is_max = true, any = false;
  double m = 0;
  int64_t count = 0;
  void take(double v) {
    ++count;
    if (!any) {
      m = v;
      any = true;
      return;
    }
    m = is_max ? ieee::maximum(m, v) : ieee::minimum(m, v);
  }
};

/// The elements of one row measured so far (rows.cpp).
struct RowRecorder;

// ---- The analyzer ----

class Analyzer {
 public:
  Analyzer(const Program& p, const Inputs& in, const BoundOptions& opt) : p_(p), in_(in), opt_(opt) {
    for (const Binding& b : p.bindings) {
      bind_[b.name] = &b;
      top_expr_[b.expr.get()] = b.name;
    }
    for (const Input& i : p.inputs) inputs_.insert(i.name);
    for (const std::string& o : p.outputs) outputs_.insert(o);
  }

  BoundReport run();

 private:
  // -- names and scopes
  struct Resolved {
    enum K { Let, Binding, Input, None } k = None;
    Expr e;
    Scope sc;
  };
  Resolved resolve(const std::string& n, const Scope& sc) const {
    for (const Frame* f = sc.get(); f; f = f->parent.get())
      if (f->let->name == n) return {Resolved::Let, f->let->value, f->parent};
    if (auto it = bind_.find(n); it != bind_.end()) return {Resolved::Binding, it->second->expr, nullptr};
    if (inputs_.count(n)) return {Resolved::Input, nullptr, nullptr};
    return {};
  }
  Scope push(const Scope& sc, const LetE* let) {
    auto key = std::make_pair(let, scope_id(sc));
    auto it = frames_.find(key);
    if (it != frames_.end()) return it->second;
    auto f = std::make_shared<const Frame>(Frame{let, sc, int(frames_.size()) + 1});
    frames_[key] = f;
    return f;
  }

  /// Where follow_chain stopped: at the expression that computes the value
  /// (Value), at a name of an input or an unbound name (`e` is that name),
  /// or after kMaxChainSteps steps (TooLong: `e` is where it was).
  struct ChainEnd {
    enum K { Value, Input, Unbound, TooLong } k = Value;
    Expr e;
    Scope sc;
  };
  /// What follow_chain reports on its way, before each step; a caller
  /// derives from it and redefines the hooks it needs.
  struct ChainHooks {
    /// A let- or top-level-bound name (`k` Let or Binding), about to be replaced by its value.
    void on_name(const std::string&, Resolved::K) {}
    /// A let about to be entered; `sc` is the scope around it.
    void on_let(const LetE&, const Scope&) {}
    /// A view whose output has shape `out`, about to be replaced by its source.
    void on_view(const ViewE&, const Shape&, const Scope&) {}
  };
  static constexpr int kMaxChainSteps = 100000;
  /// The one let/view chain resolver of the analysis: follows `e` (in scope
  /// `sc`) through names (to their let or top-level binding), lets (into
  /// their body) and views (to their source) to where its values come from.
  template <class Hooks = ChainHooks>
  ChainEnd follow_chain(Expr e, Scope sc, Hooks&& hooks = {}) {
    for (int step = 0; step < kMaxChainSteps; ++step) {
      if (auto* x = std::get_if<NameE>(&e->p)) {
        Resolved r = resolve(x->name, sc);
        if (r.k == Resolved::Input) return {ChainEnd::Input, e, sc};
        if (r.k == Resolved::None) return {ChainEnd::Unbound, e, sc};
        hooks.on_name(x->name, r.k);
        e = r.e;
        sc = r.sc;
        continue;
      }
      if (auto* x = std::get_if<LetE>(&e->p)) {
        hooks.on_let(*x, sc);
        sc = push(sc, x);
        e = x->body;
        continue;
      }
      if (auto* x = std::get_if<ViewE>(&e->p)) {
        hooks.on_view(*x, e->type.shape, sc);
        e = x->src;
        continue;
      }
      return {ChainEnd::Value, e, sc};
    }
    return {ChainEnd::TooLong, e, sc};
  }

  // -- structure recognition (structure.cpp)
  const LinInfo* linear(const Lambda& fn);
  bool reaches_red(const Expr& e, Scope sc);
  /// A reduction root could start here (any family).
  bool rootable(const Expr& e, const Scope& sc) {
    if (auto* r = std::get_if<RedE>(&e->p)) return is_float(e->type.dtype) && family_of(r->op) != Family::None;
    return is_candidate(e, sc, Family::Sum);
  }
  bool is_candidate(const Expr& e, const Scope& sc, Family fam) {
    if (auto* r = std::get_if<RedE>(&e->p)) return is_float(e->type.dtype) && family_of(r->op) == fam;
    if (fam == Family::Sum)
      if (auto* m = std::get_if<MapE>(&e->p)) return is_float(e->type.dtype) && linear(m->fn) && reaches_red(e, sc);
    return false;
  }

  // -- root discovery (structure.cpp)
  void walk(const Expr& e, const Scope& sc, const std::string& owner, bool top);
  void chain_walk(const Expr& e, const Scope& sc, Family fam, const std::string& owner);
  void strip_walk(Expr e, Scope sc, Family fam, const std::string& owner);
  void add_root(const Expr& e, const Scope& sc, Family fam, const std::string& owner, bool top);
  std::vector<RootSpec> roots();

  // -- graph building (graph.cpp)
  int slot_by_name(const std::string& n);
  int slot_hoist(const Expr& e, const Scope& sc);
  int leaf_node(int slot, const std::string& label, const Shape& shape, DType dt);
  int node_for(const Expr& e, const Scope& sc, Family fam, const std::string& name);
  ViewStep view_step(const ViewE& v, const Shape& out, const Scope& sc);
  Edge strip(Expr e, Scope sc, Family fam, const Shape& consumer);
  void finalize(Edge& ed);

  // -- index mapping (graph.cpp)
  int64_t map_general(const Edge& ed, int64_t flat) const;
  int64_t map_one(const Edge& ed, int64_t flat) const;
  void cursor_start(const Edge& ed, int64_t flat) const;
  void cursor_next(const Edge& ed) const;

  // -- evaluation (error_bound.cpp)
  /// Evaluates the program with every slot as an output (into values_);
  /// false, with the failure in `rep`, when it is ⊥.
  bool evaluate_slots(BoundReport& rep);

  // -- per-element depths (visit.cpp)
  void emit(double v, const Depth& eff, const Depth& st, int leaf, int64_t off, SumAcc& a) const;
  void visit_sum(int id, int64_t q, const Depth& eff, const Depth& st, double sign, SumAcc& a) const;
  void visit_red_sum(const Node& nd, int64_t q, const Depth& eff, const Depth& st, double sign, SumAcc& a) const;
  int64_t fold_short_leaf(const Node& nd, int64_t q, const Depth& e, const Depth& s, double sign, SumAcc& a) const;
  int64_t fold_leaf(const Node& nd, int64_t q, const Depth& e, const Depth& s, double sign, SumAcc& a) const;
  int64_t fold_partials(const Node& nd, int64_t q, const Depth& e, const Depth& s, double sign, SumAcc& a) const;
  void visit_lin_sum(const Node& nd, int64_t q, const Depth& eff, const Depth& st, double sign, SumAcc& a) const;
  void visit_prod(int id, int64_t q, ProdAcc& a) const;
  void visit_max(int id, int64_t q, MaxAcc& a) const;
  void check_narrow(const Node& nd, int64_t q, int64_t nonzero_before, SumAcc& a) const;

  // -- rows (rows.cpp)
  BoundRow run_root(const RootSpec& r, int id);
  int accumulation_class(int id) const;
  void measure_sums(int id, int main_cls, const Tensor& val, RowRecorder& rec);
  void measure_products(int id, int main_cls, const Tensor& val, RowRecorder& rec) const;
  void measure_extrema(int id, Family fam, const Tensor& val, RowRecorder& rec) const;
  double expansion(int id);
  void describe(BoundRow& row, int id) const;
  std::string where(int leaf, int64_t off) const;

  const Program& p_;
  const Inputs& in_;
  BoundOptions opt_;
  std::map<std::string, const Binding*> bind_;
  std::map<const ExprNode*, std::string> top_expr_;
  std::set<std::string> inputs_, outputs_;
  std::map<std::pair<const LetE*, int>, Scope> frames_;
  std::map<const Lambda*, std::unique_ptr<LinInfo>> lin_;
  std::set<const Lambda*> nonlin_;
  std::map<std::pair<const ExprNode*, int>, bool> reaches_;
  // roots
  struct Uses {
    bool chain = false, nonchain = false;
  };
  std::map<std::string, Uses> uses_;
  std::set<std::tuple<const ExprNode*, int, bool>> walked_;
  std::set<std::tuple<const ExprNode*, int, int>> chain_walked_;
  std::set<std::tuple<const ExprNode*, int, int>> rooted_;
  std::vector<RootSpec> roots_;
  std::map<std::string, int> nested_count_;
  // graph
  std::vector<Slot> slots_;
  std::map<std::string, int> slot_name_;
  std::map<std::pair<const ExprNode*, int>, int> slot_expr_;
  std::vector<Node> nodes_;
  std::map<std::tuple<const ExprNode*, int, int>, int> node_memo_;
  std::map<int, int> leaf_memo_;
  std::map<int, double> expansion_;
  IeeeOutcome values_;  ///< the evaluated program: owns the slots' tensors
  mutable std::vector<int64_t> s1_, s2_;
  std::unique_ptr<SumAcc> sum_acc_;
};

}  // namespace stax::oracle::bound_analysis
