#include "backends/cpu/stream_stores.h"

#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>

namespace stax::backends::cpu {

namespace {

/// Whether `st` writes a whole aligned vector into a tagged output.
bool streamable(llvm::StoreInst& st, unsigned kind, const llvm::DataLayout& dl, const llvm::DominatorTree& dt) {
  if (st.isVolatile() || st.isAtomic() || !st.getValueOperand()->getType()->isVectorTy()) return false;
  auto* base = llvm::dyn_cast<llvm::LoadInst>(llvm::getUnderlyingObject(st.getPointerOperand()));
  if (!base || !base->getMetadata(kind)) return false;
  const uint64_t size = dl.getTypeStoreSize(st.getValueOperand()->getType()).getFixedSize();
  // movntdq/movntps/movntpd: 16, 32 or 64 bytes, aligned to their size.
  if (size < 16 || size > uint64_t(kStreamAlign) || !llvm::isPowerOf2_64(size)) return false;
  return llvm::getKnownAlignment(st.getPointerOperand(), dl, &st, nullptr, &dt).value() >= size;
}

}  // namespace

int mark_stream_stores(llvm::Module& m) {
  if (llvm::Triple(m.getTargetTriple()).getArch() != llvm::Triple::x86_64) return 0;
  llvm::LLVMContext& ctx = m.getContext();
  const unsigned kind = ctx.getMDKindID(kStreamMetadata);
  const llvm::DataLayout& dl = m.getDataLayout();
  llvm::MDNode* nt = llvm::MDNode::get(
      ctx, {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))});
  int marked = 0;
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    const llvm::DominatorTree dt(f);
    std::vector<llvm::ReturnInst*> rets;
    int here = 0;
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb) {
        if (auto* r = llvm::dyn_cast<llvm::ReturnInst>(&i)) rets.push_back(r);
        auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (!st || !streamable(*st, kind, dl, dt)) continue;
        st->setAlignment(llvm::Align(dl.getTypeStoreSize(st->getValueOperand()->getType()).getFixedSize()));
        st->setMetadata(llvm::LLVMContext::MD_nontemporal, nt);
        ++here;
      }
    if (here == 0) continue;
    llvm::Function* fence = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::x86_sse_sfence);
    for (llvm::ReturnInst* r : rets) llvm::CallInst::Create(fence, {}, "", r);
    marked += here;
  }
  return marked;
}

}  // namespace stax::backends::cpu
