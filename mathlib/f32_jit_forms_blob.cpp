// Embeds f32_jit_forms.cpp's two bitcode files (built by
// mathlib/CMakeLists.txt) in the library's read-only data.
#include "mathlib/f32_jit_forms.h"

#if defined(STAX_JIT_FORMS_AVX2_BC) && defined(STAX_JIT_FORMS_AVX512_BC)
#include "mathlib/f32_lanes.h"

#define STAX_EMBED(name, file)                                                         \
  extern "C" __attribute__((visibility("hidden"))) const char name##_begin[];         \
  extern "C" __attribute__((visibility("hidden"))) const char name##_end[];           \
  asm(".pushsection .rodata\n"                                                        \
      ".balign 16\n"                                                                  \
      ".globl " #name "_begin\n"                                                      \
      ".hidden " #name "_begin\n" #name "_begin:\n"                                    \
      ".incbin \"" file "\"\n"                                                         \
      ".globl " #name "_end\n"                                                        \
      ".hidden " #name "_end\n" #name "_end:\n"                                        \
      ".popsection\n");
STAX_EMBED(stax_f32_jit_forms_avx2, STAX_JIT_FORMS_AVX2_BC)
STAX_EMBED(stax_f32_jit_forms_avx512, STAX_JIT_FORMS_AVX512_BC)
#undef STAX_EMBED

std::string_view stax::math::f32::jit_forms_bitcode() {
  if (host_has_avx512())
    return {stax_f32_jit_forms_avx512_begin, size_t(stax_f32_jit_forms_avx512_end - stax_f32_jit_forms_avx512_begin)};
  return {stax_f32_jit_forms_avx2_begin, size_t(stax_f32_jit_forms_avx2_end - stax_f32_jit_forms_avx2_begin)};
}
#else
std::string_view stax::math::f32::jit_forms_bitcode() { return {}; }
#endif
