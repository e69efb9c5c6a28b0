// `stax bound` (docs/design.md §4, §8): the error bound of every reduction of T(P)
// against the exact sum of its own summands, on given or drawn inputs.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "oracle/error_bound/error_bound.h"
#include "semantics/input_gen.h"
#include "transforms/transform.h"

namespace stax::cli {

using namespace stax::sem;

namespace {

std::optional<sem::InputKind> kind_from_name(const std::string& s) {
  for (sem::InputKind k : sem::kInputKinds)
    if (sem::input_kind_name(k) == s) return k;
  return std::nullopt;
}

}  // namespace

int bound_command(const BoundCommandOptions& o) {
  auto prog = load_program(o.file);
  if (!prog) return 2;
  Program src = std::move(*prog);
  auto kind = kind_from_name(o.data);
  if (!kind) {
    std::cerr << "error: --data expects normal, uniform, cancellation or special, got '" << o.data << "'\n";
    return 2;
  }
  Program tgt = src;
  std::string what = o.file;
  std::string cls = "exact";
  if (!o.transform.empty()) {
    auto r = apply_transforms(src, o.transform);
    if (!r) return 2;
    tgt = std::move(r->program);
    cls = std::string(xform::class_name(r->cls));
    what += " --transform " + o.transform;
  }
  Inputs in;
  if (!read_inputs(o.inputs, in, &src)) return 2;
  std::string inputs_text = o.inputs.empty() ? "" : "given";
  // Inputs not given are drawn: with --random-inputs SEED, or seed 1 when
  // no input was given at all.
  bool draw = o.random_seed.has_value() || o.inputs.empty();
  if (draw) {
    uint64_t seed = o.random_seed.value_or(1);
    Inputs drawn = sem::generate_inputs(src, *kind, seed);
    for (auto& [name, t] : drawn)
      if (!in.count(name)) in[name] = std::move(t);
    inputs_text += std::string(inputs_text.empty() ? "" : " + ") + "drawn (" + o.data + ", seed " +
                   std::to_string(seed) + ")";
  }
  if (auto err = check_inputs(src, in)) {
    std::cerr << "error: " << *err << "\n";
    return 2;
  }
  oracle::BoundOptions bo;
  bo.top = o.top;
  bo.top_always = o.show_contributions;
  oracle::BoundReport rep;
  try {
    rep = oracle::analyze_bounds(tgt, in, bo);
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
  if (o.json) {
    nlohmann::json j = oracle::bound_report_json(rep, what);
    j["class"] = cls;
    j["inputs"] = inputs_text;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "inputs: " << inputs_text << "; transform class: " << cls << "\n"
              << oracle::format_bound_report(rep, what);
  }
  if (rep.error) return 2;
  return rep.within() ? 0 : 1;
}

Subcommand register_bound(CLI::App& app) {
  auto o = std::make_shared<BoundCommandOptions>();
  auto seed = std::make_shared<uint64_t>(0);
  auto* b = app.add_subcommand("bound", "Error bounds of the reductions of T(P) against their exact sums (MPFR)");
  b->add_option("file", o->file, "program (.stx)")->required();
  b->add_option("--transform", o->transform, "NAME[:key=val...][,NAME...] (default: the program as written)");
  b->add_option("--input", o->inputs, "NAME=FILE.npy (bf16 as *.bf16.npy)");
  auto* seed_opt = b->add_option("--random-inputs", *seed, "draw the inputs not given from SEED (default 1)");
  b->add_option("--data", o->data, "kind of drawn inputs: normal, uniform, cancellation or special");
  b->add_option("--top", o->top, "summands listed for a violation")->check(CLI::Range(0, 1000));
  b->add_flag("--contributions", o->show_contributions, "list the largest contributions of every worst element");
  b->add_flag("--json", o->json, "one JSON document");
  return {b, [o, seed, seed_opt] {
            if (*seed_opt) o->random_seed = *seed;
            return bound_command(*o);
          }};
}

}  // namespace stax::cli
