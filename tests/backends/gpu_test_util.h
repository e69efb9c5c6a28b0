// Shared by the GPU backend's tests: the first difference between the
// interpreter and a GPU target over the oracle's input kinds, and the
// examples the backend supports (every one now).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "backends/gpu/gpu_backend.h"
#include "oracle/fuzz.h"
#include "semantics/input_gen.h"
#include "semantics/parser.h"

namespace stax::test {

/// The first difference between the interpreter and the GPU target of `opt`
/// on P, or "".
inline std::string gpu_difference(const sem::Program& p, uint64_t seed,
                                  const backends::gpu::GpuOptions& opt = {}) {
  backends::gpu::GpuProgram gp(p, opt);
  for (sem::InputKind kind : sem::kInputKinds) {
    sem::Inputs in = sem::generate_inputs(p, kind, seed);
    if (auto d = oracle::outcome_difference(p, sem::eval_ieee(p, in), gp.run(in)))
      return std::string(sem::input_kind_name(kind)) + " inputs: " + *d;
  }
  return "";
}

/// (file name, program) of each examples/*.stx the GPU backend supports.
inline std::vector<std::pair<std::string, sem::Program>> gpu_examples() {
  std::vector<std::pair<std::string, sem::Program>> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(STAX_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".stx") continue;
    sem::ParseResult r = sem::parse_file(e.path().string());
    if (!std::holds_alternative<sem::Program>(r)) throw std::runtime_error("bad example " + e.path().string());
    sem::Program p = std::get<sem::Program>(std::move(r));
    if (!backends::gpu::gpu_unsupported(p)) out.emplace_back(e.path().filename().string(), std::move(p));
  }
  return out;
}

}  // namespace stax::test
