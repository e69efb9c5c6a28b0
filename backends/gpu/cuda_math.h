// The correctly rounded functions in GPU kernels: the fast paths
// of mathlib/f32_kernels.h (binary32) and f64_exp_log.h/f64_trig.h
// (binary64), compiled as device code (NVRTC) or by the host compiler (the
// emulator), against the host's own tables, copied into the module's global
// `stax_T` (cuda_math_tables.h). A lane whose rounding test fails counts
// itself in StaxFail::slow (binary32 returns its candidate, binary64 a NaN);
// the host then recomputes that kernel's binding with the interpreter
// (gpu_backend.cpp), so the final bits are the reference's, slow path
// included. The same text carries rand's hash (semantics/rand_bits.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "semantics/ir.h"

namespace stax::backends::gpu {

/// The source that follows the prelude: a shim of the std names the
/// headers use (NVRTC has no standard library), the headers' text, the
/// table global, one `stax_cr_<fn>(x[, y], fail)` wrapper per function and
/// width (float and double overloads), and `stax_rand_f32/f64(key, flat)`.
std::string cuda_math_source();

/// The text of the embedded headers, in include order (generated at
/// configure time from STAX_GPU_MATH_HEADERS, cuda_math_text.cpp.in).
std::string_view cuda_math_headers();

/// The host's tables (a MathTables): what a module's `stax_T` must hold.
const void* cuda_math_tables();
size_t cuda_math_tables_size();

/// The wrapper that computes `op` (a transcendental op, by
/// sem::ieee::cr_fn), e.g. "stax_cr_exp"; nullopt for other ops.
std::optional<std::string> cuda_math_function(sem::ScalarOp op);

}  // namespace stax::backends::gpu
