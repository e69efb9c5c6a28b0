// Node schedules under a memory budget: the checker, store-all, schedules
// from a compute order, and the greedy eviction heuristic.
#include "remat/budget_schedule.h"

#include <algorithm>
#include <limits>
#include <set>

namespace stax::remat {

int64_t BudgetDag::cost_once() const {
  int64_t c = 0;
  for (const BudgetNode& n : nodes) c += n.cost;
  return c;
}

std::string BudgetDag::malformed() const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].bytes < 0 || nodes[i].cost < 0) return "node '" + nodes[i].name + "' has negative bytes or cost";
    for (int j : nodes[i].inputs)
      if (j < 0 || size_t(j) >= i)
        return "node '" + nodes[i].name + "' reads node " + std::to_string(j) + ", which does not come before it";
  }
  return "";
}

std::string event_text(const BudgetDag& d, const Event& e) {
  std::string name = e.node >= 0 && size_t(e.node) < d.size() ? d.nodes[size_t(e.node)].name : "#" + std::to_string(e.node);
  return std::string(e.kind == Event::Compute ? "compute " : "free ") + name;
}

std::vector<int> ScheduleCheck::recomputed() const {
  std::vector<int> r;
  for (size_t i = 0; i < computes.size(); ++i)
    if (computes[i] > 1) r.push_back(int(i));
  return r;
}

namespace {

std::vector<int> distinct(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

ScheduleCheck check_node_schedule(const BudgetDag& d, const NodeSchedule& s, std::optional<int64_t> budget) {
  ScheduleCheck r;
  r.computes.assign(d.size(), 0);
  std::vector<bool> live(d.size(), false);
  int64_t mem = 0;
  auto reject = [&](size_t at, std::string why) {
    r.ok = false;
    r.at = int64_t(at);
    r.error = std::move(why);
    return r;
  };
  if (std::string m = d.malformed(); !m.empty()) return reject(0, "malformed graph: " + m);
  for (size_t k = 0; k < s.size(); ++k) {
    const Event& e = s[k];
    if (e.node < 0 || size_t(e.node) >= d.size())
      return reject(k, "event " + std::to_string(k) + " names node " + std::to_string(e.node) + ", out of range");
    const BudgetNode& n = d.nodes[size_t(e.node)];
    std::string where = "event " + std::to_string(k) + " (" + event_text(d, e) + "): ";
    if (e.kind == Event::Free) {
      if (!live[size_t(e.node)]) return reject(k, where + "'" + n.name + "' is not live");
      live[size_t(e.node)] = false;
      mem -= n.bytes;
      continue;
    }
    if (live[size_t(e.node)]) return reject(k, where + "'" + n.name + "' is already live");
    for (int i : n.inputs)
      if (!live[size_t(i)])
        return reject(k, where + "its operand '" + d.nodes[size_t(i)].name + "' is not live");
    live[size_t(e.node)] = true;
    mem += n.bytes;
    ++r.computes[size_t(e.node)];
    r.total_cost += n.cost;
    r.peak_bytes = std::max(r.peak_bytes, mem);
    if (budget && mem > *budget)
      return reject(k, where + std::to_string(mem) + " live bytes, over the budget of " + std::to_string(*budget));
  }
  for (size_t i = 0; i < d.size(); ++i)
    if (d.nodes[i].output && !live[i]) return reject(s.size(), "at the end: the output '" + d.nodes[i].name + "' is not live");
  r.ok = true;
  r.recompute_cost = r.total_cost - d.cost_once();
  for (size_t i = 0; i < d.size(); ++i)
    if (r.computes[i] == 0) r.recompute_cost += d.nodes[i].cost;  // a node never computed saves nothing here
  return r;
}

NodeSchedule schedule_from_order(const BudgetDag& d, const std::vector<int>& order) {
  size_t m = order.size();
  // free_after[p]: the instance computed at position p dies after position
  // free_after[p] (m: never, an output's last instance).
  std::vector<size_t> free_after(m, 0);
  std::vector<size_t> next_compute(m, m);
  std::vector<size_t> last(d.size(), m);
  for (size_t p = m; p-- > 0;) {
    next_compute[p] = last[size_t(order[p])];
    last[size_t(order[p])] = p;
  }
  std::vector<std::vector<size_t>> users(d.size());
  for (size_t i = 0; i < d.size(); ++i)
    for (int j : distinct(d.nodes[i].inputs)) users[size_t(j)].push_back(i);
  // The live instance of each node while walking forward: readers update it.
  std::vector<size_t> current(d.size(), m);
  for (size_t p = 0; p < m; ++p) {
    int v = order[p];
    free_after[p] = p;
    for (int i : distinct(d.nodes[size_t(v)].inputs))
      if (current[size_t(i)] != m) free_after[current[size_t(i)]] = p;
    current[size_t(v)] = p;
  }
  for (size_t p = 0; p < m; ++p)
    if (next_compute[p] == m && d.nodes[size_t(order[p])].output) free_after[p] = m;
  std::vector<std::vector<int>> frees(m);
  for (size_t p = 0; p < m; ++p)
    if (free_after[p] != m) frees[free_after[p]].push_back(order[p]);
  NodeSchedule s;
  for (size_t p = 0; p < m; ++p) {
    s.push_back({Event::Compute, order[p]});
    for (int v : frees[p]) s.push_back({Event::Free, v});
  }
  return s;
}

NodeSchedule store_all_schedule(const BudgetDag& d) {
  std::vector<int> order(d.size());
  for (size_t i = 0; i < d.size(); ++i) order[i] = int(i);
  return schedule_from_order(d, order);
}

namespace {

class Greedy {
 public:
  Greedy(const BudgetDag& d, int64_t budget) : d_(d), budget_(budget), n_(d.size()) {
    live_.assign(n_, false);
    pins_.assign(n_, 0);
    touched_.assign(n_, 0);
    readers_left_.assign(n_, 0);
    for (size_t i = 0; i < n_; ++i)
      for (int j : distinct(d.nodes[i].inputs)) ++readers_left_[size_t(j)];
  }

  std::optional<NodeSchedule> run() {
    for (size_t v = 0; v < n_; ++v) {
      if (!ensure(int(v))) return std::nullopt;
      for (int u : distinct(d_.nodes[v].inputs))
        if (--readers_left_[size_t(u)] == 0 && !d_.nodes[size_t(u)].output && live_[size_t(u)]) release(u);
      if (readers_left_[v] == 0 && !d_.nodes[v].output) release(int(v));
    }
    for (size_t v = 0; v < n_; ++v)
      if (d_.nodes[v].output) {
        if (!ensure(int(v))) return std::nullopt;
        ++pins_[v];  // kept to the end
      }
    return events_;
  }

 private:
  bool ensure(int v) {
    if (live_[size_t(v)]) {
      touched_[size_t(v)] = ++clock_;
      return true;
    }
    if (++steps_ > kMaxSteps) return false;
    std::vector<int> ops = distinct(d_.nodes[size_t(v)].inputs);
    size_t pinned = 0;
    bool ok = true;
    for (int u : ops) {
      if (!ensure(u)) {
        ok = false;
        break;
      }
      ++pins_[size_t(u)];
      ++pinned;
    }
    if (ok) ok = make_room(d_.nodes[size_t(v)].bytes);
    if (ok) {
      events_.push_back({Event::Compute, v});
      live_[size_t(v)] = true;
      mem_ += d_.nodes[size_t(v)].bytes;
      touched_[size_t(v)] = ++clock_;
    }
    for (size_t k = 0; k < pinned; ++k) --pins_[size_t(ops[k])];
    return ok;
  }

  bool make_room(int64_t bytes) {
    while (mem_ + bytes > budget_) {
      int victim = -1;
      double best = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < n_; ++i) {
        if (!live_[i] || pins_[i] > 0 || d_.nodes[i].bytes == 0) continue;
        double stale = double(clock_ - touched_[i] + 1);
        double score = double(projected_cost(int(i))) / (double(d_.nodes[i].bytes) * stale);
        if (score < best) {
          best = score;
          victim = int(i);
        }
      }
      if (victim < 0) return false;
      release(victim);
    }
    return true;
  }

  /// DTR's h: the cost of recomputing v, including the non-live ancestors
  /// that recomputing it would need (its evicted neighbourhood).
  int64_t projected_cost(int v) const {
    int64_t c = d_.nodes[size_t(v)].cost;
    std::vector<int> stack(d_.nodes[size_t(v)].inputs);
    std::vector<bool> seen(n_, false);
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      if (seen[size_t(u)] || live_[size_t(u)]) continue;
      seen[size_t(u)] = true;
      c += d_.nodes[size_t(u)].cost;
      for (int w : d_.nodes[size_t(u)].inputs) stack.push_back(w);
    }
    return c;
  }

  void release(int v) {
    live_[size_t(v)] = false;
    mem_ -= d_.nodes[size_t(v)].bytes;
    events_.push_back({Event::Free, v});
  }

  static constexpr int64_t kMaxSteps = 10'000'000;
  const BudgetDag& d_;
  int64_t budget_;
  size_t n_;
  std::vector<bool> live_;
  std::vector<int> pins_;
  std::vector<int64_t> touched_;
  std::vector<int> readers_left_;
  int64_t clock_ = 0, mem_ = 0, steps_ = 0;
  NodeSchedule events_;
};

}  // namespace

