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

}  // namespace stax::cli
