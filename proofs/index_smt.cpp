// The Z3 domain for index expressions (docs/design.md §1, §5): sem::IExpr over the
// mathematical integers, indirect loads as fresh variables constrained by
// the value range of what they load (Ackermann's reduction keeps two loads
// of the same element equal), and the discharge of every index obligation.
// Only proofs/*.cpp include z3++.h (the Alive2 habit).
#include <z3++.h>

#include <chrono>
#include <limits>
#include <optional>

#include "proofs/deadline.h"
#include "proofs/obligation.h"
#include "proofs/solver_guard.h"
#include "semantics/index_eval.h"
#include "semantics/printer.h"

namespace stax::proofs {

using namespace sem;

namespace {

thread_local ProofLog* g_log = nullptr;

/// One context and one incremental solver per thread: creating either costs
/// more than most of these queries (a fresh QF_LIA solver ~8 ms, push/pop on
/// a persistent one well under 1 ms). ASTs are reference counted, but a
/// context keeps every symbol it interned and a solver what its pops leave
/// behind, so both are recycled every kRecycle obligations: a fuzzing
/// campaign discharges millions.
constexpr int kRecycle = 500;
std::optional<z3::context>& thread_context_slot() {
  thread_local std::optional<z3::context> c;
  return c;
}
z3::context& thread_context() {
  auto& c = thread_context_slot();
  if (!c) c.emplace();
  return *c;
}
std::optional<z3::solver>& thread_solver_slot() {
  thread_local std::optional<z3::solver> s;
  return s;
}
/// Between obligations (no expression of the context is alive).
void release() {
  thread_solver_slot().reset();  // the solver before its context
  thread_context_slot().reset();
}
void recycle_when_due() {
  thread_local int discharged = 0;
  if (++discharged % kRecycle == 0) release();
}
z3::solver& thread_solver() {
  auto& s = thread_solver_slot();
  if (!s) s.emplace(thread_context(), "QF_LIA");
  return *s;
}

struct ScopedPush {
  z3::solver& s;
  explicit ScopedPush(z3::solver& x) : s(x) { s.push(); }
  ~ScopedPush() { s.pop(); }
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string numeral(const z3::expr& v) {
  if (v.is_numeral()) return Z3_get_numeral_string(v.ctx(), v);
  return v.to_string();
}

struct Term {
  z3::expr value;
  std::string text;
};

/// Encodes index expressions over given variable values; collects the
/// assumptions its loads bring and every arithmetic term (for the int64 and
/// int32 range goals).
class Encoder {
 public:
  Encoder(z3::context& c, const std::vector<LoadFact>& facts) : c_(c), facts_(facts), assumptions(c) {}

  z3::expr enc(const IExpr& e, const std::vector<z3::expr>& vars, const std::vector<std::string>& names,
               std::vector<Term>* terms) {
    Z3IndexDomain dom{*this, vars, names, terms};
    return eval_iexpr(e, dom);
  }

 private:
  /// The Z3 domain of the index evaluator (index_eval.h): mathematical
  /// integers; every + - * term is recorded for the int64/int32 goals.
  struct Z3IndexDomain {
    using Value = z3::expr;
    Encoder& en;
    const std::vector<z3::expr>& vars;
    const std::vector<std::string>& names;
    std::vector<Term>* terms;

