// Index obligation speed (docs/design.md §5, `stax prove`): the median time
// per index obligation over the examples and 1,000 generated programs (the
// target is under 20 ms), with the spread per kind and the verdict counts.
// A refuted in-bounds obligation in a generated program is expected: the
// generator writes out-of-range and negative gathers on purpose.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench/percentile.h"
#include "oracle/gen/program_gen.h"
#include "proofs/obligation.h"
#include "semantics/program_obligations.h"
#include "semantics/parser.h"
#include "semantics/program_obligations.h"

using namespace stax;
namespace fs = std::filesystem;
using stax::bench::pct;

namespace {

struct Stats {
  std::vector<double> ms;
  int proved = 0, refuted = 0, unknown = 0;
  void add(const sem::ProofVerdict& v) {
    ms.push_back(v.ms);
    proved += v.kind == sem::ProofVerdict::Proved;
    refuted += v.kind == sem::ProofVerdict::Refuted;
    unknown += v.kind == sem::ProofVerdict::Unknown;
  }
};

}  // namespace

int main(int argc, char** argv) {
  stax::proofs::install_default_discharger();  // the transforms' and the lowering's side conditions
  int programs = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::map<std::string, Stats> by_kind;
  Stats all;
  auto run = [&](const sem::Program& p) {
    for (const sem::Obligation& ob : sem::program_obligations(p)) {
      sem::ProofVerdict v = proofs::discharge(ob);
      by_kind[std::string(sem::kind_name(ob.kind))].add(v);
      all.add(v);
    }
  };
  auto t0 = std::chrono::steady_clock::now();
  int examples = 0;
  for (const auto& f : fs::directory_iterator(fs::path(STAX_SOURCE_DIR) / "examples")) {
    if (f.path().extension() != ".stx") continue;
    auto r = sem::parse_file(f.path().string());
    if (auto* d = std::get_if<sem::Diag>(&r)) {
      std::fprintf(stderr, "%s\n", d->str().c_str());
      return 2;
    }
    run(std::get<sem::Program>(r));
    ++examples;
  }
  for (int s = 0; s < programs; ++s) run(oracle::generate_program(uint64_t(s) * 7919 + 13));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-12s %7s %8s %8s %8s %8s   %s\n", "kind", "count", "median", "p90", "p99", "max", "proved/refuted/unknown");
  for (const auto& [k, st] : by_kind)
    std::printf("%-12s %7zu %6.2f ms %5.2f ms %5.2f ms %5.1f ms   %d/%d/%d\n", k.c_str(), st.ms.size(), pct(st.ms, 0.5),
                pct(st.ms, 0.9), pct(st.ms, 0.99), pct(st.ms, 1.0), st.proved, st.refuted, st.unknown);
  std::printf("median %.2f ms per index obligation (p90 %.2f ms, max %.1f ms) over %zu obligations of %d examples "
              "and %d generated programs; %.1f s wall\n",
              pct(all.ms, 0.5), pct(all.ms, 0.9), pct(all.ms, 1.0), all.ms.size(), examples, programs, wall);
  return 0;
}
