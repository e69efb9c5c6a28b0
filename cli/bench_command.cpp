// Backends from the command line: `stax run --backend cpu`, the backend half
// of `stax check --backend cpu`, and `stax bench` (DESIGN §8, issue 6).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/thread_pool.h"
#include "cli/commands.h"
#include "oracle/input_gen.h"
#include "semantics/printer.h"
#include "semantics/random_inputs.h"
#include "transforms/transform.h"

namespace stax::cli {

using namespace stax::sem;
using json = nlohmann::json;

std::optional<xform::Result> apply_transforms(const Program& p, const std::string& spec) {
  auto steps = xform::parse_pipeline(spec);
  if (auto* e = std::get_if<std::string>(&steps)) {
    std::cerr << "error: --transform: " << *e << "\n";
    return std::nullopt;
  }
  try {
    xform::Context ctx;
    return xform::run_pipeline(p, std::get<std::vector<xform::Step>>(steps), ctx);
  } catch (const xform::TransformError& e) {
    std::cerr << "error: " << e.message << "\n";
    return std::nullopt;
  }
}

IeeeOutcome run_on_backend(const std::string& backend, const Program& p, const Inputs& in, int threads) {
  if (backend == "interp") return eval_ieee(p, in);
  if (backend == "cpu") return backends::cpu::run(p, in, {threads});
  throw std::invalid_argument("unknown backend '" + backend + "' (known: interp, cpu)");
}

int backend_check(const std::string& backend, const Program& p, int trials, uint64_t seed, int threads, bool js) {
  json report = {{"backend", backend}, {"trials", trials}};
  try {
    backends::cpu::CompiledProgram cp(p, {threads});
    for (int t = 0; t < trials; ++t) {
      oracle::InputKind kind = oracle::kInputKinds[size_t(t) % std::size(oracle::kInputKinds)];
      Inputs in = oracle::generate_inputs(p, kind, seed + uint64_t(t));
      IeeeOutcome ref = eval_ieee(p, in);
      IeeeOutcome got = cp.run(in);
      if (auto diff = oracle::outcome_difference(p, ref, got)) {
        report["verdict"] = "mismatch";
        report["trial"] = t;
        report["inputs"] = std::string(oracle::input_kind_name(kind));
        report["difference"] = *diff;
        if (js) std::cout << report.dump(2) << "\n";
        else
          std::cout << "backend " << backend << ": MISMATCH with the interpreter on T(P), trial " << t << " ("
                    << oracle::input_kind_name(kind) << " inputs, seed " << seed + uint64_t(t) << ")\n  " << *diff
                    << "\n";
        return 1;
      }
    }
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const backends::cpu::CompileError& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
  report["verdict"] = "identical";
  if (js) std::cout << report.dump(2) << "\n";
  else
    std::cout << "backend " << backend << ": bit-identical to the interpreter on T(P) (" << trials
              << " input sets, NaN and ⊥ included)\n";
  return 0;
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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
  if (o.backend != "cpu" && o.backend != "interp") {
    std::cerr << "error: --backend expects cpu or interp, got '" << o.backend << "'\n";
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
  if (!read_inputs(p, o.inputs, in)) return 2;
  for (auto& [name, t] : random_inputs(p, o.seed))
    if (!in.count(name)) in[name] = std::move(t);
  if (auto err = check_inputs(p, in)) {
    std::cerr << "error: " << *err << "\n";
    return 2;
  }
  int threads = backends::cpu::resolve_threads(o.threads);
  json out = {{"file", o.file}, {"transform", o.transform}, {"backend", o.backend}, {"threads", threads},
              {"repeats", o.repeats}};
  try {
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
    backends::cpu::CompiledProgram cp(p, {threads, o.dump_ir, o.opt_level});
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
      std::string shape = std::string(kr.lanes ? "lanes" : (kr.text.rfind("red(", 0) == 0 ? "fold" : "pointwise")) +
                          ", parallel over " + std::to_string(kr.parallel_extent);
      rows.push_back({{"kernel", kr.binding}, {"text", kr.text}, {"compile_ms", kr.compile_ms},
                      {"compile_parts_ms", {{"emit", kr.emit_ms}, {"optimise", kr.optimise_ms}, {"codegen", kr.codegen_ms}}},
                      {"cached", kr.cached}, {"run_ms", run}, {"bytes", bytes}, {"gb_per_s", gbs},
                      {"copy_gb_per_s", cgbs}, {"ratio_to_copy", ratio}, {"shape", shape}});
      if (!o.json)
        std::printf("%-12s %10.2f %10.3f %10.2f %9.2f %11.2f %7.2f  %s\n", kr.binding.c_str(), kr.compile_ms, run,
                    double(bytes) / 1e6, gbs, cgbs, ratio, shape.c_str());
      if (!o.json && !kr.cached)
        std::printf("%-12s   (compile: emit %.2f, optimise %.2f, machine code %.2f ms)\n", "", kr.emit_ms,
                    kr.optimise_ms, kr.codegen_ms);
      if (o.dump_ir) std::cerr << "; kernel " << kr.binding << "\n" << cp.ir(k) << "\n";
    }
    out["kernels"] = rows;
    out["total_ms"] = median(total);
    if (o.json) std::cout << out.dump(2) << "\n";
    else
      std::printf("total %.3f ms (median of %d, %d threads); output bits: %s\n", median(total), o.repeats, threads,
                  out["bits"].get<std::string>().c_str());
    return diff ? 1 : 0;
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const backends::cpu::CompileError& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace stax::cli
