// Code generation of the transcendental calls of a kernel: a call
// of the correctly rounded scalar entry point (vecmath.h), marked pure and
// carrying the "vector-function-abi-variant" attribute (LLVM LangRef; VFABI
// names such as `_ZGV_LLVM_N8v_stax_cr_expf(stax_cr_expf_v8)`), with the
// vector variants declared in the module. LLVM's loop vectoriser then calls
// a variant on whole vectors where it vectorises the loop; the scalar entry
// point stays in the scalar remainder loop and wherever it does not.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <string_view>
#include <vector>

namespace stax::backends::cpu {

/// Emits `base`(args...) ("exp", "pow", ...: mathlib's names) on f32 or f64
/// values, bound as math_binding() says.
llvm::Value* emit_math_call(llvm::IRBuilder<>& b, llvm::Module& m, std::string_view base,
                            const std::vector<llvm::Value*>& args);

/// True when `v` is a call emitted by emit_math_call for `base`.
bool is_math_call(const llvm::Value* v, std::string_view base);

}  // namespace stax::backends::cpu
