// Full Jacobians two ways (§5.7, Proposition 5.2): column by column with
// n JVPs (forward mode, J e_i) and row by row with m VJPs (reverse mode,
// e_jᵀ J), both evaluated in the Real domain (MPFR) on the eager lowering
// of the JVP graph and of the joint graph; and the operation counts of the
// lowered programs (the Count domain), n·W_jvp against m·W_vjp, and the
// backward/forward ratio of Theorem 5.1.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "compiler/graph.h"
#include "semantics/evaluator.h"

namespace stax::autodiff {

/// Scalar operations of a program: per map, the Count domain's op count of
/// its lambda times the elements it computes; per reduction, one fold step
/// per element reduced. Views, iota and full cost nothing.
int64_t program_ops(const sem::Program& p);

/// The op count W of a graph's eager lowering (every node computed once).
std::variant<int64_t, compiler::GraphError> graph_ops(const compiler::Graph& g);

/// Theorem 5.1 on a graph: W (forward), the joint graph's total, their ratio,
/// and the bound 1 + max(4, c_Ω + 2) with c_Ω over the unary scalar ops the
/// lowered forward program uses (the cost of each one's derivative in our
/// rules; `omega_ops` lists them).
struct CostReport {
  int64_t forward = 0, joint = 0;
  double ratio = 0, bound = 0;
  int64_t c_omega = 0;
  std::string omega_ops;
};
std::variant<CostReport, compiler::GraphError> gradient_cost(const compiler::Graph& g, const VjpRules* rules = nullptr);

struct JacobianOptions {
  std::vector<std::string> wrt;
  long precision = 256;
  const VjpRules* vjp = nullptr;
  const JvpRules* jvp = nullptr;
  int64_t max_evaluations = 4096;  ///< n + m above this is refused (exit 3 in the CLI)
};

struct JacobianReport {
  int64_t n = 0, m = 0;           ///< input and output elements (float wrt inputs, float outputs)
  Eigen::MatrixXd by_jvp, by_vjp;  ///< m × n, the Real values rounded to f64
  /// max |J_jvp − J_vjp| and the scale Σ|entries| it is judged against,
  /// both computed in MPFR and rounded to f64 only to be printed.
  double max_diff = 0, scale = 0, threshold = 0;
  bool equal = false;
  int64_t w_forward = 0, w_jvp = 0, w_vjp = 0;
  std::string text() const;
  nlohmann::json json() const;
};

/// Primal inputs for a graph: normal floats (no special values), integers
/// as `stax run --random-inputs` draws them (indices within range), seeded.
std::variant<sem::Inputs, compiler::GraphError> random_primals(const compiler::Graph& g, uint64_t seed);

/// J both ways at the given primal point. Equality is up to MPFR's own
/// rounding at P bits: |difference| ≤ 2^-(P-64) · scale (scale = the sum of
/// the magnitudes of all entries plus 1) — the headroom 2^64 covers the
/// roundings along the two programs, not a float tolerance.
std::variant<JacobianReport, compiler::GraphError> jacobians(const compiler::Graph& g, const sem::Inputs& primals,
                                                              const JacobianOptions& opt);

}  // namespace stax::autodiff
