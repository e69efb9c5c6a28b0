// The ⊥ reasons the compiled kernels record, worded as the interpreter's
// (shared by the CPU and GPU code generators).
#pragma once

#include <cstdint>
#include <string>

namespace stax::backends {

/// An index of a view out of [0, extent) in dimension `dim`.
inline std::string view_index_reason(int64_t extent, size_t dim, bool wrapped) {
  return "index out of range [0, " + std::to_string(extent) + ") in dim " + std::to_string(dim) +
         " of the viewed tensor" + (wrapped ? " (after wrapping negatives)" : "");
}

}  // namespace stax::backends
