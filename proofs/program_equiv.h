// Whole-program equivalence for all inputs (from testing to
// proof): two programs with the same interface are encoded over symbolic
// inputs in Z3's floating-point and bit-vector theories, through the generic
// tensor evaluator in the symbolic domain (smt_domain.h) — the same walk,
// op semantics and fold order as the interpreter, so nothing is modelled
// twice — and the solver is asked for an input on which they differ.
//
// - exact: some input where the ⊥ behaviour differs, or both have values
//   and some output element differs (same bits, or both NaN, is equal:
//   docs/design.md §3);
// - refines: some input where the source has a value and the target is ⊥
//   or has another one.
// Unsat: **proved** for all inputs at these shapes. Sat: a candidate,
// reported as **refuted** only when the interpreter reproduces it (the
// caller's `confirm`); a model that the interpreter does not reproduce (it
// rests on an uninterpreted transcendental) is blocked and the solver asked
// again. Unknown: a timeout, an unencodable construct, a program over the
// size limit — the caller falls back to testing and says so.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "semantics/evaluator.h"
#include "semantics/obligation.h"

namespace stax::proofs {

enum class Relation { Exact, Refines };

struct EquivOptions {
  int64_t max_elements = 4096;  ///< per tensor (inputs and every intermediate)
  int64_t max_terms = 200000;   ///< scalar terms built for both programs
  unsigned timeout_ms = 10000;  ///< wall time for all solver calls together
  int max_unconfirmed = 16;     ///< models the interpreter does not reproduce before giving up
};

struct EquivResult {
  sem::ProofVerdict verdict;
  sem::Inputs counterexample;  ///< Refuted: the inputs (confirmed by `confirm`)
  std::vector<std::string> uninterpreted;  ///< ops encoded as uninterpreted functions
  int64_t terms = 0;                       ///< size of the encoding
  int unconfirmed = 0;                     ///< models blocked because the interpreter disagreed
  bool over_limit = false;                 ///< Unknown because of max_elements / max_terms
};

/// Whether the interpreter shows the difference on these inputs.
using Confirm = std::function<bool(const sem::Inputs&)>;

/// Both programs must be well typed with the same inputs and outputs.
EquivResult prove_equivalent(const sem::Program& src, const sem::Program& tgt, Relation rel, const EquivOptions& opt,
                             const Confirm& confirm);

}  // namespace stax::proofs
