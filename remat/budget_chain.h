// A chain at the granularity of phi steps as a budget DAG (budget_schedule.h),
// so that the reversal schedules of checkpoint/ (uniform, binomial/revolve)
// are measured by the same checker as the schedules of general graphs.
//
// Nodes: z_1 .. z_{l-1} then the adjoints zbar_{l-1} .. zbar_0, unit bytes
// and unit cost; z_0 and zbar_l (the tangent) are graph inputs, not counted.
// zbar_{k-1} reads z_{k-1} (k >= 2) and zbar_k (k < l); the output is zbar_0.
// z_l is not a node: no backward step reads it (checkpoint/'s convention,
// phi_l is never needed). Recompute cost = forward steps - (l - 1).
#pragma once

#include <string>
#include <variant>

#include "checkpoint/schedule.h"
#include "remat/budget_schedule.h"

namespace stax::remat {

BudgetDag chain_dag(int64_t l);
int chain_z(int64_t l, int64_t k);     ///< node of z_k, 1 <= k <= l-1
int chain_zbar(int64_t l, int64_t k);  ///< node of zbar_k, 0 <= k <= l-1

/// The events of a checkpoint schedule (checked first with
/// checkpoint::check_schedule; an illegal one is the checker's message): a
/// state is freed when it is neither current nor in a slot, an adjoint when
/// the next backward step has read it.
std::variant<NodeSchedule, std::string> chain_events(const checkpoint::Schedule& s);

}  // namespace stax::remat
