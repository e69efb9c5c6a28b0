#pragma once
// The tables the GPU backend's math kernels read: the host's binary32 and
// binary64 tables (computed with MPFR) and the binary64 fault settings of
// the tests (mathlib's g_fault when the program was built; 1 and 0 change
// nothing), copied whole into each module's global `stax_T`. One definition
// for the host and the device: the device code compiles this text too
// (cuda_math.cpp embeds it). Trivial types only: a __device__ global may
// have no dynamic initialisation (hence two doubles, not a f64::Fault).
#include "mathlib/f32_tables.h"
#include "mathlib/f64_tables.h"

namespace stax::backends::gpu {

struct MathTables {
  math::f32::Tables f32;
  math::f64::Tables f64;
  double f64_bound_scale, f64_inject_rel;  ///< math::f64::Fault's fields
};

}  // namespace stax::backends::gpu
