// The memory budget (beyond the text): the node-schedule checker
// with a deliberately wrong case per check, store-all / order / heuristic
// schedules, checkpoint schedules measured on the chain DAG, Checkmate's
// integer program (Z3) against brute force over the same model on tiny
// graphs, the below-minimum error, and bit-identical gradients on joint graphs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>

#include "checkpoint/generators.h"
#include "remat/budget_chain.h"
#include "remat/budget_joint.h"
#include "remat/budget_plan.h"
#include "semantics/parser.h"
#include "semantics/random_inputs.h"
#include "tests/remat/remat_test_util.h"

using namespace stax;
using namespace stax::remat;
using stax::test::read_joint;

namespace {

/// a -> b -> c, a -> c; d reads c; output d (sizes 4, 2, 3, 1).
BudgetDag diamond() {
  BudgetDag d;
  d.nodes = {{"a", 4, 1, {}, false}, {"b", 2, 2, {0}, false}, {"c", 3, 3, {0, 1}, false}, {"d", 1, 1, {2}, true}};
  return d;
}

Event C(int v) { return {Event::Compute, v}; }
Event F(int v) { return {Event::Free, v}; }

// ---- brute force over Checkmate's stage model (same as proofs/remat_ilp.h)

struct Brute {
  int64_t min_cost = -1;  ///< least recompute objective under the budget (-1: infeasible)
  int64_t min_peak = -1;  ///< least peak of any stage schedule
};

Brute brute_force(const BudgetDag& d, int64_t budget) {
  const size_t n = d.size();
  std::vector<uint32_t> deps(n, 0);
  std::vector<std::vector<int>> users(n);
  uint32_t outs = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int j : d.nodes[i].inputs) deps[i] |= 1u << j;
    if (d.nodes[i].output) outs |= 1u << i;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (deps[j] >> i & 1) users[i].push_back(int(j));
  const int64_t inf = std::numeric_limits<int64_t>::max();
  // State: S entering the stage -> (best cost within the budget, best peak).
  std::vector<int64_t> cost(size_t(1) << n, inf), peak(size_t(1) << n, inf);
  cost[0] = 0;
  peak[0] = 0;
  for (size_t t = 0; t < n; ++t) {
    std::vector<int64_t> ncost(size_t(1) << n, inf), npeak(size_t(1) << n, inf);
    for (uint32_t S = 0; S < (1u << t); ++S) {
      if (cost[S] == inf && peak[S] == inf) continue;
      for (uint32_t r = 0; r < (1u << t); ++r) {
        uint32_t R = r | (1u << t);
        if (R & S) continue;
        bool legal = true;
        for (size_t j = 0; j <= t; ++j)
          if ((R >> j & 1) && (deps[j] & ~(R | S))) legal = false;
        if (!legal) continue;
        uint32_t avail = R | S;
        for (uint32_t S2 = avail;; S2 = (S2 - 1) & avail) {
          if (t + 1 < n || S2 == outs) {
            if (t + 1 == n && (outs & ~avail)) break;
            int64_t u = 0, p = 0, c = 0;
            for (size_t i = 0; i < t; ++i)
              if (S >> i & 1) u += d.nodes[i].bytes;
            for (size_t k = 0; k <= t; ++k) {
              if (k > 0 && (R >> (k - 1) & 1)) {
                uint32_t dying = deps[k - 1] | (1u << (k - 1));
                for (size_t i = 0; i < n; ++i) {
                  if (!(dying >> i & 1) || (S2 >> i & 1)) continue;
                  bool later = false;
                  for (int j : users[i])
                    if (size_t(j) > k - 1 && size_t(j) <= t && (R >> j & 1)) later = true;
                  if (!later) u -= d.nodes[i].bytes;
                }
              }
              if (R >> k & 1) u += d.nodes[k].bytes, c += d.nodes[k].cost;
              p = std::max(p, u);
            }
            if (peak[S] != inf) npeak[S2] = std::min(npeak[S2], std::max(peak[S], p));
            if (cost[S] != inf && p <= budget) ncost[S2] = std::min(ncost[S2], cost[S] + c);
          }
          if (S2 == 0) break;
        }
      }
    }
    cost.swap(ncost);
    peak.swap(npeak);
  }
  Brute b;
  b.min_cost = cost[outs] == inf ? -1 : cost[outs];
  b.min_peak = peak[outs] == inf ? -1 : peak[outs];
  return b;
}

