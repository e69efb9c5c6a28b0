#pragma once
// The CPU backend's per-register entry points of the binary32 functions
// (f32.cpp; backends/cpu/vecmath.cpp).
#include "mathlib/crmath.h"

namespace stax::math::f32 {

/// One register's worth of lanes of F, for the CPU backend's vector
/// variants (f32.cpp): out[i] = eval_f32(F, x[i], y[i]) for i < 4 or 8, bit
/// for bit (y is null for unary functions; out may alias x or y). The
/// 8-lane one is compiled for AVX2: call it only where the CPU has AVX2.
template <Fn F>
void eval_lanes4(float* out, const float* x, const float* y);
#if defined(__x86_64__)
template <Fn F>
__attribute__((target("avx2"))) void eval_lanes8(float* out, const float* x, const float* y);
/// Whether the CPU has AVX-512 F, DQ and VL (the 512-bit forms below), and
/// they are not capped away (isa_capped_at_avx2).
bool host_has_avx512();
/// Whether the environment caps the instruction sets used at AVX2
/// (STAX_CPU_ISA=avx2; unset or "native": the host's): the math library's
/// entry points and the CPU backend's JIT then use no AVX-512, so the AVX2
/// paths run, and are tested, on an AVX-512 host too. Read once.
bool isa_capped_at_avx2();
/// Whether the CPU has AVX2 and FMA (eval_v8_avx2).
bool host_has_avx2_fma();
/// The functions with explicit AVX-512 forms (f32_vec.h; on AVX2, see
/// has_avx2_form).
constexpr bool has_vec_form(Fn f) { return f == Fn::Exp || f == Fn::Expm1 || f == Fn::Tanh || f == Fn::Erf; }
/// eval_lanes8<F> in one 512-bit register, for the functions with an
/// explicit vector form: call it only where host_has_avx512().
template <Fn F>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void eval_lanes8_avx512(float* out, const float* x);
/// The same, register to register (in a ymm register, as LLVM's <8 x float>
/// is passed): the CPU kernels' 8-lane entry point on AVX-512 hosts.
typedef float F32x8 __attribute__((vector_size(32)));
template <Fn F>
__attribute__((target("avx512f,avx512dq,avx512vl"))) F32x8 eval_v8_avx512(F32x8 x);
/// eval_lanes8<F> register to register with AVX2 and FMA, for exp and erf
/// (has_avx2_form): call it only where host_has_avx2_fma().
constexpr bool has_avx2_form(Fn f) { return f == Fn::Exp || f == Fn::Erf; }
template <Fn F>
__attribute__((target("avx2,fma"))) F32x8 eval_v8_avx2(F32x8 x);
/// Sixteen lanes (two registers' worth) in a zmm register: half the calls
/// of eval_v8_avx512 for a kernel the vectoriser runs 16 wide.
typedef float F32x16 __attribute__((vector_size(64)));
template <Fn F>
__attribute__((target("avx512f,avx512dq,avx512vl"))) F32x16 eval_v16_avx512(F32x16 x);
#endif

}  // namespace stax::math::f32
