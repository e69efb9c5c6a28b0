// Helpers the subcommands of `stax` share: loading a program, reading
// --input files, applying a --transform pipeline, running a backend, and
// printing a verdict. Every user error is printed here (with file:line:col
// where there is one) and returned as nullopt or false, never thrown.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "oracle/checker.h"
#include "semantics/evaluator.h"
#include "transforms/transform.h"

namespace stax::cli {

/// Parses a program; prints the diagnostic (file:line:col) and returns
/// nullopt on error.
std::optional<sem::Program> load_program(const std::string& file);
/// Reads --input NAME=FILE.npy pairs into `in`; messages go to stderr. With
/// a program, a file whose NAME is no input of it, or whose dtype or shape
/// differs from the declared one, is an error naming the file.
bool read_inputs(const std::vector<std::string>& specs, sem::Inputs& in, const sem::Program* p = nullptr);

/// Parses a --transform pipeline; prints the error and returns nullopt on a
/// malformed one.
std::optional<std::vector<xform::Step>> pipeline_steps(const std::string& spec);
/// Applies a --transform pipeline; prints the error and returns nullopt on a
/// bad pipeline or bad parameters.
std::optional<xform::Result> apply_transforms(const sem::Program& p, const std::string& spec);

/// Runs a program on a backend ("interp" or "cpu"). Throws
/// std::invalid_argument for an unknown backend and
/// backends::cpu::CompileError for an internal code generation error.
sem::IeeeOutcome run_on_backend(const std::string& backend, const sem::Program& p, const sem::Inputs& in,
                                int threads);

/// Prints a verdict (prose, or one JSON document) and returns its exit code:
/// 0 verified, 1 counterexample, 3 not checkable.
int emit_verdict(const oracle::Verdict& v, const sem::Program& src, const sem::Program& tgt,
                 const std::string& what, bool json);

/// Runs `body` (an exit code); a size limit (sem::ResourceError) or a
/// backend's internal compile error is reported on stderr and gives exit 2.
int exit_on_backend_error(const std::function<int()>& body);

/// The checker's options from the command line: trials, seed and the prover.
oracle::CheckOptions check_options(int trials, uint64_t seed, const ProveFlags& f);

/// `--arch` (sm_NN or compute_NN) as NVRTC's architecture; prints the
/// error and returns nullopt when it is neither.
std::optional<std::string> gpu_arch_or_error(const std::string& arch);

}  // namespace stax::cli
