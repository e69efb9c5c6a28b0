// Runs a reversal schedule on a real chain (§5.8): l layers
// z_k = tanh(z_{k-1} W + b) sharing W and b, each forward step and each
// backward step (the layer's VJP, written in the core language) one program
// run through a Runner (the interpreter, or a backend). The executor holds
// tensors, not state indices: a backward step reads the current state, so a
// schedule that restores the wrong slot computes different bits.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "checkpoint/schedule.h"
#include "semantics/evaluator.h"

namespace stax::checkpoint {

using Runner = std::function<sem::IeeeOutcome(const sem::Program&, const sem::Inputs&)>;

struct ChainOptions {
  int64_t batch = 4, width = 8;
  uint64_t seed = 1;
};

struct Chain {
  sem::Program forward;   ///< inputs z, W, b; output y = tanh(z W + b)
  sem::Program backward;  ///< inputs z, W, b, gy, gW, gb; outputs gz, gW2, gb2
  sem::Tensor z0, W, b, seed;  ///< seed: zbar_l (ones)
  int64_t state_bytes = 0;
};

/// Builds the chain's programs and draws z0, W, b from the seed; nullopt with
/// `error` set when the sizes are out of range.
std::optional<Chain> make_chain(const ChainOptions& o, std::string* error);

/// The forward-step program text and the backward-step program text.
std::string forward_text(int64_t batch, int64_t width);
std::string backward_text(int64_t batch, int64_t width);

struct Execution {
  std::string error;                   ///< a rejected schedule or a failed run
  sem::Tensor zbar0, gW, gb;           ///< the gradients
  int64_t forward_steps = 0;           ///< forward programs run
  std::vector<int64_t> per_step;       ///< by the state index the executor tracks
  int64_t backward_steps = 0;
  int peak_states = 0;                 ///< distinct state tensors held at once
  int64_t peak_bytes = 0;
  bool ok() const { return error.empty(); }
};

struct ExecOptions {
  bool check = true;  ///< reject an illegal schedule before running it
};

Execution execute(const Chain& c, const Schedule& s, const Runner& run, const ExecOptions& o = {});
/// The interpreter (sem::eval_ieee).
Runner interpreter_runner();

/// Store everything: z_1..z_{l-1} each in its slot, then the backward steps.
Schedule store_all_schedule(int64_t l);

/// The first byte where two executions' gradients differ, or "" when every
/// bit of zbar0, gW and gb agrees.
std::string compare_bits(const Execution& a, const Execution& b);

}  // namespace stax::checkpoint
