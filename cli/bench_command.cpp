// `stax bench` (docs/design.md §8): per compiled kernel, JIT compile time,
// median run time and bandwidth against a plain copy of the same bytes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/thread_pool.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "experiments/median.h"
#include "oracle/checker.h"
#include "semantics/mutants.h"
#include "semantics/random_inputs.h"

namespace stax::cli {

using namespace stax::sem;
using json = nlohmann::json;
using experiments::median;

namespace {

/// Median time of a parallel memcpy moving `bytes` in all (half read, half
/// written), split like a kernel's range over the same threads.
double copy_ms(int64_t bytes, int threads, int repeats) {
  size_t n = size_t(std::max<int64_t>(bytes / 2, 64));
  Bytes src(n), dst(n);
  std::memset(src.data(), 1, n);
  std::memset(dst.data(), 0, n);
  auto& pool = backends::cpu::ThreadPool::shared(std::max(threads, 1));
  int64_t tasks = int64_t(pool.threads()) * 8;
  std::vector<double> ms;
  for (int r = 0; r <= repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(tasks, [&](int64_t i) {
      size_t b = n * size_t(i) / size_t(tasks), e = n * size_t(i + 1) / size_t(tasks);
      std::memcpy(dst.data() + b, src.data() + b, e - b);
    });
    double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r) ms.push_back(t);  // the first run pays the page faults
  }
  return median(ms);
}

}  // namespace

