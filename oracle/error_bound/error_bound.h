// Error bounds of reductions (§6.5, docs/design.md §4), derived from the structure
// of any program and checked against an exact (MPFR) ground truth.
//
// Every reassociation is written in the core language, so the analysis reads
// the reduction structure straight from the program: a *sum DAG* is a float
// `red(sum, ...)` whose operand reaches, through views, names and lets, either
// another sum red (a partial: depths add along the path) or a *linear map*
// (a lambda made of add/sub/neg/casts/constants, such as NumPy's combine
// `map(add, a, b)` or the final `cast(., f16)` of a half reduction) whose
// operands reach sum partials; anything else is a *leaf*. The summands a_i
// are the leaf elements the DAG reads (the already rounded values entering
// the lowest-level sums) plus any nonzero `init`.
//
// For every element of a reduction root, each summand's path to the root
// carries a number of roundings d_i per precision. A fold step is exact (no
// rounding) when the accumulator is an exact zero (the first element folded
// into an init of ±0) or the element added is a leaf equal to ±0 (identity
// padding with -0.0); a half store or a narrowing cast is one rounding of the
// narrower format. Then (Higham, ch. 4)
//
//     |ŝ − s| ≤ Σ_i c_i·|a_i|,   c_i = Π_p (1 + γ_p(d_i,p)) − 1,
//     γ(n) = n·u / (1 − n·u),
//
// which for a single precision is γ(d_i) and specialises to n−1 (sequential),
// (n/k − 1) + (k − 1) (k segments) and ⌈log2 n⌉ (pairwise). s is the exact
// sum of the same summands (mpfr_sum, exact), ŝ the Ieee result.
// Products: |p̂ − p| ≤ γ(D)·|p| with D the multiplications that round
// (checked only where no partial product can leave the normal range).
// max/min: exact, bound 0.
//
// Elements outside the model are counted and skipped, never passed: a
// non-finite summand or result (overflow), or a subnormal half store.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "semantics/evaluator.h"

namespace stax::oracle {

/// γ(n) = n·u / (1 − n·u); +inf when n·u ≥ 1.
double gamma_n(int64_t n, double u);

/// One summand's share of the bound of the worst element.
struct Contribution {
  std::string where;       ///< tensor and index, e.g. "x[17]", or "init"
  double value = 0;        ///< a_i (with the sign it enters the sum with)
  int64_t depth = 0;       ///< roundings on its path (all precisions)
  std::string depth_text;  ///< e.g. "126" or "12 f32 + 1 f16"
  double term = 0;         ///< c_i·|a_i|
};

/// One reduction root (a float sum/prod/max/min whose value something other
/// than a sum partial reads, or an output).
struct BoundRow {
  std::string name;  ///< the binding, or "B/sum#k" for the k-th one nested in B
  bool output = false;
  sem::RedOp op = sem::RedOp::Sum;
  sem::DType dtype = sem::DType::F32;
  sem::DType acc = sem::DType::F32;  ///< accumulation dtype (f32 for halves)
  sem::Shape shape;
  int64_t elements = 0;  ///< elements of the root
  int64_t checked = 0;   ///< elements measured
  int64_t skipped = 0;   ///< elements outside the model
  std::string skip_reason;
  int64_t summands = 0;  ///< per element, the largest count (incl. a nonzero init)
  /// Extents of the reds from the root down, when the root is a linear chain
  /// of reds (casts aside); empty otherwise.
  std::vector<int64_t> levels;
  /// Roundings in the accumulation precision on the worst summand path, by
  /// structure (every fold step after the first nonzero element counted) and
  /// effective (steps with an exact zero operand left out).
  int64_t max_depth = 0;
  int64_t max_effective_depth = 0;
  std::string extra_roundings;  ///< other precisions, e.g. "+1 f16"
  std::string higham;           ///< the matched textbook case and its value
  bool higham_match = false;    ///< max_depth equals the case's formula
  // The worst element (largest ratio).
  int64_t worst = -1;
  std::vector<int64_t> worst_index;
  double computed = 0;  ///< ŝ
  double exact = 0;     ///< s, rounded to double
  double measured = 0;  ///< |ŝ − s|
  double bound = 0;
  double ratio = 0;     ///< measured / bound (0/0 = 0)
  double sum_abs = 0;   ///< Σ|a_i| of the worst element
  std::vector<Contribution> top;  ///< its largest contributions (on a violation, or when asked)
  /// Per element, when BoundOptions::keep_elements (NaN where skipped).
  std::vector<double> elem_measured, elem_bound, elem_exact;
};

struct BoundReport {
  std::vector<BoundRow> rows;
  std::optional<sem::Failure> failure;  ///< the program is ⊥ on these inputs
  /// The analysis could not run (e.g. a reduction expanding to more than
  /// 2^30 summand paths): nothing was checked.
  std::optional<std::string> error;
  double max_ratio = 0;
  double seconds = 0;
  bool within() const { return !failure && !error && max_ratio <= 1.0; }
  const BoundRow* row(const std::string& name) const;
};

struct BoundOptions {
  int top = 8;                ///< contributions listed for a violating element
  bool top_always = false;    ///< list them for every row's worst element
  bool keep_elements = false; ///< fill elem_measured / elem_bound / elem_exact
};

/// Bounds every reduction root of the program on these inputs (which must
/// pass sem::check_inputs). Throws sem::ResourceError on oversized tensors.
BoundReport analyze_bounds(const sem::Program& p, const sem::Inputs& in, const BoundOptions& opt = {});

/// A table, one row per root, and the summands responsible for a violation.
std::string format_bound_report(const BoundReport& r, const std::string& what);
nlohmann::json bound_report_json(const BoundReport& r, const std::string& what);

}  // namespace stax::oracle
