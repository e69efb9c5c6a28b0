// Fuzzing figures (docs/design.md §8, `stax fuzz`) with the CPU backend in the loop: kill rate (median
// time-to-find) of the codegen mutants and campaign throughput with T(P)
// JIT-compiled and compared bit for bit with the interpreter. Not a test: a
// long command whose output goes into README.md.
//   stax_bench_fuzz_backend [--starts K] [--budget SEC] [--count N] [--only MUTANT|none]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "experiments/median.h"
#include "oracle/campaign.h"
#include "proofs/obligation.h"
#include "semantics/mutants.h"

using namespace stax;

using experiments::median;

int main(int argc, char** argv) {
  stax::proofs::install_default_discharger();  // the transforms' and the lowering's side conditions
  int starts = 5;
  double budget = 60;
  uint64_t count = 300;
  std::string only;  // one mutant ("none": throughput only)
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--starts")) starts = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--budget")) budget = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--count")) count = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
  }
  std::vector<oracle::BackendRunner> runners{
      {"cpu", [](const sem::Program& p, const sem::Inputs& in) { return backends::cpu::run(p, in); }}};

  std::printf("| mutant | where | found | median time-to-find (s) | median programs |\n|---|---|---|---|---|\n");
  for (const sem::MutantInfo& m : sem::mutant_catalog()) {
    if (std::string_view(m.where).find("codegen") == std::string_view::npos) continue;
    if (!only.empty() && m.name != only) continue;
    sem::set_active_mutant(m.name);
    std::vector<double> times, programs;
    for (int k = 0; k < starts; ++k) {
      oracle::CampaignOptions c;
      c.seed = 1 + uint64_t(k) * 1000003ull;
      c.time_limit = budget;
      c.stop_after_findings = 1;
      c.mutant = std::string(m.name);
      c.fuzz.shrink = false;
      oracle::CampaignSummary s;
      auto t0 = std::chrono::steady_clock::now();
      if (auto e = oracle::run_campaign(c, runners, s)) {
        std::fprintf(stderr, "error: %s\n", e->c_str());
        return 2;
      }
      if (s.findings) {
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        programs.push_back(double(s.ran));
      }
    }
    sem::set_active_mutant("");
    std::printf("| %s | %s | %zu/%d | %.2f | %.0f |\n", std::string(m.name).c_str(), std::string(m.where).c_str(),
                times.size(), starts, median(times), median(programs));
    std::fflush(stdout);
  }

  if (count == 0) return 0;
  oracle::CampaignOptions c;
  c.seed = 1;
  c.count = count;
  oracle::CampaignSummary s;
  std::string db = "/tmp/stax-fuzz-backend-bench.db";
  for (const char* x : {"", "-wal", "-shm"}) std::remove((db + x).c_str());
  c.db = db;
  if (auto e = oracle::run_campaign(c, runners, s)) {
    std::fprintf(stderr, "error: %s\n", e->c_str());
    return 2;
  }
  auto r = std::get<nlohmann::json>(oracle::campaign_report(db));
  const auto& t = r["time_s"];
  std::printf("throughput with the CPU backend: %llu programs in %.2f s = %.1f programs/s on one core, %llu findings\n",
              (unsigned long long)s.ran, s.elapsed, double(s.ran) / s.elapsed, (unsigned long long)s.findings);
  for (const char* k : {"generate", "transform", "check", "backends"})
    std::printf("  %-10s %7.2f s  %5.1f %%\n", k, t[k].get<double>(), 100.0 * t[k].get<double>() / s.elapsed);
  for (const char* x : {"", "-wal", "-shm"}) std::remove((db + x).c_str());
  return 0;
}