int bench_command(const BenchOptions& o) {
  const bool gpu = o.backend == "gpu" || o.backend == "gpu-emu";
  if (o.backend != "cpu" && o.backend != "interp" && !gpu) {
    std::cerr << "error: --backend expects cpu, interp, gpu or gpu-emu, got '" << o.backend << "'\n";
    return 2;
  }
  if (gpu && !gpu_arch_or_error(o.arch)) return 2;
  if (!o.mutant.empty() && !set_active_mutant(o.mutant)) {
    std::cerr << "error: unknown mutant '" << o.mutant << "' (see stax fuzz --list-mutants)\n";
    return 2;
  }
  if (o.repeats < 1) {
    std::cerr << "error: --repeats must be at least 1\n";
    return 2;
  }
  auto prog = load_program(o.file);
  if (!prog) return 2;
  Program p = *prog;
  if (!o.transform.empty()) {
    auto r = apply_transforms(p, o.transform);
    if (!r) return 2;
    p = std::move(r->program);
  }
  Inputs in;
  if (!read_inputs(o.inputs, in, &p)) return 2;
  RandomOptions ro;
  ro.special_fraction = o.special_fraction;
  for (auto& [name, t] : random_inputs(p, o.seed, ro))
    if (!in.count(name)) in[name] = std::move(t);
  if (auto err = check_inputs(p, in)) {
    std::cerr << "error: " << *err << "\n";
    return 2;
  }
  if (gpu) return bench_gpu_command(o, p, in);
  int threads = backends::cpu::resolve_threads(o.threads);
  json out = {{"file", o.file}, {"transform", o.transform}, {"backend", o.backend}, {"threads", threads},
              {"repeats", o.repeats}};
  return exit_on_backend_error([&]() -> int {
    if (o.backend == "interp") {
      std::vector<double> ms;
      for (int r = 0; r <= o.repeats; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        IeeeOutcome res = eval_ieee(p, in);
        if (r) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      out["run_ms"] = median(ms);
      if (o.json) std::cout << out.dump(2) << "\n";
      else std::printf("interpreter: %.3f ms (median of %d)\n", median(ms), o.repeats);
      return 0;
    }
    backends::cpu::CpuOptions copt{threads, o.dump_ir, o.opt_level};
    if (o.chain_bytes >= 0) copt.chain_bytes = o.chain_bytes;
    copt.fold_storage = !o.no_fold;
    copt.jam = !o.no_jam;
    if (o.stream_bytes != -2) copt.stream_bytes = o.stream_bytes;
    backends::cpu::CompiledProgram cp(p, copt);
    const auto& ks = cp.kernels();
    std::vector<std::vector<double>> samples(ks.size());
    std::vector<double> total;
    IeeeOutcome first;
    for (int r = 0; r <= o.repeats; ++r) {
      std::vector<double> ms;
      auto t0 = std::chrono::steady_clock::now();
      IeeeOutcome res = cp.run(in, &ms);
      double all = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r == 0) {
        first = std::move(res);
        continue;  // warm-up: page faults of fresh buffers
      }
      total.push_back(all);
      for (size_t k = 0; k < ms.size(); ++k) samples[k].push_back(ms[k]);
    }
    IeeeOutcome ref = eval_ieee(p, in);
    auto diff = oracle::outcome_difference(p, ref, first);
    out["bits"] = diff ? *diff : "identical to the interpreter";
    json rows = json::array();
    if (!o.json)
      std::printf("%-12s %10s %10s %10s %9s %11s %7s  %s\n", "kernel", "compile_ms", "run_ms", "MB", "GB/s",
                  "copy_GB/s", "ratio", "shape");
    for (size_t k = 0; k < ks.size(); ++k) {
      const auto& kr = ks[k];
      int64_t bytes = kr.bytes_read + kr.bytes_written;
      double run = median(samples[k]);
      double copy = copy_ms(bytes, threads, o.repeats);
      double gbs = run > 0 ? double(bytes) / run / 1e6 : 0;
      double cgbs = copy > 0 ? double(bytes) / copy / 1e6 : 0;
      double ratio = cgbs > 0 ? gbs / cgbs : 0;
      std::string shape = kr.lanes ? "lanes " + std::to_string(kr.lane_block)
                                   : (kr.text.rfind("red(", 0) == 0 ? "fold" : "pointwise");
      if (kr.transposed)
        shape += kr.skewed ? " rows, transposed, skewed" : " rows, transposed";
      else if (kr.row_block > 1)
        shape += " x " + std::to_string(kr.row_block) + " rows";
      if (kr.pack) shape += kr.pack_along_fold ? ", packed along the fold" : ", packed";
      if (kr.tile > 0) shape += ", tiles " + std::to_string(kr.tile) + "x" + std::to_string(kr.tile);
      shape += kr.whole ? ", one task over " + std::to_string(kr.parallel_extent)
                        : ", parallel over " + std::to_string(kr.parallel_extent);
      if (kr.chain >= 0) shape += ", chain " + std::to_string(kr.chain) + " (" + std::to_string(kr.chain_rows) + " rows a step)";
      if (kr.folded) shape += ", folded";
      if (!kr.jammed_with.empty())
        shape += ", jammed with " + kr.jammed_with +
                 (kr.jam_late ? " (a chunk behind, in its loop: the time of the jammed chunks is " + kr.jammed_with + "'s)"
                              : " (its time includes " + kr.jammed_with + "'s in the jammed chunks)");
      if (kr.streamed) shape += ", streamed";
      rows.push_back({{"kernel", kr.binding}, {"text", kr.text}, {"compile_ms", kr.compile_ms},
                      {"compile_parts_ms", {{"engine", kr.engine_ms}, {"emit", kr.emit_ms}, {"verify", kr.verify_ms},
                                            {"optimise", kr.optimise_ms}, {"codegen", kr.codegen_ms},
                                            {"disk_cache", kr.disk_ms}, {"link", kr.link_ms}}},
                      {"cached", kr.cached}, {"disk_cached", kr.disk_cached}, {"run_ms", run}, {"bytes", bytes}, {"gb_per_s", gbs},
                      {"copy_gb_per_s", cgbs}, {"ratio_to_copy", ratio}, {"shape", shape}});
      if (!o.json)
        std::printf("%-12s %10.2f %10.3f %10.2f %9.2f %11.2f %7.2f  %s\n", kr.binding.c_str(), kr.compile_ms, run,
                    double(bytes) / 1e6, gbs, cgbs, ratio, shape.c_str());
      if (!o.json && !kr.cached)
        std::printf("%-12s   (compile: emit %.2f, verify %.2f, optimise %.2f, machine code %.2f, link %.2f, "
                    "disk cache %.2f%s ms)\n",
                    "", kr.emit_ms, kr.verify_ms, kr.optimise_ms, kr.codegen_ms, kr.link_ms, kr.disk_ms,
                    kr.disk_cached ? " (hit)" : "");
      if (o.dump_ir) std::cerr << "; kernel " << kr.binding << "\n" << cp.ir(k) << "\n";
    }
    out["kernels"] = rows;
    out["total_ms"] = median(total);
    if (o.json) std::cout << out.dump(2) << "\n";
    else
      std::printf("total %.3f ms (median of %d, %d threads); output bits: %s\n", median(total), o.repeats, threads,
                  out["bits"].get<std::string>().c_str());
    return diff ? 1 : 0;
  });
}

