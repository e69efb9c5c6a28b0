// The process-wide LLVM ORC JIT of the CPU backend (LLJIT, Debian's LLVM 15)
// and its compile caches: in memory, keyed by the kernel's printed text, and
// on disk (object_cache.h), keyed by the emitted IR, the pass pipeline and
// the code generator's identity (LLVM version, host CPU). Modules are optimised with the new pass manager for the host
// CPU, with floating-point contraction off (FPOpFusion::Strict) and no
// fast-math flags: the optimiser may vectorise only what reassociates
// nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/runtime.h"

namespace llvm {
class Module;
}

namespace stax::backends::cpu {

/// A kernel: computes the elements of its parallel range [begin, end) (a
/// whole kernel, KernelShape::whole: of [0, parallel_extent), whatever range
/// it is given) and returns 0, or records the first failure and returns 1.
using KernelFn = int32_t (*)(void* const* buffers, int64_t begin, int64_t end, FailRecord* fail);

/// An internal error of code generation (a bug): carries the kernel text.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CompiledKernel {
  KernelFn fn = nullptr;
  /// Keeps the machine code of `fn` alive: the cache is bounded and evicts
  /// its least recently used kernels, whose code is freed once no
  /// CompiledKernel holds it any more.
  std::shared_ptr<const void> lease;
  std::vector<std::string> reasons;  ///< the kernel's failure reasons, by FailRecord::reason
  double compile_ms = 0;  ///< everything below, wall clock; 0 when cached in memory
  /// The compiling thread's CPU time: what a loaded machine does not inflate.
  double compile_cpu_ms = 0;
  /// Its parts: a new JIT engine (once per kEngineCompiles kernels), IR
  /// emission, the IR verifier, the pass pipeline, machine code, the disk
  /// cache (load and checks, or store), and ORC's linking and lookup.
  double engine_ms = 0, emit_ms = 0, verify_ms = 0, optimise_ms = 0, codegen_ms = 0, disk_ms = 0, link_ms = 0;
  bool cached = false;       ///< served from the in-memory cache
  bool disk_cached = false;  ///< object code from the disk cache (not optimised nor generated here)
};

/// Emits a function named `fname` with the KernelFn signature into `m`;
/// returns its failure reasons.
using EmitFn = std::function<std::vector<std::string>(llvm::Module& m, const std::string& fname)>;

/// Kernel: the function passes chosen for kernels (jit.cpp, kernel_pipeline);
/// Llvm: LLVM's per-module O1..O3 pipelines, kept for comparisons. Both
/// without unrolling (but the loops the code generator marks) and without
/// the vectoriser's interleaving; the bits never depend on the choice.
enum class Pipeline { Kernel, Llvm };

class Jit {
 public:
  /// The process's JIT, created on first use. Throws CompileError when LLVM
  /// cannot target this host.
  static Jit& instance();

  /// The kernel for `key` from the cache, or emits, optimises and compiles
  /// it. Thread-safe. `key` must determine the emitted code completely.
  /// `opt_level` 0-3 selects the pass pipeline (O0..O3) and the code
  /// generator's level; no level changes a bit of the results.
  CompiledKernel compile(const std::string& key, const EmitFn& emit, int opt_level = 2);

  /// A kernel to compile with others: its key and emitter, as for compile().
  struct Request {
    std::string key;
    EmitFn emit;
  };
  /// The kernels of `reqs`, those missing from the in-memory cache emitted
  /// into one module, optimised and compiled together: the pass pipeline's
  /// and the code generator's fixed cost is paid once, not once a kernel
  /// (most of a small kernel's compile time). Each kernel is its own
  /// function with its own key, so the code and the bits are those of
  /// compile(); the disk cache is not used, and each CompiledKernel reports
  /// an equal share of the batch's times. With keep_ir, or fewer than two
  /// kernels to compile, this is compile() on each.
  std::vector<CompiledKernel> compile_batch(const std::vector<Request>& reqs, int opt_level = 2);

  /// The optimised LLVM IR of a kernel compiled (not cached) with this key
  /// when `keep_ir` was set; empty otherwise.
  std::string optimised_ir(const std::string& key) const;
  void set_keep_ir(bool on);

  /// The pass pipeline of O1..O3 (O0 is LLVM's own). Initially Kernel, or
  /// Llvm with STAX_JIT_PIPELINE=llvm. Part of every cache key.
  void set_pipeline(Pipeline p);
  Pipeline pipeline() const;

  /// The on-disk object cache's directory (none: off; never used at O0). Initially
  /// default_cache_dir() (object_cache.h: STAX_JIT_CACHE=0,
  /// STAX_JIT_CACHE_DIR, XDG_CACHE_HOME, HOME). Kernels whose optimisation
  /// and machine code took under `store_min_ms` of CPU time (negative: the
  /// default, 5 ms) are not stored.
  void set_cache_dir(std::optional<std::string> dir, double store_min_ms = -1);
  /// Number of kernels in the cache, and its bound (default 512; at least 1).
  int64_t cached_count() const;
  void set_capacity(int64_t kernels);
  /// Empties the in-memory cache (kernels still held keep running).
  void clear();

  ~Jit();

 private:
  Jit();
  struct Impl;
  Impl* impl_;
};

}  // namespace stax::backends::cpu
