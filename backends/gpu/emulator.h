// The host emulator of the CUDA execution model: the generated
// CUDA C, prelude and kernels unchanged, compiled by the host C++ compiler
// with the emulation shim (STAX_EMU in cuda_prelude.h) into a shared
// object, loaded with dlopen. A kernel without barriers or shuffles is
// launched by walking the grid's blocks and threads in turn; a block
// reduction's kernel runs each block's threads as fibers (emu_shim.h), with
// __syncthreads(), warp shuffles and race-checked __shared__ memory.
// The grid variables are globals of the shared object: one module must not
// run from two threads at once.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "backends/gpu/cuda_codegen.h"

namespace stax::backends::gpu {

/// The kernels' failure record (the prelude's StaxFail): the first ⊥, and
/// the count of lanes whose math fast path failed its rounding test.
struct StaxFail {
  int64_t reason, pos, value, slow;
};

/// `<kernel>_emu(bufs, begin, end, fail, record, grid, block)`.
using EmuLaunch = void (*)(void** bufs, int64_t begin, int64_t end, StaxFail* fail, int record, unsigned grid,
                           unsigned block);

/// A kernel broke the execution model on the emulator: a race on __shared__
/// memory, a deadlock at a barrier, a shuffle with a missing lane.
struct EmuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class EmuModule {
 public:
  /// Compiles `source` with the host compiler (-O1 -ffp-contract=off
  /// -fno-fast-math). Throws CompileError with the compiler's output.
  explicit EmuModule(const std::string& source);
  ~EmuModule();
  EmuModule(const EmuModule&) = delete;
  EmuModule& operator=(const EmuModule&) = delete;

  EmuLaunch launcher(const std::string& kernel) const;
  /// The first error of the launches since the last clear_error() (the
  /// shim's stax_emu_error), "" when none.
  std::string error() const;
  void clear_error() const;
  /// The math tables' global (`stax_T`, through stax_tables_addr).
  void* tables() const;

 private:
  void* handle_ = nullptr;
  std::string dir_;  ///< the temporary folder of the shared object
};

/// The host compiler and the flags the emulator uses.
std::string emu_compile_command();

}  // namespace stax::backends::gpu
