// Placeholder until the fast path lands: every call takes the slow path
// (MPFR), which is correctly rounded, and is counted as a fallback.
#include "mathlib/crmath.h"

namespace stax::math {

double eval_f64(Fn f, double x, double y) {
  note_fallback(f, Width::F64);
  return mpfr_f64(f, x, y);
}

void eval_f64_n(Fn f, size_t n, double* out, const double* x, const double* y) {
  for (size_t i = 0; i < n; ++i) out[i] = eval_f64(f, x[i], y ? y[i] : double(0));
}

}  // namespace stax::math
