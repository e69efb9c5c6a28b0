#include "oracle/error_bound.h"

#include "oracle/exact_sum.h"
#include "oracle/precision_depth.h"

namespace stax::oracle {
using detail::ExactSum;
}

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "semantics/ieee_scalar.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::oracle {

using namespace sem;

static_assert(GMP_NUMB_BITS == 64, "ExactSum packs a double into one 64-bit limb");

double gamma_n(int64_t n, double u) {
  if (n <= 0) return 0.0;
  double nu = double(n) * u;
  if (nu >= 1.0) return std::numeric_limits<double>::infinity();
  return nu / (1.0 - nu);
}

const BoundRow* BoundReport::row(const std::string& name) const {
  for (const BoundRow& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kSmallFold = 64;
/// Summand paths visited per analysis, at most (a 2^24 sum has 2^24).
constexpr double kMaxPaths = double(int64_t(1) << 30);
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using namespace detail;  // precisions and depths (oracle/precision_depth.h)

enum class Family { Sum, Prod, Max, Min, None };
Family family_of(RedOp op) {
  switch (op) {
    case RedOp::Sum: return Family::Sum;
    case RedOp::Prod: return Family::Prod;
    case RedOp::Max: return Family::Max;
    case RedOp::Min: return Family::Min;
    default: return Family::None;
  }
}

struct Frame {
  const LetE* let;
  std::shared_ptr<const Frame> parent;
  int id;
};
using Scope = std::shared_ptr<const Frame>;
int scope_id(const Scope& s) { return s ? s->id : 0; }

struct AnalysisError {
  std::string message;
};

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

  // -- structure recognition
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

  // -- root discovery
  void walk(const Expr& e, const Scope& sc, const std::string& owner, bool top);
  void chain_walk(const Expr& e, const Scope& sc, Family fam, const std::string& owner);
  void strip_walk(Expr e, Scope sc, Family fam, const std::string& owner);
  void add_root(const Expr& e, const Scope& sc, Family fam, const std::string& owner, bool top);

  // -- graph building
  int slot_by_name(const std::string& n);
  int slot_hoist(const Expr& e, const Scope& sc);
  int leaf_node(int slot, const std::string& label, const Shape& shape, DType dt);
  int node_for(const Expr& e, const Scope& sc, Family fam, const std::string& name);
  Edge strip(Expr e, Scope sc, Family fam, const Shape& consumer);
  void finalize(Edge& ed);

  // -- index mapping
  int64_t eval_iexpr(const IExpr& e, const std::vector<int64_t>& idx, const ViewStep& st) const;
  int64_t map_general(const Edge& ed, int64_t flat) const;
  int64_t map_one(const Edge& ed, int64_t flat) const;
  void cursor_start(const Edge& ed, int64_t flat) const;
  void cursor_next(const Edge& ed) const;

  // -- evaluation
  void emit(double v, const Depth& eff, const Depth& st, int leaf, int64_t off, SumAcc& a) const;
  void visit_sum(int id, int64_t q, const Depth& eff, const Depth& st, double sign, SumAcc& a) const;
  void visit_prod(int id, int64_t q, ProdAcc& a) const;
  void visit_max(int id, int64_t q, MaxAcc& a) const;
  void check_narrow(const Node& nd, int64_t q, int64_t nonzero_before, SumAcc& a) const;
  BoundRow run_root(const RootSpec& r, int id);
  double expansion(int id);
  std::map<int, double> expansion_;
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
  mutable std::vector<int64_t> s1_, s2_;
  std::unique_ptr<SumAcc> sum_acc_;
};

const LinInfo* Analyzer::linear(const Lambda& fn) {
  if (auto it = lin_.find(&fn); it != lin_.end()) return it->second.get();
  if (nonlin_.count(&fn)) return nullptr;
  auto info = std::make_unique<LinInfo>();
  info->round_cls.assign(fn.code.size(), -1);
  bool ok = !fn.code.empty() && is_float(fn.result_type());
  for (DType t : fn.param_types) ok &= is_float(t);
  // Rounding classes of the instructions.
  for (size_t k = 0; ok && k < fn.code.size(); ++k) {
    const Instr& in = fn.code[k];
    switch (in.kind) {
      case Instr::Kind::Param: break;
      case Instr::Kind::Const: ok &= is_float(in.type); break;
      case Instr::Kind::Op:
        if (in.op == ScalarOp::Add || in.op == ScalarOp::Sub) info->round_cls[k] = int8_t(cls_of(compute_type(in.type)));
        else if (in.op != ScalarOp::Neg) ok = false;
        break;
      case Instr::Kind::Cast: {
        DType from = fn.code[size_t(in.a)].type, to = in.type;
        if (!is_float(from) || !is_float(to)) {
          ok = false;
          break;
        }
        bool rounds;
        if (to == DType::F64) rounds = false;
        else if (to == DType::F32) rounds = from == DType::F64;
        else rounds = !(from == to && fn.code[size_t(in.a)].kind == Instr::Kind::Param);
        if (rounds) info->round_cls[k] = int8_t(cls_of(to));
        break;
      }
    }
  }
  // Terms: every occurrence of a param/constant on a path from the result.
  if (ok) {
    struct Item {
      int k;
      double sign;
      std::vector<int> path;
    };
    std::vector<Item> stack{{int(fn.code.size()) - 1, 1.0, {}}};
    while (ok && !stack.empty()) {
      Item it = std::move(stack.back());
      stack.pop_back();
      const Instr& in = fn.code[size_t(it.k)];
      if (info->round_cls[size_t(it.k)] >= 0) it.path.push_back(it.k);
      switch (in.kind) {
        case Instr::Kind::Param: info->terms.push_back({in.a, 0.0, it.sign, it.path}); break;
        case Instr::Kind::Const: info->terms.push_back({-1, in.value.as_double(), it.sign, it.path}); break;
        case Instr::Kind::Cast: stack.push_back({in.a, it.sign, it.path}); break;
        case Instr::Kind::Op:
          if (in.op == ScalarOp::Neg) {
            stack.push_back({in.a, -it.sign, it.path});
          } else {
            stack.push_back({in.b, in.op == ScalarOp::Sub ? -it.sign : it.sign, it.path});
            stack.push_back({in.a, it.sign, it.path});
          }
          break;
      }
      if (info->terms.size() > 4096) ok = false;
    }
  }
  if (!ok) {
    nonlin_.insert(&fn);
    return nullptr;
  }
  const LinInfo* r = info.get();
  lin_[&fn] = std::move(info);
  return r;
}

bool Analyzer::reaches_red(const Expr& e0, Scope sc) {
  auto key = std::make_pair(e0.get(), scope_id(sc));
  if (auto it = reaches_.find(key); it != reaches_.end()) return it->second;
  reaches_[key] = false;  // guards against (impossible) cycles
  Expr e = e0;
  bool r = false;
  for (int guard = 0; guard < 100000; ++guard) {
    if (auto* x = std::get_if<NameE>(&e->p)) {
      Resolved rs = resolve(x->name, sc);
      if (rs.k != Resolved::Let && rs.k != Resolved::Binding) break;
      e = rs.e;
      sc = rs.sc;
      continue;
    }
    if (auto* x = std::get_if<LetE>(&e->p)) {
      sc = push(sc, x);
      e = x->body;
      continue;
    }
    if (auto* x = std::get_if<ViewE>(&e->p)) {
      e = x->src;
      continue;
    }
    if (auto* x = std::get_if<RedE>(&e->p)) {
      r = x->op == RedOp::Sum && is_float(e->type.dtype);
    } else if (auto* x = std::get_if<MapE>(&e->p)) {
      if (is_float(e->type.dtype) && linear(x->fn))
        for (const Expr& a : x->args)
          if (reaches_red(a, sc)) {
            r = true;
            break;
          }
    }
    break;
  }
  reaches_[key] = r;
  return r;
}

// ---- Root discovery ----

void Analyzer::add_root(const Expr& e, const Scope& sc, Family fam, const std::string& owner, bool top) {
  auto key = std::make_tuple(e.get(), scope_id(sc), int(fam));
  if (!rooted_.insert(key).second) return;
  RootSpec r{e, sc, fam, owner, owner, top};
  if (!top) {
    std::string kind = std::holds_alternative<RedE>(e->p) ? std::string(red_name(std::get<RedE>(e->p).op)) : "map";
    r.name = owner + "/" + kind + "#" + std::to_string(++nested_count_[owner]);
  }
  roots_.push_back(std::move(r));
}

void Analyzer::walk(const Expr& e, const Scope& sc, const std::string& owner, bool top) {
  if (!walked_.insert({e.get(), scope_id(sc), top}).second) return;
  if (auto* x = std::get_if<NameE>(&e->p)) {
    Resolved r = resolve(x->name, sc);
    if (r.k == Resolved::Binding) uses_[x->name].nonchain = true;
    if (r.k == Resolved::Let) walk(r.e, r.sc, owner, false);  // a let-bound reduction read here is a root
    return;
  }
  if (auto* x = std::get_if<LetE>(&e->p)) {
    // A let-bound reduction is walked where its name is read: as a root
    // (walk) or as a partial of a sum (strip_walk).
    if (!rootable(x->value, sc)) walk(x->value, sc, owner, false);
    walk(x->body, push(sc, x), owner, top);
    return;
  }
  if (auto* x = std::get_if<ViewE>(&e->p)) {
    walk(x->src, sc, owner, false);
    return;
  }
  if (auto* x = std::get_if<MapE>(&e->p)) {
    if (is_candidate(e, sc, Family::Sum)) {
      add_root(e, sc, Family::Sum, owner, top);
      chain_walk(e, sc, Family::Sum, owner);
    } else {
      for (const Expr& a : x->args) walk(a, sc, owner, false);
    }
    return;
  }
  if (auto* x = std::get_if<RedE>(&e->p)) {
    Family fam = family_of(x->op);
    if (fam != Family::None && is_float(e->type.dtype)) {
      add_root(e, sc, fam, owner, top);
      chain_walk(e, sc, fam, owner);
    } else {
      walk(x->src, sc, owner, false);
    }
  }
}

void Analyzer::chain_walk(const Expr& e, const Scope& sc, Family fam, const std::string& owner) {
  if (!chain_walked_.insert({e.get(), scope_id(sc), int(fam)}).second) return;
  if (auto* x = std::get_if<RedE>(&e->p)) strip_walk(x->src, sc, fam, owner);
  if (auto* x = std::get_if<MapE>(&e->p))
    for (const Expr& a : x->args) strip_walk(a, sc, fam, owner);
}

void Analyzer::strip_walk(Expr e, Scope sc, Family fam, const std::string& owner) {
  bool via_binding = false;
  std::string bname;
  for (int guard = 0; guard < 100000; ++guard) {
    if (auto* x = std::get_if<NameE>(&e->p)) {
      Resolved r = resolve(x->name, sc);
      if (r.k == Resolved::Binding) {
        if (!via_binding) bname = x->name;
        via_binding = true;
        e = r.e;
        sc = r.sc;
        continue;
      }
      if (r.k == Resolved::Let) {
        e = r.e;
        sc = r.sc;
        continue;
      }
      return;  // an input
    }
    if (auto* x = std::get_if<LetE>(&e->p)) {
      if (!rootable(x->value, sc)) walk(x->value, sc, owner, false);
      sc = push(sc, x);
      e = x->body;
      continue;
    }
    if (auto* x = std::get_if<ViewE>(&e->p)) {
      e = x->src;
      continue;
    }
    break;
  }
  if (is_candidate(e, sc, fam)) {
    if (via_binding) uses_[bname].chain = true;
    chain_walk(e, sc, fam, via_binding ? bname : owner);
    return;
  }
  // A leaf: a binding's own walk covers it; otherwise walk it here.
  if (via_binding) uses_[bname].nonchain = true;
  else walk(e, sc, owner, false);
}

// ---- Graph building ----

int Analyzer::slot_by_name(const std::string& n) {
  if (auto it = slot_name_.find(n); it != slot_name_.end()) return it->second;
  Slot s;
  s.name = n;
  s.input = inputs_.count(n) > 0;
  slots_.push_back(std::move(s));
  return slot_name_[n] = int(slots_.size()) - 1;
}

int Analyzer::slot_hoist(const Expr& e, const Scope& sc) {
  if (!sc)
    if (auto it = top_expr_.find(e.get()); it != top_expr_.end()) return slot_by_name(it->second);
  auto key = std::make_pair(e.get(), scope_id(sc));
  if (auto it = slot_expr_.find(key); it != slot_expr_.end()) return it->second;
  Slot s;
  s.name = "%bound." + std::to_string(slots_.size());
  s.hoist = e;
  s.scope = sc;
  slots_.push_back(std::move(s));
  return slot_expr_[key] = int(slots_.size()) - 1;
}

int Analyzer::leaf_node(int slot, const std::string& label, const Shape& shape, DType dt) {
  if (auto it = leaf_memo_.find(slot); it != leaf_memo_.end()) return it->second;
  Node nd;
  nd.kind = Node::Kind::Leaf;
  nd.slot = slot;
  nd.label = label;
  nd.shape = shape;
  nd.dtype = dt;
  nodes_.push_back(std::move(nd));
  return leaf_memo_[slot] = int(nodes_.size()) - 1;
}

int Analyzer::node_for(const Expr& e, const Scope& sc, Family fam, const std::string& name) {
  auto key = std::make_tuple(e.get(), scope_id(sc), int(fam));
  if (auto it = node_memo_.find(key); it != node_memo_.end()) return it->second;
  int id = int(nodes_.size());
  nodes_.emplace_back();
  node_memo_[key] = id;
  Node nd;
  nd.fam = fam;
  nd.dtype = e->type.dtype;
  nd.shape = e->type.shape;
  auto value_slot = [&] { return name.empty() ? slot_hoist(e, sc) : slot_by_name(name); };
  if (auto* r = std::get_if<RedE>(&e->p)) {
    nd.kind = Node::Kind::Red;
    nd.op = r->op;
    nd.init = r->init.as_double();
    nd.init_zero = nd.init == 0.0;
    nd.init_unit = std::fabs(nd.init) == 1.0;
    nd.n = num_elements(r->extents);
    nd.acc_cls = cls_of(compute_type(nd.dtype));
    if (is_half(nd.dtype)) {
      nd.store_cls = cls_of(nd.dtype);
      nd.narrow_check = true;
      nd.value_slot = value_slot();
    }
    nd.child = strip(r->src, sc, fam, r->src->type.shape);
  } else {
    const auto& m = std::get<MapE>(e->p);
    nd.kind = Node::Kind::Lin;
    nd.fn = &m.fn;
    nd.lin = linear(m.fn);
    STAX_CHECK(nd.lin) << "linear map expected";
    const Instr& res = m.fn.code.back();
    bool res_add = res.kind == Instr::Kind::Op && (res.op == ScalarOp::Add || res.op == ScalarOp::Sub);
    if (is_half(nd.dtype) && res_add) nd.store_cls = cls_of(nd.dtype);
    bool res_narrow = nd.lin->round_cls.back() >= 0 && res.kind == Instr::Kind::Cast;
    if (nd.store_cls >= 0 || res_narrow) {
      nd.narrow_check = true;
      nd.value_slot = value_slot();
    }
    for (const Expr& a : m.args) nd.args.push_back(strip(a, sc, fam, e->type.shape));
    size_t nc = m.fn.code.size(), na = m.args.size();
    nd.z.assign(nc, 0);
    nd.rnd.assign(nc, 0);
    nd.argz.assign(na, 0);
    nd.argv.assign(na, 0.0);
    nd.argi.assign(na, 0);
  }
  nodes_[size_t(id)] = std::move(nd);
  return id;
}

Edge Analyzer::strip(Expr e, Scope sc, Family fam, const Shape& consumer) {
  Edge ed;
  ed.consumer = consumer;
  std::string name;  // a name whose value is the current expression (no view since)
  Resolved::K name_kind = Resolved::None;
  for (int guard = 0;; ++guard) {
    if (guard > 100000) throw AnalysisError{"view chain too long"};
    if (auto* x = std::get_if<NameE>(&e->p)) {
      Resolved r = resolve(x->name, sc);
      if (r.k == Resolved::Input) {
        ed.target = leaf_node(slot_by_name(x->name), x->name, e->type.shape, e->type.dtype);
        break;
      }
      if (r.k == Resolved::None) throw AnalysisError{"unbound name " + x->name};
      name = x->name;
      name_kind = r.k;
      e = r.e;
      sc = r.sc;
      continue;
    }
    if (auto* x = std::get_if<LetE>(&e->p)) {
      sc = push(sc, x);
      e = x->body;
      continue;
    }
    if (auto* x = std::get_if<ViewE>(&e->p)) {
      ViewStep st;
      st.map = &x->map;
      st.src = x->src->type.shape;
      st.out = e->type.shape;
      for (const IExpr& ie : x->map.exprs) st.wrap.push_back(iexpr_has_load(ie));
      std::function<void(const IExpr&)> loads = [&](const IExpr& ie) {
        if (ie->kind == IExprNode::Kind::Load && !st.loads.count(ie->name)) {
          Resolved r = resolve(ie->name, sc);
          if (r.k == Resolved::Let) st.loads[ie->name] = slot_hoist(r.e, r.sc);
          else st.loads[ie->name] = slot_by_name(ie->name);
        }
        for (const IExpr& a : ie->args) loads(a);
      };
      for (const IExpr& ie : x->map.exprs) loads(ie);
      ed.views.push_back(std::move(st));
      name.clear();
      name_kind = Resolved::None;
      e = x->src;
      continue;
    }
    if (is_candidate(e, sc, fam)) {
      ed.target = node_for(e, sc, fam, name_kind == Resolved::Binding ? name : "");
      break;
    }
    int slot = name_kind == Resolved::Binding ? slot_by_name(name) : slot_hoist(e, sc);
    std::string label = name;
    if (label.empty()) {
      label = print_expr(e, &p_);
      if (label.size() > 48) label = label.substr(0, 45) + "...";
      label = "(" + label + ")";
    }
    ed.target = leaf_node(slot, label, e->type.shape, e->type.dtype);
    break;
  }
  ed.target_shape = e->type.shape;
  finalize(ed);
  return ed;
}

void Analyzer::finalize(Edge& ed) {
  ed.idx.assign(ed.consumer.size(), 0);
  if (ed.views.empty()) {
    STAX_CHECK(ed.consumer == ed.target_shape) << "edge without views changes the shape";
    ed.kind = Edge::Kind::Identity;
    return;
  }
  std::vector<Affine> afs;
  for (const ViewStep& st : ed.views) {
    if (!st.loads.empty()) {
      ed.kind = Edge::Kind::General;
      return;
    }
    auto af = as_affine(*st.map, int(st.out.size()));
    if (!af || !view_statically_in_bounds(st.src, st.out, *st.map)) {
      ed.kind = Edge::Kind::General;
      return;
    }
    afs.push_back(std::move(*af));
  }
  auto apply = [&](std::vector<int64_t> idx) {
    for (const Affine& af : afs) {
      std::vector<int64_t> out(af.c.size());
      for (size_t j = 0; j < af.c.size(); ++j) {
        int64_t v = af.c[j];
        for (size_t k = 0; k < idx.size(); ++k) v += af.a[j][k] * idx[k];
        out[j] = v;
      }
      idx = std::move(out);
    }
    int64_t flat = 0;
    for (size_t j = 0; j < idx.size(); ++j) flat = flat * ed.target_shape[j] + idx[j];
    return flat;
  };
  std::vector<int64_t> zero(ed.consumer.size(), 0);
  ed.base = apply(zero);
  ed.stride.assign(ed.consumer.size(), 0);
  for (size_t k = 0; k < ed.consumer.size(); ++k) {
    std::vector<int64_t> e1 = zero;
    e1[k] = 1;
    ed.stride[k] = apply(e1) - ed.base;
  }
  ed.kind = Edge::Kind::Affine;
}

int64_t Analyzer::eval_iexpr(const IExpr& e, const std::vector<int64_t>& idx, const ViewStep& st) const {
  using K = IExprNode::Kind;
  switch (e->kind) {
    case K::Const: return e->value;
    case K::Var: return idx[size_t(e->value)];
    case K::Add: return ieee::wrap_add(eval_iexpr(e->args[0], idx, st), eval_iexpr(e->args[1], idx, st));
    case K::Sub: return ieee::wrap_sub(eval_iexpr(e->args[0], idx, st), eval_iexpr(e->args[1], idx, st));
    case K::Mul: return ieee::wrap_mul(e->value, eval_iexpr(e->args[0], idx, st));
    case K::FloorDiv: return ieee::floor_div(eval_iexpr(e->args[0], idx, st), e->value);
    case K::Mod: return ieee::py_mod(eval_iexpr(e->args[0], idx, st), e->value);
    case K::Load: {
      const Tensor& t = *slots_[size_t(st.loads.at(e->name))].t;
      int64_t off = 0;
      for (size_t k = 0; k < e->args.size(); ++k) {
        int64_t v = eval_iexpr(e->args[k], idx, st);
        if (v < 0 || v >= t.shape[k]) throw AnalysisError{"load out of range"};
        off = off * t.shape[k] + v;
      }
      return t.get_int(off);
    }
  }
  return 0;
}

int64_t Analyzer::map_general(const Edge& ed, int64_t flat) const {
  std::vector<int64_t>& a = s1_;
  std::vector<int64_t>& b = s2_;
  a.assign(ed.consumer.size(), 0);
  for (size_t k = ed.consumer.size(); k-- > 0;) {
    a[k] = flat % ed.consumer[k];
    flat /= ed.consumer[k];
  }
  for (const ViewStep& st : ed.views) {
    b.assign(st.src.size(), 0);
    for (size_t j = 0; j < st.src.size(); ++j) {
      int64_t v = eval_iexpr(st.map->exprs[j], a, st);
      if (st.wrap[j] && v < 0) v += st.src[j];
      if (v < 0 || v >= st.src[j]) throw AnalysisError{"view index out of range"};
      b[j] = v;
    }
    std::swap(a, b);
  }
  int64_t off = 0;
  for (size_t j = 0; j < a.size(); ++j) off = off * ed.target_shape[j] + a[j];
  return off;
}

int64_t Analyzer::map_one(const Edge& ed, int64_t flat) const {
  switch (ed.kind) {
    case Edge::Kind::Identity: return flat;
    case Edge::Kind::Affine: {
      int64_t off = ed.base;
      for (size_t k = ed.consumer.size(); k-- > 0;) {
        off += ed.stride[k] * (flat % ed.consumer[k]);
        flat /= ed.consumer[k];
      }
      return off;
    }
    case Edge::Kind::General: return map_general(ed, flat);
  }
  return flat;
}

void Analyzer::cursor_start(const Edge& ed, int64_t flat) const {
  ed.flat = flat;
  if (ed.kind == Edge::Kind::Affine) {
    int64_t off = ed.base, f = flat;
    for (size_t k = ed.consumer.size(); k-- > 0;) {
      ed.idx[k] = f % ed.consumer[k];
      off += ed.stride[k] * ed.idx[k];
      f /= ed.consumer[k];
    }
    ed.off = off;
  } else {
    ed.off = map_one(ed, flat);
  }
}

void Analyzer::cursor_next(const Edge& ed) const {
  ++ed.flat;
  switch (ed.kind) {
    case Edge::Kind::Identity: ++ed.off; return;
    case Edge::Kind::Affine:
      for (size_t k = ed.consumer.size(); k-- > 0;) {
        ed.off += ed.stride[k];
        if (++ed.idx[k] < ed.consumer[k]) return;
        ed.off -= ed.stride[k] * ed.consumer[k];
        ed.idx[k] = 0;
      }
      return;
    case Edge::Kind::General:
      if (ed.flat < num_elements(ed.consumer)) ed.off = map_general(ed, ed.flat);
      return;
  }
}

// ---- Evaluation ----

inline void Analyzer::emit(double v, const Depth& eff, const Depth& st, int leaf, int64_t off, SumAcc& a) const {
  ++a.count;
  int32_t de = eff.n[size_t(a.main_cls)];
  if (de > a.max_eff) a.max_eff = de;
  for (int k = 0; k < kClasses; ++k)
    if (st.n[size_t(k)] > a.max_st.n[size_t(k)]) a.max_st.n[size_t(k)] = st.n[size_t(k)];
  if (v == 0.0) return;
  if (!std::isfinite(v)) {
    a.nonfinite = true;
    return;
  }
  ++a.nonzero;
  double c = coefficient(eff, a.main_cls, *a.gt);
  double av = std::fabs(v);
  double term = c * av;
  a.bound += term;
  a.sum_abs += av;
  a.ex.add(v);
  if (a.top) {
    Cand cd{term, v, eff, leaf, off};
    if (a.top->size() < a.top_k) {
      a.top->push_back(cd);
      std::push_heap(a.top->begin(), a.top->end());
    } else if (!a.top->empty() && term > a.top->front().term) {
      std::pop_heap(a.top->begin(), a.top->end());
      a.top->back() = cd;
      std::push_heap(a.top->begin(), a.top->end());
    }
  }
}

void Analyzer::check_narrow(const Node& nd, int64_t q, int64_t nonzero_before, SumAcc& a) const {
  if (!nd.narrow_check || nd.value_slot < 0) return;
  double v = read(*slots_[size_t(nd.value_slot)].t, q);
  double av = std::fabs(v);
  if ((av > 0 && av < min_normal(nd.dtype)) || (av == 0 && a.nonzero > nonzero_before)) a.underflow = true;
}

void Analyzer::visit_sum(int id, int64_t q, const Depth& eff, const Depth& st, double sign, SumAcc& a) const {
  const Node& nd = nodes_[size_t(id)];
  int64_t nz0 = a.nonzero;
  if (nd.kind == Node::Kind::Red) {
    Depth e = eff, s = st;
    if (nd.store_cls >= 0) {
      ++e.n[size_t(nd.store_cls)];
      ++s.n[size_t(nd.store_cls)];
    }
    const size_t k = size_t(nd.acc_cls);
    const int64_t n = nd.n;
    const Edge& ch = nd.child;
    const Node& c = nodes_[size_t(ch.target)];
    int64_t R = 0;
    if (c.kind == Node::Kind::Leaf && n <= kSmallFold) {
      // A short fold: read the elements once.
      const Tensor& t = *slots_[size_t(c.slot)].t;
      std::array<double, kSmallFold> vs;
      std::array<int64_t, kSmallFold> offs;
      bool z = nd.init_zero;
      if (n > 0) cursor_start(ch, q * n);
      for (int64_t r = 0; r < n; ++r) {
        double v = read(t, ch.off);
        vs[size_t(r)] = v;
        offs[size_t(r)] = ch.off;
        if (v != 0.0 || std::isnan(v)) {
          R += !z;
          z = false;
        }
        if (r + 1 < n) cursor_next(ch);
      }
      int64_t pre = 0;
      z = nd.init_zero;
      Depth e2 = e, s2 = s;
      for (int64_t r = 0; r < n; ++r) {
        double v = vs[size_t(r)];
        e2.n[k] = e.n[k] + int32_t(R - pre);
        s2.n[k] = s.n[k] + int32_t(r == 0 ? n - (nd.init_zero ? 1 : 0) : n - r);
        emit(sign * v, e2, s2, ch.target, offs[size_t(r)], a);
        if (v != 0.0 || std::isnan(v)) {
          pre += !z;
          z = false;
        }
      }
    } else if (c.kind == Node::Kind::Leaf) {
      const Tensor& t = *slots_[size_t(c.slot)].t;
      // Pass 1: which steps round (an exact zero on either side does not).
      bool z = nd.init_zero;
      if (n > 0) cursor_start(ch, q * n);
      for (int64_t r = 0; r < n; ++r) {
        double v = read(t, ch.off);
        if (v != 0.0 || std::isnan(v)) {
          R += !z;
          z = false;
        }
        cursor_next(ch);
      }
      // Pass 2: element r goes through the rounding steps r, r+1, ...
      int64_t pre = 0;
      z = nd.init_zero;
      if (n > 0) cursor_start(ch, q * n);
      Depth e2 = e, s2 = s;
      for (int64_t r = 0; r < n; ++r) {
        double v = read(t, ch.off);
        bool nzv = v != 0.0 || std::isnan(v);
        e2.n[k] = e.n[k] + int32_t(R - pre);
        s2.n[k] = s.n[k] + int32_t(r == 0 ? n - (nd.init_zero ? 1 : 0) : n - r);
        emit(sign * v, e2, s2, ch.target, ch.off, a);
        if (nzv) {
          pre += !z;
          z = false;
        }
        cursor_next(ch);
      }
    } else {
      R = n - (nd.init_zero && n > 0 ? 1 : 0);
      if (n > 0) cursor_start(ch, q * n);
      Depth e2 = e, s2 = s;
      for (int64_t r = 0; r < n; ++r) {
        int32_t d = int32_t(r == 0 ? R : n - r);
        e2.n[k] = e.n[k] + d;
        s2.n[k] = s.n[k] + d;
        int64_t off = ch.off;
        visit_sum(ch.target, off, e2, s2, sign, a);
        cursor_next(ch);
      }
    }
    if (!nd.init_zero) {
      Depth e2 = e, s2 = s;
      e2.n[k] += int32_t(R);
      s2.n[k] += int32_t(n);
      emit(sign * nd.init, e2, s2, -1, -1, a);
    }
    check_narrow(nd, q, nz0, a);
    return;
  }
  // A linear map.
  const LinInfo& L = *nd.lin;
  const Lambda& fn = *nd.fn;
  for (size_t j = 0; j < nd.args.size(); ++j) {
    const Edge& ed = nd.args[j];
    int64_t off = map_one(ed, q);
    nd.argi[j] = off;
    const Node& c = nodes_[size_t(ed.target)];
    if (c.kind == Node::Kind::Leaf) {
      double v = read(*slots_[size_t(c.slot)].t, off);
      nd.argv[j] = v;
      nd.argz[j] = v == 0.0;
    } else {
      nd.argz[j] = 0;  // a partial: not known to be zero
    }
  }
  for (size_t k = 0; k < fn.code.size(); ++k) {
    const Instr& in = fn.code[k];
    uint8_t zk = 0, rk = 0;
    switch (in.kind) {
      case Instr::Kind::Param: zk = nd.argz[size_t(in.a)]; break;
      case Instr::Kind::Const: zk = in.value.as_double() == 0.0; break;
      case Instr::Kind::Cast:
        zk = nd.z[size_t(in.a)];
        rk = L.round_cls[k] >= 0 && !zk;
        break;
      case Instr::Kind::Op:
        if (in.op == ScalarOp::Neg) {
          zk = nd.z[size_t(in.a)];
        } else {
          uint8_t za = nd.z[size_t(in.a)], zb = nd.z[size_t(in.b)];
          zk = za && zb;
          rk = !(za || zb);
        }
        break;
    }
    nd.z[k] = zk;
    nd.rnd[k] = rk;
  }
  Depth e = eff, s = st;
  if (nd.store_cls >= 0) {
    ++s.n[size_t(nd.store_cls)];
    if (!nd.z.back()) ++e.n[size_t(nd.store_cls)];
  }
  for (const Term& t : L.terms) {
    Depth e2 = e, s2 = s;
    for (int k : t.path) {
      size_t c = size_t(L.round_cls[size_t(k)]);
      ++s2.n[c];
      if (nd.rnd[size_t(k)]) ++e2.n[c];
    }
    double sg = sign * t.sign;
    if (t.param < 0) {
      emit(sg * t.cval, e2, s2, -1, -1, a);
      continue;
    }
    const Edge& ed = nd.args[size_t(t.param)];
    const Node& c = nodes_[size_t(ed.target)];
    if (c.kind == Node::Kind::Leaf) emit(sg * nd.argv[size_t(t.param)], e2, s2, ed.target, nd.argi[size_t(t.param)], a);
    else visit_sum(ed.target, nd.argi[size_t(t.param)], e2, s2, sg, a);
  }
  check_narrow(nd, q, nz0, a);
}

void Analyzer::visit_prod(int id, int64_t q, ProdAcc& a) const {
  const Node& nd = nodes_[size_t(id)];
  const int64_t n = nd.n;
  if (nd.store_cls >= 0) ++a.S;
  const Edge& ch = nd.child;
  const Node& c = nodes_[size_t(ch.target)];
  // A step is exact when the accumulator or the factor is ±1 (an init of ±1,
  // identity padding with 1.0); partial products count as rounding.
  bool unit = nd.init_unit;
  int64_t rounds = 0;
  if (n > 0) cursor_start(ch, q * n);
  for (int64_t r = 0; r < n; ++r) {
    if (c.kind == Node::Kind::Leaf) {
      double v = read(*slots_[size_t(c.slot)].t, ch.off);
      a.factor(v);
      bool vu = std::fabs(v) == 1.0;
      rounds += !(unit || vu);
      unit = unit && vu;
    } else {
      visit_prod(ch.target, ch.off, a);
      rounds += !unit;
      unit = false;
    }
    cursor_next(ch);
  }
  a.D += rounds;
  if (!nd.init_unit) a.factor(nd.init);
  else if (nd.init < 0) mpfr_neg(a.p, a.p, MPFR_RNDN);
}

void Analyzer::visit_max(int id, int64_t q, MaxAcc& a) const {
  const Node& nd = nodes_[size_t(id)];
  const int64_t n = nd.n;
  const Edge& ch = nd.child;
  const Node& c = nodes_[size_t(ch.target)];
  a.take(nd.init);
  if (n > 0) cursor_start(ch, q * n);
  for (int64_t r = 0; r < n; ++r) {
    if (c.kind == Node::Kind::Leaf) a.take(read(*slots_[size_t(c.slot)].t, ch.off));
    else visit_max(ch.target, ch.off, a);
    cursor_next(ch);
  }
}

std::string Analyzer::where(int leaf, int64_t off) const {
  if (leaf < 0) return "constant (init)";
  const Node& nd = nodes_[size_t(leaf)];
  return nd.label + index_text(unflatten(nd.shape, off));
}

void Analyzer::describe(BoundRow& row, int id) const {
  if (row.op == RedOp::Max || row.op == RedOp::Min) {
    row.higham = "exact: IEEE maximum/minimum are associative and commutative";
    row.higham_match = true;
    return;
  }
  if (row.op == RedOp::Prod) {
    row.higham = "product: relative gamma(D), D = " + std::to_string(row.max_depth) + " rounding multiplications";
    row.higham_match = true;
    return;
  }
  struct Level {
    int64_t n;
    bool init;
  };
  std::vector<Level> lv;
  bool linear_chain = true;
  for (int cur = id;;) {
    const Node& nd = nodes_[size_t(cur)];
    if (nd.kind == Node::Kind::Leaf) break;
    if (nd.kind == Node::Kind::Red) {
      lv.push_back({nd.n, !nd.init_zero});
      cur = nd.child.target;
      continue;
    }
    if (nd.lin->terms.size() == 1 && nd.lin->terms[0].param >= 0) {
      cur = nd.args[size_t(nd.lin->terms[0].param)].target;
      continue;
    }
    linear_chain = false;
    break;
  }
  if (!linear_chain || lv.empty()) {
    row.higham = "general tree (max depth " + std::to_string(row.max_depth) + ")";
    row.higham_match = false;
    return;
  }
  int64_t formula = 0, total = 1;
  bool any_init = false;
  std::vector<Level> eff;  // levels that can round
  for (const Level& l : lv) {
    row.levels.push_back(l.n);
    if (l.n >= 1) formula += l.n - 1 + (l.init ? 1 : 0);
    any_init |= l.init;
    total *= std::max<int64_t>(l.n, 1);
    if (l.n > 1 || l.init) eff.push_back(l);
  }
  std::string f = std::to_string(formula), init_note = any_init ? " (+1 per nonzero init)" : "";
  std::string name;
  if (eff.size() <= 1) {
    name = "sequential: n-1 = " + std::to_string(total) + "-1";
  } else if (eff.size() == 2) {
    int64_t k = eff[0].n, m = eff[1].n;
    name = "k segments (k=" + std::to_string(k) + "): (n/k-1)+(k-1) = " + std::to_string(m - 1) + "+" +
           std::to_string(k - 1);
  } else {
    bool twos = true, upper_twos = true;
    for (size_t i = 0; i < eff.size(); ++i) {
      twos &= eff[i].n == 2;
      if (i + 1 < eff.size()) upper_twos &= eff[i].n == 2;
    }
    if (twos) {
      name = "pairwise: ceil(log2 n) = log2 " + std::to_string(total);
    } else if (upper_twos) {
      int64_t b = eff.back().n;
      name = "blocks of " + std::to_string(b) + " + pairwise tree: (B-1)+log2(n/B) = " + std::to_string(b - 1) +
             "+" + std::to_string(eff.size() - 1);
    } else {
      name = "nested [";
      for (size_t i = 0; i < eff.size(); ++i) name += (i ? ", " : "") + std::to_string(eff[i].n);
      name += "]: sum(n_l - 1)";
    }
  }
  row.higham = name + init_note + " = " + f;
  row.higham_match = row.max_depth == formula;
}

double Analyzer::expansion(int id) {
  if (auto it = expansion_.find(id); it != expansion_.end()) return it->second;
  const Node& nd = nodes_[size_t(id)];
  double c = 1;
  if (nd.kind == Node::Kind::Red) {
    c = double(nd.n) * expansion(nd.child.target) + 1;
  } else if (nd.kind == Node::Kind::Lin) {
    c = 0;
    for (const Term& t : nd.lin->terms) c += t.param < 0 ? 1 : expansion(nd.args[size_t(t.param)].target);
  }
  return expansion_[id] = c;
}

BoundRow Analyzer::run_root(const RootSpec& rs, int id) {
  // Every path from the root to a leaf is visited once per element.
  double paths = expansion(id) * double(std::max<int64_t>(num_elements(nodes_[size_t(id)].shape), 1));
  if (paths > kMaxPaths)
    throw AnalysisError{"reduction " + rs.name + " expands to " + std::to_string(paths) +
                        " summand paths, over the analysis limit of " + std::to_string(kMaxPaths)};
  const Node& root = nodes_[size_t(id)];
  BoundRow row;
  row.name = rs.name;
  row.output = rs.top && outputs_.count(rs.owner);
  row.op = root.kind == Node::Kind::Red ? root.op : RedOp::Sum;
  row.dtype = root.dtype;
  row.shape = root.shape;
  row.elements = num_elements(root.shape);
  // The accumulation precision: that of the first red below the root.
  int main_cls = cls_of(compute_type(root.dtype));
  for (int cur = id;;) {
    const Node& nd = nodes_[size_t(cur)];
    if (nd.kind == Node::Kind::Red) {
      main_cls = nd.acc_cls;
      break;
    }
    if (nd.kind != Node::Kind::Lin || nd.args.empty()) break;
    cur = nd.args[0].target;
  }
  row.acc = kClassDType[main_cls];
  const Tensor& val = *slots_[size_t(root.value_slot)].t;
  if (opt_.keep_elements) {
    row.elem_measured.assign(size_t(row.elements), kNaN);
    row.elem_bound.assign(size_t(row.elements), kNaN);
    row.elem_exact.assign(size_t(row.elements), kNaN);
  }
  std::map<std::string, int64_t> reasons;
  Depth worst_st;
  auto consider = [&](int64_t q, double shat, double exact, double err, double bound, double sum_abs) {
    double ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : kInf);
    ++row.checked;
    if (opt_.keep_elements) {
      row.elem_measured[size_t(q)] = err;
      row.elem_bound[size_t(q)] = bound;
      row.elem_exact[size_t(q)] = exact;
    }
    if (row.worst < 0 || ratio > row.ratio || (ratio == row.ratio && err > row.measured)) {
      row.worst = q;
      row.computed = shat;
      row.exact = exact;
      row.measured = err;
      row.bound = bound;
      row.ratio = ratio;
      row.sum_abs = sum_abs;
    }
  };
  auto skip = [&](const std::string& why) {
    ++row.skipped;
    ++reasons[why];
  };

  if (rs.fam == Family::Sum) {
    if (!sum_acc_) sum_acc_ = std::make_unique<SumAcc>();
    SumAcc& a = *sum_acc_;
    a.main_cls = main_cls;
    a.top = nullptr;
    for (int64_t q = 0; q < row.elements; ++q) {
      a.reset();
      visit_sum(id, q, Depth{}, Depth{}, 1.0, a);
      row.summands = std::max(row.summands, a.count);
      row.max_effective_depth = std::max<int64_t>(row.max_effective_depth, a.max_eff);
      for (int k = 0; k < kClasses; ++k) worst_st.n[size_t(k)] = std::max(worst_st.n[size_t(k)], a.max_st.n[size_t(k)]);
      double shat = read(val, q);
      if (a.nonfinite) {
        skip("a summand is inf or NaN");
        continue;
      }
      if (!std::isfinite(shat)) {
        skip("overflow: the result is not finite");
        continue;
      }
      if (a.underflow) {
        skip("a narrowing rounding may have underflowed (subnormal half result)");
        continue;
      }
      double exact, err;
      a.ex.finish(shat, exact, err);
      // The bound was summed in double: inflate it by that summation's
      // error (count·2^-52 relative) and by the subnormal floor.
      double bound = a.bound * (1.0 + double(a.nonzero + 4) * 0x1.0p-52) + double(a.nonzero) * 0x1.0p-1074;
      consider(q, shat, exact, err, bound, a.sum_abs);
    }
    row.max_depth = worst_st.n[size_t(main_cls)];
    for (int k = 0; k < kClasses; ++k)
      if (k != main_cls && worst_st.n[size_t(k)])
        row.extra_roundings += (row.extra_roundings.empty() ? "+" : ", +") + std::to_string(worst_st.n[size_t(k)]) +
                               " " + std::string(dtype_name(kClassDType[k]));
    if (row.worst >= 0 && (row.ratio > 1.0 || opt_.top_always) && opt_.top > 0) {
      std::vector<Cand> top;
      a.top = &top;
      a.top_k = size_t(opt_.top);
      a.reset();
      visit_sum(id, row.worst, Depth{}, Depth{}, 1.0, a);
      a.top = nullptr;
      std::sort_heap(top.begin(), top.end());
      for (const Cand& c : top)
        row.top.push_back({where(c.leaf, c.off), c.value, c.depth.total(), depth_text(c.depth, main_cls), c.term});
    }
  } else if (rs.fam == Family::Prod) {
    ProdAcc a;
    DType range = root.dtype;
    for (int64_t q = 0; q < row.elements; ++q) {
      a.reset();
      visit_prod(id, q, a);
      row.summands = std::max(row.summands, a.count);
      row.max_depth = std::max(row.max_depth, a.D);
      double shat = read(val, q);
      if (a.nonfinite || !std::isfinite(shat)) {
        skip("a factor or the result is inf or NaN");
        continue;
      }
      // Every partial product lies within [2^lo, 2^hi] up to the rounding
      // errors ((1+u)^D <= 2^(1.45·D·u) either way, plus a bit) and log2's
      // own (1e-12 each).
      double slack = 2.0 + 2.0 * (double(a.D) * class_u(main_cls) + double(a.S) * 0x1.0p-8) + 1e-12 * double(a.count);
      if (a.lo < min_exponent(range) + slack || a.hi > max_exponent(range) - slack) {
        skip("a partial product may leave the normal range");
        continue;
      }
      double exact = a.zero ? 0.0 : mpfr_get_d(a.p, MPFR_RNDN);
      double err;
      if (a.zero) {
        err = std::fabs(shat);
      } else {
        mpfr_t d;
        mpfr_init2(d, 64);
        mpfr_d_sub(d, shat, a.p, MPFR_RNDA);
        err = std::fabs(mpfr_get_d(d, MPFR_RNDA));
        mpfr_clear(d);
      }
      Depth dd;
      dd.n[size_t(main_cls)] = int32_t(a.D);
      if (root.store_cls >= 0) dd.n[size_t(root.store_cls)] += int32_t(a.S);
      double bound = coefficient(dd) * std::fabs(exact);
      // The reference product was rounded at 512 bits once per factor.
      bound = bound * (1.0 + 0x1.0p-50) + std::fabs(exact) * double(a.count) * 0x1.0p-500;
      consider(q, shat, exact, err, bound, std::fabs(exact));
    }
    row.max_effective_depth = row.max_depth;
  } else {
    MaxAcc a;
    a.is_max = rs.fam == Family::Max;
    for (int64_t q = 0; q < row.elements; ++q) {
      a = MaxAcc{};
      a.is_max = rs.fam == Family::Max;
      visit_max(id, q, a);
      row.summands = std::max(row.summands, a.count);
      double shat = read(val, q);
      double err;
      if (std::isnan(shat) && std::isnan(a.m)) err = 0;
      else if (shat == a.m) err = 0;
      else err = std::isnan(shat - a.m) ? kInf : std::fabs(shat - a.m);
      consider(q, shat, a.m, err, 0.0, std::fabs(a.m));
    }
  }
  for (const auto& [why, cnt] : reasons)
    row.skip_reason += (row.skip_reason.empty() ? "" : "; ") + why + " (" + std::to_string(cnt) + ")";
  if (row.worst >= 0) row.worst_index = unflatten(row.shape, row.worst);
  describe(row, id);
  return row;
}