    Value term(const IExprNode& e, Value r) {
      if (terms) terms->push_back({r, print_iexpr(e, names)});
      return r;
    }
    Value constant(const IExprNode&, int64_t c) { return en.c_.int_val(c); }
    Value var(const IExprNode&, int64_t k) {
      if (k < 0 || size_t(k) >= vars.size()) throw Unsupported{"index variable out of range"};
      return vars[size_t(k)];
    }
    Value add(const IExprNode& e, Value a, Value b) { return term(e, a + b); }
    Value sub(const IExprNode& e, Value a, Value b) { return term(e, a - b); }
    Value mul(const IExprNode& e, int64_t c, Value a) { return term(e, en.c_.int_val(c) * a); }
    // Z3's div/mod are Euclidean; for k > 0 they are floor division and
    // Python's modulo. For k < 0: a // k = (-a) // (-k), a % k = a - k*(a // k).
    Value floordiv(const IExprNode&, Value a, int64_t k) {
      if (k == 0) throw Unsupported{"division by zero in an index expression"};
      z3::context& c = en.c_;
      return k > 0 ? z3::expr(c, Z3_mk_div(c, a, c.int_val(k))) : z3::expr(c, Z3_mk_div(c, -a, c.int_val(-k)));
    }
    Value mod(const IExprNode& e, Value a, int64_t k) {
      if (k == 0) throw Unsupported{"division by zero in an index expression"};
      z3::context& c = en.c_;
      return k > 0 ? z3::expr(c, Z3_mk_mod(c, a, c.int_val(k))) : a - c.int_val(k) * floordiv(e, a, k);
    }
    template <class F>
    Value load(const IExprNode& e, F&& arg) {
      std::vector<z3::expr> args;
      for (size_t k = 0; k < e.args.size(); ++k) args.push_back(arg(k));
      return en.load(e, args, names);
    }
  };

  z3::expr load(const IExprNode& e, const std::vector<z3::expr>& args, const std::vector<std::string>& names) {
    const LoadFact* f = nullptr;
    for (const LoadFact& x : facts_)
      if (x.tensor == e.name) f = &x;
    if (!f) throw Unsupported{"no value range for load(" + e.name + ")"};
    // The same element loaded twice is the same value.
    for (const LoadInst& l : loads) {
      if (l.tensor != e.name || l.args.size() != args.size()) continue;
      bool same = true;
      for (size_t k = 0; k < args.size() && same; ++k) same = z3::eq(l.args[k], args[k]);
      if (same) return l.value;
    }
    z3::expr v = c_.int_const(("load" + std::to_string(loads.size()) + "_" + e.name).c_str());
    assumptions.push_back(v >= c_.int_val(f->lo) && v <= c_.int_val(f->hi));
    // Its own indices are in bounds (a separate obligation checks that).
    for (size_t k = 0; k < args.size() && k < f->shape.size(); ++k)
      assumptions.push_back(args[k] >= 0 && args[k] < c_.int_val(f->shape[k]));
    for (const LoadInst& l : loads) {
      if (l.tensor != e.name || l.args.size() != args.size()) continue;
      z3::expr same = c_.bool_val(true);
      for (size_t k = 0; k < args.size(); ++k) same = same && l.args[k] == args[k];
      assumptions.push_back(z3::implies(same, l.value == v));
    }
    loads.push_back({e.name, args, v, print_iexpr(e, names)});
    return v;
  }

 public:
  struct LoadInst {
    std::string tensor;
    std::vector<z3::expr> args;
    z3::expr value;
    std::string text;
  };
  std::vector<LoadInst> loads;

 private:
  z3::context& c_;
  const std::vector<LoadFact>& facts_;

