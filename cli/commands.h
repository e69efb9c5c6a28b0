// The `stax` command (DESIGN §8). Each subcommand returns the process exit
// code: 0 success, 1 the program failed (⊥) or a check found a
// counterexample, 2 bad usage or bad input.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stax::cli {

struct RunOptions {
  std::string file;
  std::string semantics = "ieee";
  std::string backend = "interp";
  std::vector<std::string> inputs;  ///< NAME=FILE.npy
  std::optional<uint64_t> random_seed;
  std::string out_dir;
  long precision = 256;
  int show = 8;  ///< elements printed per output
};
int run_command(const RunOptions& o);

struct ExamplesOptions {
  std::string dir = "examples";
  uint64_t seed = 1;
};
/// Runs every program of a folder under both semantics; prints a table.
int examples_command(const ExamplesOptions& o);

struct TransformOptions {
  std::string file, transform;
  int64_t max_rewrites = -1;
  bool log = false;
};
/// Prints T(P) (and, with log, every rewrite to stderr).
int transform_command(const TransformOptions& o);

struct CheckOptions {
  std::string file, transform;
  int trials = 16;
  uint64_t seed = 1;
  int64_t max_rewrites = -1;
  bool json = false;
};
/// Checks P against T(P) by the class the pipeline declares (class real:
/// equal Real semantics and float results within their error bounds).
int check_command(const CheckOptions& o);

struct TvOptions {
  std::string src, tgt, cls = "exact";
  int trials = 16;
  uint64_t seed = 1;
  bool json = false;
};
/// Translation validation of any two programs with the same interface.
int tv_command(const TvOptions& o);

struct BoundCommandOptions {
  std::string file, transform;      ///< without a transform: P as written
  std::vector<std::string> inputs;  ///< NAME=FILE.npy
  std::optional<uint64_t> random_seed;
  std::string data = "normal";  ///< the oracle's input kind for drawn inputs
  int top = 8;                  ///< contributions listed for a violation
  bool show_contributions = false;
  bool json = false;
};
/// The error bound of every reduction of T(P) against the exact sum of its
/// summands (DESIGN §4). Exit 1 when a ratio exceeds 1 or the program is ⊥.
int bound_command(const BoundCommandOptions& o);

struct ExperimentCommandOptions {
  std::string name;  ///< an experiment, or "all"
  std::string out_dir = "out/experiments";
  int min_log2n = 4, max_log2n = 24, step_log2n = 2;
  uint64_t seed = 1;
};
/// Runs experiments of the text; each writes CSV, Markdown and PNG under
/// OUT/NAME/.
int experiment_command(const ExperimentCommandOptions& o);

struct ProveOptions {
  std::string file, transform;  ///< with a transform: also T(P) and its side conditions
  unsigned timeout_ms = 2000;
  bool json = false;
};
/// Every index obligation (DESIGN §5) with verdict and time. Exit 0 when all
/// are proved, 1 when one is refuted as a bug (an access out of bounds, an
/// unsound interval), 3 when some are unknown or not proved but handled at
/// run time (an index from memory keeps its check).
int prove_command(const ProveOptions& o);

struct RewriteOptions {
  std::string rule;  ///< 'LHS => RHS' in the .stx lambda syntax
  std::string dtype = "f16";
  unsigned timeout_ms = 10000;
  bool half_in_f32 = false;
  bool json = false;
};
/// Alive-style scalar rewrite in Z3's FPA theory. Exit 0 proved, 1 refuted
/// (counterexample printed), 3 unknown (timeout), 2 malformed rule.
int rewrite_command(const RewriteOptions& o);

}  // namespace stax::cli