BoundReport Analyzer::run() {
  auto t0 = std::chrono::steady_clock::now();
  BoundReport rep;
  for (const Binding& b : p_.bindings) walk(b.expr, nullptr, b.name, true);
  // A top-level reduction read only as a partial of other sums is not a root.
  std::vector<RootSpec> roots;
  for (RootSpec& r : roots_) {
    if (r.top && !outputs_.count(r.owner)) {
      const Uses& u = uses_[r.owner];
      if (u.chain && !u.nonchain) continue;
    }
    roots.push_back(r);
  }
  // Build the graphs.
  std::vector<int> ids;
  for (const RootSpec& r : roots) {
    // A root is a binding's value when it is the binding's expression (lets aside).
    std::string name;
    if (r.top) name = r.owner;
    int id = node_for(r.e, r.sc, r.fam, name);
    Node& nd = nodes_[size_t(id)];
    if (nd.value_slot < 0) nd.value_slot = name.empty() ? slot_hoist(r.e, r.sc) : slot_by_name(name);
    ids.push_back(id);
  }
  // Evaluate the program with every tensor the analysis reads as an output.
  Program aug = p_;
  std::set<std::string> outs(p_.outputs.begin(), p_.outputs.end());
  for (const Slot& s : slots_) {
    if (s.input) continue;
    if (s.hoist) {
      Expr w = s.hoist;
      for (const Frame* f = s.scope.get(); f; f = f->parent.get())
        w = make_expr(w->type, LetE{f->let->name, f->let->value, w});
      aug.bindings.push_back({s.name, w, {}});
    }
    if (outs.insert(s.name).second) aug.outputs.push_back(s.name);
  }
  IeeeOutcome ev = eval_ieee(aug, in_);
  if (ev.failure) {
    if (ev.failure->binding.rfind("%bound.", 0) == 0) {
      IeeeOutcome ev0 = eval_ieee(p_, in_);
      rep.failure = ev0.failure ? ev0.failure : ev.failure;
    } else {
      rep.failure = ev.failure;
    }
    return rep;
  }
  for (Slot& s : slots_) s.t = s.input ? &in_.at(s.name) : ev.outputs.at(s.name).get();
  for (size_t i = 0; i < roots.size(); ++i) {
    BoundRow row = run_root(roots[i], ids[i]);
    rep.max_ratio = std::max(rep.max_ratio, row.ratio);
    rep.rows.push_back(std::move(row));
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace

BoundReport analyze_bounds(const Program& p, const Inputs& in, const BoundOptions& opt) {
  Analyzer a(p, in, opt);
  try {
    return a.run();
  } catch (const AnalysisError& e) {
    BoundReport r;
    r.error = "error-bound analysis: " + e.message;
    return r;
  }
}

}  // namespace stax::oracle
