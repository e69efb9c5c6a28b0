#pragma once
// Internals of the binary64 entry points (f64.cpp): the fast paths
// (f64_exp_log.h, f64_trig.h, header-only so that the GPU backend compiles
// the same text as device code) and the fault-injection hook of the tests.

#include "mathlib/f64_trig.h"

namespace stax::math::f64 {

// Test hook: a deliberately wrong fast path, passed to every host fast path
// by f64.cpp. Process-global and unsynchronised: set only in
// single-threaded tests, and reset afterwards.
extern Fault g_fault;
// Moves exp's Taylor coefficient 1/3! by `ulps` units in the last place of
// its lo part (about 2^-108 relative per unit: within the proven bound) or
// of its hi part (2^-55 relative per unit: beyond it); 0 restores it.
void perturb_exp_coefficient(int ulps, bool hi_part);

}  // namespace stax::math::f64
