// Checkpoint schedules (§5.8, Definition 5.3) as node events.
#include "remat/budget_chain.h"

#include <map>

namespace stax::remat {

int chain_z(int64_t, int64_t k) { return int(k - 1); }
int chain_zbar(int64_t l, int64_t k) { return int((l - 1) + (l - 1 - k)); }

BudgetDag chain_dag(int64_t l) {
  BudgetDag d;
  for (int64_t k = 1; k <= l - 1; ++k) {
    BudgetNode n{"z_" + std::to_string(k), 1, 1, {}, false};
    if (k >= 2) n.inputs.push_back(chain_z(l, k - 1));
    d.nodes.push_back(n);
  }
  for (int64_t k = l; k >= 1; --k) {  // backward step k computes zbar_{k-1}
    BudgetNode n{"zbar_" + std::to_string(k - 1), 1, 1, {}, k == 1};
    if (k - 1 >= 1) n.inputs.push_back(chain_z(l, k - 1));
    if (k < l) n.inputs.push_back(chain_zbar(l, k));
    d.nodes.push_back(n);
  }
  return d;
}

std::variant<NodeSchedule, std::string> chain_events(const checkpoint::Schedule& s) {
  checkpoint::CheckResult cr = checkpoint::check_schedule(s);
  if (!cr.ok()) return "the checkpoint schedule is illegal at action " + std::to_string(cr.action) + ": " + cr.error;
  const int64_t l = s.steps;
  NodeSchedule ev;
  int64_t cur = 0;
  std::map<int64_t, int64_t> slot = {{0, 0}};
  auto held = [&](int64_t state) {
    for (const auto& [i, st] : slot)
      if (st == state) return true;
    return false;
  };
  auto drop = [&](int64_t state) {  // a state nothing holds any more
    if (state >= 1 && state != cur && !held(state)) ev.push_back({Event::Free, chain_z(l, state)});
  };
  for (const checkpoint::Action& a : s.actions) {
    switch (a.kind) {
      case checkpoint::ActionKind::Advance:
        for (int64_t k = 0; k < a.arg; ++k) {
          if (cur + 1 >= l) return std::string("advances onto z_l, which is not a node of the chain DAG");
          ev.push_back({Event::Compute, chain_z(l, cur + 1)});
          int64_t old = cur++;
          drop(old);
        }
        break;
      case checkpoint::ActionKind::Store: slot[a.arg] = cur; break;
      case checkpoint::ActionKind::Restore: {
        int64_t old = cur;
        cur = slot.at(a.arg);
        drop(old);
        break;
      }
      case checkpoint::ActionKind::Free: {
        int64_t st = slot.at(a.arg);
        slot.erase(a.arg);
        drop(st);
        break;
      }
      case checkpoint::ActionKind::Backward:
        ev.push_back({Event::Compute, chain_zbar(l, a.arg - 1)});
        if (a.arg < l) ev.push_back({Event::Free, chain_zbar(l, a.arg)});
        break;
    }
  }
  // The states still held are not outputs.
  std::map<int64_t, bool> left;
  if (cur >= 1) left[cur] = true;
  for (const auto& [i, st] : slot)
    if (st >= 1) left[st] = true;
  for (const auto& [st, b] : left) ev.push_back({Event::Free, chain_z(l, st)});
  return ev;
}

}  // namespace stax::remat
