// Embeds f32_jit_forms.cpp's bitcode (built by mathlib/CMakeLists.txt) in
// the library's read-only data.
#include "mathlib/f32_jit_forms.h"

#if defined(STAX_JIT_FORMS_BC)
extern "C" __attribute__((visibility("hidden"))) const char stax_f32_jit_forms_begin[];
extern "C" __attribute__((visibility("hidden"))) const char stax_f32_jit_forms_end[];
asm(".pushsection .rodata\n"
    ".balign 16\n"
    ".globl stax_f32_jit_forms_begin\n"
    ".hidden stax_f32_jit_forms_begin\n"
    "stax_f32_jit_forms_begin:\n"
    ".incbin \"" STAX_JIT_FORMS_BC "\"\n"
    ".globl stax_f32_jit_forms_end\n"
    ".hidden stax_f32_jit_forms_end\n"
    "stax_f32_jit_forms_end:\n"
    ".popsection\n");

std::string_view stax::math::f32::jit_forms_bitcode() {
  return {stax_f32_jit_forms_begin, size_t(stax_f32_jit_forms_end - stax_f32_jit_forms_begin)};
}
#else
std::string_view stax::math::f32::jit_forms_bitcode() { return {}; }
#endif
