// The experiments of the text (docs/design.md §6, §7): one function each, writing
// CSV, a Markdown table and a PNG plot (gnuplot) under OUT/NAME/, and
// printing how the figures compare with the text's claims.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace stax::experiments {

struct Options {
  std::string out_dir = "out/experiments";  ///< each experiment writes OUT/NAME/
  int min_log2n = 4, max_log2n = 24, step_log2n = 2;
  uint64_t seed = 1;
  /// Where the section-5 experiments find examples/graphs (relative to the
  /// working directory, the repository root by default).
  std::string examples_dir = "examples/graphs";
  /// Test hook: each section-5 experiment replaces one of the text's values by
  /// a wrong one, so that its comparison must report a mismatch (exit 1).
  bool wrong_expectation = false;
  /// Smaller sweeps and shorter solver timeouts (memory-budget), the beta
  /// table to s + t <= 6 (theorem-5-4).
  bool quick = false;
  /// Where errors (exit 2: a bad --examples graph, an I/O failure) go; null:
  /// the experiment's log. `stax experiment` sets std::cerr.
  std::ostream* errors = nullptr;
  std::ostream& error_stream(std::ostream& log) const { return errors ? *errors : log; }
};

struct Experiment {
  std::string name, summary;
  /// Returns 0 on success, 1 when a check of the experiment failed, 2 on a
  /// usage or I/O error. Progress and the comparison go to `log`.
  std::function<int(const Options&, std::ostream& log)> run;
};

const std::vector<Experiment>& registry();
const Experiment* find_experiment(std::string_view name);

/// §6.5 / docs/design.md §4: measured error, worst-case bound and their ratio for
/// a sum of n = 2^min..2^max f32 values under five orders (sequential, split
/// sqrt(n), 16 lanes, pairwise, NumPy pairwise) and three data sets.
int reduction_bounds(const Options& o, std::ostream& log);

/// §5.3, Listing 5.2: reverse mode on examples/graphs/example_5_1_forward.json
/// (--wrt W, Listing 5.2's names) against the listing, node for node.
int listing_5_2(const Options& o, std::ostream& log);
/// §5.4–5.5, Table 5.1: the network and min cut of example_5_1_joint.json
/// (capacities, max flow, saved set) against the text's figures.
int table_5_1(const Options& o, std::ostream& log);
/// §5.2, Theorem 5.1: the backward/forward op-count ratio of the lowered
/// programs (as `stax grad --cost`) of every example graph against
/// 1 + max(4, c_Omega + 2).
int theorem_5_1(const Options& o, std::ostream& log);
/// §5.7, Proposition 5.2: n*W_jvp against m*W_vjp for the full Jacobian
/// (as `stax jvp --jacobian`) on the example graphs, and J by JVPs = J by VJPs.
int proposition_5_2(const Options& o, std::ostream& log);
/// §5.8, Theorem 5.3: uniform segments' peak states and forward steps
/// for every l in 1..1000 (and a few longer chains) against the theorem.
int theorem_5_3(const Options& o, std::ostream& log);
/// §5.8, Theorem 5.4: beta(s, t) by exhaustive search beside C(s+t, s),
/// and revolve's forward-step count against the schedule checker.
int theorem_5_4(const Options& o, std::ostream& log);
/// Beyond the text: recompute cost against peak memory on chains
/// (store-all, sqrt(l), binomial, heuristic, exact) and on the joint graphs
/// of an MLP and a transformer block (store-all, min-cut, heuristic, exact
/// where it finishes) over a sweep of budgets; every schedule checked, the
/// heuristic never below the exact optimum, gradients bit-identical.
int memory_budget(const Options& o, std::ostream& log);

/// Writes `script` to DIR/NAME.gp and runs gnuplot on it; returns a message
/// when gnuplot is missing or fails (the PNG is then skipped), else "".
std::string run_gnuplot(const std::string& dir, const std::string& name, const std::string& script);

}  // namespace stax::experiments
