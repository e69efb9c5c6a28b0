#include "backends/gpu/cuda_prelude.h"

#include <string>

#include "backends/gpu/emu_shim.h"

namespace stax::backends::gpu {

std::string_view cuda_prelude() {
  // The execution model's shim first (emu_shim.h: __global__, threadIdx,
  // barriers, shuffles, shared memory under STAX_EMU).
  static const std::string text = std::string(cuda_emu_shim()) + R"CUDA(// ---- stax prelude: the interpreter's scalar semantics (docs/design.md §3)
#ifdef STAX_EMU
#include <math.h>
#include <string.h>
#endif
typedef long long i64;
typedef unsigned long long u64;
typedef int i32;
typedef unsigned int u32;
#define STAX_DEV static __device__ __forceinline__

// The first failure (⊥), and how many lanes of transcendental functions
// failed their rounding test (the host then recomputes the binding).
struct StaxFail { i64 reason, pos, value, slow; };

// Float constants by their bits, so that every value (NaN payloads, -0,
// subnormals) is exact whatever the compiler's literal parsing does.
#ifdef STAX_EMU
STAX_DEV float stax_f32(u32 b) { float f; memcpy(&f, &b, 4); return f; }
STAX_DEV double stax_f64(u64 b) { double d; memcpy(&d, &b, 8); return d; }
STAX_DEV i64 stax_atomic_min(i64* p, i64 v) { i64 old = *p; if (v < old) *p = v; return old; }
STAX_DEV u32 stax_bits32(float f) { u32 b; memcpy(&b, &f, 4); return b; }
STAX_DEV int stax_clz64(u64 x) { return __builtin_clzll(x); }
#else
STAX_DEV u32 stax_bits32(float f) { return __float_as_uint(f); }
STAX_DEV int stax_clz64(u64 x) { return __clzll((long long)x); }
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
// f16/bf16 as the interpreter (semantics/dtype.h): values compute in f32;
// loads widen exactly, stores and rounding go to nearest even with
// subnormals kept; f64 and i64 reach a half type through f32 rounded to odd
// (exact for the second rounding).
STAX_DEV u32 stax_rne_shift(u32 m, int shift) {  // m * 2^-shift to an integer, nearest even
  if (shift <= 0) return m << -shift;
  if (shift > 31) return 0;
  u32 q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  return q;
}
STAX_DEV unsigned short stax_f2h(float x) {
  u32 b = stax_bits32(x);
  unsigned short sign = (unsigned short)((b >> 16) & 0x8000);
  u32 ex = (b >> 23) & 0xff, man = b & 0x7fffff;
  if (ex == 0xff) return man == 0 ? (unsigned short)(sign | 0x7c00) : (unsigned short)(sign | 0x7e00 | (man >> 13));
  if (ex == 0) return sign;  // f32 subnormals lie below half of f16's least subnormal
  int e = int(ex) - 127;
  u32 sig = man | 0x800000;
  if (e >= -14) {
    u32 r = stax_rne_shift(sig, 13);
    if (r == 0x800) { r >>= 1; ++e; }
    if (e > 15) return (unsigned short)(sign | 0x7c00);
    return (unsigned short)(sign | ((e + 15) << 10) | (r & 0x3ff));
  }
  return (unsigned short)(sign | stax_rne_shift(sig, 13 + (-14 - e)));  // may carry into the least normal
}
STAX_DEV float stax_h2f(unsigned short h) {
  u32 sign = u32(h & 0x8000) << 16, ex = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (ex == 0x1f) return stax_f32(sign | 0x7f800000 | (man << 13));
  if (ex == 0) { float v = float(man) * stax_f32(0x33800000u); return sign ? -v : v; }  // man * 2^-24, exact
  return stax_f32(sign | ((ex + 112) << 23) | (man << 13));
}
STAX_DEV unsigned short stax_f2bf(float x) {
  u32 b = stax_bits32(x);
  if ((b & 0x7fffffff) > 0x7f800000) return (unsigned short)((b >> 16) | 0x40);
  b += 0x7fff + ((b >> 16) & 1);
  return (unsigned short)(b >> 16);
}
STAX_DEV float stax_bf2f(unsigned short b) { return stax_f32(u32(b) << 16); }
STAX_DEV float stax_round_h(float x) { return stax_h2f(stax_f2h(x)); }
STAX_DEV float stax_round_bf(float x) { return stax_bf2f(stax_f2bf(x)); }
STAX_DEV float stax_d2f_odd(double x) {
  float f = (float)x;
  if (x != x || x - x != 0.0) return f;  // NaN, infinities
  if ((double)f == x) return f;
  u32 b = stax_bits32(f);
  if (fabs((double)f) > fabs(x)) b -= 1;  // truncate toward zero (sign-magnitude bits)
  if ((b & 0x7f800000u) == 0x7f800000u) b -= 1;
  return stax_f32(b | 1u);
}
STAX_DEV float stax_i2f_odd(i64 x) {
  if (x == 0) return 0.0f;
  bool neg = x < 0;
  u64 m = neg ? u64(0) - u64(x) : u64(x);
  int msb = 63 - stax_clz64(m);
  float r;
  if (msb < 24) {
    r = float(m);
  } else {
    int drop = msb - 23;
    u64 q = m >> drop;
    if (m & ((u64(1) << drop) - 1)) q |= 1;
    r = float(q) * stax_f32(u32(127 + drop) << 23);  // exact: q has 24 bits
  }
  return neg ? -r : r;
}
// ---- end of the prelude
)CUDA";
  return text;
}

}  // namespace stax::backends::gpu
