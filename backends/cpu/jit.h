// The process-wide LLVM ORC JIT of the CPU backend (LLJIT, Debian's LLVM 15)
// and its compile cache, keyed by the kernel's printed text. Modules are
// optimised with the new pass manager at O3 for the host CPU, with
// floating-point contraction off (FPOpFusion::Strict) and no fast-math
// flags: the optimiser may vectorise only what reassociates nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/runtime.h"

namespace llvm {
class Module;
}

namespace stax::backends::cpu {

/// A kernel: computes the elements of its parallel range [begin, end) and
/// returns 0, or records the first failure and returns 1.
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
  double compile_ms = 0;  ///< IR emission, optimisation and machine code; 0 when cached
  double emit_ms = 0, optimise_ms = 0, codegen_ms = 0;  ///< its parts
  bool cached = false;
};

/// Emits a function named `fname` with the KernelFn signature into `m`;
/// returns its failure reasons.
using EmitFn = std::function<std::vector<std::string>(llvm::Module& m, const std::string& fname)>;

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

  /// The optimised LLVM IR of a kernel compiled (not cached) with this key
  /// when `keep_ir` was set; empty otherwise.
  std::string optimised_ir(const std::string& key) const;
  void set_keep_ir(bool on);

  /// Number of kernels compiled (not served from the cache).
  int64_t compiled_count() const;
  /// Number of kernels in the cache, and its bound (default 512; at least 1).
  int64_t cached_count() const;
  void set_capacity(int64_t kernels);

  ~Jit();

 private:
  Jit();
  struct Impl;
  Impl* impl_;
};

}  // namespace stax::backends::cpu
