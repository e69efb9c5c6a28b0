// Reversal schedules as data (§5.8, Definition 5.3): a chain
// z_k = phi_k(z_{k-1}), k = 1..l, reversed with s checkpoint slots, slot 0
// holding z_0 at the start. A schedule is a list of actions; the checker
// replays it on state indices only and either rejects it at the first
// offending action or counts what it costs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stax::checkpoint {

enum class ActionKind {
  Advance,   ///< n forward steps from the current state (phi evaluated n times)
  Store,     ///< write the current state into the free slot `arg`
  Restore,   ///< make the state of slot `arg` the current state
  Free,      ///< release slot `arg`
  Backward,  ///< backward step `arg`: zbar_{k-1} from z_{k-1} and zbar_k
};

struct Action {
  ActionKind kind;
  int64_t arg;  ///< steps (Advance), slot (Store, Restore, Free), step k (Backward)
  bool operator==(const Action&) const = default;
};

struct Schedule {
  int64_t steps = 0;  ///< l
  int slots = 0;      ///< s (slot 0 holds z_0 at the start)
  std::vector<Action> actions;
};

struct CheckOptions {
  std::optional<int64_t> max_reps;  ///< reject a step evaluated more than t times
  /// Definition 5.3 lets backward step k read z_{k-1} from the current state
  /// or from a slot; the executor reads the current state only.
  bool backward_reads_current_only = false;
};

/// What a legal schedule costs.
struct Counts {
  int64_t forward_steps = 0;        ///< phi evaluations in all, the first sweep included
  std::vector<int64_t> per_step;    ///< per_step[k-1]: evaluations of phi_k
  int64_t max_reps = 0;             ///< max over k of per_step
  int peak_slots = 0;               ///< most slots occupied at once
  int peak_states = 0;              ///< most distinct states held (slots and current)
};

struct CheckResult {
  std::optional<Counts> counts;  ///< set when the schedule is legal
  int64_t action = -1;           ///< index of the first offending action (actions.size(): the end)
  std::string error;             ///< why it was rejected
  bool ok() const { return counts.has_value(); }
};

CheckResult check_schedule(const Schedule& s, const CheckOptions& o = {});

std::string action_text(const Action& a);
/// One action a line: `advance 3`, `store 1`, `restore 0`, `free 1`, `backward 4`.
std::string schedule_text(const Schedule& s);
nlohmann::json action_json(const Action& a);

}  // namespace stax::checkpoint
