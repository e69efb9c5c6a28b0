// `stax tv` (docs/design.md §8): translation validation of any two programs with the
// same interface, under the class asked for.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "oracle/checker.h"

namespace stax::cli {

int tv_command(const TvOptions& o) {
  auto src = load_program(o.src);
  if (!src) return 2;
  auto tgt = load_program(o.tgt);
  if (!tgt) return 2;
  auto cls = xform::class_from_name(o.cls);
  if (!cls) {
    std::cerr << "error: --class expects exact, refines or real, got '" << o.cls << "'\n";
    return 2;
  }
  try {
    oracle::Verdict v = oracle::check_programs(*src, *tgt, *cls, check_options(o.trials, o.seed, o.prove));
    return emit_verdict(v, *src, *tgt, o.src + " -> " + o.tgt, o.json);
  } catch (const sem::ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
}

Subcommand register_tv(CLI::App& app) {
  auto o = std::make_shared<TvOptions>();
  auto* v = app.add_subcommand("tv", "Translation validation of two programs");
  v->add_option("src", o->src, "source program")->required();
  v->add_option("tgt", o->tgt, "target program")->required();
  v->add_option("--class", o->cls, "exact, refines or real");
  v->add_option("--trials", o->trials, "input sets");
  v->add_option("--seed", o->seed, "input seed");
  v->add_flag("--json", o->json, "one JSON document");
  add_prove_flags(v, o->prove);
  return {v, [o] { return tv_command(*o); }};
}

}  // namespace stax::cli
