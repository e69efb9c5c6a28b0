// `stax run` (docs/design.md §8): a program under the IEEE or the real semantics, on
// the interpreter or a backend, with .npy inputs and outputs.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "backends/cpu/jit.h"
#include "backends/gpu/driver.h"
#include "backends/gpu/gpu_backend.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "semantics/npy.h"
#include "semantics/random_inputs.h"
#include "semantics/real_domain.h"

namespace stax::cli {

namespace fs = std::filesystem;
using namespace stax::sem;

namespace {

std::string preview(const Tensor& t, int show) {
  std::string s = "[";
  int64_t n = std::min<int64_t>(t.size(), show);
  for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + element_text(t, i);
  if (t.size() > n) s += ", ... (" + std::to_string(t.size()) + " elements)";
  return s + "]";
}

/// The inputs of `p`: read from --input files, the rest drawn with
/// --random-inputs. Prints the error and returns false on bad input.
bool gather_inputs(const RunOptions& o, const Program& p, Inputs& in) {
  if (!read_inputs(o.inputs, in, &p)) return false;
  if (o.random_seed) {
    Inputs drawn = random_inputs(p, *o.random_seed);
    for (auto& [name, t] : drawn)
      if (!in.count(name)) in[name] = std::move(t);
  }
  if (auto err = check_inputs(p, in)) {
    std::cerr << "error: " << *err << "\n";
    return false;
  }
  return true;
}

/// Creates --out DIR (and DIR/inputs) and writes the drawn inputs there, so
/// that the run can be replayed.
bool prepare_out_dir(const RunOptions& o, const Inputs& in) {
  std::error_code ec;
  fs::create_directories(fs::path(o.out_dir) / "inputs", ec);
  if (ec) {
    std::cerr << "error: cannot create " << o.out_dir << ": " << ec.message() << "\n";
    return false;
  }
  if (!o.random_seed) return true;
  for (const auto& [name, t] : in) {
    std::string path = (fs::path(o.out_dir) / "inputs" / (name + npy_suffix(t.dtype))).string();
    if (auto e = write_npy(path, t)) {
      std::cerr << "error: " << *e << "\n";
      return false;
    }
  }
  std::cout << "inputs drawn with seed " << *o.random_seed << " written to " << o.out_dir
            << "/inputs/ (replay with --input NAME=FILE)\n";
  return true;
}

/// Why the GPU backend cannot run a program (a refusal, no driver, no
/// NVRTC): a usage error (exit 2), not an internal one.
struct GpuUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

IeeeOutcome run_on_gpu(const std::string& backend, const std::string& arch, const Program& p, const Inputs& in) {
  backends::gpu::GpuOptions opt;
  opt.target = backend == "gpu" ? backends::gpu::Target::Device : backends::gpu::Target::Emu;
  opt.arch = arch;
  try {
    return backends::gpu::run(p, in, opt);
  } catch (const backends::gpu::DriverError& e) {
    throw GpuUnavailable(e.what());
  } catch (const backends::cpu::CompileError& e) {
    std::string m = e.what();
    if (m.rfind("not supported by the GPU backend", 0) == 0 || m.rfind("NVRTC: no NVRTC", 0) == 0)
      throw GpuUnavailable(m);
    throw;
  }
}

}  // namespace

int run_command(const RunOptions& o) {
  if (o.semantics != "ieee" && o.semantics != "real") {
    std::cerr << "error: --semantics expects ieee or real, got '" << o.semantics << "'\n";
    return 2;
  }
  bool gpu = o.backend == "gpu" || o.backend == "gpu-emu";
  if (o.backend != "interp" && o.backend != "cpu" && !gpu) {
    std::cerr << "error: --backend expects interp, cpu, gpu or gpu-emu, got '" << o.backend << "'\n";
    return 2;
  }
  std::optional<std::string> arch = gpu_arch_or_error(o.arch);
  if (!arch) return 2;
  if (o.backend != "interp" && o.semantics != "ieee") {
    std::cerr << "error: --backend " << o.backend << " computes the IEEE semantics; use --semantics ieee\n";
    return 2;
  }
  auto prog = load_program(o.file);
  if (!prog) return 2;
  Inputs in;
  if (!gather_inputs(o, *prog, in)) return 2;
  if (!o.out_dir.empty() && !prepare_out_dir(o, in)) return 2;
  // The outputs as the evaluator returns them: shared, never copied.
  std::map<std::string, std::shared_ptr<const Tensor>> outs;
  std::optional<Failure> failure;
  try {
    if (o.semantics == "ieee") {
      IeeeOutcome r = gpu ? run_on_gpu(o.backend, *arch, *prog, in) : run_on_backend(o.backend, *prog, in, o.threads);
      failure = r.failure;
      outs = std::move(r.outputs);
    } else {
      RealDomain conv(o.precision);
      RealOutcome r = eval_real(*prog, in, o.precision);
      failure = r.failure;
      for (auto& [k, v] : r.outputs) outs[k] = std::make_shared<const Tensor>(conv.to_tensor_f64(*v));
    }
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const GpuUnavailable& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
  if (failure) {
    std::cout << "program failed (⊥): " << failure->str() << "\n";
    return 1;
  }
  for (const std::string& name : prog->outputs) {
    const Tensor& t = *outs.at(name);
    std::cout << name << " : " << type_str({t.dtype, t.shape}) << " = " << preview(t, o.show) << "\n";
    if (!o.out_dir.empty()) {
      std::string path = (fs::path(o.out_dir) / (name + npy_suffix(t.dtype))).string();
      if (auto e = write_npy(path, t)) {
        std::cerr << "error: " << *e << "\n";
        return 2;
      }
    }
  }
  return 0;
}

Subcommand register_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto seed = std::make_shared<uint64_t>(0);
  auto* r = app.add_subcommand("run", "Run a .stx program under the IEEE or the real (MPFR) semantics");
  r->add_option("file", o->file, "program (.stx)")->required();
  r->add_option("--semantics", o->semantics, "ieee (bit-exact floats) or real (MPFR)");
  r->add_option("--arch", o->arch, "GPU backend: target architecture for NVRTC (sm_NN or compute_NN; default sm_90)");
  r->add_option("--backend", o->backend, "interp (the reference interpreter), cpu (LLVM JIT), gpu (CUDA, NVRTC + driver) or gpu-emu (the same CUDA C on the host)");
  r->add_option("--threads", o->threads, "CPU backend threads (0: all)");
  r->add_option("--input", o->inputs, "NAME=FILE.npy (bf16 as *.bf16.npy)");
  auto* seed_opt = r->add_option("--random-inputs", *seed, "draw inputs deterministically from SEED");
  r->add_option("--out", o->out_dir, "write outputs (and drawn inputs) as .npy into DIR");
  r->add_option("--precision", o->precision, "MPFR precision in bits for --semantics real")
      ->check(CLI::Range(8, 1 << 16));
  r->add_option("--show", o->show, "elements printed per output");
  return {r, [o, seed, seed_opt] {
            if (*seed_opt) o->random_seed = *seed;
            return run_command(*o);
          }};
}

}  // namespace stax::cli
