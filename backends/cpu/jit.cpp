#include "backends/cpu/jit.h"

#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "backends/cpu/math_forms.h"
#include "backends/cpu/object_cache.h"
#include "backends/cpu/stream_stores.h"
#include "semantics/mutants.h"

namespace stax::backends::cpu {

namespace {

std::string take_error(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

/// Hands the IRCompileLayer's compiler (SimpleCompiler) the object of the
/// module in flight when the disk cache had it, and learns when machine code
/// was generated (to time codegen apart from linking) and stores it. One
/// compile is in flight per engine at a time (Jit::Impl::mu).
struct InFlight : llvm::ObjectCache {
  std::string module_id;            ///< the module this applies to; other modules are left alone
  std::optional<std::string> hit;   ///< its checked object from disk
  ObjectFileCache* disk = nullptr;  ///< where a fresh object goes (null: nowhere)
  std::string disk_key;
  /// Kernels whose passes and machine code took less CPU time are not
  /// stored: writing an entry costs about 0.4 ms here (a new ext4 inode),
  /// more than a quick compile would save. (CPU time, so that a loaded
  /// machine does not change what is stored.)
  double store_min_ms = 0;
  double started_cpu_ms = 0;
  std::chrono::steady_clock::time_point generated;
  double store_ms = 0;

  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module* m) override {
    if (!hit || m->getModuleIdentifier() != module_id) return nullptr;
    return llvm::MemoryBuffer::getMemBufferCopy(*hit, module_id);
  }
  void notifyObjectCompiled(const llvm::Module* m, llvm::MemoryBufferRef obj) override {
    generated = std::chrono::steady_clock::now();
    if (!disk || m->getModuleIdentifier() != module_id) return;
    if (thread_cpu_ms() - started_cpu_ms < store_min_ms) return;
    disk->store(disk_key, obj.getBuffer().str());
    store_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - generated).count();
  }
};

/// One LLJIT per optimisation level: the machine-code generator's level is
/// fixed when an LLJIT is built. An LLJIT keeps a little of every object it
/// linked (ORC's per-object records, its symbol string pool: about 40 KB/s
/// in a CPU campaign, measured with heaptrack), so an engine is replaced
/// after kEngineCompiles compilations; the old one lives on until the last
/// kernel it compiled is released.
constexpr int64_t kEngineCompiles = 2000;
constexpr double kStoreMinMs = 5;
/// The pass pipeline (Impl::optimise), part of every disk cache key: change
/// it with the pipeline.
/// The function passes of each level (O1..O3), chosen by measurement (README
/// "Pass pipeline"). A kernel is one function with an always-inline body;
/// there is no call graph to walk, nothing to inline but that body, no
/// globals: LLVM's per-module pipelines spend most of their time on passes
/// that find nothing here, and compiled 2.4 times slower for the same
/// vector loops. Bits never depend on the pipeline (no fast-math flags).
/// STAX_JIT_PIPELINE=llvm takes LLVM's per-module pipelines instead (no
/// unrolling, no interleaving), for comparisons.
std::string kernel_pipeline(int level) {
  auto cfg = [](const char* opts) {
    return std::string("simplifycfg<bonus-inst-threshold=1;switch-range-to-icmp;") + opts + ">";
  };
  const std::string keep = cfg("no-forward-switch-cond;no-switch-to-lookup;keep-loops;no-hoist-common-insts;"
                               "no-sink-common-insts");
  const std::string hoist = cfg("no-forward-switch-cond;no-switch-to-lookup;keep-loops;hoist-common-insts;"
                                "sink-common-insts");
  const std::string fold = cfg("forward-switch-cond;switch-to-lookup;no-keep-loops;hoist-common-insts;"
                               "sink-common-insts");
  // LLVM's function simplification, less what finds nothing in a kernel:
  // the inliner's call-graph walk, jump threading, unswitching. loop-idiom
  // turns a lane block's copy-out loop into a memcpy, which SROA then
  // splits, and the marked lane loops are unrolled: the accumulators
  // become registers (jit_cache_test checks the optimised IR).
  std::string s = "always-inline,function(" + keep + ",sroa,early-cse<>,instcombine," + keep +
                  ",early-cse<memssa>,loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
                  "loop-rotate,licm<allowspeculation>)," +
                  keep + ",instcombine,loop(loop-idiom,indvars,loop-deletion,stax-forced-unroll),sroa,gvn<>," +
                  "instcombine,dse,loop-mssa(licm<allowspeculation>)," + hoist +
                  ",instcombine,loop(loop-rotate,loop-deletion),";
  if (level >= 2)
    s += "inject-tli-mappings,loop-vectorize<interleave-forced-only;no-vectorize-forced-only;>,instcombine," + fold +
         ",";
  if (level >= 3) s += "slp-vectorizer,instcombine,";
  // The math forms the vectoriser called, linked and inlined (math_forms.h);
  // the last passes then hoist their constants out of the loop.
  if (level >= 2) s.back() = ')', s += ",stax-link-math-forms,always-inline,globaldce,function(";
  // Last, the non-temporal stores of a streamed output (stream_stores.h):
  // vector stores, so after the vectoriser.
  return s + "loop-mssa(licm<allowspeculation>),instsimplify," + keep + "),stax-stream-stores";
}

/// The module pass "stax-link-math-forms" (math_forms.h).
struct LinkMathForms : llvm::PassInfoMixin<LinkMathForms> {
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&) {
    return link_math_forms(m) > 0 ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
  }
};

