// The GPU backend: a program is normalised (as for
// the CPU backend, an exact transform), each binding becomes one CUDA C
// kernel (cuda_codegen.h), and the kernels run in program order either on
// the host emulator (Target::Emu, the same source compiled by the host C++
// compiler) or on the device (Target::Device: NVRTC to PTX, the driver API
// loaded at run time). The result is the interpreter's, bit for bit, ⊥
// included with the binding and the output index.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/gpu/cuda_codegen.h"
#include "semantics/evaluator.h"

namespace stax::backends::gpu {

enum class Target { Emu, Device };

struct GpuOptions {
  Target target = Target::Emu;
  std::string arch = "compute_90";  ///< NVRTC --gpu-architecture
  unsigned block = 128;             ///< threads per block
  unsigned max_grid = 0;            ///< blocks at most (0: 4 per SM on the device, 3 on the emulator)
  /// Recompute a binding on the host when a math lane failed its rounding
  /// test (cuda_math.h). Off only in the test that shows why it is needed.
  bool recompute_slow = true;
  /// Reductions in gpu-reduce's order as one block-reduction kernel each
  /// (block_reduce.h); false: one kernel per tree level, as before.
  bool block_reductions = true;
};

/// One kernel's launch in a run, and its time (`stax bench`).
struct KernelRun {
  unsigned grid = 0, block = 0;
  int64_t shared_bytes = 0;  ///< static __shared__ memory per block
  /// Device: the launch between two CUDA events; emulator: host wall time
  /// of the emulated launch. The ⊥ re-launch (one element) is not counted.
  double ms = 0;
};

class GpuProgram {
 public:
  /// Normalises, emits and compiles. Throws cpu::CompileError (refusals
  /// start "not supported by the GPU backend yet: ") or DriverError.
  GpuProgram(const sem::Program& p, const GpuOptions& opt = {});
  ~GpuProgram();

  /// Inputs must pass sem::check_inputs.
  sem::IeeeOutcome run(const sem::Inputs& in) const;
  /// run(), appending each launched kernel's configuration and time to
  /// `timing` (in kernel order; a run ended by ⊥ stops early).
  sem::IeeeOutcome run(const sem::Inputs& in, std::vector<KernelRun>* timing) const;
  /// The module's compile time in ms: NVRTC (device) or the host compiler
  /// (emulator); one module holds every kernel.
  double compile_ms() const;
  /// One copy of `bytes` moved in all (half read, half written), in ms:
  /// device: cuMemcpyDtoD between two device buffers, timed with events;
  /// emulator: a host memcpy, wall time. The reference of the bench's ratio.
  double copy_ms(int64_t bytes) const;
  /// Of the last run: math lanes whose rounding test failed, and the
  /// bindings the host recomputed because of them.
  int64_t slow_lanes() const;
  int64_t recomputed_bindings() const;

  const sem::Program& program() const;
  const GpuSource& source() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The normal form the kernels compute (normalize, exact; fuse=0 when fusion
/// only refines). Throws cpu::CompileError.
sem::Program gpu_normal_form(const sem::Program& p);

sem::IeeeOutcome run(const sem::Program& p, const sem::Inputs& in, const GpuOptions& opt = {});

/// A user's `--arch` (sm_NN or compute_NN, NN >= 50) as NVRTC's virtual
/// architecture compute_NN; nullopt when it is neither.
std::optional<std::string> nvrtc_arch(const std::string& user);

}  // namespace stax::backends::gpu
