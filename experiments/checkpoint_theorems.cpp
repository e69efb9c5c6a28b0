// §5.8: Theorem 5.3 (uniform segments) and Theorem 5.4 (binomial
// checkpointing) measured by the schedule checker and the exhaustive search.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "checkpoint/generators.h"
#include "checkpoint/schedule.h"
#include "checkpoint/search.h"
#include "experiments/experiments.h"

namespace stax::experiments {

namespace {

namespace ck = stax::checkpoint;

std::optional<std::string> make_dir(const Options& o, const std::string& name, std::string& dir) {
  dir = (std::filesystem::path(o.out_dir) / name).string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  return std::nullopt;
}

}  // namespace

int theorem_5_3(const Options& o, std::ostream& log) {
  std::string dir;
  if (auto e = make_dir(o, "theorem-5-3", dir)) {
    o.error_stream(log) << "error: " << *e << "\n";
    return 2;
  }
  // Every l in 1..1000 is checked; the table shows a selection.
  std::vector<int64_t> shown = {1, 2, 3, 4, 5, 8, 10, 16, 25, 50, 99, 100, 200, 500, 999, 1000, 2000, 5000, 10000};
  std::ostringstream csv, md;
  csv << "l,c,peak_states,c_plus_l_over_c,two_sqrt_l,forward_steps,two_l,max_reps\n";
  md << "# Theorem 5.3: uniform segments, c = ceil(sqrt(l))\n\n"
     << "| l | c | peak states | c + l/c | 2 sqrt(l) | forward steps | 2l | max evaluations of a step |\n"
     << "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  int failures = 0;
  auto row = [&](int64_t l, bool show) {
    ck::Schedule s = ck::uniform_schedule(l);
    ck::CheckResult r = ck::check_schedule(s);
    if (!r.ok()) {
      log << "l = " << l << ": the uniform schedule is illegal: " << r.error << "\n";
      ++failures;
      return;
    }
    const ck::Counts& c = *r.counts;
    int64_t k = ck::ceil_sqrt(l);
    double bound = static_cast<double>(k) + static_cast<double>(l) / static_cast<double>(k);
    bool ok = static_cast<int64_t>(c.peak_states) * c.peak_states <= 4 * l && c.peak_states <= bound &&
              c.forward_steps <= 2 * l && c.max_reps <= 2;
    if (!ok) {
      log << "l = " << l << ": Theorem 5.3's bounds fail (peak " << c.peak_states << ", forward " << c.forward_steps
          << ")\n";
      ++failures;
    }
    if (!show) return;
    csv << l << "," << k << "," << c.peak_states << "," << bound << "," << 2 * std::sqrt(double(l)) << ","
        << c.forward_steps << "," << 2 * l << "," << c.max_reps << "\n";
    md << "| " << l << " | " << k << " | " << c.peak_states << " | " << std::fixed << std::setprecision(2) << bound
       << " | " << 2 * std::sqrt(double(l)) << " | " << c.forward_steps << " | " << 2 * l << " | " << c.max_reps
       << " |\n";
    md.unsetf(std::ios::fixed);
  };
  for (int64_t l = 1; l <= 1000; ++l)
    row(l, std::find(shown.begin(), shown.end(), l) != shown.end());
  for (int64_t l : shown)
    if (l > 1000) row(l, true);
  md << "\nEvery l in 1..1000 checked: " << (failures ? "FAILURES" : "peak <= 2 sqrt(l), <= c + l/c, forward steps "
                                                                     "<= 2l, each step at most twice")
     << "\n";
  std::ofstream(std::filesystem::path(dir) / "theorem_5_3.csv") << csv.str();
  std::ofstream(std::filesystem::path(dir) / "theorem_5_3.md") << md.str();
  log << md.str() << "\nwrote " << dir << "/theorem_5_3.csv, theorem_5_3.md\n";
  return failures ? 1 : 0;
}

int theorem_5_4(const Options& o, std::ostream& log) {
  std::string dir;
  if (auto e = make_dir(o, "theorem-5-4", dir)) {
    o.error_stream(log) << "error: " << *e << "\n";
    return 2;
  }
  std::ostringstream csv, md;
  csv << "s,t,binomial,searched_beta,states,lemma_cuts,certified,seconds,match\n";
  md << "# Theorem 5.4: beta(s, t) by exhaustive search beside C(s+t, s)\n\n"
     << "Every schedule (not only nested ones) within the rules of checkpoint/search.cpp, each argued to keep a "
        "schedule whenever one exists; by induction on s + t, the values of smaller sums serve as lemmas. "
        "beta = b is settled by two verdicts (reversibility is monotone in l): b + 1 steps not reversible (the "
        "whole space of a sound relaxation searched) and b steps reversible (a schedule the search found and "
        "the checker accepted, or, where the 'certified' column says so, Theorem 5.4's construction accepted "
        "by the checker). C(s+t, s) is only the first pair probed.\n\n"
     << "| s | t | C(s+t, s) | searched beta(s, t) | search states | lemma cuts | certified | seconds | |\n"
     << "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  int failures = 0;
  const int max_sum = o.quick ? 6 : 9;  // --quick: the table to s + t <= 6, in well under a second
  const double budget_s = 60;  // no new sum starts after this
  ck::SearchOptions so;
  so.max_states = 8000000;  // per search (memory); an aborted row has no verdict and ends the table
  so.relax_counts = true;
  so.certificates = true;
  auto t0 = std::chrono::steady_clock::now();
  int reached = 0, last_sum = 0;
  bool all = true;
  auto rows = ck::search_beta_table(max_sum, so, budget_s, [&](const ck::BetaRow& r) {
    int64_t want = ck::beta(r.s, r.t);
    std::string verdict = !r.beta ? "state limit" : (*r.beta == want ? "match" : "MISMATCH");
    if (r.beta && *r.beta != want) ++failures;
    if (r.s + r.t != last_sum) {
      if (all && last_sum) reached = last_sum;
      last_sum = r.s + r.t;
      all = true;
    }
    all = all && r.beta.has_value();
    csv << r.s << "," << r.t << "," << want << "," << (r.beta ? std::to_string(*r.beta) : "") << "," << r.stats.states
        << "," << r.stats.lemma_pruned << "," << r.stats.certified << "," << r.seconds << "," << verdict << "\n";
    md << "| " << r.s << " | " << r.t << " | " << want << " | " << (r.beta ? std::to_string(*r.beta) : "-") << " | "
       << r.stats.states << " | " << r.stats.lemma_pruned << " | " << (r.stats.certified ? "yes" : "") << " | "
       << std::fixed << std::setprecision(3) << r.seconds
       << " | " << verdict << " |\n";
    md.unsetf(std::ios::fixed);
    log << "s = " << r.s << ", t = " << r.t << ": " << verdict << " (" << r.stats.states << " states, " << r.seconds
        << " s)\n";
  });
  if (all && last_sum) reached = last_sum;
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  md << "\nSearched completely for s + t <= " << reached << " (" << rows.size() << " rows, " << std::fixed
     << std::setprecision(1) << total << " s; at most " << so.max_states
     << " states a search, no new s + t after " << budget_s << " s; 'state limit' rows have no verdict).\n\n";
  md.unsetf(std::ios::fixed);
  // Revolve's count against the checker for every l <= 200, s <= 8.
  int64_t checked = 0, wrong = 0;
  for (int64_t s = 1; s <= 8; ++s)
    for (int64_t l = 1; l <= 200; ++l) {
      auto r = ck::binomial_schedule(l, s);
      ck::CheckResult c = std::holds_alternative<ck::Schedule>(r) ? ck::check_schedule(std::get<ck::Schedule>(r))
                                                                  : ck::CheckResult{};
      ++checked;
      if (!c.ok() || c.counts->forward_steps != ck::revolve_forward_steps(l, s) ||
          c.counts->max_reps != ck::least_reps(l, s))
        ++wrong;
    }
  md << "Binomial schedules for l <= 200, s <= 8 (" << checked << " pairs): forward steps = t l - beta(s+1, t-1) "
     << "with the least t, and at most t evaluations a step: " << (wrong ? std::to_string(wrong) + " FAIL" : "all hold")
     << ".\n";
  failures += wrong ? 1 : 0;
  std::ofstream(std::filesystem::path(dir) / "theorem_5_4.csv") << csv.str();
  std::ofstream(std::filesystem::path(dir) / "theorem_5_4.md") << md.str();
  log << md.str() << "\nwrote " << dir << "/theorem_5_4.csv, theorem_5_4.md\n";
  return failures ? 1 : 0;
}

}  // namespace stax::experiments
