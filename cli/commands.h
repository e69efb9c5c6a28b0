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
/// Checks P against T(P) by the class the pipeline declares. Exit 3 when the
/// class cannot be checked yet (real).
int check_command(const CheckOptions& o);

struct TvOptions {
  std::string src, tgt, cls = "exact";
  int trials = 16;
  uint64_t seed = 1;
  bool json = false;
};
/// Translation validation of any two programs with the same interface.
int tv_command(const TvOptions& o);

}  // namespace stax::cli
