// The run-time support of JIT-compiled CPU kernels: the scalar functions a
// kernel calls instead of emitting them inline, so that compiled code and
// the Ieee domain share one implementation (docs/design.md §3) — half-precision
// conversions and rounding, NumPy's float divmod, saturating float→int
// casts, the counter-based rand — and the correctly rounded math
// (vecmath.h). Every symbol is
// bound by address into the JIT (no lookup by name in the process), so a
// kernel calls exactly the function the interpreter calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stax::backends::cpu {

struct RuntimeSymbol {
  std::string name;  ///< the name kernels call
  void* address;
};

/// Every runtime and math symbol kernels may call.
const std::vector<RuntimeSymbol>& runtime_symbols();

/// Where a kernel records the first failure (⊥) of its range.
struct FailRecord {
  int64_t reason = -1;  ///< index into the kernel's reason table; -1: none
  int64_t pos = 0;      ///< flat index in the kernel's output domain
  int64_t value = 0;    ///< the offending value (an index out of range)
};

}  // namespace stax::backends::cpu
