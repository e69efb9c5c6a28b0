#include "backends/cpu/vecmath_ir.h"

#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <string>

#include "backends/cpu/math_forms.h"
#include "backends/cpu/vecmath.h"

namespace stax::backends::cpu {
namespace {

/// A math entry point has no effect the kernel can observe (mathlib's
/// fallback counter aside), so the optimiser may hoist, vectorise or drop
/// its calls: the same input always gives the same bits.
void mark_pure(llvm::Function* f) {
  f->setDoesNotThrow();
  f->setDoesNotAccessMemory();
  f->setWillReturn();
}

}  // namespace

llvm::Value* emit_math_call(llvm::IRBuilder<>& b, llvm::Module& m, std::string_view base,
                            const std::vector<llvm::Value*>& args) {
  llvm::Type* t = args[0]->getType();
  bool f32 = t->isFloatTy();
  MathBinding binding = math_binding();
  std::string name = math_symbol(base, f32, binding);
  std::vector<llvm::Type*> ts(args.size(), t);
  llvm::FunctionCallee callee = m.getOrInsertFunction(name, llvm::FunctionType::get(t, ts, false));
  mark_pure(llvm::cast<llvm::Function>(callee.getCallee()));
  llvm::CallInst* call = b.CreateCall(callee, args);
  if (binding != MathBinding::Vector && binding != MathBinding::VectorCall) return call;
  std::vector<std::string> mappings;
  for (const VectorVariant& v : vector_variants(name, f32)) {
    auto* vt = llvm::FixedVectorType::get(t, unsigned(v.lanes));
    llvm::Function* vf = m.getFunction(v.name);
    if (!vf) {
      std::vector<llvm::Type*> vts(args.size(), vt);
      vf = llvm::Function::Create(llvm::FunctionType::get(vt, vts, false), llvm::Function::ExternalLinkage, v.name,
                                  m);
      mark_pure(vf);
      if (binding == MathBinding::Vector && has_math_form(v.name)) mark_math_form(vf);
      // Unused until the vectoriser calls it: keep the declaration alive
      // through the passes that delete unused ones (as InjectTLIMappings does).
      llvm::appendToCompilerUsed(m, {vf});
    }
    // "_ZGV" "_LLVM_" N<lanes> <one 'v' per vector argument> "_" scalar (vector).
    mappings.push_back("_ZGV_LLVM_N" + std::to_string(v.lanes) + std::string(args.size(), 'v') + "_" + name + "(" +
                       v.name + ")");
  }
  if (!mappings.empty()) llvm::VFABI::setVectorVariantNames(call, mappings);
  return call;
}

bool is_math_call(const llvm::Value* v, std::string_view base) {
  auto* c = llvm::dyn_cast<llvm::CallInst>(v);
  if (!c || !c->getCalledFunction()) return false;
  bool f32 = c->getType()->isFloatTy();
  llvm::StringRef n = c->getCalledFunction()->getName();
  return n == math_symbol(base, f32, MathBinding::Vector) || n == math_symbol(base, f32, MathBinding::HostLibm);
}

}  // namespace stax::backends::cpu
