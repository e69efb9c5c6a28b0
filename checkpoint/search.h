// Exhaustive search over reversal schedules (Definition 5.3): whether a chain
// of l steps can be reversed with s slots and at most t evaluations a step,
// over every schedule, not only the nested ones of Theorem 5.4's proof; and
// from it the true beta(s, t), compared with C(s + t, s). The search's rules
// and the argument that each keeps a schedule whenever one exists are in
// search.cpp and checkpoint/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/schedule.h"

namespace stax::checkpoint {

struct SearchStats {
  int64_t states = 0;         ///< distinct search states recorded (expanded)
  int64_t lemma_pruned = 0;   ///< states cut by an inductive lemma (0 without lemmas)
  int64_t certified = 0;      ///< "yes" verdicts given by a checked construction, not found by search
  bool aborted = false;       ///< the state limit was hit: no verdict
};

/// beta(s', t') values already established by exhaustive search, usable as
/// lemmas (by induction on s + t): a search for (s, t) consults only pairs
/// with s' + t' < s + t. Returns nullopt when the value is not established.
using ProvenBeta = std::function<std::optional<int64_t>(int s, int t)>;

struct SearchOptions {
  int64_t max_states = 20000000;  ///< per search; hitting it aborts (no verdict)
  ProvenBeta lemmas;              ///< unset: no inductive pruning
  /// Search a relaxation first (more schedules: counts inside an interval
  /// between held states drop to the interval's least after every move);
  /// its "no" is final; its "yes" stands only when the schedule it found
  /// passes check_schedule, else the exact search runs.
  bool relax_counts = false;
  /// Before the exact search, accept l <= C(s+t, s) when Theorem 5.4's
  /// construction (binomial_schedule) for l passes check_schedule: a checked
  /// certificate, so the verdict stays exact; counted in stats.certified.
  bool certificates = false;
};

/// Depth-first search over macro moves (restore a held state, advance, then
/// store or run backward steps) with dominance memoisation. Returns nullopt
/// when aborted; otherwise whether some schedule reverses l steps.
std::optional<bool> reversible(int64_t l, int s, int t, SearchStats* stats = nullptr,
                               const SearchOptions& o = {});
/// The same search; on success the schedule it found (legal under
/// check_schedule with max_reps = t). nullopt when none exists or aborted
/// (stats->aborted tells which).
std::optional<Schedule> search_schedule(int64_t l, int s, int t, SearchStats* stats = nullptr,
                                        const SearchOptions& o = {});

/// The largest l with reversible(l, s, t). Reversibility is monotone in l (a
/// schedule for l + 1 steps gives one for l: read phi_1 as the identity,
/// so z_0 = z_1, and drop its no-op actions), so two
/// verdicts reversible(b) and !reversible(b + 1) settle beta = b. `hint`
/// (e.g. the closed form) is only the first pair probed; when it does not
/// bracket, the search doubles l from 1 and bisects. nullopt when aborted.
std::optional<int64_t> search_beta(int s, int t, SearchStats* stats = nullptr, const SearchOptions& o = {},
                                   std::optional<int64_t> hint = std::nullopt);

/// Establishes beta(s, t) for all s >= 1, t >= 0 with s + t <= max_sum, by
/// increasing s + t, each search using the smaller entries as lemmas (and
/// the closed form as hint). Rows are appended as they finish; stops at the
/// first aborted search, or once `deadline_s` seconds have passed before a
/// new sum starts.
struct BetaRow {
  int s = 0, t = 0;
  std::optional<int64_t> beta;  ///< nullopt: aborted
  SearchStats stats;
  double seconds = 0;
};
std::vector<BetaRow> search_beta_table(int max_sum, const SearchOptions& o = {}, double deadline_s = 1e300,
                                       const std::function<void(const BetaRow&)>& on_row = {});

/// A table of established values, by induction: beta(s, t) for s + t < n is
/// searched on demand (recursively, with lemmas) and cached.
class BetaProver {
 public:
  explicit BetaProver(int64_t max_states = 20000000) : max_states_(max_states) {}
  std::optional<int64_t> beta(int s, int t);
  ProvenBeta lemmas();

 private:
  int64_t max_states_;
  std::map<std::pair<int, int>, std::optional<int64_t>> cache_;
};

struct BetaClaim {
  int s = 0, t = 0;
  int64_t beta = 0;
};

/// Checks each claimed beta(s, t) by search: l = beta reversible and l + 1
/// not (the lemmas are values this function establishes itself, never the
/// claims). Returns a message for the first wrong claim, or "" when all hold.
std::string check_beta_table(const std::vector<BetaClaim>& claims, int64_t max_states = 20000000);

}  // namespace stax::checkpoint
