// One iteration of differential fuzzing (docs/design.md §3, §8): generate a
// program P, apply a random pipeline of registered transforms, check P
// against T(P) by the pipeline's class with the no-tolerance oracle, then run
// T(P) on every backend and compare bit for bit with the interpreter. Any
// disagreement is a finding, named by the transform or the backend at fault.
//
// The oracle does not depend on backends (docs/design.md §6): a backend enters as a
// BackendRunner, a function the caller (the CLI, a test) supplies.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oracle/gen/program_gen.h"
#include "semantics/evaluator.h"
#include "transforms/transform.h"

namespace stax::oracle {

/// The generator's defaults with rand leaves (CSE must never merge two).
inline GenOptions with_rand() {
  GenOptions g;
  g.allow_rand = true;
  return g;
}

/// A backend under test: runs a program on inputs, like eval_ieee does.
/// It may throw (an unsupported program): that is counted, not a finding.
struct BackendRunner {
  std::string name;
  std::function<sem::IeeeOutcome(const sem::Program&, const sem::Inputs&)> run;
};

struct FuzzOptions {
  GenOptions gen = with_rand();
  int trials = 4;          ///< input sets per transform check (the oracle's kinds in turn)
  int backend_trials = 3;  ///< input sets per backend comparison (sem::kBackendInputKinds in turn)
  int max_steps = 3;       ///< transforms per pipeline
  /// Only these transforms (empty: every registered one).
  std::vector<std::string> transforms;
  bool shrink = true;       ///< shrink findings
  double shrink_seconds = 10;
  /// Exact and refines checks: after testing, the prover; a
  /// proved program has status "proved", else the note says why not.
  bool prove = false;
  unsigned prove_timeout_ms = 2000;
};

/// Crash: the iteration itself died (a signal, an abort, a sanitizer report)
/// or ran past the campaign's iteration timeout (a hang).
enum class FindingKind { Transform, Backend, Crash };
std::string_view finding_kind_name(FindingKind k);

struct Finding {
  FindingKind kind = FindingKind::Transform;
  std::string component;  ///< the transform at fault (first failing step) or the backend
  std::string pipeline;   ///< the transform pipeline, as `--transform` takes it
  std::string cls;        ///< the class the pipeline declared
  std::string message;    ///< what differs, first line
  /// Transform findings: P (the pipeline is applied to it). Backend findings:
  /// T(P) (the program the backend ran).
  sem::Program program;
  sem::Inputs inputs;  ///< inputs on which it fails
  /// Same finding: same kind and component.
  std::string signature() const { return std::string(finding_kind_name(kind)) + ":" + component; }
};

/// Time spent per phase of an iteration, in seconds.
struct PhaseTimes {
  double generate = 0, transform = 0, check = 0, backends = 0, shrink = 0;
  double prove = -1;  ///< the prover's wall time within `check`; -1 when it did not run
};

struct IterationResult {
  uint64_t seed = 0;
  std::string pipeline;
  std::string cls;
  std::vector<std::string> backends;  ///< "interp" (the reference), then the runners compared with it
  /// "ok", "proved" (FuzzOptions::prove: for all inputs at these shapes),
  /// "finding", "refused" (bad parameters for this program), "not-checkable"
  /// (class real without a bound model), "resource" (a size limit).
  std::string status = "ok";
  std::string note;  ///< why refused / not checkable
  int backend_skipped = 0;
  std::optional<Finding> finding;
  PhaseTimes times;
};

/// A random pipeline for a seed: 1..max_steps registered transforms with
/// random parameters, often after `normalize` (merge-loops needs kernels).
std::vector<xform::Step> random_pipeline(uint64_t seed, const FuzzOptions& opt);
/// A pipeline as `--transform` takes it.
std::string join_steps(const std::vector<xform::Step>& steps);

/// The iteration for `seed`: deterministic (same seed, options, runners and
/// active mutant: same result). Findings are not shrunk here (see shrink_finding).
IterationResult fuzz_one(uint64_t seed, const FuzzOptions& opt, const std::vector<BackendRunner>& runners);
/// The same iteration on a given program instead of the seed's: the seed's
/// pipeline, inputs and backend trials (what a crash reproducer replays).
IterationResult fuzz_program(uint64_t seed, const sem::Program& p, const FuzzOptions& opt,
                             const std::vector<BackendRunner>& runners);

/// Where two outcomes of the same program differ (bits per element, NaN ==
/// NaN whatever the payload, ⊥ on one side only), or nullopt.
std::optional<std::string> outcome_difference(const sem::Program& p, const sem::IeeeOutcome& reference,
                                              const sem::IeeeOutcome& got);

/// Whether the finding reproduces on (program, inputs): for a transform
/// finding the pipeline is applied to `program` and the first failing step
/// must be the same transform; for a backend finding the same backend must
/// disagree with the interpreter. Returns the message when it does.
std::optional<std::string> reproduces(const Finding& f, const sem::Program& program, const sem::Inputs& inputs,
                                      const std::vector<BackendRunner>& runners);

/// The first step of a pipeline whose prefix fails the oracle on `inputs`
/// (its name), or nullopt when none does.
std::optional<std::string> culprit(const sem::Program& p, const std::vector<xform::Step>& steps,
                                   const sem::Inputs& inputs);

/// A shrunk finding with its reproducer files and replay command.
struct Reproducer {
  std::string stx;                                            ///< the minimal program
  std::vector<std::pair<std::string, std::string>> npy_files;  ///< file name, .npy bytes
  std::string command;  ///< replays it (`stax fuzz replay ...`), exit 1 when it still fails
  std::string pipeline;  ///< the pipeline it needs (the culprit and the steps before it that matter)
  size_t size_before = 0, size_after = 0;  ///< printed program sizes
  int tests = 0;                           ///< predicate evaluations
};

/// Shrinks a finding (delta debugging, oracle/shrink.h) while it reproduces.
Reproducer shrink_finding(const Finding& f, const std::vector<BackendRunner>& runners, double seconds,
                          std::string_view mutant = {});

/// The replay command for a reproducer written as repro.stx and NAME.npy files.
std::string replay_command(const Finding& f, const sem::Program& p, std::string_view mutant,
                           const std::string& stx_file = "repro.stx");

}  // namespace stax::oracle
