// The forms of exp and erf that the CPU backend's JIT links into a kernel,
// so that LLVM inlines them into the vectorised loop: no call, no argument
// and result registers pinned, the forms' constants hoisted out of the loop.
// Compiled by clang to LLVM bitcode only, twice (mathlib/CMakeLists.txt:
// -O2 -ffp-contract=off, no fast-math; -mavx2 -mfma for the 8-lane AVX2
// forms, -mavx512f -mavx512dq -mavx512vl and STAX_JIT_FORMS_512 for the
// 16-lane AVX-512 ones), and embedded in the library (f32_jit_forms.h),
// never linked as machine code.
//
// Each form is eval_v8_avx2<F> or eval_v16_avx512<F> (f32.cpp) with the
// same fast path (f32_v8.h); what the bitcode cannot name — the host's tables, the test
// hook's factors and the slow path — it reaches through the symbols below,
// which the JIT binds to the host's (backends/cpu/vecmath.cpp). So the bits
// are the library's: the fast path's candidate where its rounding test
// passes (then correctly rounded), the slow path's result elsewhere.
#include "mathlib/f32_v8.h"

using stax::math::Fn;
namespace f32 = stax::math::f32;

extern "C" {
/// f32::tables() (constant once built: loads from it are invariant).
extern const f32::Tables stax_f32_tables;
/// The test hook's factor of each function (f32_testing.h), 1 otherwise.
extern double stax_f32_pert[];
/// f32::resolve_v8<F>: the lanes of `fail` through the slow path.
__m256 stax_f32_resolve_expf_v8(__m256 x, __m256 o, unsigned fail);
__m256 stax_f32_resolve_erff_v8(__m256 x, __m256 o, unsigned fail);
}

namespace {
#if defined(STAX_JIT_FORMS_512)
/// The sixteen-lane forms (this file compiled a second time, for AVX-512
/// hosts): v16_avx512_regs, each half's failed lanes through the slow path.
template <Fn F>
[[gnu::always_inline]] inline __m512 form(__m512 x, __m256 (*resolve)(__m256, __m256, unsigned)) {
  __m512 o;
  const unsigned fail = f32::v16_avx512_regs<F>(x, o, stax_f32_tables, stax_f32_pert[size_t(F)]);
  return __builtin_expect(fail == 0, 1) ? o : f32::resolve_halves(x, o, fail, resolve);
}
}  // namespace

extern "C" __m512 stax_cr_expf_v16(__m512 x) { return form<Fn::Exp>(x, stax_f32_resolve_expf_v8); }
extern "C" __m512 stax_cr_erff_v16(__m512 x) { return form<Fn::Erf>(x, stax_f32_resolve_erff_v8); }
#else
template <Fn F>
[[gnu::always_inline]] inline __m256 form(__m256 x, __m256 (*resolve)(__m256, __m256, unsigned)) {
  __m256 o;
  const unsigned fail = f32::v8_avx2_regs<F>(x, o, stax_f32_tables, stax_f32_pert[size_t(F)]);
  return __builtin_expect(fail == 0, 1) ? o : resolve(x, o, fail);
}
}  // namespace

extern "C" __m256 stax_cr_expf_v8(__m256 x) { return form<Fn::Exp>(x, stax_f32_resolve_expf_v8); }
extern "C" __m256 stax_cr_erff_v8(__m256 x) { return form<Fn::Erf>(x, stax_f32_resolve_erff_v8); }
#endif
