// The `stax` command line (DESIGN §8).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"stax: verified transformations of the Stax tensor core language"};
  app.require_subcommand(1);

  stax::cli::RunOptions run;
  uint64_t seed = 0;
  auto* r = app.add_subcommand("run", "Run a .stx program under the IEEE or the real (MPFR) semantics");
  r->add_option("file", run.file, "program (.stx)")->required();
  r->add_option("--semantics", run.semantics, "ieee (bit-exact floats) or real (MPFR)");
  r->add_option("--backend", run.backend, "interp");
  r->add_option("--input", run.inputs, "NAME=FILE.npy (bf16 as *.bf16.npy)");
  auto* seed_opt = r->add_option("--random-inputs", seed, "draw inputs deterministically from SEED");
  r->add_option("--out", run.out_dir, "write outputs (and drawn inputs) as .npy into DIR");
  r->add_option("--precision", run.precision, "MPFR precision in bits for --semantics real")->check(CLI::Range(8, 1 << 16));
  r->add_option("--show", run.show, "elements printed per output");

  stax::cli::ExamplesOptions ex;
  auto* e = app.add_subcommand("examples", "Run every program of a folder under both semantics, print a table");
  e->add_option("dir", ex.dir, "folder of .stx programs");
  e->add_option("--seed", ex.seed, "input seed");

  stax::cli::TransformOptions tr;
  auto* t = app.add_subcommand("transform", "Print T(P) for a transform pipeline");
  t->add_option("file", tr.file, "program (.stx)")->required();
  t->add_option("--transform", tr.transform, "NAME[:key=val...][,NAME...]")->required();
  t->add_option("--max-rewrites", tr.max_rewrites, "stop after N rewrites (bisection)");
  t->add_flag("--log", tr.log, "print every rewrite to stderr");

  stax::cli::CheckOptions ck;
  auto* c = app.add_subcommand("check", "Check P against T(P) by the transform's class, no tolerance");
  c->add_option("file", ck.file, "program (.stx)")->required();
  c->add_option("--transform", ck.transform, "NAME[:key=val...][,NAME...]")->required();
  c->add_option("--trials", ck.trials, "input sets");
  c->add_option("--seed", ck.seed, "input seed");
  c->add_option("--max-rewrites", ck.max_rewrites, "apply only the first N rewrites");
  c->add_flag("--json", ck.json, "one JSON document");

  stax::cli::TvOptions tv;
  auto* v = app.add_subcommand("tv", "Translation validation of two programs");
  v->add_option("src", tv.src, "source program")->required();
  v->add_option("tgt", tv.tgt, "target program")->required();
  v->add_option("--class", tv.cls, "exact, refines or real");
  v->add_option("--trials", tv.trials, "input sets");
  v->add_option("--seed", tv.seed, "input seed");
  v->add_flag("--json", tv.json, "one JSON document");

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
  if (*r) {
    if (*seed_opt) run.random_seed = seed;
    return stax::cli::run_command(run);
  }
  if (*e) return stax::cli::examples_command(ex);
  if (*t) return stax::cli::transform_command(tr);
  if (*c) return stax::cli::check_command(ck);
  if (*v) return stax::cli::tv_command(tv);
  return 2;
}
