// `stax prove` and `stax rewrite` (DESIGN §5, §8): every index obligation of
// a program (and of its transform) with its verdict and time; Alive-style
// scalar rewrites in Z3's FPA theory.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "proofs/program_obligations.h"
#include "proofs/rewrite.h"
#include "semantics/parser.h"
#include "transforms/transform.h"

namespace stax::cli {

using namespace stax::sem;
using proofs::Consequence;
using proofs::Obligation;
using proofs::ProofVerdict;

namespace {

struct Listed {
  std::string group;  ///< "program", "transform" or "transformed"
  Obligation ob;
  ProofVerdict v;
};

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

std::string disposition(const Listed& l) {
  if (l.v.kind == ProofVerdict::Proved) return "proved";
  return std::string(proofs::consequence_text(l.ob.if_not_proved));
}

/// A verdict that is a bug in the program or in the Interval analysis (as
/// opposed to a kept runtime check, wide index, floor/mod index or refusal).
bool is_error(const Listed& l) {
  return l.v.kind == ProofVerdict::Refuted &&
         (l.ob.if_not_proved == Consequence::Fails || l.ob.if_not_proved == Consequence::AnalysisBug);
}

nlohmann::json to_json(const Listed& l) {
  nlohmann::json j;
  j["group"] = l.group;
  j["kind"] = std::string(proofs::kind_name(l.ob.kind));
  j["binding"] = l.ob.binding;
  j["site"] = l.ob.site;
  j["formula"] = l.ob.formula;
  j["facts"] = l.ob.facts;
  j["verdict"] = std::string(proofs::verdict_name(l.v.kind));
  j["ms"] = l.v.ms;
  if (!l.v.counterexample.empty()) j["counterexample"] = l.v.counterexample;
  if (!l.v.reason.empty()) j["reason"] = l.v.reason;
  j["disposition"] = disposition(l);
  return j;
}

void print_listed(const Listed& l) {
  std::string verdict(proofs::verdict_name(l.v.kind));
  std::printf("  %-8s %-11s %-10s %-34s %9s\n", verdict.c_str(), std::string(proofs::kind_name(l.ob.kind)).c_str(),
              l.ob.binding.c_str(), l.ob.site.c_str(), ms_text(l.v.ms).c_str());
  std::printf("           %s\n", l.ob.formula.c_str());
  for (const std::string& f : l.ob.facts) std::printf("           assuming %s\n", f.c_str());
  if (!l.v.counterexample.empty()) std::printf("           counterexample: %s\n", l.v.counterexample.c_str());
  if (!l.v.reason.empty()) std::printf("           %s\n", l.v.reason.c_str());
  if (l.v.kind != ProofVerdict::Proved) std::printf("           => %s\n", disposition(l).c_str());
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

}  // namespace

int prove_command(const ProveOptions& o) {
  ParseResult pr = parse_file(o.file);
  if (auto* d = std::get_if<Diag>(&pr)) {
    std::cerr << d->str() << "\n";
    return 2;
  }
  const Program& prog = std::get<Program>(pr);
  proofs::ProofOptions po;
  po.timeout_ms = o.timeout_ms;
  std::vector<Listed> all;
  for (Obligation& ob : proofs::program_obligations(prog)) {
    ProofVerdict v = proofs::discharge(ob, po);
    all.push_back({"program", std::move(ob), std::move(v)});
  }
  if (!o.transform.empty()) {
    auto steps = xform::parse_pipeline(o.transform);
    if (auto* e = std::get_if<std::string>(&steps)) {
      std::cerr << "error: --transform: " << *e << "\n";
      return 2;
    }
    xform::Context ctx;
    proofs::ProofLog log;  // the side conditions the transforms discharge
    xform::Result r;
    try {
      r = xform::run_pipeline(prog, std::get<std::vector<xform::Step>>(steps), ctx);
    } catch (const xform::TransformError& e) {
      std::cerr << "error: " << e.message << "\n";
      return 2;
    }
    for (proofs::ProofRecord& rec : log.records) all.push_back({"transform", std::move(rec.obligation), rec.verdict});
    for (Obligation& ob : proofs::program_obligations(r.program)) {
      ProofVerdict v = proofs::discharge(ob, po);
      all.push_back({"transformed", std::move(ob), std::move(v)});
    }
  }
  int proved = 0, refuted = 0, unknown = 0, errors = 0;
  std::vector<double> times;
  for (const Listed& l : all) {
    proved += l.v.kind == ProofVerdict::Proved;
    refuted += l.v.kind == ProofVerdict::Refuted;
    unknown += l.v.kind == ProofVerdict::Unknown;
    errors += is_error(l);
    times.push_back(l.v.ms);
  }
  int rc = errors ? 1 : (proved == int(all.size()) ? 0 : 3);
  if (o.json) {
    nlohmann::json j;
    j["file"] = o.file;
    if (!o.transform.empty()) j["transform"] = o.transform;
    j["obligations"] = nlohmann::json::array();
    for (const Listed& l : all) j["obligations"].push_back(to_json(l));
    j["summary"] = {{"total", all.size()}, {"proved", proved},       {"refuted", refuted},
                    {"unknown", unknown},  {"errors", errors},       {"median_ms", median(times)},
                    {"exit", rc}};
    std::cout << j.dump(2) << "\n";
    return rc;
  }
  std::string group;
  for (const Listed& l : all) {
    if (l.group != group) {
      group = l.group;
      if (group == "program") std::printf("%s: obligations of the program\n", o.file.c_str());
      else if (group == "transform") std::printf("side conditions checked by %s\n", o.transform.c_str());
      else std::printf("obligations of the transformed program\n");
    }
    print_listed(l);
  }
  std::printf("%zu obligations: %d proved, %d refuted, %d unknown (%d of them bugs); median %s per obligation\n",
              all.size(), proved, refuted, unknown, errors, ms_text(median(times)).c_str());
  return rc;
}

int rewrite_command(const RewriteOptions& o) {
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
    j["verdict"] = std::string(proofs::verdict_name(v.kind));
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
  std::printf("%s in %s\n", std::string(proofs::verdict_name(v.kind)).c_str(), ms_text(v.ms).c_str());
  if (v.kind == ProofVerdict::Refuted) {
    for (const auto& x : res.inputs) std::printf("  %s = %s (%s)\n", x.name.c_str(), x.decimal.c_str(), x.hex.c_str());
    std::printf("  lhs = %s\n  rhs = %s\n", res.lhs_value.c_str(), res.rhs_value.c_str());
  }
  if (!v.reason.empty()) std::printf("  %s\n", v.reason.c_str());
  return rc;
}

}  // namespace stax::cli
