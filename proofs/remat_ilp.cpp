// Checkmate's integer program in Z3 (see remat_ilp.h for the model).
#include "proofs/remat_ilp.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "proofs/deadline.h"

namespace stax::proofs {

std::string_view remat_status_name(RematSolution::Status s) {
  switch (s) {
    case RematSolution::Optimal: return "optimal";
    case RematSolution::Infeasible: return "infeasible";
    case RematSolution::Unknown: return "unknown";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

std::string malformed(const RematProblem& p) {
  size_t n = p.size();
  if (p.cost.size() != n || p.inputs.size() != n || p.output.size() != n) return "arrays of different lengths";
  for (size_t i = 0; i < n; ++i) {
    if (p.bytes[i] < 0 || p.cost[i] < 0) return "negative bytes or cost at node " + std::to_string(i);
    for (int j : p.inputs[i])
      if (j < 0 || size_t(j) >= i) return "node " + std::to_string(i) + " reads node " + std::to_string(j) + " (not earlier)";
  }
  return "";
}

/// The model's variables and memory terms; `limit` bounds every U[t][k].
struct Model {
  z3::context& c;
  size_t n;
  std::vector<std::vector<z3::expr>> R, S;  // as Bool expressions (constants where fixed)
  std::vector<std::vector<int>> deps, users;

  Model(z3::context& ctx, const RematProblem& p) : c(ctx), n(p.size()), deps(n), users(n) {
    for (size_t i = 0; i < n; ++i) {
      deps[i] = p.inputs[i];
      std::sort(deps[i].begin(), deps[i].end());
      deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
      for (int d : deps[i]) users[size_t(d)].push_back(int(i));
    }
    for (size_t t = 0; t < n; ++t) {
      R.emplace_back();
      for (size_t i = 0; i < n; ++i)
        R[t].push_back(i == t ? c.bool_val(true)
                              : i < t ? c.bool_const(("R_" + std::to_string(t) + "_" + std::to_string(i)).c_str())
                                      : c.bool_val(false));
    }
    for (size_t t = 0; t <= n; ++t) {
      S.emplace_back();
      for (size_t i = 0; i < n; ++i) {
        if (t == n) S[t].push_back(c.bool_val(p.output[i]));
        else if (i < t) S[t].push_back(c.bool_const(("S_" + std::to_string(t) + "_" + std::to_string(i)).c_str()));
        else S[t].push_back(c.bool_val(false));
      }
    }
  }

  z3::expr free_after(size_t t, size_t i, size_t k) const {
    z3::expr f = R[t][k] && !S[t + 1][i];
    for (int j : users[i])
      if (size_t(j) > k && size_t(j) <= t) f = f && !R[t][size_t(j)];
    return f;
  }

  /// Adds the legality constraints and U[t][k] <= limit; returns the
  /// recompute objective.
  /// Adds the legality constraints and U[t][k] <= budget; returns the
  /// recompute objective. The memory constraints are pseudo-Boolean (Z3's
  /// PB solver is much faster here than linear arithmetic over ite terms)
  /// when every byte count and the budget fit an int; FREE terms get an
  /// auxiliary Boolean each.
  template <class Solver>
  z3::expr constrain(Solver& o, const RematProblem& p, int64_t budget) const {
    bool pb = budget <= INT32_MAX;
    for (int64_t b : p.bytes) pb = pb && b <= INT32_MAX;
    z3::expr zero = c.int_val(0);
    z3::expr limit = c.int_val(int64_t(budget));
    auto bytes = [&](size_t i) { return c.int_val(int64_t(p.bytes[i])); };
    z3::expr objective = zero;
    for (size_t t = 0; t < n; ++t) {
      for (size_t j = 0; j <= t; ++j)
        for (int i : deps[j]) o.add(z3::implies(R[t][j], R[t][size_t(i)] || S[t][size_t(i)]));
      for (size_t i = 0; i < t; ++i) {
        o.add(!(R[t][i] && S[t][i]));
        // Implied: a recomputation is read in its stage or kept for a later one.
        z3::expr used = S[t + 1][i];
        for (int j : users[i])
          if (size_t(j) <= t) used = used || R[t][size_t(j)];
        o.add(z3::implies(R[t][i], used));
      }
      for (size_t i = 0; i <= t; ++i) o.add(z3::implies(S[t + 1][i], S[t][i] || R[t][i]));
      z3::expr u = zero;
      z3::expr_vector terms(c);
      std::vector<int> coeffs;
      auto term = [&](const z3::expr& b, size_t i, int sign) {
        if (pb) {
          terms.push_back(b);
          coeffs.push_back(sign * int(p.bytes[i]));
        } else
          u = sign > 0 ? u + z3::ite(b, bytes(i), zero) : u - z3::ite(b, bytes(i), zero);
      };
      for (size_t i = 0; i < t; ++i) term(S[t][i], i, +1);
      for (size_t k = 0; k <= t; ++k) {
        if (k > 0) {
          std::vector<int> dying = deps[k - 1];
          dying.push_back(int(k - 1));
          for (int i : dying) {
            z3::expr f = free_after(t, size_t(i), k - 1);
            if (pb) {
              z3::expr aux = c.bool_const(("F_" + std::to_string(t) + "_" + std::to_string(i) + "_" + std::to_string(k - 1)).c_str());
              o.add(aux == f);
              f = aux;
            }
            term(f, size_t(i), -1);
          }
        }
        term(R[t][k], k, +1);
        if (pb) o.add(z3::pble(terms, coeffs.data(), int(budget)));
        else o.add(u <= limit);
      }
      for (size_t i = 0; i <= t; ++i)
        if (p.cost[i] != 0) objective = objective + z3::ite(R[t][i], c.int_val(int64_t(p.cost[i])), zero);
    }
    return objective;
  }

  void read(const z3::model& m, RematSolution& s) const {
    s.R.assign(n, std::vector<bool>(n, false));
    s.S.assign(n + 1, std::vector<bool>(n, false));
    for (size_t t = 0; t < n; ++t)
      for (size_t i = 0; i < n; ++i) s.R[t][i] = m.eval(R[t][i], true).is_true();
    for (size_t t = 0; t <= n; ++t)
      for (size_t i = 0; i < n; ++i) s.S[t][i] = m.eval(S[t][i], true).is_true();
  }
};

/// The model's peak for a solution (what the U terms evaluate to).
int64_t model_peak(const RematProblem& p, const RematSolution& s, const std::vector<std::vector<int>>& users,
                   const std::vector<std::vector<int>>& deps) {
  size_t n = p.size();
  int64_t peak = 0;
  for (size_t t = 0; t < n; ++t) {
    int64_t u = 0;
    for (size_t i = 0; i < t; ++i) u += s.S[t][i] ? p.bytes[i] : 0;
    for (size_t k = 0; k <= t; ++k) {
      if (k > 0) {
        std::vector<int> dying = deps[k - 1];
        dying.push_back(int(k - 1));
        for (int i : dying) {
          bool f = s.R[t][k - 1] && !s.S[t + 1][size_t(i)];
          for (int j : users[size_t(i)])
            if (size_t(j) > k - 1 && size_t(j) <= t && s.R[t][size_t(j)]) f = false;
          if (f) u -= p.bytes[size_t(i)];
        }
      }
      u += s.R[t][k] ? p.bytes[k] : 0;
      peak = std::max(peak, u);
    }
  }
  return peak;
}

/// With `minimize_cost` false only feasibility is asked (a plain solver
/// check, much cheaper than the optimizer); the objective is then the cost of
/// the schedule found.
RematSolution solve(const RematProblem& p, int64_t budget, const RematSolveOptions& opt, bool minimize_cost = true) {
  RematSolution s;
  auto t0 = Clock::now();
  if (std::string m = malformed(p); !m.empty()) {
    s.reason = "malformed problem: " + m;
    return s;
  }
  if (p.size() > opt.max_nodes) {
    s.reason = std::to_string(p.size()) + " nodes, more than the exact solver takes (" + std::to_string(opt.max_nodes) + ")";
    return s;
  }
  if (p.size() == 0) {
    s.status = RematSolution::Optimal;
    return s;
  }
  try {
    z3::context c;
    Model model(c, p);
    z3::optimize o(c);
    z3::solver plain(c);
    z3::expr objective = minimize_cost ? model.constrain(o, p, budget) : model.constrain(plain, p, budget);
    std::optional<z3::optimize::handle> h;
    if (minimize_cost) h = o.minimize(objective);
    z3::check_result r;
    bool expired = false;
    {
      Deadline deadline(opt.timeout_ms, [&c] { c.interrupt(); });
      r = minimize_cost ? o.check() : plain.check();
      // The guarded call returned; the destructor joins the timer thread.
      expired = deadline.expired();
    }
    s.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (r == z3::unsat) {
      s.status = RematSolution::Infeasible;
      s.reason = "no schedule of the model meets " + std::to_string(budget) + " bytes";
      return s;
    }
    if (r != z3::sat || expired) {
      s.reason = expired ? "timeout after " + std::to_string(opt.timeout_ms) + " ms" : "z3 returned unknown";
      return s;
    }
    z3::model m = minimize_cost ? o.get_model() : plain.get_model();
    z3::expr v = minimize_cost ? o.lower(*h) : m.eval(objective, true);
    int64_t value = 0;
    if (!v.is_numeral_i64(value)) {
      s.reason = "z3 returned a non-integer optimum";
      return s;
    }
    model.read(m, s);
    s.status = RematSolution::Optimal;
    s.objective = value;
    s.model_peak = model_peak(p, s, model.users, model.deps);
  } catch (const z3::exception& e) {
    s.status = RematSolution::Unknown;
    s.reason = std::string("z3: ") + e.msg();
  }
  s.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return s;
}

}  // namespace

RematSolution solve_remat_budget(const RematProblem& p, int64_t budget, const RematSolveOptions& o) {
  return solve(p, budget, o);
}

RematSolution solve_remat_min_memory(const RematProblem& p, const RematSolveOptions& o) {
  // Binary search on the budget with feasibility checks, between a lower
  // bound (the largest node with its operands; the outputs together) and
  // storing everything (always a schedule of the model), all within one
  // timeout.
  auto t0 = Clock::now();
  RematSolution best;
  if (std::string m = malformed(p); !m.empty()) {
    best.reason = "malformed problem: " + m;
    return best;
  }
  int64_t lo = 0, hi = 0, outs = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    int64_t need = p.bytes[i];
    std::vector<int> d = p.inputs[i];
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    for (int j : d) need += p.bytes[size_t(j)];
    lo = std::max(lo, need);
    hi += p.bytes[i];
    if (p.output[i]) outs += p.bytes[i];
  }
  lo = std::max(lo, outs);
  // Invariant: hi is met (best holds its schedule once found), lo - 1 is not.
  auto left_ms = [&] {
    double spent = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return spent >= double(o.timeout_ms) ? 0u : unsigned(double(o.timeout_ms) - spent);
  };
  RematSolveOptions step = o;
  bool have = false;
  while (true) {
    int64_t mid = have ? lo + (hi - lo) / 2 : hi;
    if (have && lo >= hi) break;
    step.timeout_ms = left_ms();
    if (step.timeout_ms == 0) {
      RematSolution u;
      u.reason = "timeout after " + std::to_string(o.timeout_ms) + " ms (the least budget lies in [" + std::to_string(lo) +
                 ", " + std::to_string(hi) + "])";
      u.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      return u;
    }
    RematSolution r = solve(p, mid, step, false);
    if (r.status == RematSolution::Unknown) {
      r.reason += " (the least budget lies in [" + std::to_string(lo) + ", " + std::to_string(hi) + "])";
      r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      return r;
    }
    if (r.status == RematSolution::Optimal) {
      best = std::move(r);
      hi = std::min(mid, best.model_peak);
      have = true;
    } else {
      if (!have) return r;  // storing everything fails: a bug, or a malformed problem
      lo = mid + 1;
    }
  }
  best.objective = hi;
  best.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return best;
}

}  // namespace stax::proofs
