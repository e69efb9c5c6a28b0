// Index proof obligations (docs/design.md §5; §6.4, 6.8: Def. 6.4, Prop. 6.3,
// Prop. 6.4, Example 6.3). An obligation is data: its kind, where it comes
// from, the formula in the text's notation, the facts it may assume, and the
// index expressions themselves. `discharge` (index_smt.cpp, the only place
// that sees Z3 for index arithmetic) turns it into a verdict.
//
// Index arithmetic is encoded over the mathematical integers. Floor division
// and Python's modulo by a constant c > 0 are Z3's `div`/`mod`, which are
// Euclidean: for a positive divisor Euclidean and floor semantics coincide
// (the remainder is in [0, c) either way); a negative divisor is rewritten
// as floor(a / c) = floor(-a / -c). The interpreter wraps int64 arithmetic,
// so every goal also requires each intermediate term to stay within int64:
// there the two semantics agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "proofs/verdict.h"
#include "semantics/ir.h"

namespace stax::proofs {

enum class ObligationKind : uint8_t { InBounds, Int32, Affinity, Composition, LoopMerge, Interval };
std::string_view kind_name(ObligationKind k);

/// What it means for the program when the obligation is not proved.
enum class Consequence : uint8_t {
  Fails,         ///< the program fails (⊥) at the counterexample: a bug
  RuntimeCheck,  ///< the index comes from memory: wrap and bounds check are kept
  WideIndex,     ///< 64-bit indexing is kept
  NotAffine,     ///< floor/mod indexing is kept
  Refused,       ///< the transform refuses the rewrite
  AnalysisBug,   ///< the Interval analysis (sem::iexpr_range) is unsound
};
std::string_view consequence_text(Consequence c);

/// A quantified index variable in [0, extent); extent < 0 is a symbolic
/// extent: a variable n ≥ 1 (the goal must hold for every n).
struct DomainDim {
  std::string var;
  int64_t extent = 0;
};

/// The values an indirect load of `tensor` may return, and where that range
/// comes from (the value-range analysis of its producer, or its dtype).
struct LoadFact {
  std::string tensor;
  sem::Shape shape;
  int64_t lo = 0, hi = 0;
  bool from_memory = true;  ///< the dtype's full range: the values are data
  std::string why;
};

/// 0 ≤ wrap(e) < extent, where wrap adds `extent` to a negative value when
/// the component has an indirect load (Python-style, docs/design.md §2).
struct InBoundsGoal {
  sem::IExpr expr;
  int64_t extent = 0;
  bool wrap = false;
};

/// Every intermediate term of the components and the address
/// Σ_k stride_k·wrap(π_k) lie in [-2^31, 2^31 - slack), assuming each
/// component is in bounds (that is checked separately).
struct Int32Goal {
  std::vector<sem::IExpr> comps;
  sem::Shape src;  ///< row-major strides come from it; wrap extents too
  int64_t slack = 0;
};

/// A chain of views, outermost first: view(...view(x, chain.back())..., chain[0]).
/// The address of x (row-major) as a function of the outer index is affine:
/// A(i) = A(0) + Σ_v (A(e_v) − A(0))·i_v for every i.
struct AffinityGoal {
  std::vector<sem::IndexMap> chain;
  std::vector<sem::Shape> shapes;  ///< shapes[k]: the tensor chain[k] indexes
};

/// view(view(x, inner), outer) == view(x, composed) wherever the source is
/// defined: composed(i) == inner(wrap(outer(i))) componentwise.
struct CompositionGoal {
  sem::IndexMap inner, outer, composed;
  sem::Shape base, middle;
};

/// Prop. 6.3: merging domain dims j, j+1 (m = s_{j+1}·i_j + i_{j+1}) keeps
/// every address: Σ t_k·before_k(i) == Σ t_k·after_k(..., m, ...).
struct LoopMergeGoal {
  sem::IndexMap before, after;
  sem::Shape src;
  size_t j = 0;
};

/// The general merge rule, for symbolic or concrete extents and strides:
/// given t_j = scale·s_{j+1}·t_{j+1} + offset (scale 1, offset 0 is the
/// condition of Prop. 6.3), t_j·(m // s_{j+1}) + t_{j+1}·(m % s_{j+1}) ==
/// t_{j+1}·m for every m in [0, s_j·s_{j+1}). Unset values are symbolic.
struct MergeRuleGoal {
  std::optional<int64_t> s_j, s_j1, t_j, t_j1;
  int64_t scale = 1, offset = 0;
};

/// Soundness of sem::iexpr_range: the claimed [lo, hi] contains e's exact
/// minimum and maximum over the domain (tightness is reported).
struct IntervalGoal {
  sem::IExpr expr;
  int64_t lo = 0, hi = 0;
};

using Goal = std::variant<InBoundsGoal, Int32Goal, AffinityGoal, CompositionGoal, LoopMergeGoal, MergeRuleGoal,
                          IntervalGoal>;

struct Obligation {
  ObligationKind kind = ObligationKind::InBounds;
  std::string binding;             ///< the binding it belongs to
  std::string site;                ///< where in it (e.g. "view of x, dim 0")
  std::string formula;             ///< the formula, as text
  std::vector<std::string> facts;  ///< what it may assume, as text
  Consequence if_not_proved = Consequence::Fails;
  std::vector<DomainDim> domain;
  std::vector<LoadFact> loads;
  Goal goal;
};

struct ProofOptions {
  unsigned timeout_ms = 2000;
  bool tightness = true;  ///< Interval goals: also compute the exact range with z3::optimize
};

/// Proved, refuted with a counterexample, or unknown with the time and why.
ProofVerdict discharge(const Obligation& ob, const ProofOptions& opt = {});

/// Frees this thread's Z3 context and incremental solver, which `discharge`
/// keeps between obligations (and recycles every 500 on its own); the next
/// obligation makes fresh ones. For a caller that must leave no memory
/// behind after a unit of work: a fuzz target after each input, so that
/// libFuzzer's per-input leak check sees every allocation freed.
void release_thread_solver();

/// Records every obligation discharged on this thread while alive (so the
/// CLI can list the side conditions a transform checked). Nests.
struct ProofRecord {
  Obligation obligation;
  ProofVerdict verdict;
};
class ProofLog {
 public:
  ProofLog();
  ~ProofLog();
  ProofLog(const ProofLog&) = delete;
  ProofLog& operator=(const ProofLog&) = delete;
  std::vector<ProofRecord> records;

 private:
  ProofLog* prev_;
};
/// Discharges and records (when a ProofLog is alive).
ProofVerdict discharge_logged(const Obligation& ob, const ProofOptions& opt = {});

}  // namespace stax::proofs
