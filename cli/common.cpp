#include "cli/common.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/jit.h"
#include "backends/gpu/emulator.h"
#include "backends/gpu/gpu_backend.h"
#include "semantics/npy.h"
#include "semantics/parser.h"

namespace stax::cli {

using namespace stax::sem;

std::optional<Program> load_program(const std::string& file) {
  ParseResult r = parse_file(file);
  if (auto* d = std::get_if<Diag>(&r)) {
    // Line 0: the file as a whole (it cannot be opened).
    std::cerr << (d->loc.line == 0 ? d->file + ": error: " + d->message : d->str()) << "\n";
    return std::nullopt;
  }
  return std::get<Program>(std::move(r));
}

bool read_inputs(const std::vector<std::string>& specs, Inputs& in, const Program* p) {
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: --input expects NAME=FILE.npy, got '" << spec << "'\n";
      return false;
    }
    auto r = read_npy(spec.substr(eq + 1));
    if (auto* e = std::get_if<std::string>(&r)) {
      std::cerr << "error: " << *e << "\n";
      return false;
    }
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    const Tensor& t = std::get<Tensor>(r);
    if (p) {
      auto it = std::find_if(p->inputs.begin(), p->inputs.end(), [&](const Input& i) { return i.name == name; });
      if (it == p->inputs.end()) {
        std::cerr << "error: " << file << ": the program has no input named '" << name << "'\n";
        return false;
      }
      if (!(TensorType{t.dtype, t.shape} == it->type)) {
        std::cerr << "error: " << file << ": input '" << name << "' expects " << type_str(it->type) << ", got "
                  << type_str({t.dtype, t.shape}) << "\n";
        return false;
      }
    }
    in[name] = std::get<Tensor>(std::move(r));
  }
  return true;
}

std::optional<std::vector<xform::Step>> pipeline_steps(const std::string& spec) {
  auto r = xform::parse_pipeline(spec);
  if (auto* e = std::get_if<std::string>(&r)) {
    std::cerr << "error: --transform: " << *e << "\n";
    return std::nullopt;
  }
  return std::get<std::vector<xform::Step>>(std::move(r));
}

std::optional<xform::Result> apply_transforms(const Program& p, const std::string& spec) {
  auto steps = pipeline_steps(spec);
  if (!steps) return std::nullopt;
  try {
    xform::Context ctx;
    return xform::run_pipeline(p, *steps, ctx);
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

int emit_verdict(const oracle::Verdict& v, const Program& src, const Program& tgt, const std::string& what,
                 bool json) {
  if (json) std::cout << oracle::verdict_json(v, src, tgt, what).dump(2) << "\n";
  else std::cout << oracle::format_verdict(v, src, tgt, what);
  switch (v.status) {
    case oracle::Status::Verified: return 0;
    case oracle::Status::Counterexample: return 1;
    case oracle::Status::NotCheckable: return 3;
  }
  return 2;
}

int exit_on_backend_error(const std::function<int()>& body) {
  try {
    return body();
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const backends::cpu::CompileError& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  } catch (const backends::gpu::EmuError& e) {
    // A race on __shared__ memory, a deadlock: the kernels are wrong.
    std::cerr << "error: the GPU kernels broke the CUDA execution model on the emulator: " << e.what() << "\n";
    return 1;
  }
}

void add_prove_flags(CLI::App* c, ProveFlags& f) {
  c->add_flag("--prove", f.require, "require a proof for all inputs at these shapes (exit 3 when only testing was possible)");
  c->add_flag("--no-prove", f.off, "test only; by default a proof is tried first when the programs are small");
  c->add_option("--prove-timeout-ms", f.timeout_ms, "wall time for the prover");
  c->add_option("--prove-max-elements", f.max_elements, "largest tensor the prover encodes");
  c->add_option("--prove-max-terms", f.max_terms, "largest encoding (scalar terms of both programs)");
}

oracle::CheckOptions check_options(int trials, uint64_t seed, const ProveFlags& f) {
  oracle::CheckOptions co{trials, seed};
  co.prove = f.off ? oracle::ProveMode::Off : f.require ? oracle::ProveMode::Require : oracle::ProveMode::Try;
  co.prove_timeout_ms = f.timeout_ms;
  co.prove_max_elements = f.max_elements;
  co.prove_max_terms = f.max_terms;
  return co;
}

std::optional<std::string> gpu_arch_or_error(const std::string& arch) {
  std::optional<std::string> a = backends::gpu::nvrtc_arch(arch);
  if (!a) std::cerr << "error: --arch expects sm_NN or compute_NN (NN >= 50), got '" << arch << "'\n";
  return a;
}

}  // namespace stax::cli