BudgetDag random_dag(std::mt19937& rng, size_t n) {
  BudgetDag d;
  for (size_t i = 0; i < n; ++i) {
    BudgetNode v{"v" + std::to_string(i), int64_t(rng() % 4 + 1), int64_t(rng() % 5 + 1), {}, false};
    if (i > 0) {
      size_t k = rng() % 3;
      for (size_t j = 0; j < k; ++j) v.inputs.push_back(int(rng() % i));
      std::sort(v.inputs.begin(), v.inputs.end());
      v.inputs.erase(std::unique(v.inputs.begin(), v.inputs.end()), v.inputs.end());
    }
    v.output = i + 1 == n || rng() % 5 == 0;
    d.nodes.push_back(v);
  }
  return d;
}

}  // namespace

TEST_CASE("the node-schedule checker measures legal schedules and rejects each kind of wrong one") {
  BudgetDag d = diamond();
  NodeSchedule s = store_all_schedule(d);
  CHECK(s == NodeSchedule{C(0), C(1), C(2), F(0), F(1), C(3), F(2)});
  ScheduleCheck c = check_node_schedule(d, s, 9);
  REQUIRE(c.ok);
  CHECK(c.peak_bytes == 9);  // a, b, c live while c is computed
  CHECK(c.total_cost == 7);
  CHECK(c.recompute_cost == 0);

  // Over the budget: the same schedule with one byte less.
  c = check_node_schedule(d, s, 8);
  CHECK_FALSE(c.ok);
  CHECK(c.at == 2);
  CHECK(c.error.find("over the budget") != std::string::npos);
  // Computing with a freed operand.
  c = check_node_schedule(d, {C(0), C(1), F(0), C(2), F(1), C(3), F(2)}, std::nullopt);
  CHECK_FALSE(c.ok);
  CHECK(c.at == 3);
  CHECK(c.error.find("operand 'a' is not live") != std::string::npos);
  // A missing output.
  c = check_node_schedule(d, {C(0), C(1), C(2), F(0), F(1), C(3), F(2), F(3)}, std::nullopt);
  CHECK_FALSE(c.ok);
  CHECK(c.at == 8);
  CHECK(c.error.find("output 'd' is not live") != std::string::npos);
  // Freeing what is not live, computing what is live, an unknown node.
  CHECK_FALSE(check_node_schedule(d, {C(0), F(0), F(0)}, std::nullopt).ok);
  CHECK_FALSE(check_node_schedule(d, {C(0), C(0)}, std::nullopt).ok);
  CHECK_FALSE(check_node_schedule(d, {C(7)}, std::nullopt).ok);

  // Recomputation: a freed early and recomputed for c.
  NodeSchedule r = schedule_from_order(d, {0, 1, 0, 2, 3});
  c = check_node_schedule(d, r, std::nullopt);
  REQUIRE(c.ok);
  CHECK(c.peak_bytes == 9);
  CHECK(c.recompute_cost == 1);
  CHECK(c.recomputed() == std::vector<int>{0});
}

TEST_CASE("the heuristic meets budgets down to its least and its schedules are legal") {
  BudgetDag d = diamond();
  CHECK(peak_lower_bound(d) == 9);
  int64_t least = heuristic_least_budget(d);
  CHECK(least == 9);
  auto h = heuristic_schedule(d, least);
  REQUIRE(h);
  CHECK(check_node_schedule(d, *h, least).ok);
  CHECK_FALSE(heuristic_schedule(d, least - 1));

  std::mt19937 rng(7);
  for (int k = 0; k < 40; ++k) {
    BudgetDag r = random_dag(rng, 3 + size_t(k % 10));
    int64_t lb = peak_lower_bound(r), hl = heuristic_least_budget(r);
    CHECK(hl >= lb);
    auto s = heuristic_schedule(r, hl);
    REQUIRE(s);
    CHECK(check_node_schedule(r, *s, hl).ok);
  }
}

