#include "backends/cpu/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "semantics/mutants.h"

namespace stax::backends::cpu {

namespace {

std::string take_error(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

}  // namespace

struct Jit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  mutable std::mutex mu;
  std::map<std::string, std::pair<KernelFn, std::vector<std::string>>> cache;
  std::map<std::string, std::string> ir;
  bool keep_ir = false;
  int64_t counter = 0;

  void optimise(llvm::Module& m) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    llvm::PassBuilder pb(tm.get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }
};

Jit::Jit() : impl_(new Impl) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw CompileError("LLVM cannot target this host: " + take_error(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  // Exactness: never fuse a multiply and an add the program did not fuse.
  jtmb->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
  jtmb->getOptions().UnsafeFPMath = false;
  jtmb->getOptions().NoInfsFPMath = false;
  jtmb->getOptions().NoNaNsFPMath = false;
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw CompileError("LLVM target machine: " + take_error(tm.takeError()));
  impl_->tm = std::move(*tm);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) throw CompileError("LLJIT: " + take_error(jit.takeError()));
  impl_->jit = std::move(*jit);
  // Runtime and libm symbols by address (runtime.h).
  llvm::orc::SymbolMap syms;
  auto& es = impl_->jit->getExecutionSession();
  for (const RuntimeSymbol& s : runtime_symbols())
    syms[es.intern(s.name)] = llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(s.address),
                                                       llvm::JITSymbolFlags::Exported);
  if (auto err = impl_->jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(syms))))
    throw CompileError("defining runtime symbols: " + take_error(std::move(err)));
}

Jit::~Jit() { delete impl_; }

Jit& Jit::instance() {
  static Jit jit;
  return jit;
}

void Jit::set_keep_ir(bool on) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->keep_ir = on;
}

std::string Jit::optimised_ir(const std::string& key) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->ir.find(key);
  return it == impl_->ir.end() ? std::string() : it->second;
}

int64_t Jit::compiled_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->counter;
}

CompiledKernel Jit::compile(const std::string& key_text, const EmitFn& emit) {
  // The active mutant changes code generation: it is part of the key.
  std::string key = std::string(sem::active_mutant()) + "\n" + key_text;
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (auto it = impl_->cache.find(key); it != impl_->cache.end()) return {it->second.first, it->second.second, 0.0, true};
  auto t0 = std::chrono::steady_clock::now();
  std::string fname = "stax_kernel_" + std::to_string(impl_->counter++);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(fname, *ctx);
  mod->setDataLayout(impl_->tm->createDataLayout());
  mod->setTargetTriple(impl_->tm->getTargetTriple().str());
  std::vector<std::string> reasons = emit(*mod, fname);
  std::string verr;
  llvm::raw_string_ostream vos(verr);
  if (llvm::verifyModule(*mod, &vos)) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    throw CompileError("invalid LLVM IR for kernel:\n" + key_text + "\n" + vos.str() + "\n" + os.str());
  }
  impl_->optimise(*mod);
  if (impl_->keep_ir) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    impl_->ir[key_text] = os.str();
  }
  if (auto err = impl_->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    throw CompileError("JIT failed for kernel:\n" + key_text + "\n" + take_error(std::move(err)));
  auto addr = impl_->jit->lookup(fname);
  if (!addr) throw CompileError("JIT lookup failed for kernel:\n" + key_text + "\n" + take_error(addr.takeError()));
  KernelFn fn = addr->toPtr<KernelFn>();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  impl_->cache.emplace(key, std::make_pair(fn, reasons));
  return {fn, std::move(reasons), ms, false};
}

}  // namespace stax::backends::cpu
