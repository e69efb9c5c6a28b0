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

#include <algorithm>
#include <chrono>
#include <list>
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

/// One LLJIT per optimisation level: the machine-code generator's level is
/// fixed when an LLJIT is built. An LLJIT keeps a little of every object it
/// linked (ORC's per-object records, its symbol string pool: about 40 KB/s
/// in a CPU campaign, measured with heaptrack), so an engine is replaced
/// after kEngineCompiles compilations; the old one lives on until the last
/// kernel it compiled is released.
constexpr int64_t kEngineCompiles = 2000;
struct Engine {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  int64_t compiled = 0;
};

std::shared_ptr<Engine> make_engine(int level) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw CompileError("LLVM cannot target this host: " + take_error(jtmb.takeError()));
  const llvm::CodeGenOpt::Level cg[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less, llvm::CodeGenOpt::Default,
                                        llvm::CodeGenOpt::Aggressive};
  jtmb->setCodeGenOptLevel(cg[level]);
  // Exactness: never fuse a multiply and an add the program did not fuse.
  jtmb->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
  jtmb->getOptions().UnsafeFPMath = false;
  jtmb->getOptions().NoInfsFPMath = false;
  jtmb->getOptions().NoNaNsFPMath = false;
  auto ep = std::make_shared<Engine>();
  Engine& e = *ep;
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw CompileError("LLVM target machine: " + take_error(tm.takeError()));
  e.tm = std::move(*tm);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) throw CompileError("LLJIT: " + take_error(jit.takeError()));
  e.jit = std::move(*jit);
  // Runtime and libm symbols by address (runtime.h).
  llvm::orc::SymbolMap syms;
  auto& es = e.jit->getExecutionSession();
  for (const RuntimeSymbol& s : runtime_symbols())
    syms[es.intern(s.name)] = llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(s.address),
                                                       llvm::JITSymbolFlags::Exported);
  if (auto err = e.jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(syms))))
    throw CompileError("defining runtime symbols: " + take_error(std::move(err)));
  return ep;
}

/// The machine code of one kernel: removed from its JIT when the last
/// holder (the cache entry, a compiled program) lets go.
struct Lease {
  std::shared_ptr<Engine> engine;  ///< outlives rt (members are destroyed in reverse order)
  llvm::orc::ResourceTrackerSP rt;
  ~Lease() {
    if (rt) llvm::consumeError(rt->remove());
  }
};

struct Entry {
  KernelFn fn;
  std::vector<std::string> reasons;
  std::shared_ptr<const void> lease;
  std::list<std::string>::iterator lru;  ///< position in Impl::lru
  const Engine* engine = nullptr;        ///< the engine that compiled it
};

}  // namespace

struct Jit::Impl {
  std::shared_ptr<Engine> engines[4];
  mutable std::mutex mu;
  std::map<std::string, Entry> cache;  // destroyed before the engines: leases remove from live JITs
  std::list<std::string> lru;          ///< cache keys, most recently used first
  size_t capacity = 512;
  std::map<std::string, std::string> ir;
  bool keep_ir = false;
  int64_t counter = 0;

  void evict() {
    while (cache.size() > capacity) {
      cache.erase(lru.back());
      lru.pop_back();
    }
  }

  /// The level's engine, a fresh one when the current one has compiled
  /// kEngineCompiles kernels (its cache entries are dropped with it).
  std::shared_ptr<Engine> engine(int level) {
    std::shared_ptr<Engine>& e = engines[level];
    if (e && e->compiled >= kEngineCompiles) {
      for (auto it = cache.begin(); it != cache.end();) {
        if (it->second.engine != e.get()) {
          ++it;
          continue;
        }
        lru.erase(it->second.lru);
        it = cache.erase(it);
      }
      e.reset();
    }
    if (!e) e = make_engine(level);
    return e;
  }

  void optimise(llvm::Module& m, int level) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = level >= 2;
    pto.SLPVectorization = level >= 2;
    llvm::PassBuilder pb(engines[level]->tm.get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel levels[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                              llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    llvm::ModulePassManager mpm = level == 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                             : pb.buildPerModuleDefaultPipeline(levels[level]);
    mpm.run(m, mam);
  }
};

Jit::Jit() : impl_(new Impl) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
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

int64_t Jit::cached_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return int64_t(impl_->cache.size());
}

void Jit::set_capacity(int64_t kernels) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->capacity = size_t(std::max<int64_t>(kernels, 1));
  impl_->evict();
}

CompiledKernel Jit::compile(const std::string& key_text, const EmitFn& emit, int opt_level) {
  opt_level = std::clamp(opt_level, 0, 3);
  // The active mutant changes code generation: it is part of the key.
  std::string key = std::string(sem::active_mutant()) + "\nO" + std::to_string(opt_level) + "\n" + key_text;
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (auto it = impl_->cache.find(key); it != impl_->cache.end()) {
    Entry& e = it->second;
    impl_->lru.splice(impl_->lru.begin(), impl_->lru, e.lru);
    CompiledKernel k{e.fn, e.lease, e.reasons};
    k.cached = true;
    return k;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string fname = "stax_kernel_" + std::to_string(impl_->counter++);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(fname, *ctx);
  std::shared_ptr<Engine> ep = impl_->engine(opt_level);
  Engine& eng = *ep;
  ++eng.compiled;
  mod->setDataLayout(eng.tm->createDataLayout());
  mod->setTargetTriple(eng.tm->getTargetTriple().str());
  std::vector<std::string> reasons = emit(*mod, fname);
  std::string verr;
  llvm::raw_string_ostream vos(verr);
  if (llvm::verifyModule(*mod, &vos)) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    throw CompileError("invalid LLVM IR for kernel:\n" + key_text + "\n" + vos.str() + "\n" + os.str());
  }
  auto t1 = std::chrono::steady_clock::now();
  impl_->optimise(*mod, opt_level);
  auto t2 = std::chrono::steady_clock::now();
  if (impl_->keep_ir) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    impl_->ir[key_text] = os.str();
  }
  auto lease = std::make_shared<Lease>();
  lease->engine = ep;
  lease->rt = eng.jit->getMainJITDylib().createResourceTracker();
  if (auto err = eng.jit->addIRModule(lease->rt, llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    throw CompileError("JIT failed for kernel:\n" + key_text + "\n" + take_error(std::move(err)));
  auto addr = eng.jit->lookup(fname);
  if (!addr) throw CompileError("JIT lookup failed for kernel:\n" + key_text + "\n" + take_error(addr.takeError()));
  KernelFn fn = addr->toPtr<KernelFn>();
  auto t3 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  impl_->lru.push_front(key);
  impl_->cache.emplace(key, Entry{fn, reasons, lease, impl_->lru.begin(), &eng});
  impl_->evict();
  CompiledKernel k{fn, std::move(lease), std::move(reasons)};
  k.compile_ms = ms(t0, t3);
  k.emit_ms = ms(t0, t1);
  k.optimise_ms = ms(t1, t2);
  k.codegen_ms = ms(t2, t3);
  return k;
}

}  // namespace stax::backends::cpu