/// The module pass "stax-stream-stores" (stream_stores.h).
struct StreamStores : llvm::PassInfoMixin<StreamStores> {
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&) {
    return mark_stream_stores(m) > 0 ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
  }
};

Pipeline default_pipeline() {
  const char* v = std::getenv("STAX_JIT_PIPELINE");
  return v && std::string_view(v) == "llvm" ? Pipeline::Llvm : Pipeline::Kernel;
}

/// Part of every disk key: the pipeline that produced the object.
std::string pipeline_identity(Pipeline p) {
  if (p == Pipeline::Llvm) return "pipeline: new PM per-module O<level>, no unrolling, no interleaving";
  std::string s = "pipeline: kernel";
  for (int level = 1; level <= 3; ++level) s += "\n" + kernel_pipeline(level);
  return s;
}
struct Engine {
  InFlight in_flight;  ///< declared first: the JIT's compiler points to it
  /// Kernel names defined in the JIT now. A kernel's name comes from its key
  /// (a cached object defines that name), so a key compiled again while an
  /// evicted copy is still held needs another name.
  std::mutex live_mu;
  std::set<std::string> live;
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
  for (const std::string& f : jit_disabled_features()) jtmb->getFeatures().AddFeature(f, false);
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
  InFlight* cache = &e.in_flight;
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .setCompileFunctionCreator([cache](llvm::orc::JITTargetMachineBuilder b)
                                                -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                   auto t = b.createTargetMachine();
                   if (!t) return t.takeError();
                   return std::make_unique<llvm::orc::TMOwningSimpleCompiler>(std::move(*t), cache);
                 })
                 .create();
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
  std::vector<std::string> names;  ///< the kernels of its module (several for a batch)
  ~Lease() {
    if (!rt) return;
    llvm::consumeError(rt->remove());
    std::lock_guard<std::mutex> lock(engine->live_mu);
    for (const std::string& n : names) engine->live.erase(n);
  }
};

