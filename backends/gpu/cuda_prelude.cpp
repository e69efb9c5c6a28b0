#include "backends/gpu/cuda_prelude.h"

namespace stax::backends::gpu {

std::string_view cuda_prelude() {
  static constexpr std::string_view text = R"CUDA(// ---- stax prelude: the interpreter's scalar semantics (DESIGN §3)
#ifdef STAX_EMU
#include <math.h>
#include <string.h>
#define __global__
#define __device__
#define __forceinline__ inline
struct stax_dim3 { unsigned x, y, z; };
static stax_dim3 threadIdx, blockIdx, blockDim, gridDim;
#endif
typedef long long i64;
typedef unsigned long long u64;
typedef int i32;
typedef unsigned int u32;
#define STAX_DEV static __device__ __forceinline__

struct StaxFail { i64 reason, pos, value; };

// Float constants by their bits, so that every value (NaN payloads, -0,
// subnormals) is exact whatever the compiler's literal parsing does.
#ifdef STAX_EMU
STAX_DEV float stax_f32(u32 b) { float f; memcpy(&f, &b, 4); return f; }
STAX_DEV double stax_f64(u64 b) { double d; memcpy(&d, &b, 8); return d; }
STAX_DEV i64 stax_atomic_min(i64* p, i64 v) { i64 old = *p; if (v < old) *p = v; return old; }
#else
STAX_DEV float stax_f32(u32 b) { return __int_as_float(int(b)); }
STAX_DEV double stax_f64(u64 b) { return __longlong_as_double((long long)b); }
STAX_DEV i64 stax_atomic_min(i64* p, i64 v) { return atomicMin(p, v); }
#endif

// The first failure (⊥): the launch with record == 0 keeps the least
// position; the host relaunches that one element with record == 1 to learn
// its reason and value (one writer, no race).
STAX_DEV void stax_fail(StaxFail* f, int record, i64 pos, i64 reason, i64 value) {
  if (record) { f->reason = reason; f->value = value; f->pos = pos; }
  else stax_atomic_min(&f->pos, pos);
}

// Wrap-around integers: arithmetic in the unsigned type.
template <class T, class U> STAX_DEV T stax_wadd(T a, T b) { return T(U(a) + U(b)); }
template <class T, class U> STAX_DEV T stax_wsub(T a, T b) { return T(U(a) - U(b)); }
template <class T, class U> STAX_DEV T stax_wmul(T a, T b) { return T(U(a) * U(b)); }
template <class T, class U> STAX_DEV T stax_wneg(T a) { return T(U(0) - U(a)); }
// Division: the caller has checked b != 0; MIN / -1 wraps.
template <class T, class U> STAX_DEV T stax_tdiv(T a, T b) { return b == T(-1) ? stax_wneg<T, U>(a) : T(a / b); }
template <class T, class U> STAX_DEV T stax_floordiv(T a, T b) {
  if (b == T(-1)) return stax_wneg<T, U>(a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <class T> STAX_DEV T stax_pymod(T a, T b) {
  if (b == T(-1)) return T(0);
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// NumPy's npy_divmod (ieee::divmod): floor division, and the modulo in *mod.
STAX_DEV float stax_fmod_t(float a, float b) { return fmodf(a, b); }
STAX_DEV double stax_fmod_t(double a, double b) { return fmod(a, b); }
STAX_DEV float stax_floor_t(float a) { return floorf(a); }
STAX_DEV double stax_floor_t(double a) { return floor(a); }
STAX_DEV float stax_copysign_t(float a, float b) { return copysignf(a, b); }
STAX_DEV double stax_copysign_t(double a, double b) { return copysign(a, b); }
template <class T> STAX_DEV T stax_divmod(T a, T b, T* mod) {
  *mod = stax_fmod_t(a, b);
  if (b == T(0)) return a / b;
  T div = (a - *mod) / b;
  if (*mod != T(0)) {
    if ((b < T(0)) != (*mod < T(0))) { *mod += b; div -= T(1); }
  } else {
    *mod = stax_copysign_t(T(0), b);
  }
  T fd;
  if (div != T(0)) {
    fd = stax_floor_t(div);
    if (div - fd > T(0.5)) fd += T(1);
  } else {
    fd = stax_copysign_t(T(0), a / b);
  }
  return fd;
}
template <class T> STAX_DEV T stax_ffloordiv(T a, T b) { T m; return stax_divmod(a, b, &m); }
template <class T> STAX_DEV T stax_fmodpy(T a, T b) { T m; stax_divmod(a, b, &m); return m; }

// Float to integer: truncation, NaN -> 0, saturating (ieee::float_to_int).
template <class I, class F> STAX_DEV I stax_f2i(F x, I lo, I hi) {
  if (x != x) return I(0);
  if (x <= F(lo)) return lo;
  if (x >= F(hi)) return hi;
  return I(x);
}

// IEEE 754-2019 maximum/minimum (ieee::maximum_branchless).
template <class T> STAX_DEV T stax_maximum(T a, T b) {
  T m = a > b ? a : b;
  T z = a + b;
  bool use_z = (a != a) | (b != b) | ((a == b) & (a == T(0)));
  return use_z ? z : m;
}
template <class T> STAX_DEV T stax_minimum(T a, T b) {
  T m = a < b ? a : b;
  T z = -((-a) + (-b));
  bool use_z = (a != a) | (b != b) | ((a == b) & (a == T(0)));
  return use_z ? z : m;
}
// ---- end of the prelude
)CUDA";
  return text;
}

}  // namespace stax::backends::gpu
