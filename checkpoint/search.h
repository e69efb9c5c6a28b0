// Exhaustive search over reversal schedules (Definition 5.3): whether a chain
// of l steps can be reversed with s slots and at most t evaluations a step,
// over every schedule, not only the nested ones of Theorem 5.4's proof; and
// from it the true beta(s, t), compared with C(s + t, s).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stax::checkpoint {

struct SearchStats {
  int64_t states = 0;   ///< distinct search states visited
  bool aborted = false; ///< the state limit was hit: no verdict
};

/// Depth-first search with memoisation over (next backward step, current
/// state, slot contents as a set, per-step counts of the steps still needed).
/// Prunings, each keeping a schedule if one exists: a backward step runs as
/// soon as its input is available; states past z_{k-1} are never computed or
/// kept; a slot is freed only to store into it. Returns nullopt when aborted.
std::optional<bool> reversible(int64_t l, int s, int t, SearchStats* stats = nullptr, int64_t max_states = 20000000);

/// The largest l with reversible(l, s, t), by trying l = 1, 2, ...; nullopt
/// when a search was aborted.
std::optional<int64_t> search_beta(int s, int t, SearchStats* stats = nullptr, int64_t max_states = 20000000);

struct BetaClaim {
  int s = 0, t = 0;
  int64_t beta = 0;
};

/// Checks each claimed beta(s, t) by search: l = beta reversible and l + 1
/// not. Returns a message for the first wrong claim, or "" when all hold.
std::string check_beta_table(const std::vector<BetaClaim>& claims, int64_t max_states = 20000000);

}  // namespace stax::checkpoint
