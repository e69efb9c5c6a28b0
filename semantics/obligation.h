// Index proof obligations (docs/design.md §5; §6.4, 6.8: Def. 6.4, Prop. 6.3,
// Prop. 6.4, Example 6.3). An obligation is data: its kind, where it comes
// from, the formula in the text's notation, the facts it may assume, and the
// index expressions themselves. proofs' `discharge` (proofs/index_smt.cpp, the
// only place that sees Z3 for index arithmetic) turns it into a verdict; the
// layers below proofs (the transforms' side conditions) reach it through a
// Discharger that the layers above give them.
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
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "semantics/ir.h"

namespace stax::sem {

enum class ObligationKind : uint8_t { InBounds, Int32, Affinity, Composition, LoopMerge, Interval };
std::string_view kind_name(ObligationKind k);

/// What it means for the program when the obligation is not proved.
enum class Consequence : uint8_t {
  Fails,         ///< the program fails (⊥) at the counterexample: a bug
  RuntimeCheck,  ///< the index comes from memory: wrap and bounds check are kept
  WideIndex,     ///< 64-bit indexing is kept
  NotAffine,     ///< floor/mod indexing is kept
  Refused,       ///< the transform refuses the rewrite
  AnalysisBug,   ///< the Interval analysis (iexpr_range) is unsound
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
  Shape shape;
  int64_t lo = 0, hi = 0;
  bool from_memory = true;  ///< the dtype's full range: the values are data
  std::string why;
};

/// 0 ≤ wrap(e) < extent, where wrap adds `extent` to a negative value when
/// the component has an indirect load (Python-style, docs/design.md §2).
struct InBoundsGoal {
  IExpr expr;
  int64_t extent = 0;
  bool wrap = false;
};

/// Every intermediate term of the components and the address
/// Σ_k stride_k·wrap(π_k) lie in [-2^31, 2^31 - slack), assuming each
/// component is in bounds (that is checked separately).
struct Int32Goal {
  std::vector<IExpr> comps;
  Shape src;  ///< row-major strides come from it; wrap extents too
  int64_t slack = 0;
};

/// A chain of views, outermost first: view(...view(x, chain.back())..., chain[0]).
/// The address of x (row-major) as a function of the outer index is affine:
/// A(i) = A(0) + Σ_v (A(e_v) − A(0))·i_v for every i.
struct AffinityGoal {
  std::vector<IndexMap> chain;
  std::vector<Shape> shapes;  ///< shapes[k]: the tensor chain[k] indexes
};

/// view(view(x, inner), outer) == view(x, composed) wherever the source is
/// defined: composed(i) == inner(wrap(outer(i))) componentwise.
struct CompositionGoal {
  IndexMap inner, outer, composed;
  Shape base, middle;
};

/// Prop. 6.3: merging domain dims j, j+1 (m = s_{j+1}·i_j + i_{j+1}) keeps
/// every address: Σ t_k·before_k(i) == Σ t_k·after_k(..., m, ...).
struct LoopMergeGoal {
  IndexMap before, after;
  Shape src;
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

/// Soundness of iexpr_range: the claimed [lo, hi] contains e's exact
/// minimum and maximum over the domain (tightness is reported).
struct IntervalGoal {
  IExpr expr;
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

/// A verdict of the prover (a check returns a verdict, never a bool). A
/// refutation carries a concrete counterexample; an unknown carries the time
/// spent and why (timeout, unsupported construct, solver error).
struct ProofVerdict {
  enum Kind { Proved, Refuted, Unknown };
  Kind kind = Unknown;
  /// Refuted: index values, extents, loaded and input values, both results.
  std::string counterexample;
  double ms = 0;       ///< wall time of the solver call(s)
  std::string reason;  ///< Unknown: why; otherwise an optional note (e.g. looseness)
};

std::string_view verdict_name(ProofVerdict::Kind k);

/// Discharges an obligation: proofs::discharge_logged (Z3) for the layers
/// that may use it. A layer below proofs takes one from its caller.
using Discharger = std::function<ProofVerdict(const Obligation&)>;

/// The prover of the layers below proofs where their caller names none:
/// unset until a program that links proofs installs Z3's
/// (proofs::install_default_discharger: the stax command, the test driver,
/// the benchmarks and the fuzz targets). Unset, every obligation is unknown
/// ("no prover installed"): a side condition is not proved and its rewrite
/// is refused. Install once, before threads start.
ProofVerdict discharge_default(const Obligation& ob);
void set_default_discharger(Discharger d);

}  // namespace stax::sem
