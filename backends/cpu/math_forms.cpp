#include "backends/cpu/math_forms.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <cstdio>

#include "backends/cpu/jit.h"
#include "mathlib/f32_jit_forms.h"
#include "mathlib/f32_tables.h"

namespace stax::backends::cpu {
namespace {

constexpr const char* kFormAttr = "stax-math-form";
/// The forms the host's bitcode defines (math::f32::jit_forms_bitcode), by
/// variant name: 16 lanes where the host has AVX-512, else 8.
bool is_form(std::string_view name) {
#if defined(__x86_64__)
  static const bool wide = math::f32::host_has_avx512();
  return wide ? name == "stax_cr_expf_v16" || name == "stax_cr_erff_v16"
              : name == "stax_cr_expf_v8" || name == "stax_cr_erff_v8";
#else
  (void)name;
  return false;
#endif
}

/// Whether the host has the forms' instruction sets (AVX2 and FMA; the
/// 16-lane ones AVX-512 as well, is_form) and the build embedded them. Clang
/// builds offer no 8-lane or 16-lane variant (vector_variants: clang passes
/// wide vectors in memory), so no form.
bool forms_usable() {
#if defined(__x86_64__) && !defined(__clang__)
  static const bool yes = !math::f32::jit_forms_bitcode().empty() && math::f32::host_has_avx2_fma();
  return yes;
#else
  return false;
#endif
}

/// Drops the forms from llvm.compiler.used.
void release_forms(llvm::Module& m) {
  llvm::GlobalVariable* used = m.getGlobalVariable("llvm.compiler.used");
  if (!used || !used->hasInitializer()) return;
  std::vector<llvm::GlobalValue*> keep;
  auto* init = llvm::cast<llvm::ConstantArray>(used->getInitializer());
  for (llvm::Use& u : init->operands()) {
    auto* g = llvm::cast<llvm::GlobalValue>(u.get()->stripPointerCasts());
    if (!is_form(g->getName())) keep.push_back(g);
  }
  used->eraseFromParent();
  if (!keep.empty()) llvm::appendToCompilerUsed(m, keep);
}

/// The library's tables, built once, as bytes.
std::string_view table_bytes() {
  const math::f32::Tables& t = math::f32::tables();
  return {reinterpret_cast<const char*>(&t), sizeof t};
}

/// The forms' reads of the library's tables become constants: the module
/// gets its own copy of them, a constant with the host's bytes, so that
/// the optimiser folds each load into the value it reads. Loads of an
/// external global, hoisted out of the loop as invariant, held every table
/// entry the loop might use in a register (erf's general path alone reads
/// 61) and spilled most of them: GELU's backward loop reloaded 64-byte
/// registers from the stack ~120 times an iteration. A constant is an
/// operand of the instruction that uses it (an embedded broadcast) or a
/// rematerialised load, never a spill. The bytes are part of the key of the
/// disk cache (math_forms_identity).
void inline_tables(llvm::Module& m) {
  llvm::GlobalVariable* ext = m.getGlobalVariable("stax_f32_tables");
  if (!ext) return;
  const std::string_view bytes = table_bytes();
  auto* data = llvm::ConstantDataArray::getRaw(llvm::StringRef(bytes.data(), bytes.size()), bytes.size(),
                                                llvm::Type::getInt8Ty(m.getContext()));
  auto* copy = new llvm::GlobalVariable(m, data->getType(), true, llvm::GlobalValue::InternalLinkage, data,
                                        "stax_f32_tables.copy");
  copy->setAlignment(llvm::Align(alignof(math::f32::Tables)));
  ext->replaceAllUsesWith(copy);
  ext->eraseFromParent();
  copy->setName("stax_f32_tables");
}

}  // namespace

bool has_math_form(std::string_view variant) { return forms_usable() && is_form(variant); }

void mark_math_form(llvm::Function* f) { f->addFnAttr(kFormAttr); }

int link_math_forms(llvm::Module& m) {
  std::vector<std::string> wanted;
  for (llvm::Function& f : m)
    if (f.isDeclaration() && f.hasFnAttribute(kFormAttr) && is_form(f.getName()))
      wanted.push_back(f.getName().str());
  if (wanted.empty() || !forms_usable()) return 0;
  std::string_view bc = math::f32::jit_forms_bitcode();
  llvm::MemoryBufferRef buf(llvm::StringRef(bc.data(), bc.size()), "stax_f32_jit_forms");
  // Lazily: the linker materialises the forms `m` needs, not the others.
  llvm::Expected<std::unique_ptr<llvm::Module>> src = llvm::getLazyBitcodeModule(buf, m.getContext());
  if (!src) throw CompileError("the math forms' bitcode: " + llvm::toString(src.takeError()));
  (*src)->setDataLayout(m.getDataLayout());
  (*src)->setTargetTriple(m.getTargetTriple());
  if (llvm::Linker::linkModules(m, std::move(*src), llvm::Linker::LinkOnlyNeeded))
    throw CompileError("linking the math forms failed");
  for (const std::string& n : wanted) {
    llvm::Function* f = m.getFunction(n);
    if (!f || f->isDeclaration()) throw CompileError("the math forms' bitcode lacks " + n);
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    // The kernel's own target (the host's CPU and features, a superset of
    // the forms' own, forms_usable) so that the inliner accepts it.
    for (const char* a : {"target-cpu", "target-features", "tune-cpu", kFormAttr}) f->removeFnAttr(a);
    f->removeFnAttr(llvm::Attribute::NoInline);
    f->removeFnAttr(llvm::Attribute::OptimizeNone);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
  }
  // The test hook's factors do not change while a kernel runs (they are set
  // between runs): their loads may be hoisted out of the kernel's loops, and
  // the test of the factor with them.
  if (llvm::GlobalVariable* t = m.getGlobalVariable("stax_f32_pert")) t->setConstant(true);
  inline_tables(m);
  release_forms(m);
  return int(wanted.size());
}

void add_math_form_symbols(std::vector<RuntimeSymbol>& out) {
#if defined(__x86_64__)
  using math::Fn;
  namespace f32 = math::f32;
  out.push_back({"stax_f32_tables", const_cast<f32::Tables*>(&f32::tables())});
  out.push_back({"stax_f32_pert", f32::perturbation_factors()});
  out.push_back({"stax_f32_resolve_expf_v8", reinterpret_cast<void*>(&f32::resolve_v8<Fn::Exp>)});
  out.push_back({"stax_f32_resolve_erff_v8", reinterpret_cast<void*>(&f32::resolve_v8<Fn::Erf>)});
#else
  (void)out;
#endif
}

std::string math_forms_identity() {
  std::string_view bc = math::f32::jit_forms_bitcode();
  const std::string_view tb = table_bytes();
  char b[64];
  std::snprintf(b, sizeof b, "math forms %016llx tables %016llx",
                static_cast<unsigned long long>(llvm::xxHash64(llvm::StringRef(bc.data(), bc.size()))),
                static_cast<unsigned long long>(llvm::xxHash64(llvm::StringRef(tb.data(), tb.size()))));
  return forms_usable() ? b : "math forms none";
}

}  // namespace stax::backends::cpu
