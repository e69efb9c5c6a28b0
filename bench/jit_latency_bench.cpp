// JIT compile latency of the CPU backend: median, p90 and max
// milliseconds per kernel over the kernels of the examples and N generated
// programs, with where the time goes (engine, emission, verifier, passes,
// machine code, disk cache, linking). Three passes over the same programs,
// the in-memory cache emptied before each: no disk cache, a cold disk cache
// (every kernel compiled and stored), a warm one (every kernel loaded); and
// a fourth, "batch", with each program's kernels compiled in one module
// (CpuOptions::batch, as campaigns do; no disk cache), whose per-kernel
// times are the program's compile time shared out among its kernels.
// Not a test: its output goes into README.md.
//   stax_bench_jit_latency [--programs N] [--opt-level L] [--cache-dir DIR] [--phases off,cold,warm,batch]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "bench/percentile.h"
#include "oracle/gen/program_gen.h"
#include "proofs/obligation.h"
#include "semantics/parser.h"

using namespace stax;
namespace fs = std::filesystem;
using stax::bench::pct;
namespace cpu = stax::backends::cpu;

namespace {

struct Parts {
  std::vector<double> total, cpu, engine, emit, verify, optimise, codegen, disk, link;
  int hits = 0;
  void add(const cpu::KernelReport& r) {
    total.push_back(r.compile_ms);
    cpu.push_back(r.compile_cpu_ms);
    engine.push_back(r.engine_ms);
    emit.push_back(r.emit_ms);
    verify.push_back(r.verify_ms);
    optimise.push_back(r.optimise_ms);
    codegen.push_back(r.codegen_ms);
    disk.push_back(r.disk_ms);
    link.push_back(r.link_ms);
    hits += r.disk_cached;
  }
};

double sum(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += x;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  stax::proofs::install_default_discharger();  // the transforms' and the lowering's side conditions
  int programs = 200, level = 3;
  std::string dir, phases = "off,cold,warm,batch";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--programs")) programs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--opt-level")) level = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--cache-dir")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--phases")) phases = argv[i + 1];
  }
  bool own_dir = dir.empty();
  if (own_dir) dir = (fs::temp_directory_path() / ("stax-jit-bench-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);

  std::vector<sem::Program> ps;
  for (const auto& f : fs::directory_iterator(fs::path(STAX_SOURCE_DIR) / "examples")) {
    if (f.path().extension() != ".stx") continue;
    auto r = sem::parse_file(f.path().string());
    if (auto* p = std::get_if<sem::Program>(&r)) ps.push_back(std::move(*p));
  }
  size_t examples = ps.size();
  for (int s = 0; s < programs; ++s) ps.push_back(oracle::generate_program(uint64_t(s) * 7919 + 13));

  cpu::Jit& jit = cpu::Jit::instance();
  std::printf("opt level %d; kernels of %zu examples and %d generated programs (seeds 13 + 7919 k)\n", level,
              examples, programs);
  std::printf("%-10s %7s %5s %8s %8s %8s %9s | CPU: %6s %6s %6s | medians (ms): %6s %6s %6s %6s %6s %6s %6s | share of the sum: "
              "optimise codegen link\n",
              "disk cache", "kernels", "hits", "median", "p90", "max", "sum_s", "median", "p90", "max", "engine", "emit", "verify", "opt", "code",
              "disk", "link");
  for (const char* phase : {"off", "cold", "warm", "batch"}) {
    if (phases.find(phase) == std::string::npos) continue;
    jit.clear();  // every kernel is compiled (or loaded) again
    bool batch = !std::strcmp(phase, "batch"), disk = !std::strcmp(phase, "cold") || !std::strcmp(phase, "warm");
    jit.set_cache_dir(disk ? std::optional<std::string>(dir) : std::nullopt);
    Parts parts;
    int failed = 0;
    for (const sem::Program& p : ps) {
      try {
        cpu::CompiledProgram cp(p, {1, false, level, batch});
        for (const cpu::KernelReport& r : cp.kernels())
          if (!r.cached) parts.add(r);
      } catch (const std::exception& e) {
        ++failed;
      }
    }
    double all = sum(parts.total);
    std::printf("%-10s %7zu %5d %8.2f %8.2f %8.1f %9.2f | %11.2f %6.2f %6.1f | %13.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f | %7.0f%% %6.0f%% "
                "%4.0f%%%s\n",
                phase, parts.total.size(), parts.hits, pct(parts.total, 0.5), pct(parts.total, 0.9),
                pct(parts.total, 1.0), all / 1000, pct(parts.cpu, 0.5), pct(parts.cpu, 0.9), pct(parts.cpu, 1.0), pct(parts.engine, 0.5), pct(parts.emit, 0.5),
                pct(parts.verify, 0.5), pct(parts.optimise, 0.5), pct(parts.codegen, 0.5), pct(parts.disk, 0.5),
                pct(parts.link, 0.5), 100 * sum(parts.optimise) / all, 100 * sum(parts.codegen) / all,
                100 * sum(parts.link) / all, failed ? (" (" + std::to_string(failed) + " failed)").c_str() : "");
  }
  if (own_dir) fs::remove_all(dir);
  return 0;
}