TEST_CASE("checkpoint schedules on the chain DAG: legal, recompute = forward steps - (l - 1)") {
  for (int64_t l : {1, 2, 5, 12, 30}) {
    INFO("l = " << l);
    BudgetDag d = chain_dag(l);
    CHECK(d.size() == size_t(2 * l - 1));
    ScheduleCheck sa = check_node_schedule(d, store_all_schedule(d), std::nullopt);
    REQUIRE(sa.ok);
    CHECK(sa.recompute_cost == 0);
    std::vector<checkpoint::Schedule> schedules = {checkpoint::uniform_schedule(l)};
    if (auto b = checkpoint::binomial_schedule(l, 3); std::holds_alternative<checkpoint::Schedule>(b))
      schedules.push_back(std::get<checkpoint::Schedule>(b));
    for (const checkpoint::Schedule& cs : schedules) {
      auto ev = chain_events(cs);
      REQUIRE(std::holds_alternative<NodeSchedule>(ev));
      ScheduleCheck c = check_node_schedule(d, std::get<NodeSchedule>(ev), std::nullopt);
      INFO(c.error);
      REQUIRE(c.ok);
      checkpoint::CheckResult cr = checkpoint::check_schedule(cs);
      CHECK(c.recompute_cost == cr.counts->forward_steps - (l - 1));
      CHECK(c.peak_bytes <= cr.counts->peak_states + 2);
    }
  }
  // A wrong checkpoint schedule is the checkpoint checker's error.
  checkpoint::Schedule bad = checkpoint::uniform_schedule(5);
  bad.actions.insert(bad.actions.begin(), {checkpoint::ActionKind::Restore, 3});
  CHECK(std::holds_alternative<std::string>(chain_events(bad)));
}

TEST_CASE("the exact solver (Checkmate's program, Z3) equals brute force over the same model") {
  std::mt19937 rng(11);
  int compared = 0, infeasible = 0;
  for (int k = 0; k < 30; ++k) {
    BudgetDag d = random_dag(rng, 3 + size_t(k % 4));  // 3..6 nodes
    INFO("case " << k);
    Brute any = brute_force(d, std::numeric_limits<int64_t>::max());
    REQUIRE(any.min_peak >= 0);
    proofs::RematSolution m = proofs::solve_remat_min_memory(remat_problem(d));
    REQUIRE(m.status == proofs::RematSolution::Optimal);
    CHECK(m.objective == any.min_peak);
    CHECK(m.objective >= peak_lower_bound(d));
    for (int64_t budget : {any.min_peak - 1, any.min_peak, any.min_peak + 2}) {
      Brute b = brute_force(d, budget);
      ExactSchedule e = exact_schedule(d, budget);
      if (b.min_cost < 0) {
        CHECK(e.solution.status == proofs::RematSolution::Infeasible);
        ++infeasible;
        continue;
      }
      REQUIRE(e.solution.status == proofs::RematSolution::Optimal);
      CHECK(e.solution.objective == b.min_cost);
      REQUIRE(e.schedule);
      ScheduleCheck c = check_node_schedule(d, *e.schedule, budget);
      INFO(c.error);
      REQUIRE(c.ok);
      CHECK(c.total_cost == e.solution.objective);
      if (auto h = heuristic_schedule(d, budget)) {
        ScheduleCheck hc = check_node_schedule(d, *h, budget);
        CHECK(hc.ok);
        CHECK(hc.total_cost >= c.total_cost);
      }
      ++compared;
    }
  }
  CHECK(compared >= 40);
  CHECK(infeasible >= 20);
  // A wrong solution (a stored value dropped) is caught by the checker.
  BudgetDag d = diamond();
  ExactSchedule e = exact_schedule(d, 9);
  REQUIRE(e.schedule);
  proofs::RematSolution wrong = e.solution;
  // Drop a stored value that a computation of its stage reads (the model's
  // "S[t+1] <= S[t] + R[t]" and "R[t][j] <= R[t][i] + S[t][i]" broken).
  bool dropped = false;
  for (size_t t = 0; t < d.size() && !dropped; ++t)
    for (size_t j = 0; j <= t && !dropped; ++j)
      for (int i : d.nodes[j].inputs)
        if (!dropped && wrong.R[t][j] && wrong.S[t][size_t(i)]) {
          wrong.S[t][size_t(i)] = false;
          dropped = true;
        }
  REQUIRE(dropped);
  CHECK_FALSE(check_node_schedule(d, schedule_from_solution(d, wrong), std::nullopt).ok);
}

