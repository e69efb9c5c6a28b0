// Schedule generators (§5.8): uniform segments (Theorem 5.3) and binomial
// checkpointing (Theorem 5.4, Griewank's revolve), and the closed forms they
// are checked against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "checkpoint/schedule.h"

namespace stax::checkpoint {

/// beta(s, t) = C(s + t, s): the longest chain reversible with s slots and
/// every step evaluated at most t times (Theorem 5.4); saturates at INT64_MAX.
int64_t beta(int64_t s, int64_t t);
/// The least t with beta(s, t) >= l (l >= 1, s >= 1).
int64_t least_reps(int64_t l, int64_t s);
/// Griewank's minimal number of forward steps, t*l - beta(s+1, t-1) with t =
/// least_reps(l, s) (0 when l = 1).
int64_t revolve_forward_steps(int64_t l, int64_t s);

/// Slots the uniform schedule with c segments needs: c checkpoints and the
/// longest segment's interior (its last state stays current).
int64_t uniform_slots(int64_t l, int64_t c);
/// Theorem 5.3: c segments (sizes differing by at most one, the longer
/// first), a checkpoint at each start; each segment replayed storing its
/// states. c = 0 picks ceil(sqrt(l)).
Schedule uniform_schedule(int64_t l, int64_t c = 0);
int64_t ceil_sqrt(int64_t l);

struct GenError {
  std::string message;
};

/// The recursive binomial construction for l steps, s slots, at most t
/// evaluations a step (t unset: the least), each split chosen to minimise the
/// forward steps (a memoised recursion over (length, slots, reps)). Errors
/// when l > beta(s, t) or the sizes are out of range.
std::variant<Schedule, GenError> binomial_schedule(int64_t l, int64_t s, std::optional<int64_t> t = std::nullopt);
/// The same recursion with no bound on repetitions: the fewest forward steps
/// among the nested schedules (Griewank: among all schedules).
std::variant<Schedule, GenError> optimal_schedule(int64_t l, int64_t s);

/// Exactly the proof of Theorem 5.4: l = beta(s, t), split m = beta(s, t-1).
Schedule theorem_5_4_schedule(int64_t s, int64_t t);

}  // namespace stax::checkpoint
