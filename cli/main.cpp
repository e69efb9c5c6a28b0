// The `stax` command line (docs/design.md §8): every subcommand registers itself
// from its own file (cli/subcommands.h); main parses and runs the chosen one.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <vector>

#include "cli/subcommands.h"
#include "proofs/obligation.h"
#include "semantics/evaluator.h"

int main(int argc, char** argv) {
  stax::proofs::install_default_discharger();  // the transforms' and the lowering's side conditions
  namespace cli = stax::cli;
  CLI::App app{"stax: verified transformations of the Stax tensor core language"};
  app.require_subcommand(1);
  const std::vector<cli::Subcommand> commands = {
      cli::register_run(app),        cli::register_examples(app), cli::register_transform(app),
      cli::register_check(app),      cli::register_tv(app),       cli::register_bound(app),
      cli::register_experiment(app), cli::register_lower(app),    cli::register_prove(app),
      cli::register_rewrite(app),    cli::register_fuzz(app),     cli::register_bench(app),
      cli::register_partition(app),  cli::register_train_step(app),
      cli::register_grad(app),       cli::register_jvp(app),      cli::register_hvp(app),
      cli::register_checkpoint(app), cli::register_mathcheck(app), cli::register_torch_check(app),
  };
  // A first word that names no subcommand (CLI11 would only say that one is
  // required).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const cli::Subcommand& c : commands) known |= c.app->get_name() == argv[1];
    if (!known) {
      std::cerr << "error: unknown subcommand '" << argv[1] << "'\n" << "run 'stax --help' for usage\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& ex_help) {
    return app.exit(ex_help);
  } catch (const CLI::CallForAllHelp& ex_help) {
    return app.exit(ex_help);
  } catch (const CLI::ParseError& err) {
    std::cerr << "error: " << err.what() << "\n" << "run 'stax --help' for usage\n";
    return 2;
  }
  try {
    for (const cli::Subcommand& c : commands)
      if (*c.app) return c.run();
  } catch (const stax::sem::ResourceError& e) {  // a size limit not caught closer to where it was hit
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory (the tensors are too large for this machine)\n";
    return 2;
  }
  return 2;
}
