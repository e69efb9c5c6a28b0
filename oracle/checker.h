// The no-tolerance oracle (docs/design.md §3, §6.9): compares a source and a
// target program on generated inputs by the class the transform declares.
// exact: same bits (or both NaN) and the same ⊥; refines: wherever the source
// has a value the target has the same one; real (Theorem 6.3, docs/design.md §4):
// wherever the source has a value, (a) the two programs agree in the Real
// domain and (b) every reduction of the target stays within the error bound
// of its own summands (oracle/error_bound/error_bound.h, ratio ≤ 1).
//
// (a) screens with MPFR values, which carry the Real domain's own rounding at
// precision P (one rounding per op, per mpfr_sum): values agree when
// |a − b| ≤ 2^-(P−56)·max(|a|, |b|) (2^-200 at the default 256 bits), or
// again at 10·P bits. A difference that survives both is only a suspicion:
// it is claimed when rigorous enclosures (semantics/enclosure_domain.h, MPFI
// at 10·P bits) of the two real values are disjoint. Enclosures that overlap,
// or a discontinuity that an enclosure straddles (a cast to an integer, a
// comparison), make the trial "not distinguishable" — never a finding.
//
// Whole programs (docs/design.md §3, class real): a reassociation promises something
// about the reductions it rewrote, and the rest of the program computes the
// same function of their values. So (b) is judged at the reductions (and the
// linear maps that combine their partials), and a target whose float
// evaluation is ⊥ in a binding that depends on a float sum or product — an
// integer or an index derived from a reordered float, through a cast or a
// comparison — is not a finding: the trial is counted as excused.
// A failed check carries an Alive2-style counterexample.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oracle/shrunk_shapes.h"
#include "semantics/evaluator.h"
#include "semantics/input_gen.h"
#include "transforms/transform.h"

