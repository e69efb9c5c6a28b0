#pragma once
// The tables the GPU backend's math kernels read: the host's binary32 and
// binary64 tables (computed with MPFR) and the binary64 fault settings of
// the tests (mathlib's g_fault when the program was built: Fault{} changes
// nothing), copied whole into each module's global `stax_T`. One definition
// for the host and the device: the device code compiles this text too
// (cuda_math.cpp embeds it).
#include "mathlib/f32_tables.h"
#include "mathlib/f64_kernels.h"
#include "mathlib/f64_tables.h"

namespace stax::backends::gpu {

struct MathTables {
  math::f32::Tables f32;
  math::f64::Tables f64;
  math::f64::Fault f64_fault;
};

}  // namespace stax::backends::gpu