Subcommand register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* b = app.add_subcommand("bench", "Time each compiled kernel against a plain copy of the same bytes");
  b->add_option("file", o->file, "program (.stx)")->required();
  b->add_option("--transform", o->transform, "pipeline applied first, e.g. interleave-lanes:w=16");
  b->add_option("--backend", o->backend,
                "cpu, interp, gpu (NVRTC + driver, CUDA events) or gpu-emu (the same CUDA C on the host)");
  b->add_option("--arch", o->arch, "GPU backends: target architecture for NVRTC (sm_NN or compute_NN; default sm_90)");
  b->add_option("--block", o->block,
                "GPU backends: threads per block of a pointwise kernel (block reductions: their M)")
      ->check(CLI::Range(1, 1024));
  b->add_option("--max-grid", o->max_grid,
                "GPU backends: blocks at most (0: 4 per SM on the device, 3 on the emulator)");
  b->add_flag("--compile-each", o->compile_each,
              "GPU backends: also compile the prelude alone and each kernel alone (its own compile time)");
  b->add_option("--mutant", o->mutant, "compile with a seeded bug (stax fuzz --list-mutants): the bits must differ");
  b->add_option("--input", o->inputs, "NAME=FILE.npy (others drawn from --random-inputs)");
  b->add_option("--random-inputs", o->seed, "seed of the drawn inputs");
  b->add_option("--special-fraction", o->special_fraction,
                "share of special values among drawn float inputs (default 0.125; 0: normal values only, as "
                "ordinary data: subnormals slow some operations down)")
      ->check(CLI::Range(0.0, 1.0));
  b->add_option("--threads", o->threads, "threads (0: all)");
  b->add_option("--repeats", o->repeats, "timed runs (the median is reported)");
  b->add_option("--opt-level", o->opt_level, "LLVM pipeline O0..O3")->check(CLI::Range(0, 3));
  b->add_option("--chain-bytes", o->chain_bytes,
                "CPU: kernels that read each other only at their own rows run a block of rows at a time, a "
                "block's data about this many bytes (default: three quarters of the L2 cache, 256 KiB where the system does "
                "not say; 0: each kernel over all its rows in turn)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  b->add_flag("--no-fold", o->no_fold,
              "CPU: no storage folding (an output that only its chain reads, at its own rows, otherwise lives in "
              "one block of rows)");
  b->add_flag("--no-jam", o->no_jam,
              "CPU: no jammed chain members (a chain's last pointwise member otherwise runs a block behind, in the "
              "loop of an earlier one that calls the math library)");
  b->add_option("--stream-bytes", o->stream_bytes,
                "CPU: a program output that no kernel reads, of at least this many bytes (and 4 MiB), is written "
                "with non-temporal stores (default 16 MiB; -1: never)")
      ->check(CLI::Range(int64_t(-1), int64_t(1) << 40));
  b->add_flag("--dump-ir", o->dump_ir, "print each kernel's optimised LLVM IR to stderr");
  b->add_flag("--json", o->json, "one JSON document");
  return {b, [o] { return bench_command(*o); }};
}

}  // namespace stax::cli
