// `stax rewrite` (docs/design.md §8): Alive-style scalar rewrites 'LHS => RHS' in
// Z3's FPA theory; a refutation prints the counterexample.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/subcommands.h"
#include "proofs/rewrite.h"

namespace stax::cli {

using namespace stax::sem;
using sem::ProofVerdict;

namespace {

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

}  // namespace

int rewrite_command(const RewriteCommandOptions& o) {
  auto dt = dtype_from_name(o.dtype);
  if (!dt || !is_float(*dt)) {
    std::cerr << "error: --dtype expects f16, bf16, f32 or f64, got '" << o.dtype << "'\n";
    return 2;
  }
  proofs::RewriteOptions ro;
  ro.dtype = *dt;
  ro.timeout_ms = o.timeout_ms;
  ro.half_in_f32 = o.half_in_f32;
  auto r = proofs::check_rewrite(o.rule, ro);
  if (auto* e = std::get_if<std::string>(&r)) {
    std::cerr << *e << "\n";
    return 2;
  }
  const proofs::RewriteResult& res = std::get<proofs::RewriteResult>(r);
  const ProofVerdict& v = res.verdict;
  int rc = v.kind == ProofVerdict::Proved ? 0 : v.kind == ProofVerdict::Refuted ? 1 : 3;
  std::string arith = is_half(*dt) && o.half_in_f32 ? "computed in f32, rounded to " + o.dtype + " once"
                                                    : "every op rounded to " + o.dtype + ", nearest even";
  if (o.json) {
    nlohmann::json j;
    j["rule"] = o.rule;
    j["lhs"] = res.lhs;
    j["rhs"] = res.rhs;
    j["dtype"] = o.dtype;
    j["arithmetic"] = arith;
    j["vars"] = res.vars;
    j["uninterpreted"] = res.uninterpreted;
    j["verdict"] = std::string(sem::verdict_name(v.kind));
    j["ms"] = v.ms;
    if (!v.reason.empty()) j["reason"] = v.reason;
    if (v.kind == ProofVerdict::Refuted) {
      nlohmann::json in = nlohmann::json::object();
      for (const auto& x : res.inputs) in[x.name] = {{"decimal", x.decimal}, {"hex", x.hex}};
      j["counterexample"] = {{"inputs", in}, {"lhs", res.lhs_value}, {"rhs", res.rhs_value},
                             {"confirmed_by_interpreter", res.confirmed}};
    }
    j["exit"] = rc;
    std::cout << j.dump(2) << "\n";
    return rc;
  }
  std::printf("%s => %s   [%s: %s]\n", res.lhs.c_str(), res.rhs.c_str(), o.dtype.c_str(), arith.c_str());
  if (!res.uninterpreted.empty()) {
    std::string u;
    for (const std::string& s : res.uninterpreted) u += (u.empty() ? "" : ", ") + s;
    std::printf("uninterpreted: %s (no FPA counterpart)\n", u.c_str());
  }
  std::printf("%s in %s\n", std::string(sem::verdict_name(v.kind)).c_str(), ms_text(v.ms).c_str());
  if (v.kind == ProofVerdict::Refuted) {
    for (const auto& x : res.inputs) std::printf("  %s = %s (%s)\n", x.name.c_str(), x.decimal.c_str(), x.hex.c_str());
    std::printf("  lhs = %s\n  rhs = %s\n", res.lhs_value.c_str(), res.rhs_value.c_str());
  }
  if (!v.reason.empty()) std::printf("  %s\n", v.reason.c_str());
  return rc;
}

Subcommand register_rewrite(CLI::App& app) {
  auto o = std::make_shared<RewriteCommandOptions>();
  auto* rr = app.add_subcommand("rewrite", "Prove or refute a scalar rewrite 'LHS => RHS' in Z3's FPA theory");
  rr->add_option("rule", o->rule, "'LHS => RHS', e.g. 'mul(x, 2.0) => add(x, x)'")->required();
  rr->add_option("--dtype", o->dtype, "f16, bf16, f32 or f64");
  rr->add_option("--timeout-ms", o->timeout_ms, "solver timeout");
  rr->add_flag("--half-in-f32", o->half_in_f32, "f16/bf16 as .stx lambdas compute them: in f32, rounded once");
  rr->add_flag("--json", o->json, "one JSON document");
  return {rr, [o] { return rewrite_command(*o); }};
}

}  // namespace stax::cli