std::string hex64(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

/// The cache key: the active mutant changes code generation, and the level
/// the code.
std::string full_key(const std::string& key_text, int level, Pipeline p) {
  return std::string(sem::active_mutant()) + "\nO" + std::to_string(level) + (p == Pipeline::Llvm ? " llvm" : "") +
         "\n" + key_text;
}

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
  Pipeline pipeline = default_pipeline();
  int64_t counter = 0;
  std::unique_ptr<ObjectFileCache> disk;
  double store_min_ms = kStoreMinMs;
  std::string identity;  ///< code_generator_identity(), part of every disk key

  /// The cached kernel of `key` (marked most recently used), if any.
  std::optional<CompiledKernel> hit(const std::string& key) {
    auto it = cache.find(key);
    if (it == cache.end()) return std::nullopt;
    Entry& e = it->second;
    lru.splice(lru.begin(), lru, e.lru);
    CompiledKernel k{e.fn, e.lease, e.reasons};
    k.cached = true;
    return k;
  }

  /// A name for the kernel of `key` not defined in `eng` now (the key's own
  /// unless an evicted copy still holds it), claimed; `own` says which.
  std::string claim_name(Engine& eng, const std::string& key, bool* own) {
    std::string fname = "stax_kernel_" + hex64(llvm::xxHash64(key));
    std::lock_guard<std::mutex> live_lock(eng.live_mu);
    *own = eng.live.insert(fname).second;
    if (!*own) {
      fname += "_" + std::to_string(counter);
      eng.live.insert(fname);
    }
    return fname;
  }

  /// Throws CompileError when `mod` is not valid IR, releasing `names`.
  void verify(Engine& eng, const llvm::Module& mod, const std::vector<std::string>& names, const std::string& what) {
    std::string verr;
    llvm::raw_string_ostream vos(verr);
    if (!llvm::verifyModule(mod, &vos)) return;
    {
      std::lock_guard<std::mutex> live_lock(eng.live_mu);
      for (const std::string& n : names) eng.live.erase(n);
    }
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod.print(os, nullptr);
    throw CompileError("invalid LLVM IR for kernel:\n" + what + "\n" + vos.str() + "\n" + os.str());
  }

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
    // For LLVM's pipelines (the kernel pipeline sets the same in its text):
    // unrolling and the vectoriser's interleaving multiply the code the
    // back end must compile: without them the median compile of a kernel
    // (examples and generated programs, stax_bench_jit_latency) took half
    // the CPU time and the slowest a tenth, while the element loops are
    // still vectorised and the memory-bound kernels of `stax bench` ran as
    // fast (README, CPU backend).
    pto.LoopUnrolling = false;
    pto.LoopInterleaving = false;
    llvm::PassBuilder pb(engines[level]->tm.get(), pto);
    // The full unroll of loops the code generator marks (lane loops whose
    // accumulators then live in registers), and no other: LLVM's
    // loop-unroll-full unrolls every small loop.
    pb.registerPipelineParsingCallback([](llvm::StringRef name, llvm::LoopPassManager& lpm,
                                          llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
      if (name != "stax-forced-unroll") return false;
      lpm.addPass(llvm::LoopFullUnrollPass(3, /*OnlyWhenForced=*/true, /*ForgetSCEV=*/false));
      return true;
    });
    pb.registerPipelineParsingCallback([](llvm::StringRef name, llvm::ModulePassManager& mpm,
                                          llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
      if (name == "stax-link-math-forms") mpm.addPass(LinkMathForms());
      else if (name == "stax-stream-stores") mpm.addPass(StreamStores());
      else return false;
      return true;
    });
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel levels[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                              llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    llvm::ModulePassManager mpm;
    if (level == 0) {
      mpm = pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
    } else if (pipeline == Pipeline::Llvm) {
      mpm = pb.buildPerModuleDefaultPipeline(levels[level]);
      mpm.addPass(LinkMathForms());
      mpm.addPass(llvm::AlwaysInlinerPass());
      mpm.addPass(llvm::GlobalDCEPass());
      mpm.addPass(StreamStores());
    } else if (auto err = pb.parsePassPipeline(mpm, kernel_pipeline(level)))
      throw CompileError("the kernel pass pipeline: " + take_error(std::move(err)));
    mpm.run(m, mam);
  }
};

Jit::Jit() : impl_(new Impl) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  impl_->identity = code_generator_identity() + "\n" + math_forms_identity();
  if (auto d = default_cache_dir()) impl_->disk = std::make_unique<ObjectFileCache>(*d);
}

void Jit::set_cache_dir(std::optional<std::string> dir, double store_min_ms) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->disk = dir ? std::make_unique<ObjectFileCache>(*dir) : nullptr;
  impl_->store_min_ms = store_min_ms < 0 ? kStoreMinMs : store_min_ms;
}

Jit::~Jit() { delete impl_; }

Jit& Jit::instance() {
  static Jit jit;
  return jit;
}

void Jit::set_pipeline(Pipeline p) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->pipeline = p;
}

Pipeline Jit::pipeline() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->pipeline;
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

int64_t Jit::cached_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return int64_t(impl_->cache.size());
}

void Jit::clear() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->cache.clear();
  impl_->lru.clear();
}

void Jit::set_capacity(int64_t kernels) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->capacity = size_t(std::max<int64_t>(kernels, 1));
  impl_->evict();
}

