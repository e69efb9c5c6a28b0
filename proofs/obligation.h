// Discharging index proof obligations with Z3 (the obligations themselves,
// as data, are semantics/obligation.h).
#pragma once

#include <string>
#include <vector>

#include "semantics/obligation.h"

namespace stax::proofs {

struct ProofOptions {
  unsigned timeout_ms = 2000;
  bool tightness = true;  ///< Interval goals: also compute the exact range with z3::optimize
};

/// Proved, refuted with a counterexample, or unknown with the time and why.
sem::ProofVerdict discharge(const sem::Obligation& ob, const ProofOptions& opt = {});

/// Frees this thread's Z3 context and incremental solver, which `discharge`
/// keeps between obligations (and recycles every 500 on its own); the next
/// obligation makes fresh ones. For a caller that must leave no memory
/// behind after a unit of work: a fuzz target after each input, so that
/// libFuzzer's per-input leak check sees every allocation freed.
void release_thread_solver();

/// Records every obligation discharged on this thread while alive (so the
/// CLI can list the side conditions a transform checked). Nests.
struct ProofRecord {
  sem::Obligation obligation;
  sem::ProofVerdict verdict;
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
sem::ProofVerdict discharge_logged(const sem::Obligation& ob, const ProofOptions& opt = {});

/// Makes discharge_logged the process's default prover
/// (sem::set_default_discharger), the one the layers below proofs use where
/// their caller names none: transforms' side conditions, the lowering's
/// range and merge obligations. Every program that links proofs calls it
/// first (main).
void install_default_discharger();

}  // namespace stax::proofs
