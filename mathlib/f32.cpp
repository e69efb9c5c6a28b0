// Placeholder until the fast path lands: every call takes the slow path
// (MPFR), which is correctly rounded, and is counted as a fallback.
#include "mathlib/crmath.h"

namespace stax::math {

float eval_f32(Fn f, float x, float y) {
  note_fallback(f, Width::F32);
  return mpfr_f32(f, x, y);
}

void eval_f32_n(Fn f, size_t n, float* out, const float* x, const float* y) {
  for (size_t i = 0; i < n; ++i) out[i] = eval_f32(f, x[i], y ? y[i] : float(0));
}

}  // namespace stax::math
