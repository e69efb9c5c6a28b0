// `stax prove` (docs/design.md §5, §8): every index obligation of a program (and of
// its transform) with its verdict and time.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "experiments/median.h"
#include "proofs/obligation.h"
#include "semantics/program_obligations.h"
#include "transforms/transform.h"

namespace stax::cli {

using namespace stax::sem;
using sem::Consequence;
using sem::Obligation;
using sem::ProofVerdict;
using experiments::median;

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
  return std::string(sem::consequence_text(l.ob.if_not_proved));
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
  j["kind"] = std::string(sem::kind_name(l.ob.kind));
  j["binding"] = l.ob.binding;
  j["site"] = l.ob.site;
  j["formula"] = l.ob.formula;
  j["facts"] = l.ob.facts;
  j["verdict"] = std::string(sem::verdict_name(l.v.kind));
  j["ms"] = l.v.ms;
  if (!l.v.counterexample.empty()) j["counterexample"] = l.v.counterexample;
  if (!l.v.reason.empty()) j["reason"] = l.v.reason;
  j["disposition"] = disposition(l);
  return j;
}

void print_listed(const Listed& l) {
  std::string verdict(sem::verdict_name(l.v.kind));
  std::printf("  %-8s %-11s %-10s %-34s %9s\n", verdict.c_str(), std::string(sem::kind_name(l.ob.kind)).c_str(),
              l.ob.binding.c_str(), l.ob.site.c_str(), ms_text(l.v.ms).c_str());
  std::printf("           %s\n", l.ob.formula.c_str());
  for (const std::string& f : l.ob.facts) std::printf("           assuming %s\n", f.c_str());
  if (!l.v.counterexample.empty()) std::printf("           counterexample: %s\n", l.v.counterexample.c_str());
  if (!l.v.reason.empty()) std::printf("           %s\n", l.v.reason.c_str());
  if (l.v.kind != ProofVerdict::Proved) std::printf("           => %s\n", disposition(l).c_str());
}

}  // namespace

int prove_command(const ProveOptions& o) {
  auto loaded = load_program(o.file);
  if (!loaded) return 2;
  const Program& prog = *loaded;
  proofs::ProofOptions po;
  po.timeout_ms = o.timeout_ms;
  std::vector<Listed> all;
  for (Obligation& ob : sem::program_obligations(prog)) {
    ProofVerdict v = proofs::discharge(ob, po);
    all.push_back({"program", std::move(ob), std::move(v)});
  }
  if (!o.transform.empty()) {
    auto steps = pipeline_steps(o.transform);
    if (!steps) return 2;
    xform::Context ctx;
    proofs::ProofLog log;  // the side conditions the transforms discharge
    xform::Result r;
    try {
      r = xform::run_pipeline(prog, *steps, ctx);
    } catch (const xform::TransformError& e) {
      std::cerr << "error: " << e.message << "\n";
      return 2;
    }
    for (proofs::ProofRecord& rec : log.records) all.push_back({"transform", std::move(rec.obligation), rec.verdict});
    for (Obligation& ob : sem::program_obligations(r.program)) {
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

Subcommand register_prove(CLI::App& app) {
  auto o = std::make_shared<ProveOptions>();
  auto* pr = app.add_subcommand("prove", "Discharge every index obligation of a program with Z3 (docs/design.md §5)");
  pr->add_option("file", o->file, "program (.stx)")->required();
  pr->add_option("--transform", o->transform, "also T(P) and the side conditions the transforms check");
  pr->add_option("--timeout-ms", o->timeout_ms, "per obligation");
  pr->add_flag("--json", o->json, "one JSON document");
  return {pr, [o] { return prove_command(*o); }};
}

}  // namespace stax::cli
