// The minimum cut of the rematerialization network (§5.4, Theorem 5.2):
// max flow with Boost.Graph's Edmonds–Karp (the text's algorithm), cross-
// checked against Boykov–Kolmogorov on every network; the saved set read off
// the residual network (vertices reachable from s; saved = split edges
// crossing the cut); Proposition 5.1 checked on the result.
//
// The network is solved per component. Two kinds of edges never cross a
// finite cut and are dropped first: a data edge into v_in for v ∈ U (v_in is
// always on s's side, s → v_in being infinite) and a data edge out of v_out
// for v ∈ B (v_out is always on t's side). That leaves every finite cut and
// its capacity unchanged, and splits a deep network into one small network
// per layer, so the O(|V||E|²) algorithm runs on small pieces. `monolithic`
// solves the whole network at once (tests compare the two).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "remat/network.h"

namespace stax::remat {

struct CutOptions {
  bool monolithic = false;  ///< one network, no pruning or components
  /// Deliberate faults for the tests of the cross-checks: BkCapacity adds 1
  /// to one split edge in Boykov–Kolmogorov's networks; EkCutDropsOne drops
  /// the first value of positive capacity from Edmonds–Karp's saved set.
  enum class Fault { None, BkCapacity, EkCutDropsOne } fault = Fault::None;
};

struct MinCut {
  bool finite = true;          ///< false: no finite cut (some needed value can be neither saved nor recomputed)
  int64_t flow_ek = 0;         ///< max flow by Edmonds–Karp
  int64_t flow_bk = 0;         ///< max flow by Boykov–Kolmogorov
  int64_t cut_ek = 0, cut_bk = 0;  ///< capacity of each algorithm's cut (read off its residual network)
  std::vector<int> saved;      ///< value indices whose split edge crosses Edmonds–Karp's cut (primals included)
  std::vector<int> saved_bk;   ///< the same for Boykov–Kolmogorov's cut
  int components = 0;          ///< networks solved
  int vertices = 0, edges = 0; ///< of the full network (2 per value + s, t; edges without reverse edges)
  double seconds_ek = 0, seconds_bk = 0;
  /// Set when a cross-check failed (the two flows, a cut's capacity, or
  /// Proposition 5.1 on either cut): an internal error, never expected.
  std::string error;
};

MinCut min_cut(const Network& net, const CutOptions& opt = {});

/// Definition 5.1: every path from U to B meets `saved` (endpoints count).
/// Returns a path that misses it ("a -> b -> c"), or nullopt when feasible.
std::optional<std::string> infeasible_path(const Network& net, const std::vector<int>& saved);

/// Σ c(v) over `saved` (saturating at kInfinite).
int64_t cut_cost(const Network& net, const std::vector<int>& saved);

/// The least cost of a feasible set, by enumerating every subset (networks
/// of at most 20 values; nullopt above, or when no set is feasible at finite cost).
std::optional<int64_t> brute_force_min_cost(const Network& net);

}  // namespace stax::remat