std::optional<NodeSchedule> heuristic_schedule(const BudgetDag& d, int64_t budget) {
  if (!d.malformed().empty()) return std::nullopt;
  return Greedy(d, budget).run();
}

int64_t peak_lower_bound(const BudgetDag& d) {
  int64_t lb = 0, outs = 0;
  for (const BudgetNode& n : d.nodes) {
    int64_t need = n.bytes;
    for (int i : distinct(n.inputs)) need += d.nodes[size_t(i)].bytes;
    lb = std::max(lb, need);
    if (n.output) outs += n.bytes;
  }
  return std::max(lb, outs);
}

int64_t heuristic_least_budget(const BudgetDag& d) {
  auto feasible = [&](int64_t b) {
    auto s = heuristic_schedule(d, b);
    return s && check_node_schedule(d, *s, b).ok;
  };
  int64_t lo = peak_lower_bound(d);
  int64_t hi = check_node_schedule(d, store_all_schedule(d), std::nullopt).peak_bytes;
  if (!feasible(hi)) {
    int64_t all = 0;
    for (const BudgetNode& n : d.nodes) all += n.bytes;
    hi = std::max(hi, all);
  }
  if (feasible(lo)) return lo;
  // Invariant: feasible(hi), !feasible(lo).
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (feasible(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

nlohmann::json schedule_json(const BudgetDag& d, const NodeSchedule& s) {
  nlohmann::json a = nlohmann::json::array();
  for (const Event& e : s) a.push_back(event_text(d, e));
  return a;
}

}  // namespace stax::remat
