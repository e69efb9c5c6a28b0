// The runtime composition of §5.6: the forward and backward graphs of a
// partition, each lowered with the compiler's policies, wrapped like an
// autograd.Function — forward() runs the compiled forward and keeps the
// saved values as its context; backward() takes the upstream gradients
// (tangents), compiles the backward graph on its first call (a call that only
// infers never pays for it) and returns the gradients. The runner (the
// interpreter or a backend) is the caller's, so this folder stays backend-free.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "autodiff/joint_graph.h"
#include "compiler/lower.h"
#include "remat/partition.h"
#include "semantics/evaluator.h"

namespace stax::remat {

using Runner = std::function<sem::IeeeOutcome(const sem::Program&, const sem::Inputs&)>;
using Tensors = std::map<std::string, std::shared_ptr<const sem::Tensor>>;

/// A misuse (backward before forward, a missing input, a backward graph that
/// does not lower): not ⊥, which is a sem::Failure of the program itself.
struct StepError {
  std::string message;
};

class CompiledFunction {
 public:
  /// Lowers the forward graph now; the backward waits for backward().
  static std::variant<CompiledFunction, compiler::GraphError> create(const autodiff::JointGraph& jg, Partition p,
                                                                     compiler::Device d);

  /// Runs the forward on the primals; returns the forward outputs and keeps
  /// the saved values (and the primals the backward reads) as the context.
  std::variant<Tensors, sem::Failure, StepError> forward(const sem::Inputs& primals, const Runner& run);
  /// Runs the backward on the tangents and the context; returns the gradient
  /// of each differentiated input, by the input's name. Lowers the backward
  /// graph on the first call. Errors: no forward() before, a missing tangent,
  /// a backward graph that does not lower.
  std::variant<Tensors, sem::Failure, StepError> backward(const sem::Inputs& tangents, const Runner& run);

  bool backward_compiled() const { return bw_.has_value(); }
  const Partition& partition() const { return p_; }
  const Tensors& context() const { return ctx_; }

 private:
  autodiff::JointGraph jg_;
  Partition p_;
  compiler::Device dev_;
  sem::Program fw_;
  std::optional<sem::Program> bw_;
  Tensors ctx_;
  bool have_ctx_ = false;
};

}  // namespace stax::remat
