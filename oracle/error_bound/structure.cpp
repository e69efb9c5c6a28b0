// Structure recognition of the error-bound analysis (§6.5, docs/design.md §4):
// linear maps (lambdas made of add/sub/neg/casts/constants), sum DAGs (a
// float `red(sum, ...)` whose operand reaches, through views, names and
// lets, another sum red or a linear map over sum partials), and the
// reduction roots: a float sum/prod/max/min whose value something other than
// a sum partial reads, or an output.
#include "oracle/error_bound/analyzer.h"
#include "semantics/lambda_eval.h"

namespace stax::oracle::bound_analysis {

namespace {

/// Terms per linear lambda, at most; a larger one is treated as not linear.
constexpr size_t kMaxTerms = 4096;

/// The linear-form domain of sem::eval_lambda: an instruction's value is
/// the list of terms whose signed sum it computes (every occurrence of a
/// parameter or a constant on a path from it, with the rounding
/// instructions on that path, outermost first), in the order of a
/// left-to-right walk. Records each instruction's rounding class; any
/// instruction other than add, sub, neg, a float cast or a float constant
/// makes the lambda non-linear.
struct LinearFormDomain {
  struct Value {
    std::vector<Term> terms;
    bool too_many = false;  ///< more than kMaxTerms terms (the terms are dropped)
    bool param = false;     ///< the instruction is a parameter
  };
  std::vector<int8_t>& round_cls;
  bool linear = true;

  /// The terms of `v` seen from instruction `reg`: below its rounding, if any.
  Value above(size_t reg, Value v) {
    v.param = false;
    if (v.terms.size() > kMaxTerms) {
      v.terms.clear();
      v.too_many = true;
    }
    if (round_cls[reg] >= 0)
      for (Term& t : v.terms) t.path.insert(t.path.begin(), int(reg));
    return v;
  }
  Value param(size_t, size_t index, const Value&) {
    Value v;
    v.terms.push_back({int(index), 0.0, 1.0, {}});
    v.param = true;
    return v;
  }
  Value constant(size_t, const Const& c, DType tag) {
    linear &= is_float(tag);
    Value v;
    v.terms.push_back({-1, c.as_double(), 1.0, {}});
    return v;
  }
  Value apply(size_t reg, ScalarOp op, DType tag, DType, std::span<const Value> args) {
    if (op == ScalarOp::Neg) {
      Value v = args[0];
      for (Term& t : v.terms) t.sign = -t.sign;
      return above(reg, std::move(v));
    }
    if (op != ScalarOp::Add && op != ScalarOp::Sub) {
      linear = false;
      return {};
    }
    round_cls[reg] = int8_t(cls_of(compute_type(tag)));
    Value v = args[0];
    v.too_many |= args[1].too_many;
    for (Term t : args[1].terms) {
      if (op == ScalarOp::Sub) t.sign = -t.sign;
      v.terms.push_back(std::move(t));
    }
    return above(reg, std::move(v));
  }
  Value cast(size_t reg, const Value& v, DType from, DType to) {
    if (!is_float(from) || !is_float(to)) {
      linear = false;
      return {};
    }
    bool rounds;
    if (to == DType::F64) rounds = false;
    else if (to == DType::F32) rounds = from == DType::F64;
    else rounds = !(from == to && v.param);
    if (rounds) round_cls[reg] = int8_t(cls_of(to));
    return above(reg, v);
  }
};

}  // namespace

const LinInfo* Analyzer::linear(const Lambda& fn) {
  if (auto it = lin_.find(&fn); it != lin_.end()) return it->second.get();
  if (nonlin_.count(&fn)) return nullptr;
  auto info = std::make_unique<LinInfo>();
  info->round_cls.assign(fn.code.size(), -1);
  bool ok = !fn.code.empty() && is_float(fn.result_type());
  for (DType t : fn.param_types) ok &= is_float(t);
  if (ok) {
    LinearFormDomain dom{info->round_cls};
    std::vector<LinearFormDomain::Value> params(fn.param_types.size()), regs;
    LinearFormDomain::Value r = sem::eval_lambda(fn, dom, std::span<const LinearFormDomain::Value>(params), regs);
    ok = dom.linear && !r.too_many && r.terms.size() <= kMaxTerms;
    info->terms = std::move(r.terms);
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
  ChainEnd end = follow_chain(e0, std::move(sc));
  const Expr& e = end.e;
  bool r = false;
  if (end.k == ChainEnd::Value) {
    if (auto* x = std::get_if<RedE>(&e->p)) {
      r = x->op == RedOp::Sum && is_float(e->type.dtype);
    } else if (auto* x = std::get_if<MapE>(&e->p)) {
      if (is_float(e->type.dtype) && linear(x->fn))
        for (const Expr& a : x->args)
          if (reaches_red(a, end.sc)) {
            r = true;
            break;
          }
    }
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
  // The first binding on the way, if any; let-bound reductions on the way
  // that cannot be roots are walked where they are bound.
  struct Hooks : ChainHooks {
    Analyzer& a;
    const std::string& owner;
    bool via_binding = false;
    std::string bname;
    Hooks(Analyzer& a, const std::string& owner) : a(a), owner(owner) {}
    void on_name(const std::string& n, Resolved::K k) {
      if (k != Resolved::Binding) return;
      if (!via_binding) bname = n;
      via_binding = true;
    }
    void on_let(const LetE& x, const Scope& sc) {
      if (!a.rootable(x.value, sc)) a.walk(x.value, sc, owner, false);
    }
  } h(*this, owner);
  ChainEnd end = follow_chain(std::move(e), std::move(sc), h);
  if (end.k == ChainEnd::Input || end.k == ChainEnd::Unbound) return;
  if (is_candidate(end.e, end.sc, fam)) {
    if (h.via_binding) uses_[h.bname].chain = true;
    chain_walk(end.e, end.sc, fam, h.via_binding ? h.bname : owner);
    return;
  }
  // A leaf: a binding's own walk covers it; otherwise walk it here.
  if (h.via_binding) uses_[h.bname].nonchain = true;
  else walk(end.e, end.sc, owner, false);
}

std::vector<RootSpec> Analyzer::roots() {
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
  return roots;
}

}  // namespace stax::oracle::bound_analysis
