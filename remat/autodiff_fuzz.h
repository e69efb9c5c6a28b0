// `stax fuzz autodiff`: random differentiable graphs (autodiff::random_graph)
// through two checks each — the adjoint identity in the Real domain
// (autodiff::adjoint_check: a wrong VJP or JVP rule breaks it) and the
// partition's exactness (the min-cut forward and backward graphs, lowered and
// run in turn, against the joint graph run whole: same bits, remat/verify.h).
// Lives in remat/ because it needs both autodiff/ and remat/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/vjp.h"

namespace stax::remat {

struct AutodiffFuzzOptions {
  uint64_t seed = 1;  ///< first graph seed
  uint64_t count = 25;
  long precision = 256;  ///< MPFR bits of the adjoint check
  int trials = 4;        ///< input sets per partition check
  /// nullptr: autodiff::default_vjp_rules(). A test (or --mutant) plants a
  /// wrong rule here; the adjoint check must catch it.
  const autodiff::VjpRules* rules = nullptr;
  /// Called after each graph with (graphs done, findings so far).
  std::function<void(uint64_t, size_t)> progress;
};

struct AutodiffFinding {
  uint64_t seed = 0;
  std::string check;    ///< "adjoint", "partition" or "error" (a generated graph that does not differentiate or run)
  std::string message;
  std::string graph;    ///< the graph's JSON text (a reproducer: `stax grad`, `stax jvp`, `stax partition`)
};

struct AutodiffFuzzReport {
  uint64_t graphs = 0, adjoint_checked = 0, partitions_checked = 0;
  double seconds = 0;
  std::vector<AutodiffFinding> findings;
};

AutodiffFuzzReport fuzz_autodiff(const AutodiffFuzzOptions& o);

/// The planted wrong VJP rules (`stax fuzz autodiff --mutant NAME`): the
/// default table with one rule broken. Known names: tanh-sign (tanh' with
/// its sign flipped), mul-drop-rhs (mul.Tensor gives its second operand
/// nothing), exp-twice (exp' = 2 exp). nullopt for an unknown name.
std::optional<autodiff::VjpRules> planted_vjp_rules(const std::string& name);
std::vector<std::string> planted_vjp_rule_names();

}  // namespace stax::remat
