// The reference interpreter of the tensor core language (§6.9, Def. 6.5;
// docs/design.md §3), over the Ieee domain (bit-exact floats) and the Real domain
// (MPFR). Tensor values are strict: a program fails (⊥) when any element of
// any subexpression fails, and the failure names the binding and the index.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "semantics/ir.h"
#include "semantics/real_domain.h"
#include "semantics/tensor.h"

namespace stax::sem {

/// ⊥: the program has no value on this input.
struct Failure {
  std::string binding;          ///< the binding being evaluated
  std::vector<int64_t> index;   ///< index in the domain of the failing subexpression
  std::string reason;
  std::string where;            ///< the failing subexpression, printed
  std::string str() const;
};

/// A resource limit hit while evaluating (a usage error, not ⊥).
struct ResourceError {
  std::string message;
};

using Inputs = std::map<std::string, Tensor>;

/// Checks that inputs match the program's declared names, dtypes and shapes.
std::optional<std::string> check_inputs(const Program& p, const Inputs& in);

struct IeeeOutcome {
  std::optional<Failure> failure;
  std::map<std::string, std::shared_ptr<const Tensor>> outputs;
};
struct RealOutcome {
  std::optional<Failure> failure;
  std::map<std::string, std::shared_ptr<const RealTensor>> outputs;
};

/// Inputs must pass check_inputs. Throws ResourceError on oversized tensors.
IeeeOutcome eval_ieee(const Program& p, const Inputs& in);
RealOutcome eval_real(const Program& p, const Inputs& in, long precision = 256);

}  // namespace stax::sem
