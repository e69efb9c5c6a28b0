// Checkmate's integer program for tensor rematerialization (Jain et al.,
// "Checkmate: Breaking the Memory Wall with Optimal Tensor
// Rematerialization", MLSys 2020), solved with Z3's optimizer. Beyond the
// text: §5.8 leaves the memory budget of the partitioner unimplemented;
// remat/budget_schedule.h turns the solution into a node schedule.
//
// The problem is plain data (proofs/ depends on semantics/ only): n nodes in
// a topological order, each with its bytes, its cost and the nodes it reads
// (graph inputs are the caller's and not nodes). The model has one stage per
// node; stage t computes node t (the "frontier-advancing" form) and may
// recompute earlier nodes:
//   R[t][i]  node i is computed in stage t (i <= t, R[t][t] = 1)
//   S[t][i]  node i is live entering stage t (i < t); S[n] = the outputs
//   FREE(t,i,k) = R[t][k] & !S[t+1][i] & no user j of i with k < j <= t has
//                 R[t][j]: i (k itself or an operand of k) dies after k.
// Constraints: an operand of a computed node is computed earlier in the stage
// or stored (R[t][j] -> R[t][i] | S[t][i]); what is stored was stored or
// computed in the previous stage (S[t+1][i] -> S[t][i] | R[t][i]); a stored
// node is not computed again in the same stage. Memory after computing k in
// stage t (operands still live, k's result allocated):
//   U[t][0] = sum_i S[t][i] m_i + R[t][0] m_0
//   U[t][k] = U[t][k-1] - sum_{i in deps(k-1) + {k-1}} m_i FREE(t,i,k-1) + R[t][k] m_k
// and U[t][k] <= budget. Objective: minimise sum_t sum_i cost_i R[t][i].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stax::proofs {

struct RematProblem {
  std::vector<int64_t> bytes;            ///< m_i
  std::vector<int64_t> cost;             ///< c_i (>= 0)
  std::vector<std::vector<int>> inputs;  ///< operands of node i: indices < i (deduplicated by the solver)
  std::vector<bool> output;              ///< must be live at the end
  size_t size() const { return bytes.size(); }
};

struct RematSolution {
  enum Status { Optimal, Infeasible, Unknown };
  Status status = Unknown;
  int64_t objective = 0;  ///< Optimal: sum of cost_i R[t][i] (min_memory: the least peak)
  int64_t model_peak = 0; ///< Optimal: max over t, k of U[t][k] in the model found
  /// Optimal: R[t][i] (n x n) and S[t][i] ((n+1) x n, S[n] = the outputs).
  std::vector<std::vector<bool>> R, S;
  double ms = 0;
  std::string reason;  ///< Unknown: why (timeout after N ms, too large, z3 error); Infeasible: what
};
std::string_view remat_status_name(RematSolution::Status s);

struct RematSolveOptions {
  unsigned timeout_ms = 10000;
  /// Refuse (Unknown) problems with more nodes than this: the program has
  /// O(n^2) variables and O(n^3) memory terms.
  size_t max_nodes = 64;
};

/// Least recompute cost under a peak-memory budget.
RematSolution solve_remat_budget(const RematProblem& p, int64_t budget, const RematSolveOptions& o = {});

/// The least budget any schedule of the model meets (objective = that peak);
/// recompute cost is not minimised.
RematSolution solve_remat_min_memory(const RematProblem& p, const RematSolveOptions& o = {});

}  // namespace stax::proofs
