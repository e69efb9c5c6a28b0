// `stax transform` (docs/design.md §8): prints T(P) for a transform pipeline.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "semantics/printer.h"

namespace stax::cli {

int transform_command(const TransformOptions& o) {
  auto prog = load_program(o.file);
  if (!prog) return 2;
  auto steps = pipeline_steps(o.transform);
  if (!steps) return 2;
  xform::Context ctx;
  ctx.max_rewrites = o.max_rewrites;
  try {
    xform::Result r = xform::run_pipeline(*prog, *steps, ctx);
    std::cout << "# class: " << xform::class_name(r.cls) << "\n" << sem::print_program(r.program);
    if (o.log)
      for (const std::string& l : ctx.log) std::cerr << l << "\n";
  } catch (const xform::TransformError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
  return 0;
}

Subcommand register_transform(CLI::App& app) {
  auto o = std::make_shared<TransformOptions>();
  auto* t = app.add_subcommand("transform", "Print T(P) for a transform pipeline");
  t->add_option("file", o->file, "program (.stx)")->required();
  t->add_option("--transform", o->transform, "NAME[:key=val...][,NAME...]")->required();
  t->add_option("--max-rewrites", o->max_rewrites, "stop after N rewrites (bisection)");
  t->add_flag("--log", o->log, "print every rewrite to stderr");
  return {t, [o] { return transform_command(*o); }};
}

}  // namespace stax::cli