 public:
  z3::expr_vector assumptions;
};

z3::expr wrap_if(bool wrap, const z3::expr& v, int64_t extent) {
  if (!wrap) return v;
  return z3::ite(v < 0, v + v.ctx().int_val(extent), v);
}

z3::expr in_range(const z3::expr& v, __int128 lo, __int128 hi_excl) {
  z3::context& c = v.ctx();
  auto val = [&](__int128 x) {
    if (x >= std::numeric_limits<int64_t>::min() && x <= std::numeric_limits<int64_t>::max())
      return c.int_val(int64_t(x));
    // 2^63 and the like: build from a decimal string
    bool neg = x < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-x) : (unsigned __int128)x;
    std::string s;
    do {
      s.insert(s.begin(), char('0' + int(u % 10)));
      u /= 10;
    } while (u);
    return c.int_val((neg ? "-" + s : s).c_str());
  };
  return v >= val(lo) && v < val(hi_excl);
}

constexpr __int128 k2_63 = (__int128)1 << 63;
constexpr __int128 k2_31 = (__int128)1 << 31;

/// The quantified domain as constants with their bounds.
struct DomainVars {
  std::vector<z3::expr> vars;
  std::vector<std::string> names;
  std::vector<std::pair<std::string, z3::expr>> symbolic;  ///< extents n ≥ 1
  z3::expr_vector bounds;
  explicit DomainVars(z3::context& c) : bounds(c) {}
};

DomainVars make_domain(z3::context& c, const std::vector<DomainDim>& dims) {
  DomainVars d(c);
  for (const DomainDim& dim : dims) {
    z3::expr v = c.int_const(dim.var.c_str());
    d.vars.push_back(v);
    d.names.push_back(dim.var);
    d.bounds.push_back(v >= 0);
    if (dim.extent >= 0) {
      d.bounds.push_back(v < c.int_val(dim.extent));
    } else {
      z3::expr n = c.int_const(("n_" + dim.var).c_str());
      d.symbolic.push_back({"n_" + dim.var, n});
      d.bounds.push_back(n >= 1);
      d.bounds.push_back(v < n);
    }
  }
  return d;
}

/// What a discharge needs besides the domain: premises, the goal, and the
/// values worth showing in a counterexample.
struct Query {
  z3::expr_vector premises;
  z3::expr goal;
  std::vector<std::pair<std::string, z3::expr>> show;
  std::optional<z3::expr> value;  ///< Interval goals: the expression whose range is claimed
  explicit Query(z3::context& c) : premises(c), goal(c.bool_val(true)) {}
};

z3::expr no_overflow(z3::context& c, const std::vector<Term>& terms, __int128 lo, __int128 hi_excl) {
  z3::expr g = c.bool_val(true);
  for (const Term& t : terms) g = g && in_range(t.value, lo, hi_excl);
  return g;
}

std::string counterexample(const z3::model& m, const DomainVars& d, const Encoder& en, const Query& q) {
  std::string s;
  auto add = [&](const std::string& k, const z3::expr& v) {
    s += (s.empty() ? "" : ", ") + k + " = " + numeral(m.eval(v, true));
  };
  for (size_t k = 0; k < d.vars.size(); ++k) add(d.names[k], d.vars[k]);
  for (const auto& [n, v] : d.symbolic) add(n, v);
  for (const auto& l : en.loads) {
    std::string a;
    for (size_t k = 0; k < l.args.size(); ++k) a += (k ? ", " : "") + numeral(m.eval(l.args[k], true));
    add("load(" + l.tensor + (a.empty() ? "" : ", " + a) + ")", l.value);
  }
  for (const auto& [n, v] : q.show) add(n, v);
  return s;
}

/// The goal of each obligation kind.
void build(const Obligation& ob, z3::context& c, const DomainVars& d, Encoder& en, Query& q, const ProofOptions&) {
  std::visit(
      [&](const auto& g) {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, InBoundsGoal>) {
          std::vector<Term> terms;
          z3::expr v = en.enc(g.expr, d.vars, d.names, &terms);
          z3::expr w = wrap_if(g.wrap, v, g.extent);
          q.goal = w >= 0 && w < c.int_val(g.extent);
          if (!terms.empty()) q.goal = q.goal && no_overflow(c, terms, -k2_63, k2_63);
          q.show.push_back({"index", v});
          if (g.wrap) q.show.push_back({"after wrapping", w});
        } else if constexpr (std::is_same_v<G, Int32Goal>) {
          std::vector<Term> terms;
          std::vector<int64_t> t = row_major_strides(g.src);
          z3::expr addr = c.int_val(0);
          for (size_t k = 0; k < g.comps.size(); ++k) {
            z3::expr v = en.enc(g.comps[k], d.vars, d.names, &terms);
            z3::expr w = wrap_if(iexpr_has_load(g.comps[k]), v, g.src[k]);
            q.premises.push_back(w >= 0 && w < c.int_val(g.src[k]));
            z3::expr part = c.int_val(t[k]) * w;
            terms.push_back({part, "stride term " + std::to_string(k)});
            addr = addr + part;
          }
          q.goal = in_range(addr, 0, k2_31 - g.slack) && no_overflow(c, terms, -k2_31, k2_31);
          q.show.push_back({g.slack ? "flat index" : "address", addr});
        } else if constexpr (std::is_same_v<G, AffinityGoal>) {
          // A(point): apply the chain outermost first, then x's row-major strides.
          auto address = [&](std::vector<z3::expr> point) {
            for (size_t k = 0; k < g.chain.size(); ++k) {
              std::vector<z3::expr> next;
              for (const IExpr& e : g.chain[k].exprs) next.push_back(en.enc(e, point, g.chain[k].vars, nullptr));
              point = std::move(next);
            }
            std::vector<int64_t> t = row_major_strides(g.shapes.back());
            z3::expr a = c.int_val(0);
            for (size_t k = 0; k < point.size(); ++k) a = a + c.int_val(t[k]) * point[k];
            return a.simplify();
          };
          std::vector<z3::expr> zero(d.vars.size(), c.int_val(0));
          z3::expr a0 = address(zero);
          z3::expr lin = a0;
          for (size_t v = 0; v < d.vars.size(); ++v) {
            std::vector<z3::expr> e = zero;
            e[v] = c.int_val(1);
            z3::expr coef = address(e) - a0;
            int64_t ext = ob.domain[v].extent;
            if (ext >= 0 && ext < 2) continue;  // i_v is always 0
            lin = lin + coef * d.vars[v];
          }
          z3::expr ai = address(d.vars);
          q.goal = ai == lin;
          q.show.push_back({"address", ai});
          q.show.push_back({"affine form", lin});
        } else if constexpr (std::is_same_v<G, CompositionGoal>) {
          std::vector<z3::expr> mid;
          for (size_t j = 0; j < g.outer.exprs.size(); ++j) {
            z3::expr v = en.enc(g.outer.exprs[j], d.vars, d.names, nullptr);
            z3::expr w = wrap_if(iexpr_has_load(g.outer.exprs[j]), v, g.middle[j]);
            q.premises.push_back(w >= 0 && w < c.int_val(g.middle[j]));  // the source view is defined
            mid.push_back(w);
          }
          z3::expr all = c.bool_val(true);
          for (size_t k = 0; k < g.inner.exprs.size(); ++k) {
            z3::expr s = en.enc(g.inner.exprs[k], mid, g.inner.vars, nullptr);
            s = wrap_if(iexpr_has_load(g.inner.exprs[k]), s, g.base[k]);
            q.premises.push_back(s >= 0 && s < c.int_val(g.base[k]));
            z3::expr t = en.enc(g.composed.exprs[k], d.vars, d.names, nullptr);
            t = wrap_if(iexpr_has_load(g.composed.exprs[k]), t, g.base[k]);
            all = all && s == t;
            q.show.push_back({"inner(outer(i))_" + std::to_string(k), s});
            q.show.push_back({"composed(i)_" + std::to_string(k), t});
          }
          q.goal = all;
        } else if constexpr (std::is_same_v<G, LoopMergeGoal>) {
          std::vector<int64_t> t = row_major_strides(g.src);
          z3::expr before = c.int_val(0), after = c.int_val(0);
          for (size_t k = 0; k < g.before.exprs.size(); ++k) {
            z3::expr v = en.enc(g.before.exprs[k], d.vars, d.names, nullptr);
            v = wrap_if(iexpr_has_load(g.before.exprs[k]), v, g.src[k]);
            q.premises.push_back(v >= 0 && v < c.int_val(g.src[k]));
            before = before + c.int_val(t[k]) * v;
          }
          std::vector<z3::expr> merged;
          int64_t s1 = ob.domain.at(g.j + 1).extent;
          for (size_t v = 0; v < d.vars.size(); ++v) {
            if (v == g.j) merged.push_back(c.int_val(s1) * d.vars[v] + d.vars[v + 1]);
            else if (v != g.j + 1) merged.push_back(d.vars[v]);
          }
          for (size_t k = 0; k < g.after.exprs.size(); ++k) {
            z3::expr v = en.enc(g.after.exprs[k], merged, g.after.vars, nullptr);
            v = wrap_if(iexpr_has_load(g.after.exprs[k]), v, g.src[k]);
            after = after + c.int_val(t[k]) * v;
          }
          q.goal = before == after;
          q.show.push_back({"m", merged.at(g.j)});
          q.show.push_back({"address before", before});
          q.show.push_back({"address after", after});
        } else if constexpr (std::is_same_v<G, MergeRuleGoal>) {
          auto val = [&](const std::optional<int64_t>& x, const char* name) {
            return x ? c.int_val(*x) : c.int_const(name);
          };
          z3::expr sj = val(g.s_j, "s_j"), sj1 = val(g.s_j1, "s_j1"), tj = val(g.t_j, "t_j"),
                   tj1 = val(g.t_j1, "t_j1");
          z3::expr m = c.int_const("m"), qq = c.int_const("q"), r = c.int_const("r");
          q.premises.push_back(sj >= 1 && sj1 >= 1 && tj1 >= 0);
          q.premises.push_back(tj == c.int_val(g.scale) * sj1 * tj1 + c.int_val(g.offset));
          q.premises.push_back(m >= 0 && m < sj * sj1);
          // m // s_{j+1} and m % s_{j+1} for a symbolic divisor s_{j+1} ≥ 1.
          q.premises.push_back(m == sj1 * qq + r && r >= 0 && r < sj1);
          q.goal = tj * qq + tj1 * r == tj1 * m;
          for (auto [n, x] : {std::pair{"s_j", sj}, {"s_j1", sj1}, {"t_j", tj}, {"t_j1", tj1}, {"m", m}})
            q.show.push_back({n, x});
          q.show.push_back({"merged address", tj * qq + tj1 * r});
          q.show.push_back({"t_j1*m", tj1 * m});
        } else if constexpr (std::is_same_v<G, IntervalGoal>) {
          z3::expr v = en.enc(g.expr, d.vars, d.names, nullptr);
          q.goal = v >= c.int_val(g.lo) && v <= c.int_val(g.hi);
          q.show.push_back({"value", v});
          q.value = v;
        }
      },
      ob.goal);
}

/// How tight a proved Interval goal is. `s` holds the domain, the load
/// facts and the premises (not the negated goal). A claimed bound that is
/// attained costs one incremental query; a loose one is measured with
/// z3::optimize.
std::string tightness(const IntervalGoal& g, const z3::expr& v, z3::solver& s, const z3::expr_vector& scope,
                      z3::context& c, const ProofOptions& opt, bool* gave_up) {
  std::string out;
  for (int dir = 0; dir < 2; ++dir) {
    int64_t claimed = dir == 0 ? g.lo : g.hi;
    z3::check_result attained;
    {
      ScopedPush push(s);
      s.add(v == c.int_val(claimed));
      Deadline deadline(opt.timeout_ms, [&c] { c.interrupt(); });
      attained = s.check();
    }
    int64_t x = claimed;
    if (attained != z3::sat) {
      z3::optimize o(c);
      for (const z3::expr& a : scope) o.add(a);
      z3::optimize::handle h = dir == 0 ? o.minimize(v) : o.maximize(v);
      z3::check_result r;
      {
        Deadline deadline(opt.timeout_ms, [&c] { c.interrupt(); });
        r = o.check();
      }
      z3::expr bound = r == z3::sat ? (dir == 0 ? o.lower(h) : o.upper(h)) : c.int_val(0);
      int64_t b = 0;
      if (r != z3::sat || !bound.is_numeral_i64(b)) {
        *gave_up = true;
        return "";
      }
      x = b;
    }
    int64_t slack = dir == 0 ? x - g.lo : g.hi - x;
    out += std::string(dir == 0 ? "exact min " : ", exact max ") + std::to_string(x) + " (interval " +
           std::to_string(claimed) + (slack ? ", loose by " + std::to_string(slack) : ", tight") + ")";
  }
  return out;
}

}  // namespace

