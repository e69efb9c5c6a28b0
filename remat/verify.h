// The partition as a verified transform (class exact, docs/design.md §3): the forward
// graph and the backward graph, lowered (compiler::lower_graph, eager) and run
// one after the other — the forward's saved outputs fed to the backward with
// the tangents and primals — must give the same bits as the joint graph run
// whole, on every output, for every input the oracle draws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/joint_graph.h"
#include "remat/partition.h"
#include "semantics/tensor.h"

namespace stax::remat {

enum class VerifyStatus { Verified, Counterexample, NotCheckable };
std::string_view verify_status_name(VerifyStatus s);

struct VerifyResult {
  VerifyStatus status = VerifyStatus::Verified;
  int trials = 0;
  std::string message;  ///< what failed (counterexample: output, index, both values, the inputs' seed)
};

struct VerifyOptions {
  int trials = 8;  ///< input sets, cycling through the oracle's input kinds
  uint64_t seed = 1;
};

/// Where two tensors differ (docs/design.md §3: same bits, or both NaN): "[i, j]:
/// expected V (bits), got W (bits)", or "type T, expected U"; nullopt when equal.
std::optional<std::string> first_difference(const sem::Tensor& expected, const sem::Tensor& got);

VerifyResult verify_partition(const autodiff::JointGraph& jg, const Partition& p, const VerifyOptions& opt = {});

}  // namespace stax::remat