namespace stax::oracle {

/// Whether exact and refines checks first try a proof for all inputs with Z3
/// (proofs/program_equiv.h): Off (testing only), Try (a proof when the
/// programs are small enough, else testing, and the verdict says which),
/// Require (a verdict that is not a proof or a refutation is NotCheckable).
enum class ProveMode { Off, Try, Require };

struct CheckOptions {
  int trials = 16;
  uint64_t seed = 1;
  long precision = 256;  ///< MPFR bits of the Real domain (class real)
  ProveMode prove = ProveMode::Off;
  int64_t prove_max_elements = 4096;  ///< per tensor, for the prover
  int64_t prove_max_terms = 200000;   ///< scalar terms of both programs' encodings
  unsigned prove_timeout_ms = 10000;
  /// Over the size limit, prove the pair at shrunk shapes (shrunk_shapes.h):
  /// the source is shrunk and the target rebuilt by `retarget` (a transform
  /// pipeline re-applied) or, without it, shrunk the same way.
  bool prove_shrunk = true;
  Retarget retarget = nullptr;
};

/// One member of the shrunk-shape family the prover checked.
struct ShrunkCheck {
  int64_t bound = 0;     ///< every extent at most this
  std::string shapes;    ///< the shrunk inputs, e.g. "x f32[3, 3]"
  std::string verdict;   ///< "proved", "refuted", or "unknown"
  std::string note;      ///< why unknown, or how it was refuted
  double ms = 0;
};

enum class Status { Verified, Counterexample, NotCheckable };

struct Counterexample {
  sem::InputKind kind = sem::InputKind::Normal;
  uint64_t input_seed = 0;
  int trial = 0;
  sem::Inputs inputs;
  std::string output;            ///< empty when the difference is ⊥ vs a value
  std::vector<int64_t> index;
  std::string src_value, tgt_value;  ///< with bits, or the ⊥ message
  /// Values of same-shaped bindings at the index, source then target.
  std::vector<std::pair<std::string, std::string>> src_trace, tgt_trace;
  /// Class real: "real" when the Real-domain values differ, "bound" when a
  /// float result of the target exceeds its error bound, "definedness" for a
  /// ⊥ the source does not have; empty for exact/refines.
  std::string check;
  std::string src_real, tgt_real;  ///< Real-domain values at the index
  std::string tgt_float;           ///< the target's float (Ieee) value
  /// The target's error bound at the index, the error it is compared with
  /// (|ŝ − s| for "bound"; |target float − source real| for "real"), ratio.
  std::optional<double> bound, measured, ratio;
  std::string bound_case;  ///< the reduction's textbook case (Higham)
  std::vector<std::string> contributions;  ///< largest summands of the bound
};

struct Verdict {
  Status status = Status::Verified;
  xform::SemClass cls = xform::SemClass::Exact;
  int trials = 0;
  int src_failures = 0;  ///< trials on which the source was ⊥
  std::string message;
  std::optional<Counterexample> cex;
  std::optional<int64_t> rewrite;  ///< the first rewrite after which it fails
  std::string rewrite_text;
  // Class real: over all trials, the elements whose float error was measured
  // against their bound, those outside the model, and the largest ratio.
  int64_t bound_checked = 0, bound_skipped = 0;
  double max_ratio = 0;
  std::string unchecked;  ///< why the bound analysis could not run (then not checkable)
  /// Class real: trials on which a Real-domain difference seen at P and 10·P
  /// bits was not proven by the enclosures (they overlap, or a discontinuity
  /// straddled one: "not distinguishable"), with the first reason.
  int indistinct = 0;
  std::string indistinct_reason;
  /// Class real: trials on which the target's float evaluation was ⊥
  /// downstream of a reassociable reduction (a consequence of the allowed
  /// reordering), so its bounds were not measured.
  int excused = 0;
  std::string excused_reason;
  /// The prover (CheckOptions::prove): whether it proved the pair for all
  /// inputs at these shapes, else why not (timeout, size limit, an
  /// unencodable op); its time and encoding size.
  bool proved = false;
  bool proof_tried = false;
  std::string proof_note;
  double proof_ms = 0;
  int64_t proof_terms = 0;
  /// Over the size limit: the shrunk shapes tried (bound 1, 2, ...), or why
  /// the program is not shape-generic. Never turns "tested" into "proved".
  std::vector<ShrunkCheck> shrunk;
  std::string shrunk_note;
};

/// The strength of a verdict: "proved" (all inputs, these
/// shapes), "tested" (N input sets, no difference), "refuted" (a
/// counterexample), or "not-checkable".
std::string_view strength_name(const Verdict& v);

/// Both programs must have the same inputs and outputs (names, dtypes,
/// shapes); returns what differs.
std::optional<std::string> interface_mismatch(const sem::Program& src, const sem::Program& tgt);

/// The printed program does not parse back (a transform built bad IR).
std::optional<std::string> malformed(const sem::Program& p);

/// Compares on one set of inputs; nullopt when they agree for the class.
std::optional<Counterexample> compare_on(const sem::Program& src, const sem::Program& tgt, xform::SemClass cls,
                                         const sem::Inputs& in, bool* src_failed = nullptr);

/// Class real on one set of inputs: (a) Real-domain agreement, (b) the
/// target's float results within their error bounds. Adds to the verdict's
/// bound statistics when `stats` is given.
std::optional<Counterexample> compare_real_on(const sem::Program& src, const sem::Program& tgt,
                                              const sem::Inputs& in, bool* src_failed = nullptr,
                                              Verdict* stats = nullptr, long precision = 256);

/// Real-domain equality of two float values at precision `precision` (see
/// the file comment); ints and bools compare exactly.
bool real_equal(const sem::RVal& a, const sem::RVal& b, sem::DType t, long precision);

Verdict check_programs(const sem::Program& src, const sem::Program& tgt, xform::SemClass cls,
                       const CheckOptions& opt);

/// Checks a transform pipeline on a program; on a counterexample, bisects the
/// rewrite log to the first rewrite that breaks it.
Verdict check_transform(const sem::Program& src, const std::vector<xform::Step>& steps, const CheckOptions& opt,
                        int64_t max_rewrites = -1);

std::string format_verdict(const Verdict& v, const sem::Program& src, const sem::Program& tgt,
                           const std::string& what);
nlohmann::json verdict_json(const Verdict& v, const sem::Program& src, const sem::Program& tgt,
                            const std::string& what);

}  // namespace stax::oracle
