// The exact solver's schedule and the strategies under one budget.
#include "remat/budget_plan.h"

#include <algorithm>
#include <cstdio>

namespace stax::remat {

proofs::RematProblem remat_problem(const BudgetDag& d) {
  proofs::RematProblem p;
  for (const BudgetNode& n : d.nodes) {
    p.bytes.push_back(n.bytes);
    p.cost.push_back(n.cost);
    p.inputs.push_back(n.inputs);
    p.output.push_back(n.output);
  }
  return p;
}

NodeSchedule schedule_from_solution(const BudgetDag& d, const proofs::RematSolution& s) {
  size_t n = d.size();
  std::vector<std::vector<int>> deps(n), users(n);
  for (size_t i = 0; i < n; ++i) {
    deps[i] = d.nodes[i].inputs;
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
    for (int j : deps[i]) users[size_t(j)].push_back(int(i));
  }
  NodeSchedule ev;
  std::vector<bool> live(n, false);
  for (size_t t = 0; t < n && t < s.R.size(); ++t) {
    for (size_t k = 0; k <= t; ++k) {
      if (!s.R[t][k]) continue;
      ev.push_back({Event::Compute, int(k)});
      live[k] = true;
      std::vector<int> dying = deps[k];
      dying.push_back(int(k));
      for (int i : dying) {
        if (!live[size_t(i)] || s.S[t + 1][size_t(i)]) continue;
        bool later = false;
        for (int j : users[size_t(i)])
          if (size_t(j) > k && size_t(j) <= t && s.R[t][size_t(j)]) later = true;
        if (!later) {
          ev.push_back({Event::Free, i});
          live[size_t(i)] = false;
        }
      }
    }
    for (size_t i = 0; i < n; ++i)
      if (live[i] && !s.S[t + 1][i]) {
        ev.push_back({Event::Free, int(i)});
        live[i] = false;
      }
  }
  return ev;
}

ExactSchedule exact_schedule(const BudgetDag& d, int64_t budget, const proofs::RematSolveOptions& o) {
  ExactSchedule e;
  e.solution = proofs::solve_remat_budget(remat_problem(d), budget, o);
  if (e.solution.status == proofs::RematSolution::Optimal) e.schedule = schedule_from_solution(d, e.solution);
  return e;
}

std::optional<Solver> parse_solver(std::string_view s) {
  if (s == "exact") return Solver::Exact;
  if (s == "heuristic") return Solver::Heuristic;
  if (s == "auto") return Solver::Auto;
  return std::nullopt;
}

namespace {

void measure(const BudgetDag& d, StrategyOutcome& o, NodeSchedule s, int64_t budget) {
  o.ran = true;
  o.schedule = std::move(s);
  o.check = check_node_schedule(d, o.schedule, std::nullopt);
  o.fits = o.check.ok && o.check.peak_bytes <= budget;
  if (!o.check.ok) o.note = "illegal schedule: " + o.check.error;
  else if (!o.fits) o.note = "peak " + std::to_string(o.check.peak_bytes) + " bytes, over the budget";
}

}  // namespace

const StrategyOutcome* BudgetPlan::chosen() const {
  const StrategyOutcome* best = nullptr;
  for (const StrategyOutcome* o : {&exact, &store_all, &min_cut, &heuristic})
    if (o->ran && o->fits && (!best || o->check.recompute_cost < best->check.recompute_cost)) best = o;
  return best;
}

std::string BudgetPlan::below_minimum() const {
  if (chosen()) return "";
  std::string b = std::to_string(budget) + " bytes";
  if (exact_least)
    return "the memory budget of " + b + " is below what any schedule can meet: the exact minimum is " +
           std::to_string(*exact_least) + " bytes (Checkmate's model, Z3); the heuristic needs " +
           std::to_string(heuristic_least) + " bytes";
  std::string m = "no schedule found within the memory budget of " + b + ": ";
  if (budget < lower_bound) m += "below the lower bound of " + std::to_string(lower_bound) + " bytes that no schedule can beat";
  else m += "the lower bound is " + std::to_string(lower_bound) + " bytes";
  m += " (the largest node with its operands, or the outputs together); the heuristic needs " +
       std::to_string(heuristic_least) + " bytes; exact minimum unknown (" + exact_least_note + ")";
  return m;
}

nlohmann::json BudgetPlan::json(const BudgetDag& d) const {
  nlohmann::json j;
  j["budget"] = budget;
  j["nodes"] = d.size();
  j["cost_once"] = d.cost_once();
  j["strategies"] = nlohmann::json::array();
  for (const StrategyOutcome* o : {&store_all, &min_cut, &heuristic, &exact}) {
    nlohmann::json r = {{"strategy", o->name}, {"ran", o->ran}, {"fits", o->fits}, {"note", o->note}};
    if (o->ran && o->check.ok) {
      r["peak_bytes"] = o->check.peak_bytes;
      r["total_cost"] = o->check.total_cost;
      r["recompute_cost"] = o->check.recompute_cost;
      nlohmann::json rec = nlohmann::json::array();
      for (int i : o->check.recomputed()) rec.push_back(d.nodes[size_t(i)].name);
      r["recomputed"] = rec;
    }
    j["strategies"].push_back(r);
  }
  const StrategyOutcome* c = chosen();
  j["chosen"] = c ? nlohmann::json(c->name) : nlohmann::json(nullptr);
  if (c) j["schedule"] = schedule_json(d, c->schedule);
  j["lower_bound"] = lower_bound;
  j["heuristic_least_budget"] = heuristic_least;
  j["exact_least_budget"] = exact_least ? nlohmann::json(*exact_least) : nlohmann::json(nullptr);
  if (!c) j["error"] = below_minimum();
  return j;
}

std::string BudgetPlan::text(const BudgetDag& d) const {
  std::string out = "memory budget " + std::to_string(budget) + " bytes (" + std::to_string(d.size()) +
                    " nodes; inputs not counted; computing every node once costs " + std::to_string(d.cost_once()) + "):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-10s %12s %12s %12s  %-4s %s\n", "strategy", "peak bytes", "total cost", "recompute",
                "fits", "note");
  out += line;
  for (const StrategyOutcome* o : {&store_all, &min_cut, &heuristic, &exact}) {
    if (o->ran && o->check.ok)
      std::snprintf(line, sizeof line, "  %-10s %12lld %12lld %12lld  %-4s %s\n", o->name.c_str(),
                    (long long)o->check.peak_bytes, (long long)o->check.total_cost, (long long)o->check.recompute_cost,
                    o->fits ? "yes" : "no", o->note.c_str());
    else
      std::snprintf(line, sizeof line, "  %-10s %12s %12s %12s  %-4s %s\n", o->name.c_str(), "-", "-", "-", "-",
                    o->note.c_str());
    out += line;
  }
  const StrategyOutcome* c = chosen();
  if (!c) return out + "  " + below_minimum() + "\n";
  out += "  chosen: " + c->name + " (" + std::to_string(c->schedule.size()) + " events), recomputes";
  std::vector<int> rec = c->check.recomputed();
  for (int i : rec) out += " " + d.nodes[size_t(i)].name + " (x" + std::to_string(c->check.computes[size_t(i)]) + ")";
  return out + (rec.empty() ? " nothing" : "") + "\n";
}

