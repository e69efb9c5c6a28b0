// `stax bound` (DESIGN §4, §8): the error bound of every reduction of T(P)
// against the exact sum of its own summands, on given or drawn inputs.
#include <iostream>

#include "cli/commands.h"
#include "oracle/error_bound.h"
#include "oracle/input_gen.h"
#include "semantics/npy.h"
#include "semantics/parser.h"
#include "transforms/transform.h"

namespace stax::cli {

using namespace stax::sem;

namespace {

std::optional<oracle::InputKind> kind_from_name(const std::string& s) {
  for (oracle::InputKind k : oracle::kInputKinds)
    if (oracle::input_kind_name(k) == s) return k;
  return std::nullopt;
}

}  // namespace

int bound_command(const BoundCommandOptions& o) {
  ParseResult pr = parse_file(o.file);
  if (auto* d = std::get_if<Diag>(&pr)) {
    std::cerr << d->str() << "\n";
    return 2;
  }
  Program src = std::get<Program>(std::move(pr));
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
  if (!read_inputs(src, o.inputs, in)) return 2;
  std::string inputs_text = o.inputs.empty() ? "" : "given";
  // Inputs not given are drawn: with --random-inputs SEED, or seed 1 when
  // no input was given at all.
  bool draw = o.random_seed.has_value() || o.inputs.empty();
  if (draw) {
    uint64_t seed = o.random_seed.value_or(1);
    Inputs drawn = oracle::generate_inputs(src, *kind, seed);
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

}  // namespace stax::cli
