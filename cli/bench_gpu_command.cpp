// `stax bench --backend gpu|gpu-emu`: per generated CUDA kernel
// the module's compile time (NVRTC, or the host compiler on the emulator),
// the launch configuration (grid, block, static __shared__ bytes; a block
// reduction runs its M threads per block), the median run time (device:
// CUDA events around the launch; emulator: host wall time, labelled so),
// the bytes read and written (whole buffers, as the CPU bench), GB/s, and
// the ratio to a copy of the same bytes measured in the same run (device:
// cuMemcpyDtoD timed with events; emulator: a host memcpy). The outputs are
// checked against the interpreter, bit for bit, as the CPU bench does.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "backends/cpu/jit.h"
#include "backends/gpu/driver.h"
#include "backends/gpu/emulator.h"
#include "backends/gpu/gpu_backend.h"
#include "backends/gpu/nvrtc.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "experiments/median.h"
#include "oracle/fuzz.h"
#include "semantics/printer.h"

namespace stax::cli {

using namespace stax::sem;
using json = nlohmann::json;
using experiments::median;
namespace gpu = backends::gpu;

namespace {


std::string short_text(const std::string& s) { return s.size() <= 96 ? s : s.substr(0, 93) + "..."; }

/// Compiles for the bench; a refusal, no driver or no NVRTC is a usage
/// error (exit 2, as `stax run --backend gpu`): nullptr after the message.
std::unique_ptr<gpu::GpuProgram> compile_or_explain(const Program& p, const gpu::GpuOptions& opt) {
  try {
    return std::make_unique<gpu::GpuProgram>(p, opt);
  } catch (const gpu::DriverError& e) {
    std::cerr << "error: " << e.what() << " (stax bench --backend gpu needs an NVIDIA GPU and its driver; "
              << "--backend gpu-emu runs the same kernels on the host)\n";
  } catch (const backends::cpu::CompileError& e) {
    std::string m = e.what();
    if (m.rfind("not supported by the GPU backend", 0) != 0 && m.rfind("NVRTC: no NVRTC", 0) != 0) throw;
    std::cerr << "error: " << m << "\n";
  }
  return nullptr;
}

/// The module's text split for --compile-each: what precedes the first
/// kernel (prelude, math library) and each kernel's own section (from its
/// "// <binding> = " comment to the next one, or to the emulator's
/// launchers); nullopt when the text does not have that layout.
std::optional<std::pair<std::string, std::vector<std::string>>> split_module(const gpu::GpuSource& src) {
  std::vector<size_t> at;
  size_t from = 0;
  for (const gpu::GpuKernel& k : src.kernels) {
    size_t pos = src.text.find("\n// " + k.spec.binding + " = ", from);
    if (pos == std::string::npos) return std::nullopt;
    at.push_back(pos);
    from = pos + 1;
  }
  size_t end = src.text.find("\n#ifdef STAX_EMU\n", from);
  if (at.empty() || end == std::string::npos) return std::nullopt;
  at.push_back(end);
  std::vector<std::string> parts;
  for (size_t i = 0; i + 1 < at.size(); ++i) parts.push_back(src.text.substr(at[i], at[i + 1] - at[i]));
  return std::make_pair(src.text.substr(0, at[0]), std::move(parts));
}

/// One compile of `text` as the backend would (NVRTC, or the emulator's
/// host compiler), in ms; throws CompileError when it fails.
double compile_once(const std::string& text, bool device, const std::string& arch) {
  auto t0 = std::chrono::steady_clock::now();
  if (device) {
    gpu::PtxResult r = gpu::compile_ptx(text, arch);
    if (!r.ok) throw backends::cpu::CompileError("NVRTC: " + r.log);
  } else {
    gpu::EmuModule m(text + "\n#ifdef STAX_EMU\n#endif\n");
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int bench_gpu_command(const BenchOptions& o, const Program& p, const Inputs& in) {
  const bool device = o.backend == "gpu";
  std::optional<std::string> arch = gpu_arch_or_error(o.arch);
  if (!arch) return 2;
  gpu::GpuOptions opt;
  opt.target = device ? gpu::Target::Device : gpu::Target::Emu;
  opt.arch = *arch;
  opt.block = o.block;
  opt.max_grid = o.max_grid;
  const char* compiler = device ? "nvrtc" : "host c++ (emulator)";
  const char* clock = device ? "cuda events" : "emulator: host wall time";
  json out = {{"file", o.file},       {"transform", o.transform}, {"backend", o.backend},
              {"arch", o.arch},       {"repeats", o.repeats},     {"compiler", compiler},
              {"time_source", clock}, {"mutant", o.mutant},      {"block", o.block},
              {"max_grid", o.max_grid}};
  return exit_on_backend_error([&]() -> int {
    std::unique_ptr<gpu::GpuProgram> gp = compile_or_explain(p, opt);
    if (!gp) return 2;
    out["compile_ms"] = gp->compile_ms();
    const auto& ks = gp->source().kernels;
    // --compile-each: the prelude and math library alone, then with each
    // kernel alone; a kernel's own compile time is the difference.
    std::vector<double> alone(ks.size(), -1);
    if (o.compile_each) {
      auto parts = split_module(gp->source());
      if (!parts) throw backends::cpu::CompileError("--compile-each: the module's text has no per-kernel sections");
      double base = compile_once(parts->first, device, opt.arch);
      out["compile_base_ms"] = base;
      for (size_t k = 0; k < ks.size(); ++k) alone[k] = compile_once(parts->first + parts->second[k], device, opt.arch);
    }
    std::vector<std::vector<double>> samples(ks.size()), copies(ks.size());
    std::vector<gpu::KernelRun> config;  // of the warm-up run
    std::vector<double> total;
    IeeeOutcome first;
    std::optional<std::string> broken;  // the emulator caught the kernels breaking the model
    std::vector<int64_t> bytes(ks.size());
    for (size_t k = 0; k < ks.size(); ++k)
      for (const TensorType& t : ks[k].spec.types) bytes[k] += type_bytes(t);
    for (int r = 0; r <= o.repeats && !broken; ++r) {
      std::vector<gpu::KernelRun> runs;
      auto t0 = std::chrono::steady_clock::now();
      IeeeOutcome res;
      try {
        res = gp->run(in, &runs);
      } catch (const gpu::EmuError& e) {
        broken = e.what();
        break;
      }
      double all = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      // The copy of each kernel's bytes, in the same run (after it).
      for (size_t k = 0; k < runs.size(); ++k) {
        double c = gp->copy_ms(bytes[k]);
        if (r) copies[k].push_back(c);
      }
      if (r == 0) {
        first = std::move(res);
        config = std::move(runs);
        continue;  // warm-up: first-touch of fresh buffers, module loading
      }
      total.push_back(all);
      for (size_t k = 0; k < runs.size(); ++k) samples[k].push_back(runs[k].ms);
    }
    IeeeOutcome ref = eval_ieee(p, in);
    std::optional<std::string> diff =
        broken ? std::optional<std::string>("the kernels broke the CUDA execution model: " + *broken)
               : oracle::outcome_difference(p, ref, first);
    out["bits"] = diff ? *diff : "identical to the interpreter";
    out["bits_identical"] = !diff;
    json rows = json::array();
    if (!o.json) {
      std::printf("compile (%s, one module, %zu kernels): %.2f ms; times: %s\n", compiler, ks.size(), gp->compile_ms(),
                  clock);
      if (o.compile_each) {
        std::printf("compile each: prelude + math library alone %.2f ms;", out["compile_base_ms"].get<double>());
        for (size_t k = 0; k < ks.size(); ++k)
          std::printf(" %s +%.2f ms", ks[k].spec.binding.c_str(),
                      std::max(0.0, alone[k] - out["compile_base_ms"].get<double>()));
        std::printf("\n");
      }
      std::printf("%-10s %-24s %10s %10s %9s %11s %7s\n", "kernel", "launch (grid x block, smem)", "run_ms", "MB",
                  "GB/s", "copy_GB/s", "ratio");
    }
    for (size_t k = 0; k < config.size() && !samples[k].empty(); ++k) {
      const gpu::GpuKernel& gk = ks[k];
      double run = median(samples[k]), copy = median(copies[k]);
      double gbs = run > 0 ? double(bytes[k]) / run / 1e6 : 0;
      double cgbs = copy > 0 ? double(bytes[k]) / copy / 1e6 : 0;
      double ratio = cgbs > 0 ? gbs / cgbs : 0;
      const gpu::KernelRun& c = config[k];
      json launch = {{"grid", c.grid}, {"block", c.block}, {"shared_bytes", c.shared_bytes},
                     {"block_reduction", gk.threads != 0}};
      json row = {{"kernel", gk.spec.binding}, {"name", gk.name},
                      {"text", short_text(print_expr(gk.spec.expr, &gp->program()))}, {"compile_ms", gp->compile_ms()},
                      {"launch", launch}, {"run_ms", run}, {"bytes", bytes[k]}, {"gb_per_s", gbs},
                      {"copy_ms", copy}, {"copy_gb_per_s", cgbs}, {"ratio_to_copy", ratio}};
      if (alone[k] >= 0) {
        row["compile_alone_ms"] = alone[k];
        row["compile_own_ms"] = std::max(0.0, alone[k] - out["compile_base_ms"].get<double>());
      }
      rows.push_back(std::move(row));
      if (!o.json) {
        char cfg[64];
        std::snprintf(cfg, sizeof cfg, "%u x %u, %lld B", c.grid, c.block, static_cast<long long>(c.shared_bytes));
        std::printf("%-10s %-24s %10.3f %10.2f %9.2f %11.2f %7.3f%s\n", gk.spec.binding.c_str(), cfg, run,
                    double(bytes[k]) / 1e6, gbs, cgbs, ratio, gk.threads ? "  block reduction" : "");
      }
    }
    out["kernels"] = rows;
    out["total_ms"] = total.empty() ? 0.0 : median(total);
    if (o.json) std::cout << out.dump(2) << "\n";
    else
      std::printf("total %.3f ms (median of %d); output bits: %s\n", out["total_ms"].get<double>(), o.repeats,
                  out["bits"].get<std::string>().c_str());
    return diff ? 1 : 0;
  });
}

}  // namespace stax::cli
