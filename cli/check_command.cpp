// `stax transform`, `stax check`, `stax tv` (DESIGN §8).
#include <iostream>

#include "cli/commands.h"
#include "oracle/checker.h"
#include "semantics/parser.h"
#include "semantics/printer.h"

namespace stax::cli {

using namespace stax::sem;

namespace {

std::optional<Program> load(const std::string& file) {
  ParseResult r = parse_file(file);
  if (auto* d = std::get_if<Diag>(&r)) {
    std::cerr << d->str() << "\n";
    return std::nullopt;
  }
  return std::get<Program>(std::move(r));
}

std::optional<std::vector<xform::Step>> pipeline(const std::string& spec) {
  auto r = xform::parse_pipeline(spec);
  if (auto* e = std::get_if<std::string>(&r)) {
    std::cerr << "error: --transform: " << *e << "\n";
    return std::nullopt;
  }
  return std::get<std::vector<xform::Step>>(std::move(r));
}

int emit(const oracle::Verdict& v, const Program& src, const Program& tgt, const std::string& what, bool json) {
  if (json) std::cout << oracle::verdict_json(v, src, tgt, what).dump(2) << "\n";
  else std::cout << oracle::format_verdict(v, src, tgt, what);
  switch (v.status) {
    case oracle::Status::Verified: return 0;
    case oracle::Status::Counterexample: return 1;
    case oracle::Status::NotCheckable: return 3;
  }
  return 2;
}

}  // namespace

int transform_command(const TransformOptions& o) {
  auto prog = load(o.file);
  if (!prog) return 2;
  auto steps = pipeline(o.transform);
  if (!steps) return 2;
  xform::Context ctx;
  ctx.max_rewrites = o.max_rewrites;
  try {
    xform::Result r = xform::run_pipeline(*prog, *steps, ctx);
    std::cout << "# class: " << xform::class_name(r.cls) << "\n" << print_program(r.program);
    if (o.log)
      for (const std::string& l : ctx.log) std::cerr << l << "\n";
  } catch (const xform::TransformError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
  return 0;
}

int check_command(const CheckOptions& o) {
  if (o.backend != "interp" && o.backend != "cpu") {
    std::cerr << "error: --backend expects interp or cpu, got '" << o.backend << "'\n";
    return 2;
  }
  auto prog = load(o.file);
  if (!prog) return 2;
  auto steps = pipeline(o.transform);
  if (!steps) return 2;
  try {
    oracle::CheckOptions co{o.trials, o.seed};
    oracle::Verdict v = oracle::check_transform(*prog, *steps, co, o.max_rewrites);
    xform::Context ctx;
    ctx.max_rewrites = o.max_rewrites;
    xform::Result r = xform::run_pipeline(*prog, *steps, ctx);
    int code = emit(v, *prog, r.program, o.file + " --transform " + o.transform, o.json);
    if (o.backend == "interp") return code;
    int bcode = backend_check(o.backend, r.program, o.trials, o.seed, o.threads, o.json);
    // The worse of the two: error (2), then mismatch (1), then not checkable (3).
    auto rank = [](int c) { return c == 2 ? 3 : c == 1 ? 2 : c == 3 ? 1 : 0; };
    return rank(bcode) > rank(code) ? bcode : code;
  } catch (const xform::TransformError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
}

int tv_command(const TvOptions& o) {
  auto src = load(o.src);
  if (!src) return 2;
  auto tgt = load(o.tgt);
  if (!tgt) return 2;
  auto cls = xform::class_from_name(o.cls);
  if (!cls) {
    std::cerr << "error: --class expects exact, refines or real, got '" << o.cls << "'\n";
    return 2;
  }
  try {
    oracle::Verdict v = oracle::check_programs(*src, *tgt, *cls, oracle::CheckOptions{o.trials, o.seed});
    return emit(v, *src, *tgt, o.src + " -> " + o.tgt, o.json);
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
}

}  // namespace stax::cli
