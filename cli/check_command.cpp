// `stax check` (docs/design.md §8): P against T(P) by the class the pipeline
// declares, no tolerance; with --backend cpu|gpu|gpu-emu also the compiled T(P) against
// the interpreter on T(P), bit for bit (docs/design.md §8).
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "backends/gpu/driver.h"
#include "backends/gpu/gpu_backend.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "oracle/checker.h"
#include "semantics/input_gen.h"

namespace stax::cli {

using namespace stax::sem;
using json = nlohmann::json;

namespace {

/// Compares the compiled T(P) with the interpreter on T(P), bit for bit, on
/// `trials` input sets; prints the first difference. Exit code as check.
int backend_check(const std::string& backend, const std::string& arch, const Program& p, int trials, uint64_t seed,
                  int threads, bool js) {
  json report = {{"backend", backend}, {"trials", trials}};
  int failed = exit_on_backend_error([&]() -> int {
    // One compiled T(P), run per trial: the CPU JIT or the GPU kernels.
    std::function<IeeeOutcome(const Inputs&)> run;
    std::shared_ptr<backends::cpu::CompiledProgram> cpu;
    std::shared_ptr<backends::gpu::GpuProgram> gpu;
    if (backend == "cpu") {
      cpu = std::make_shared<backends::cpu::CompiledProgram>(p, backends::cpu::CpuOptions{threads});
      run = [&](const Inputs& in) { return cpu->run(in); };
    } else {
      backends::gpu::GpuOptions go;
      go.target = backend == "gpu" ? backends::gpu::Target::Device : backends::gpu::Target::Emu;
      go.arch = arch;
      try {
        gpu = std::make_shared<backends::gpu::GpuProgram>(p, go);
      } catch (const backends::gpu::DriverError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
      } catch (const backends::cpu::CompileError& e) {
        std::string m = e.what();
        if (m.rfind("not supported by the GPU backend", 0) != 0 && m.rfind("NVRTC: no NVRTC", 0) != 0) throw;
        std::cerr << "error: " << m << "\n";
        return 2;
      }
      run = [&](const Inputs& in) { return gpu->run(in); };
    }
    for (int t = 0; t < trials; ++t) {
      sem::InputKind kind = sem::kInputKinds[size_t(t) % std::size(sem::kInputKinds)];
      Inputs in = sem::generate_inputs(p, kind, seed + uint64_t(t));
      IeeeOutcome ref = eval_ieee(p, in);
      IeeeOutcome got = run(in);
      if (auto diff = oracle::outcome_difference(p, ref, got)) {
        report["verdict"] = "mismatch";
        report["trial"] = t;
        report["inputs"] = std::string(sem::input_kind_name(kind));
        report["difference"] = *diff;
        if (js) std::cout << report.dump(2) << "\n";
        else
          std::cout << "backend " << backend << ": MISMATCH with the interpreter on T(P), trial " << t << " ("
                    << sem::input_kind_name(kind) << " inputs, seed " << seed + uint64_t(t) << ")\n  " << *diff
                    << "\n";
        return 1;
      }
    }
    return 0;
  });
  if (failed) return failed;
  report["verdict"] = "identical";
  if (js) std::cout << report.dump(2) << "\n";
  else
    std::cout << "backend " << backend << ": bit-identical to the interpreter on T(P) (" << trials
              << " input sets, NaN and ⊥ included)\n";
  return 0;
}

}  // namespace

int check_command(const CheckCommandOptions& o) {
  std::optional<std::string> arch = gpu_arch_or_error(o.arch);
  if (!arch) return 2;
  if (o.backend != "interp" && o.backend != "cpu" && o.backend != "gpu" && o.backend != "gpu-emu") {
    std::cerr << "error: --backend expects interp, cpu, gpu or gpu-emu, got '" << o.backend << "'\n";
    return 2;
  }
  auto prog = load_program(o.file);
  if (!prog) return 2;
  auto steps = pipeline_steps(o.transform);
  if (!steps) return 2;
  try {
    oracle::CheckOptions co = check_options(o.trials, o.seed, o.prove);
    oracle::Verdict v = oracle::check_transform(*prog, *steps, co, o.max_rewrites);
    xform::Context ctx;
    ctx.max_rewrites = o.max_rewrites;
    xform::Result r = xform::run_pipeline(*prog, *steps, ctx);
    int code = emit_verdict(v, *prog, r.program, o.file + " --transform " + o.transform, o.json);
    if (o.backend == "interp") return code;
    int bcode = backend_check(o.backend, *arch, r.program, o.trials, o.seed, o.threads, o.json);
    // The worse of the two: error (2), then mismatch (1), then not checkable (3).
    auto rank = [](int c) { return c == 2 ? 3 : c == 1 ? 2 : c == 3 ? 1 : 0; };
    return rank(bcode) > rank(code) ? bcode : code;
  } catch (const xform::TransformError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
}

Subcommand register_check(CLI::App& app) {
  auto o = std::make_shared<CheckCommandOptions>();
  auto* c = app.add_subcommand("check", "Check P against T(P) by the transform's class, no tolerance");
  c->add_option("file", o->file, "program (.stx)")->required();
  c->add_option("--transform", o->transform, "NAME[:key=val...][,NAME...]")->required();
  c->add_option("--backend", o->backend, "also compile T(P) (cpu, gpu, gpu-emu) and compare it bit for bit with the interpreter");
  c->add_option("--threads", o->threads, "CPU backend threads (0: all)");
  c->add_option("--arch", o->arch, "GPU backend: target architecture for NVRTC (sm_NN or compute_NN; default sm_90)");
  c->add_option("--trials", o->trials, "input sets");
  c->add_option("--seed", o->seed, "input seed");
  c->add_option("--max-rewrites", o->max_rewrites, "apply only the first N rewrites");
  c->add_flag("--json", o->json, "one JSON document");
  add_prove_flags(c, o->prove);
  return {c, [o] { return check_command(*o); }};
}

}  // namespace stax::cli