CompiledKernel Jit::compile(const std::string& key_text, const EmitFn& emit, int opt_level) {
  opt_level = std::clamp(opt_level, 0, 3);
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string key = full_key(key_text, opt_level, impl_->pipeline);
  if (auto k = impl_->hit(key)) return *k;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  CompiledKernel k;
  double cpu0 = thread_cpu_ms();
  auto t0 = Clock::now();
  ++impl_->counter;
  std::shared_ptr<Engine> ep = impl_->engine(opt_level);
  Engine& eng = *ep;
  ++eng.compiled;
  auto t1 = Clock::now();
  // The name is a function of the key, so that an object from the disk
  // cache defines the symbol looked up here.
  bool own = false;
  std::string fname = impl_->claim_name(eng, key, &own);
  // Not at O0: its kernels compile in about 1 ms, and the lookup alone
  // (printing the IR for the key) cost a fuzzing campaign 15 % of its CPU.
  bool use_disk = impl_->disk != nullptr && opt_level > 0 && own;
  InFlight& fl = eng.in_flight;
  fl.module_id = fname;
  fl.hit.reset();
  fl.disk = nullptr;
  fl.store_ms = 0;
  auto t2 = Clock::now();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(fname, *ctx);
  mod->setDataLayout(eng.tm->createDataLayout());
  mod->setTargetTriple(eng.tm->getTargetTriple().str());
  std::vector<std::string> reasons = emit(*mod, fname);
  auto t3 = Clock::now();
  impl_->verify(eng, *mod, {fname}, key_text);
  auto t4 = Clock::now();
  if (use_disk) {
    // The key holds the emitted IR itself, not only the kernel text: a
    // cached object must not outlive a change of the code generator.
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    fl.disk_key = impl_->identity + "\n" + pipeline_identity(impl_->pipeline) + "\n" + key + "\n" + os.str();
    // With keep_ir the optimised IR is wanted: compile, and refresh the entry.
    if (!impl_->keep_ir) fl.hit = impl_->disk->load(fl.disk_key);
    if (!fl.hit) fl.disk = impl_->disk.get();
    fl.store_min_ms = impl_->store_min_ms;
  }
  auto t4d = Clock::now();
  // A disk hit already holds the optimised object: the module is only the
  // compile layer's handle on it.
  fl.started_cpu_ms = thread_cpu_ms();
  if (!fl.hit) impl_->optimise(*mod, opt_level);
  auto t5 = Clock::now();
  if (impl_->keep_ir) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    impl_->ir[key_text] = os.str();
  }
  auto lease = std::make_shared<Lease>();
  lease->engine = ep;
  lease->names = {fname};
  lease->rt = eng.jit->getMainJITDylib().createResourceTracker();
  fl.generated = t5;
  if (auto err = eng.jit->addIRModule(lease->rt, llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    throw CompileError("JIT failed for kernel:\n" + key_text + "\n" + take_error(std::move(err)));
  auto addr = eng.jit->lookup(fname);
  if (!addr) throw CompileError("JIT lookup failed for kernel:\n" + key_text + "\n" + take_error(addr.takeError()));
  KernelFn fn = addr->toPtr<KernelFn>();
  auto t6 = Clock::now();
  impl_->lru.push_front(key);
  impl_->cache.emplace(key, Entry{fn, reasons, lease, impl_->lru.begin(), &eng});
  impl_->evict();
  k.fn = fn;
  k.lease = std::move(lease);
  k.reasons = std::move(reasons);
  k.disk_cached = fl.hit.has_value();
  k.compile_ms = ms(t0, t6);
  k.compile_cpu_ms = thread_cpu_ms() - cpu0;
  k.engine_ms = ms(t0, t1);
  k.emit_ms = ms(t2, t3);
  k.verify_ms = ms(t3, t4);
  k.optimise_ms = ms(t4d, t5);
  // With a hit nothing is generated: `generated` stays at t5.
  k.codegen_ms = ms(t5, fl.generated);
  k.disk_ms = ms(t4, t4d) + fl.store_ms;
  k.link_ms = ms(fl.generated, t6) - fl.store_ms;
  fl.hit.reset();
  return k;
}

std::vector<CompiledKernel> Jit::compile_batch(const std::vector<Request>& reqs, int opt_level) {
  opt_level = std::clamp(opt_level, 0, 3);
  std::vector<CompiledKernel> out(reqs.size());
  // The kernels to compile: first occurrences of keys not in the cache.
  std::vector<std::string> keys;  // the full key of each request
  std::vector<size_t> pending;    // first occurrences missing from the cache
  std::map<std::string, size_t> first;  // full key -> index in reqs
  std::unique_lock<std::mutex> lock(impl_->mu);
  for (size_t i = 0; i < reqs.size(); ++i) {
    keys.push_back(full_key(reqs[i].key, opt_level, impl_->pipeline));
    if (auto k = impl_->hit(keys[i])) out[i] = *k;
    else if (first.emplace(keys[i], i).second) pending.push_back(i);
  }
  if (impl_->keep_ir || pending.size() < 2) {
    lock.unlock();
    for (size_t i = 0; i < reqs.size(); ++i)
      if (!out[i].fn) out[i] = compile(reqs[i].key, reqs[i].emit, opt_level);
    return out;
  }
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  double cpu0 = thread_cpu_ms();
  auto t0 = Clock::now();
  std::shared_ptr<Engine> ep = impl_->engine(opt_level);
  Engine& eng = *ep;
  eng.compiled += int64_t(pending.size());
  impl_->counter += int64_t(pending.size());
  auto t1 = Clock::now();
  std::string module_name = "stax_batch_" + std::to_string(impl_->counter);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(module_name, *ctx);
  mod->setDataLayout(eng.tm->createDataLayout());
  mod->setTargetTriple(eng.tm->getTargetTriple().str());
  std::vector<std::string> names, what;
  std::vector<std::vector<std::string>> reasons;
  for (size_t i : pending) {
    bool own = false;
    names.push_back(impl_->claim_name(eng, keys[i], &own));
    reasons.push_back(reqs[i].emit(*mod, names.back()));
    what.push_back(reqs[i].key);
  }
  auto t2 = Clock::now();
  std::string all;
  for (const std::string& w : what) all += w;
  impl_->verify(eng, *mod, names, all);
  auto t3 = Clock::now();
  InFlight& fl = eng.in_flight;
  fl.module_id = module_name;
  fl.hit.reset();
  fl.disk = nullptr;
  fl.store_ms = 0;
  impl_->optimise(*mod, opt_level);
  auto t4 = Clock::now();
  auto lease = std::make_shared<Lease>();
  lease->engine = ep;
  lease->names = names;
  lease->rt = eng.jit->getMainJITDylib().createResourceTracker();
  fl.generated = t4;
  if (auto err = eng.jit->addIRModule(lease->rt, llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    throw CompileError("JIT failed for kernels:\n" + all + "\n" + take_error(std::move(err)));
  std::vector<KernelFn> fns;
  for (size_t j = 0; j < names.size(); ++j) {
    auto addr = eng.jit->lookup(names[j]);
    if (!addr) throw CompileError("JIT lookup failed for kernel:\n" + what[j] + "\n" + take_error(addr.takeError()));
    fns.push_back(addr->toPtr<KernelFn>());
  }
  auto t5 = Clock::now();
  double n = double(pending.size()), cpu = thread_cpu_ms() - cpu0;
  for (size_t j = 0; j < pending.size(); ++j) {
    impl_->lru.push_front(keys[pending[j]]);
    impl_->cache.emplace(keys[pending[j]], Entry{fns[j], reasons[j], lease, impl_->lru.begin(), &eng});
    CompiledKernel& k = out[pending[j]];
    k.fn = fns[j];
    k.lease = lease;
    k.reasons = reasons[j];
    k.compile_ms = ms(t0, t5) / n;
    k.compile_cpu_ms = cpu / n;
    k.engine_ms = ms(t0, t1) / n;
    k.emit_ms = ms(t1, t2) / n;
    k.verify_ms = ms(t2, t3) / n;
    k.optimise_ms = ms(t3, t4) / n;
    k.codegen_ms = ms(t4, fl.generated) / n;
    k.link_ms = ms(fl.generated, t5) / n;
  }
  impl_->evict();
  // Repeated keys share their first occurrence's kernel.
  for (size_t i = 0; i < reqs.size(); ++i)
    if (!out[i].fn) {
      out[i] = out[first.at(keys[i])];
      out[i].cached = true;
    }
  return out;
}

}  // namespace stax::backends::cpu
