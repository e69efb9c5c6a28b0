// The no-tolerance oracle (DESIGN §3, seed 6.9): compares a source and a
// target program on generated inputs by the class the transform declares.
// exact: same bits (or both NaN) and the same ⊥; refines: wherever the source
// has a value the target has the same one; real: checked by the error-bound
// machinery (not yet available: reported as not checkable, never as passed).
// A failed check carries an Alive2-style counterexample.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oracle/input_gen.h"
#include "semantics/evaluator.h"
#include "transforms/transform.h"

namespace stax::oracle {

struct CheckOptions {
  int trials = 16;
  uint64_t seed = 1;
};

enum class Status { Verified, Counterexample, NotCheckable };
std::string_view status_name(Status s);

struct Counterexample {
  InputKind kind = InputKind::Normal;
  uint64_t input_seed = 0;
  int trial = 0;
  sem::Inputs inputs;
  std::string output;            ///< empty when the difference is ⊥ vs a value
  std::vector<int64_t> index;
  std::string src_value, tgt_value;  ///< with bits, or the ⊥ message
  /// Values of same-shaped bindings at the index, source then target.
  std::vector<std::pair<std::string, std::string>> src_trace, tgt_trace;
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
};

/// Both programs must have the same inputs and outputs (names, dtypes,
/// shapes); returns what differs.
std::optional<std::string> interface_mismatch(const sem::Program& src, const sem::Program& tgt);

/// The printed program does not parse back (a transform built bad IR).
std::optional<std::string> malformed(const sem::Program& p);

/// Compares on one set of inputs; nullopt when they agree for the class.
std::optional<Counterexample> compare_on(const sem::Program& src, const sem::Program& tgt, xform::SemClass cls,
                                         const sem::Inputs& in, bool* src_failed = nullptr);

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