void release_thread_solver() { release(); }

ProofVerdict discharge(const Obligation& ob, const ProofOptions& opt) {
  recycle_when_due();
  auto t0 = Clock::now();
  ProofVerdict v;
  unknown_on_failure(v, [&] {
    z3::context& c = thread_context();
    DomainVars d = make_domain(c, ob.domain);
    Encoder en(c, ob.loads);
    Query q(c);
    build(ob, c, d, en, q, opt);
    // Only the symbolic merge rule is nonlinear: it gets a fresh QF_NIA
    // solver; everything else shares the thread's incremental QF_LIA one,
    // the merge rule with every value concrete too (products of constants,
    // division and remainder by constants: linear). The lowering's policy
    // discharges such a rule for every access of every loop merge; without a
    // fresh solver each, `stax lower` of the transformer block graph went
    // from 0.34 to 0.27 s.
    std::optional<z3::solver> own;
    if (const auto* mr = std::get_if<MergeRuleGoal>(&ob.goal); mr && !(mr->s_j && mr->s_j1 && mr->t_j && mr->t_j1))
      own.emplace(c, "QF_NIA");
    z3::solver& s = own ? *own : thread_solver();
    z3::expr_vector scope(c);
    for (const z3::expr& b : d.bounds) scope.push_back(b);
    for (const z3::expr& a : en.assumptions) scope.push_back(a);
    for (const z3::expr& p : q.premises) scope.push_back(p);
    bool expired = false;
    {
      ScopedPush outer(s);
      for (const z3::expr& x : scope) s.add(x);
      z3::check_result r;
      {
        ScopedPush inner(s);
        s.add(!q.goal);
        {
          Deadline deadline(opt.timeout_ms, [&c] { c.interrupt(); });
          r = s.check();
          expired = deadline.expired();
        }
        switch (r) {
          case z3::unsat: v.kind = ProofVerdict::Proved; break;
          case z3::sat:
            v.kind = ProofVerdict::Refuted;
            v.counterexample = counterexample(s.get_model(), d, en, q);
            break;
          case z3::unknown:
            v.kind = ProofVerdict::Unknown;
            v.reason = s.reason_unknown();
            if (expired || v.reason == "canceled" || v.reason == "timeout") v.reason = "timeout";
            break;
        }
      }
      if (v.kind == ProofVerdict::Proved && q.value && opt.tightness) {
        bool gave_up = false;
        std::string t = tightness(std::get<IntervalGoal>(ob.goal), *q.value, s, scope, c, opt, &gave_up);
        v.reason = gave_up ? "tightness unknown (optimize gave up)" : t;
      }
    }
    // An interrupted solver is replaced rather than trusted with the next query.
    if (expired && !own) thread_solver_slot().reset();
  });
  v.ms = ms_since(t0);
  if (v.kind == ProofVerdict::Unknown && v.reason == "timeout")
    v.reason = "timeout after " + std::to_string(int64_t(v.ms)) + " ms";
  return v;
}

ProofLog::ProofLog() : prev_(g_log) { g_log = this; }
ProofLog::~ProofLog() { g_log = prev_; }

ProofVerdict discharge_logged(const Obligation& ob, const ProofOptions& opt) {
  ProofVerdict v = discharge(ob, opt);
  if (g_log) g_log->records.push_back({ob, v});
  return v;
}

void install_default_discharger() {
  sem::set_default_discharger([](const Obligation& ob) { return discharge_logged(ob); });
}

}  // namespace stax::proofs
