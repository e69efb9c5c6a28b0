// Error bounds of reductions (§6.5, docs/design.md §4; the model is stated in
// oracle/error_bound/error_bound.h): the entry point. Finds the reduction
// roots, builds their summand graphs, evaluates the program once with every
// tensor the analysis reads as an extra output, and measures each root's
// elements against the bound. The concepts live in the other files of
// oracle/error_bound/ (see oracle/error_bound/analyzer.h).
#include "oracle/error_bound/error_bound.h"

#include <gmp.h>

#include <algorithm>
#include <chrono>

#include "oracle/error_bound/analyzer.h"

namespace stax::oracle {

static_assert(GMP_NUMB_BITS == 64, "ExactSum packs a double into one 64-bit limb");

double gamma_n(int64_t n, double u) {
  if (n <= 0) return 0.0;
  double nu = double(n) * u;
  if (nu >= 1.0) return std::numeric_limits<double>::infinity();
  return nu / (1.0 - nu);
}

const BoundRow* BoundReport::row(const std::string& name) const {
  for (const BoundRow& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

namespace bound_analysis {

bool Analyzer::evaluate_slots(BoundReport& rep) {
  Program aug = p_;
  std::set<std::string> outs(p_.outputs.begin(), p_.outputs.end());
  for (const Slot& s : slots_) {
    if (s.input) continue;
    if (s.hoist) {
      Expr w = s.hoist;
      for (const Frame* f = s.scope.get(); f; f = f->parent.get())
        w = make_expr(w->type, LetE{f->let->name, f->let->value, w});
      aug.bindings.push_back({s.name, w, {}});
    }
    if (outs.insert(s.name).second) aug.outputs.push_back(s.name);
  }
  values_ = eval_ieee(aug, in_);
  const IeeeOutcome& ev = values_;
  if (ev.failure) {
    // A hoisted subexpression failing first: report the program's own failure.
    if (ev.failure->binding.rfind("%bound.", 0) == 0) {
      IeeeOutcome ev0 = eval_ieee(p_, in_);
      rep.failure = ev0.failure ? ev0.failure : ev.failure;
    } else {
      rep.failure = ev.failure;
    }
    return false;
  }
  for (Slot& s : slots_) s.t = s.input ? &in_.at(s.name) : ev.outputs.at(s.name).get();
  return true;
}

BoundReport Analyzer::run() {
  auto t0 = std::chrono::steady_clock::now();
  BoundReport rep;
  std::vector<RootSpec> roots = this->roots();
  // Build the graphs.
  std::vector<int> ids;
  for (const RootSpec& r : roots) {
    // A root is a binding's value when it is the binding's expression (lets aside).
    std::string name;
    if (r.top) name = r.owner;
    int id = node_for(r.e, r.sc, r.fam, name);
    Node& nd = nodes_[size_t(id)];
    if (nd.value_slot < 0) nd.value_slot = name.empty() ? slot_hoist(r.e, r.sc) : slot_by_name(name);
    ids.push_back(id);
  }
  // Evaluate the program with every tensor the analysis reads as an output.
  if (!evaluate_slots(rep)) return rep;
  for (size_t i = 0; i < roots.size(); ++i) {
    BoundRow row = run_root(roots[i], ids[i]);
    rep.max_ratio = std::max(rep.max_ratio, row.ratio);
    rep.rows.push_back(std::move(row));
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace bound_analysis

BoundReport analyze_bounds(const sem::Program& p, const sem::Inputs& in, const BoundOptions& opt) {
  bound_analysis::Analyzer a(p, in, opt);
  try {
    return a.run();
  } catch (const bound_analysis::AnalysisError& e) {
    BoundReport r;
    r.error = "error-bound analysis: " + e.message;
    return r;
  }
}

}  // namespace stax::oracle
