// Hessian-vector products (§5.7): H v = ∇(∇f · v), with f = Σ over the
// float outputs of their elements weighted by the upstream gradients
// (`tangents_i`; all ones gives the Hessian of the sum of the outputs).
// - forward over reverse: the JVP (jvp.h) of the joint graph (vjp.h), the
//   direction v the tangent of the primals; the tangents of the gradients are
//   H v (Pearlmutter's O(W));
// - reverse over reverse: the joint graph of the joint graph extended with
//   s = Σ_k <grad_k, v_k>; the gradients of s are H v.
// Both are ordinary operator graphs; `hessians` builds H column by column
// both ways (Real domain) and checks H = Hᵀ and that the two agree.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "semantics/evaluator.h"

namespace stax::autodiff {

enum class HvpMode { ForwardOverReverse, ReverseOverReverse };

struct HvpOptions {
  std::vector<std::string> wrt;  ///< empty: every float input
  HvpMode mode = HvpMode::ForwardOverReverse;
  const VjpRules* vjp = nullptr;
  const JvpRules* jvp = nullptr;
};

struct HvpGraph {
  compiler::Graph graph;
  std::vector<Phase> phase;                  ///< Forward / Backward of the last differentiation
  std::vector<std::string> wrt;              ///< differentiated primals
  std::vector<std::string> directions;       ///< input holding v_k, parallel to wrt
  std::vector<std::string> upstream;         ///< the first reverse pass's tangents_i (inputs)
  std::vector<std::string> extra_upstream;   ///< reverse over reverse: the second pass's upstream (set to 1)
  std::vector<std::string> hvp;              ///< output holding (H v)_k, parallel to wrt ("" when zero)
};

std::variant<HvpGraph, compiler::GraphError> build_hvp_graph(const compiler::Graph& g, const HvpOptions& opt = {});

struct HessianReport {
  int64_t n = 0;
  Eigen::MatrixXd forward_over_reverse, reverse_over_reverse;  ///< n × n, Real values rounded to f64
  /// max |H − Hᵀ| (forward over reverse), max |H_fr − H_rr|, and the
  /// threshold 2^-(P-64) · (1 + Σ|entries|) both are judged against.
  double asymmetry = 0, disagreement = 0, threshold = 0;
  bool symmetric = false, agree = false;
  std::string text() const;
  nlohmann::json json() const;
};

/// H at the primal point by n HVPs each way (upstream gradients all ones).
std::variant<HessianReport, compiler::GraphError> hessians(const compiler::Graph& g, const sem::Inputs& primals,
                                                           const HvpOptions& opt, long precision = 256,
                                                           int64_t max_n = 512);

}  // namespace stax::autodiff