BudgetPlan plan_budget(const BudgetDag& d, const std::optional<NodeSchedule>& min_cut, int64_t budget, const PlanOptions& o) {
  BudgetPlan p;
  p.budget = budget;
  p.store_all.name = "store-all";
  p.min_cut.name = "min-cut";
  p.heuristic.name = "heuristic";
  p.exact.name = "exact";
  measure(d, p.store_all, store_all_schedule(d), budget);
  if (min_cut) measure(d, p.min_cut, *min_cut, budget);
  else p.min_cut.note = "no min-cut partition for this graph";
  if (o.solver != Solver::Exact) {
    if (auto h = heuristic_schedule(d, budget)) measure(d, p.heuristic, *h, budget);
    else {
      p.heuristic.ran = true;
      p.heuristic.note = "cannot meet the budget (every live value pinned)";
    }
  } else p.heuristic.note = "not asked for (--solver exact)";
  bool run_exact = o.solver == Solver::Exact || (o.solver == Solver::Auto && d.size() <= o.auto_exact_nodes);
  if (run_exact) {
    ExactSchedule e = exact_schedule(d, budget, o.exact);
    p.exact.ran = true;
    if (e.schedule) {
      measure(d, p.exact, *e.schedule, budget);
      if (p.exact.check.ok && p.exact.check.total_cost != e.solution.objective)
        p.exact.note = "the schedule's cost " + std::to_string(p.exact.check.total_cost) + " differs from the model's " +
                       std::to_string(e.solution.objective);
      else if (p.exact.fits) p.exact.note = "optimal (" + std::to_string(int64_t(e.solution.ms)) + " ms)";
    } else
      p.exact.note = std::string(proofs::remat_status_name(e.solution.status)) +
                     (e.solution.reason.empty() ? "" : ": " + e.solution.reason);
  } else
    p.exact.note = o.solver == Solver::Heuristic ? "not asked for (--solver heuristic)"
                                                 : std::to_string(d.size()) + " nodes: above the size auto solves exactly";
  if (!p.chosen()) {
    p.lower_bound = peak_lower_bound(d);
    p.heuristic_least = heuristic_least_budget(d);
    if (d.size() <= o.exact.max_nodes && o.solver != Solver::Heuristic) {
      proofs::RematSolution m = proofs::solve_remat_min_memory(remat_problem(d), o.exact);
      if (m.status == proofs::RematSolution::Optimal) p.exact_least = m.objective;
      else p.exact_least_note = m.reason;
    } else
      p.exact_least_note = "not run";
  }
  return p;
}

}  // namespace stax::remat
