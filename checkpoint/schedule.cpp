#include "checkpoint/schedule.h"

#include <map>

namespace stax::checkpoint {

namespace {

std::string state_name(int64_t j) { return "z_" + std::to_string(j); }

}  // namespace

CheckResult check_schedule(const Schedule& s, const CheckOptions& o) {
  CheckResult r;
  if (s.steps < 1) {
    r.error = "the chain needs at least one step (l = " + std::to_string(s.steps) + ")";
    return r;
  }
  if (s.slots < 1) {
    r.error = "at least one slot is needed, for z_0 (s = " + std::to_string(s.slots) + ")";
    return r;
  }
  std::vector<std::optional<int64_t>> slot(static_cast<size_t>(s.slots));
  slot[0] = 0;
  std::optional<int64_t> current = 0;
  int64_t next = s.steps;  // the next backward step; 0 when all have run
  Counts c;
  c.per_step.assign(static_cast<size_t>(s.steps), 0);
  // Distinct states held (slots and current), kept incrementally.
  std::map<int64_t, int> refs;
  int used = 1;
  auto hold = [&](int64_t j) { ++refs[j]; };
  auto drop = [&](int64_t j) {
    if (--refs[j] == 0) refs.erase(j);
  };
  hold(0);
  hold(0);
  auto live = [&] {
    c.peak_slots = std::max(c.peak_slots, used);
    c.peak_states = std::max(c.peak_states, static_cast<int>(refs.size()));
  };
  live();
  auto fail = [&](size_t i, std::string why) {
    r.action = static_cast<int64_t>(i);
    r.error = "action " + std::to_string(i + 1) + " (" + action_text(s.actions[i]) + "): " + why;
    return r;
  };
  auto slot_ok = [&](int64_t i) { return i >= 0 && i < s.slots; };
  for (size_t i = 0; i < s.actions.size(); ++i) {
    const Action& a = s.actions[i];
    switch (a.kind) {
      case ActionKind::Advance: {
        if (a.arg < 1) return fail(i, "advance needs at least one step");
        if (!current) return fail(i, "there is no current state to advance from");
        if (a.arg > s.steps - *current)
          return fail(i, "advances past z_" + std::to_string(s.steps) + " (current " + state_name(*current) + ")");
        for (int64_t j = *current + 1; j <= *current + a.arg; ++j) {
          int64_t n = ++c.per_step[static_cast<size_t>(j - 1)];
          ++c.forward_steps;
          c.max_reps = std::max(c.max_reps, n);
          if (o.max_reps && n > *o.max_reps)
            return fail(i, "phi_" + std::to_string(j) + " evaluated " + std::to_string(n) + " times, more than t = " +
                               std::to_string(*o.max_reps));
        }
        drop(*current);
        *current += a.arg;
        hold(*current);
        break;
      }
      case ActionKind::Store:
        if (!slot_ok(a.arg))
          return fail(i, "slot " + std::to_string(a.arg) + " does not exist: more slots than the " +
                             std::to_string(s.slots) + " allowed");
        if (slot[static_cast<size_t>(a.arg)])
          return fail(i, "slot " + std::to_string(a.arg) + " is not free (it holds " +
                             state_name(*slot[static_cast<size_t>(a.arg)]) + ")");
        if (!current) return fail(i, "there is no current state to store");
        slot[static_cast<size_t>(a.arg)] = current;
        hold(*current), ++used;
        break;
      case ActionKind::Restore:
        if (!slot_ok(a.arg)) return fail(i, "slot " + std::to_string(a.arg) + " does not exist");
        if (!slot[static_cast<size_t>(a.arg)])
          return fail(i, "slot " + std::to_string(a.arg) + " is empty (never stored or freed)");
        if (current) drop(*current);
        current = slot[static_cast<size_t>(a.arg)];
        hold(*current);
        break;
      case ActionKind::Free:
        if (!slot_ok(a.arg)) return fail(i, "slot " + std::to_string(a.arg) + " does not exist");
        if (!slot[static_cast<size_t>(a.arg)]) return fail(i, "slot " + std::to_string(a.arg) + " is already free");
        drop(*slot[static_cast<size_t>(a.arg)]), --used;
        slot[static_cast<size_t>(a.arg)].reset();
        break;
      case ActionKind::Backward: {
        int64_t k = a.arg;
        if (k < 1 || k > s.steps)
          return fail(i, "there is no step " + std::to_string(k) + " (l = " + std::to_string(s.steps) + ")");
        if (k > next) return fail(i, "backward step " + std::to_string(k) + " has already run (out of order)");
        if (k < next)
          return fail(i, "the adjoint zbar_" + std::to_string(k) + " is not available: backward step " +
                             std::to_string(next) + " runs first (out of order)");
        bool in_slot = false;
        for (const auto& v : slot) in_slot = in_slot || (v && *v == k - 1);
        bool is_current = current && *current == k - 1;
        if (!is_current && !(in_slot && !o.backward_reads_current_only))
          return fail(i, "its input state " + state_name(k - 1) + " is not " +
                             (o.backward_reads_current_only ? "the current state" : "the current state or in a slot") +
                             (current ? " (current " + state_name(*current) + ")" : ""));
        --next;
        break;
      }
    }
    live();
  }
  if (next > 0) {
    r.action = static_cast<int64_t>(s.actions.size());
    r.error = "the schedule ends with backward steps " + std::to_string(next) + ".." + "1 missing";
    return r;
  }
  r.counts = std::move(c);
  return r;
}

std::string action_text(const Action& a) {
  switch (a.kind) {
    case ActionKind::Advance: return "advance " + std::to_string(a.arg);
    case ActionKind::Store: return "store " + std::to_string(a.arg);
    case ActionKind::Restore: return "restore " + std::to_string(a.arg);
    case ActionKind::Free: return "free " + std::to_string(a.arg);
    case ActionKind::Backward: return "backward " + std::to_string(a.arg);
  }
  return "?";
}

std::string schedule_text(const Schedule& s) {
  std::string out;
  for (const Action& a : s.actions) out += action_text(a) + "\n";
  return out;
}

nlohmann::json action_json(const Action& a) {
  static const char* names[] = {"advance", "store", "restore", "free", "backward"};
  return {names[static_cast<int>(a.kind)], a.arg};
}

}  // namespace stax::checkpoint
