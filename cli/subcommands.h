// Each subcommand of `stax` (docs/design.md §8) registers its options with the
// command line from the file that implements it; main() only lists the
// registrations, parses, and runs the one the user chose.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace stax::cli {

/// A registered subcommand: its node in the command line, and what runs
/// when the user chose it (returning the process exit code).
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

struct ProveFlags;
/// --prove, --no-prove, --prove-timeout-ms, --prove-max-elements,
/// --prove-max-terms (common.cpp), for check and tv.
void add_prove_flags(CLI::App* c, ProveFlags& f);

Subcommand register_run(CLI::App& app);         // run_command.cpp
/// `stax fuzz autodiff` (fuzz_autodiff_command.cpp): added under `fuzz`.
Subcommand register_fuzz_autodiff(CLI::App& fuzz);
Subcommand register_examples(CLI::App& app);    // examples_command.cpp
Subcommand register_transform(CLI::App& app);   // transform_command.cpp
Subcommand register_check(CLI::App& app);       // check_command.cpp
Subcommand register_tv(CLI::App& app);          // tv_command.cpp
Subcommand register_bound(CLI::App& app);       // bound_command.cpp
Subcommand register_experiment(CLI::App& app);  // experiment_command.cpp
Subcommand register_lower(CLI::App& app);       // lower_command.cpp
Subcommand register_partition(CLI::App& app);   // partition_command.cpp
Subcommand register_train_step(CLI::App& app);  // train_step_command.cpp
Subcommand register_prove(CLI::App& app);       // prove_command.cpp
Subcommand register_rewrite(CLI::App& app);     // rewrite_command.cpp
/// `stax fuzz` and its subcommands report, merge, replay and bench.
Subcommand register_fuzz(CLI::App& app);   // fuzz_command.cpp
Subcommand register_bench(CLI::App& app);  // bench_command.cpp
Subcommand register_grad(CLI::App& app);   // grad_command.cpp
Subcommand register_jvp(CLI::App& app);    // jvp_command.cpp
Subcommand register_hvp(CLI::App& app);    // jvp_command.cpp
Subcommand register_checkpoint(CLI::App& app);  // checkpoint_command.cpp
Subcommand register_mathcheck(CLI::App& app);   // mathcheck_command.cpp
Subcommand register_torch_check(CLI::App& app);  // torch_check_command.cpp

}  // namespace stax::cli
