// Alive-style scalar rewrites in Z3's floating-point theory (docs/design.md §5):
// `LHS => RHS` holds when both sides give identical bits (NaN payloads aside:
// both NaN, or equal as bit patterns, so -0 ≠ +0) for every input.
//
// Semantics: IEEE 754 binary arithmetic with round to nearest even; maximum/
// minimum are IEEE 754-2019 (NaN-propagating, -0 < +0), encoded by hand
// since SMT-LIB's fp.max leaves max(-0, +0) unspecified; rsqrt and sigmoid
// are the reference composites. Ops without an FPA counterpart (exp, log,
// tanh, erf, sin, pow, float mod/floordiv, ...) are uninterpreted functions:
// a rewrite that needs their properties can be refuted or unknown, never
// proved. A counterexample that rests on an uninterpreted function is
// replayed on the reference interpreter (host libm) and reported as refuted
// only when the interpreter confirms it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "semantics/dtype.h"
#include "semantics/obligation.h"

namespace stax::proofs {

struct RewriteOptions {
  sem::DType dtype = sem::DType::F16;
  unsigned timeout_ms = 10000;
  /// false: every op rounds to `dtype` (IEEE binary16 arithmetic for f16).
  /// true: the .stx lambda semantics, where f16/bf16 values compute in f32
  /// and round once at the end (docs/design.md §2).
  bool half_in_f32 = false;
};

struct RewriteInput {
  std::string name;
  std::string decimal, hex;
};

struct RewriteResult {
  sem::ProofVerdict verdict;
  std::string lhs, rhs;                 ///< as parsed (printed back)
  std::vector<std::string> vars;        ///< the free names, in order of appearance
  std::vector<std::string> uninterpreted;  ///< ops encoded as uninterpreted functions
  std::vector<RewriteInput> inputs;     ///< the counterexample's inputs
  std::string lhs_value, rhs_value;     ///< both results at the counterexample (decimal and hex)
  bool confirmed = false;               ///< the interpreter reproduces the counterexample
};

/// Parses and types `LHS => RHS` without solving (the fuzz target of the
/// rule syntax): both sides printed back, or check_rewrite's error message.
std::variant<std::pair<std::string, std::string>, std::string> parse_rewrite(std::string_view rule, sem::DType dtype);

/// Checks `LHS => RHS`. A malformed rule is an error message (file:line:col
/// of the side that failed to parse).
std::variant<RewriteResult, std::string> check_rewrite(std::string_view rule, const RewriteOptions& opt = {});

}  // namespace stax::proofs
