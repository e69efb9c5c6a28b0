#pragma once
// The JIT's inlined math forms: the 8-lane AVX2 forms of exp and
// erf come with the library as LLVM bitcode (mathlib/f32_jit_forms.h). Under
// MathBinding::Vector, on a host with AVX2 and FMA but not AVX-512 (whose
// 512-bit entry points the kernels call instead), their 8-lane variants are
// declared as forms (mark_math_form). After the loop vectoriser has called
// them (O2, O3), the kernel pipeline's module pass "stax-link-math-forms"
// links the forms the module calls (link_math_forms), internal and
// always-inline; always-inline and globaldce then inline them into the
// vectorised loop and drop the definitions, and the last function passes
// hoist their constants out of the loop. Linked that late, the forms (already
// optimised by clang) do not go through the kernel's function passes. The
// inlined code is the library's fast path and rounding test, with a call to
// its slow path for the lanes that fail: the bits are those of the call,
// which MathBinding::VectorCall keeps.
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/runtime.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace stax::backends::cpu {

/// Whether `variant` (a vector variant's name, vecmath.h) has a form this
/// host can inline: the bitcode is there and the host has AVX2 and FMA.
bool has_math_form(std::string_view variant);
/// Marks the declaration of a variant with a form, for link_math_forms.
void mark_math_form(llvm::Function* f);
/// Links the forms `m` declares (mark_math_form) into `m`, internal and
/// always-inline, and drops them from llvm.compiler.used (which kept their
/// declarations for the vectoriser); returns how many. Throws CompileError
/// if the bitcode does not load.
int link_math_forms(llvm::Module& m);
/// The symbols the forms refer to, bound to the library's (runtime.h).
void add_math_form_symbols(std::vector<RuntimeSymbol>& out);
/// Part of the disk cache's code-generator identity: the forms' bitcode.
std::string math_forms_identity();

}  // namespace stax::backends::cpu
