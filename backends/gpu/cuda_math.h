// The correctly rounded binary32 functions in GPU kernels (issue 18): the
// fast paths of mathlib/f32_kernels.h, compiled as device code (NVRTC) or by
// the host compiler (the emulator), against the host's own tables, copied
// into the module's global `stax_T`. A lane whose rounding test fails
// returns its candidate and counts itself in StaxFail::slow; the host then
// recomputes that kernel's binding with the interpreter (gpu_backend.cpp),
// so the final bits are the reference's, slow path included.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "semantics/ir.h"

namespace stax::backends::gpu {

/// The source that follows the prelude: a shim of the std names the
/// headers use (NVRTC has no standard library), the headers' text, the
/// table global and one `stax_cr_<fn>(x[, y], fail)` wrapper per function.
std::string cuda_math_source();

/// The text of mathlib/f32_tables.h and f32_kernels.h (generated at
/// configure time, cuda_math_text.cpp.in).
std::string_view cuda_math_headers();

/// The host's tables: what a module's `stax_T` must hold.
const void* cuda_math_tables();
size_t cuda_math_tables_size();

/// The wrapper that computes `op` (a transcendental op, by
/// sem::ieee::cr_fn), e.g. "stax_cr_exp"; nullopt for other ops.
std::optional<std::string> cuda_math_function(sem::ScalarOp op);

}  // namespace stax::backends::gpu
