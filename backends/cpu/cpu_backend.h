// The CPU backend (docs/design.md §6): a program is normalised (transforms/normalize,
// an exact transform), each binding becomes one JIT-compiled kernel
// (codegen.h), and the kernels run in program order over a thread pool —
// kernels that read each other only at their own rows a block of rows at a
// time (chains.h), each block in program order. The result is
// bit-identical to the interpreter on the program — ⊥ included, with the
// binding and the index — for every thread count.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/jit.h"
#include "semantics/evaluator.h"

namespace stax::backends::cpu {

/// Three quarters of the host's L2 cache (each core's own), 256 KiB where
/// the system does not say: a chain block's data then stays in L2 between
/// the kernels that read it. Measured on a Zen 4 (1 MiB L2), softmax and
/// layer norm over 4096-element rows ran 3-6 % faster with 768 KiB than
/// with 256 KiB blocks.
int64_t default_chain_bytes();
/// CpuOptions::stream_bytes by default: 16 MiB, where the output would
/// no longer stay in a core's share of a large last-level cache.
int64_t default_stream_bytes();

struct CpuOptions {
  int threads = 1;       ///< 0: one per hardware thread
  bool keep_ir = false;  ///< keep each kernel's optimised LLVM IR (CompiledProgram::ir)
  int opt_level = 3;     ///< LLVM pipeline O0..O3 (bits never depend on it; speed and compile time do)
  /// Compile the program's kernels in one LLVM module (Jit::compile_batch):
  /// the pass pipeline's and code generator's fixed cost once a program, not
  /// once a kernel, and no disk cache. For campaigns of new small programs.
  bool batch = false;
  /// With threads: a kernel of less work (output elements times reduced
  /// elements) runs on the calling thread alone, where waking the pool
  /// would cost more than it saves. 0: every kernel is split (the tests
  /// of the split use it).
  int64_t min_parallel_work = int64_t(1) << 18;
  /// Kernel chains (chains.h): consecutive kernels that read each other
  /// only at their own rows run a block of rows at a time, a block's data
  /// about this many bytes (the cache they share; default_chain_bytes). 0:
  /// every kernel over all its rows in turn.
  int64_t chain_bytes = default_chain_bytes();
  /// Chains without the row-locality check: the tests' deliberately wrong
  /// schedule, never for use.
  bool chain_unchecked = false;
  /// Storage folding in chains (chains.h: fold_storage): a member's output
  /// that only the chain reads, at its own rows, lives in a chunk's rows.
  bool fold_storage = true;
  /// Folding without the checks of who reads a member's output: the tests'
  /// deliberately wrong folding, never for use.
  bool fold_unchecked = false;
  /// Jammed chain members (jam.h): a chain's last pointwise member over
  /// chunk c - 1 runs in the loop of an earlier one that computes, over
  /// chunk c.
  bool jam = true;
  /// The jam without the second slot of folded buffers: the tests'
  /// deliberately wrong schedule (chunk c overwrites what c - 1 still
  /// reads), never for use.
  bool jam_one_slot = false;
  /// Keyed maximum/minimum folds that never fold a block with a NaN again:
  /// the tests' deliberately wrong code (KernelSpec::keyed_unchecked).
  bool keyed_unchecked = false;
  /// A program output that no kernel reads, of at least this many bytes (and
  /// of at least sem::kLargeTensorBytes, which the allocator aligns), is
  /// written with non-temporal stores (stream_stores.h): larger than the
  /// caches, it would otherwise be read from memory before it is written.
  /// Negative: never.
  int64_t stream_bytes = default_stream_bytes();
};

struct KernelReport {
  std::string binding;
  std::string text;  ///< the binding as compiled, printed
  double compile_ms = 0, compile_cpu_ms = 0;  ///< and its parts (CompiledKernel)
  double engine_ms = 0, emit_ms = 0, verify_ms = 0, optimise_ms = 0, codegen_ms = 0, disk_ms = 0, link_ms = 0;
  bool cached = false, disk_cached = false;
  bool lanes = false;
  int64_t lane_block = 0, row_block = 1;  ///< KernelShape's
  bool pack = false;                      ///< KernelShape's
  bool pack_along_fold = false;           ///< KernelShape's
  bool transposed = false;                ///< KernelShape's
  bool skewed = false;                    ///< KernelShape's
  int64_t tile = 0;                       ///< KernelShape's
  bool whole = false;                     ///< KernelShape's: one task, constant bounds
  int64_t parallel_extent = 1;
  int chain = -1;          ///< the kernel chain it runs in (CompiledProgram's, in order), -1: none
  int64_t chain_rows = 0;  ///< that chain's rows a step
  bool folded = false;     ///< its output lives in one step's rows (CpuOptions::fold_storage)
  std::string jammed_with;  ///< the chain member it runs jammed with (CpuOptions::jam), if any
  bool jam_late = false;    ///< jammed, the member a chunk behind: its time is counted in the other's
  bool streamed = false;   ///< its output is written with non-temporal stores (CpuOptions::stream_bytes)
  int64_t bytes_read = 0, bytes_written = 0;  ///< whole buffers: the traffic a fused kernel must move
};

/// A program compiled to kernels; runs any number of times.
class CompiledProgram {
 public:
  /// Normalises and compiles. Throws CompileError (an internal error).
  CompiledProgram(const sem::Program& p, const CpuOptions& opt = {});
  ~CompiledProgram();
  CompiledProgram(CompiledProgram&&) noexcept;

  /// Inputs must pass sem::check_inputs. `run_ms`, when given, receives the
  /// run time of each kernel. Throws sem::ResourceError on oversized tensors.
  sem::IeeeOutcome run(const sem::Inputs& in, std::vector<double>* run_ms = nullptr) const;

  /// The normalised program whose bindings are the kernels.
  const sem::Program& program() const;
  const std::vector<KernelReport>& kernels() const;
  /// Optimised LLVM IR of kernel k (with CpuOptions::keep_ir).
  std::string ir(size_t k) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The thread count an option means: t > 0 as given, 0 one per hardware thread.
int resolve_threads(int t);

/// Compiles and runs once.
sem::IeeeOutcome run(const sem::Program& p, const sem::Inputs& in, const CpuOptions& opt = {});

}  // namespace stax::backends::cpu