TEST_CASE("a budget below the minimum is an error naming it") {
  BudgetDag d = diamond();
  BudgetPlan p = plan_budget(d, std::nullopt, 8);
  CHECK(p.chosen() == nullptr);
  CHECK(p.exact_least == 9);
  CHECK(p.heuristic_least == 9);
  CHECK(p.below_minimum().find("exact minimum is 9 bytes") != std::string::npos);
  BudgetPlan ok = plan_budget(d, std::nullopt, 9);
  REQUIRE(ok.chosen());
  CHECK(ok.below_minimum().empty());
  // Without the exact solver the message states a lower bound.
  BudgetPlan h = plan_budget(d, std::nullopt, 5, {Solver::Heuristic, {}, 40});
  CHECK(h.below_minimum().find("below the lower bound of 9 bytes") != std::string::npos);
}

TEST_CASE("budgeted schedules of joint graphs give the joint graph's bits") {
  const Runner interp = [](const sem::Program& p, const sem::Inputs& in) { return sem::eval_ieee(p, in); };
  for (const char* file : {"examples/graphs/example_5_1_joint.json", "examples/graphs/mlp_joint.json",
                           "examples/graphs/transformer_block_joint.json"}) {
    INFO(file);
    auto jg = read_joint(file);
    auto jb = joint_budget(jg);
    REQUIRE(std::holds_alternative<JointBudget>(jb));
    const JointBudget& b = std::get<JointBudget>(jb);
    sem::Program ins;
    for (const auto& i : jg.graph.inputs) ins.inputs.push_back({i.name, i.type, {}});
    sem::Inputs in = sem::random_inputs(ins, 5, sem::RandomOptions{0.0});
    int64_t top = check_node_schedule(b.dag, store_all_schedule(b.dag), std::nullopt).peak_bytes;
    int64_t least = heuristic_least_budget(b.dag);
    int ran = 0;
    for (int64_t budget : {top, (top + least) / 2, least}) {
      BudgetPlan p = plan_budget(b.dag, std::nullopt, budget);
      const StrategyOutcome* o = p.chosen();
      REQUIRE(o);
      if (budget < top) CHECK(o->check.recompute_cost > 0);
      auto r = run_node_schedule(jg, b, o->schedule, in, interp);
      REQUIRE(std::holds_alternative<Tensors>(r));
      auto diff = differs_from_joint(jg, in, std::get<Tensors>(r));
      INFO(diff.value_or(""));
      CHECK_FALSE(diff);
      ++ran;
      // The wrong case: two gradients swapped (or one output corrupted) differ.
      Tensors wrong = std::get<Tensors>(r);
      const std::string& first = jg.graph.outputs.back();
      auto t = std::make_shared<sem::Tensor>(*wrong.at(first));
      REQUIRE(t->size() > 0);
      auto bad = sem::parse_program("let o : " + sem::type_str({t->dtype, t->shape}) + " = full(" +
                                    sem::type_str({t->dtype, t->shape}) + ", 12345)\noutput o\n");
      REQUIRE(std::holds_alternative<sem::Program>(bad));
      wrong[first] = sem::eval_ieee(std::get<sem::Program>(bad), {}).outputs.at("o");
      CHECK(differs_from_joint(jg, in, wrong));
    }
    CHECK(ran == 3);
    // The transformer block's budgets force recomputation (Example 5.1 and
    // the MLP cannot go below store-all's peak).
    if (b.dag.size() > 100) CHECK(least < top);
    // An illegal schedule is refused by the executor.
    NodeSchedule s = store_all_schedule(b.dag);
    s.erase(s.begin());
    CHECK(std::holds_alternative<StepError>(run_node_schedule(jg, b, s, in, interp)));
  }
}
