// `stax fuzz` (docs/design.md §8): differential fuzzing campaigns, their
// reports and merges, replay of a reproducer, and the figures of the README
// (kill rate of the seeded mutants, throughput).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/gpu/emulator.h"
#include "backends/gpu/gpu_backend.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "experiments/median.h"
#include "oracle/campaign.h"
#include "oracle/fuzz.h"
#include "semantics/mutants.h"
#include "semantics/printer.h"

namespace stax::cli {

using namespace stax::sem;
using json = nlohmann::json;
using experiments::median;

namespace {

/// The compiled form of the last program a backend runner was given, kept
/// by the program's text: a campaign runs each program's input sets in
/// turn, so a program is normalised and compiled once for all of them.
template <class Compiled>
class LastCompiled {
 public:
  using Make = std::function<std::unique_ptr<Compiled>(const Program&)>;
  explicit LastCompiled(Make make) : make_(std::move(make)) {}

  Compiled& get(const Program& p) {
    std::string text = print_program(p);
    if (!compiled_ || text_ != text) {
      compiled_.reset();
      compiled_ = make_(p);
      text_ = std::move(text);
    }
    return *compiled_;
  }

 private:
  Make make_;
  std::string text_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace

std::vector<oracle::BackendRunner> fuzz_backends(const std::string& spec) {
  std::vector<oracle::BackendRunner> r;
  size_t i = 0;
  while (i <= spec.size() && !spec.empty()) {
    size_t j = spec.find(',', i);
    if (j == std::string::npos) j = spec.size();
    std::string name = spec.substr(i, j - i);
    // The interpreter is the reference every backend is compared with; it
    // always runs and needs no runner of its own.
    if (name == "interp") {
    } else if (name == "cpu" || name == "cpu-o0") {
      // cpu: LLVM O3, as users run it; cpu-o0: quick to compile, for
      // throughput (the bits never depend on the level).
      int level = name == "cpu" ? 3 : 0;
      auto last = std::make_shared<LastCompiled<backends::cpu::CompiledProgram>>([level](const Program& p) {
        return std::make_unique<backends::cpu::CompiledProgram>(p, backends::cpu::CpuOptions{1, false, level, true});
      });
      r.push_back({name, [last](const Program& p, const Inputs& in) { return last->get(p).run(in); }});
    } else if (name == "gpu-emu" || name == "gpu") {
      // gpu-emu: the CUDA C kernels on the host emulator; gpu: on the device
      // (NVRTC and the driver API; without them every program is counted as
      // unsupported by this backend, never as a finding).
      backends::gpu::GpuOptions g;
      g.target = name == "gpu" ? backends::gpu::Target::Device : backends::gpu::Target::Emu;
      auto last = std::make_shared<LastCompiled<backends::gpu::GpuProgram>>(
          [g](const Program& p) { return std::make_unique<backends::gpu::GpuProgram>(p, g); });
      r.push_back({name, [last](const Program& p, const Inputs& in) {
                     try {
                       return last->get(p).run(in);
                     } catch (const backends::gpu::EmuError& e) {
                       // A race or a deadlock of the kernels is a finding (a
                       // failure the interpreter does not have), never a
                       // program skipped as unsupported.
                       IeeeOutcome o;
                       o.failure = Failure{"(gpu kernels)", {}, e.what(), ""};
                       return o;
                     }
                   }});
    } else {
      throw std::invalid_argument("unknown backend '" + name + "' (known: interp, cpu, cpu-o0, gpu-emu, gpu)");
    }
    i = j + 1;
  }
  return r;
}

namespace {

bool set_mutant(const std::string& name) {
  if (set_active_mutant(name)) return true;
  std::cerr << "error: unknown mutant '" << name << "' (see stax fuzz --list-mutants)\n";
  return false;
}

std::optional<std::vector<oracle::BackendRunner>> backends_or_error(const std::string& spec) {
  try {
    return fuzz_backends(spec);
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: --backends: " << e.what() << "\n";
    return std::nullopt;
  }
}

oracle::CampaignOptions campaign_options(const FuzzCommandOptions& o) {
  oracle::CampaignOptions c;
  c.seed = o.seed;
  if (o.count) c.count = *o.count;
  c.time_limit = o.time;
  c.jobs = o.jobs;
  c.iteration_timeout = o.iteration_timeout;
  c.db = o.db;
  c.mutant = o.mutant;
  c.backends = o.backends;
  c.fuzz.trials = o.trials;
  c.fuzz.shrink = !o.no_shrink;
  c.fuzz.shrink_seconds = o.shrink_seconds;
  c.fuzz.prove = o.prove;
  c.fuzz.prove_timeout_ms = o.prove_timeout_ms;
  c.progress = !o.quiet;
  return c;
}

/// Parses --shard K/N (0 <= K < N); nullopt (after a message) when malformed.
std::optional<std::pair<uint64_t, uint64_t>> parse_shard(const std::string& spec) {
  auto num = [](const std::string& t, uint64_t& v) {
    if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoull(t);
    return true;
  };
  size_t slash = spec.find('/');
  uint64_t k = 0, n = 0;
  if (slash == std::string::npos || !num(spec.substr(0, slash), k) || !num(spec.substr(slash + 1), n) || n == 0 ||
      k >= n) {
    std::cerr << "error: --shard '" << spec << "': expected K/N with 0 <= K < N (shard K of N, counted from 0)\n";
    return std::nullopt;
  }
  return std::make_pair(k, n);
}

/// Applies --shard to the campaign: a counted range's shard is a contiguous
/// block of it, an open (--time) range's shard every N-th seed from S + K.
bool apply_shard(const FuzzCommandOptions& o, oracle::CampaignOptions& c) {
  if (o.shard.empty()) return true;
  auto kn = parse_shard(o.shard);
  if (!kn) return false;
  auto [k, n] = *kn;
  c.shard = std::to_string(k) + "/" + std::to_string(n);
  if (c.count) {
    auto [first, cnt] = oracle::shard_block(c.seed, *c.count, k, n);
    c.seed = first;
    c.count = cnt;
  } else {
    c.seed += k;
    c.stride = n;
  }
  return true;
}

int list_mutants(bool as_json) {
  json j = json::array();
  for (const MutantInfo& m : mutant_catalog()) {
    if (as_json) j.push_back({{"name", m.name}, {"where", m.where}, {"description", m.description}});
    else std::cout << m.name << "  [" << m.where << "]  " << m.description << "\n";
  }
  if (as_json) std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace

int fuzz_command(const FuzzCommandOptions& o) {
  if (o.list_mutants) return list_mutants(o.json);
  if (!o.mutant.empty() && !set_mutant(o.mutant)) return 2;
  auto runners = backends_or_error(o.backends);
  if (!runners) return 2;
  if (o.jobs < 1) {
    std::cerr << "error: --jobs must be at least 1\n";
    return 2;
  }
  if (!(o.iteration_timeout > 0)) {
    std::cerr << "error: --iteration-timeout must be positive (seconds), got " << o.iteration_timeout << "\n";
    return 2;
  }
  bool resuming = !o.db.empty() && std::filesystem::exists(o.db);
  if (!o.shard.empty() && !parse_shard(o.shard)) return 2;
  if (!o.count && o.time <= 0 && !resuming) {
    std::cerr << "error: stax fuzz needs --count N or --time SEC (or --db FILE of a campaign to resume)\n";
    return 2;
  }
  oracle::CampaignOptions c = campaign_options(o);
  if (!apply_shard(o, c)) return 2;
  oracle::CampaignSummary s;
  if (auto e = oracle::run_campaign(c, *runners, s)) {
    std::cerr << "error: " << *e << "\n";
    return 2;
  }
  if (!o.out_dir.empty() && !o.db.empty())
    if (auto e = oracle::extract_findings(o.db, o.out_dir)) std::cerr << "error: " << *e << "\n";
  if (o.db.empty()) {
    // An in-memory campaign: nothing to report from afterwards, so say it all now.
    std::printf("%llu programs in %.1f s, %llu findings\n", (unsigned long long)s.programs, s.elapsed,
                (unsigned long long)s.findings);
  } else {
    auto r = oracle::campaign_report(o.db);
    if (auto* e = std::get_if<std::string>(&r)) {
      std::cerr << "error: " << *e << "\n";
      return 2;
    }
    const json& rep = std::get<json>(r);
    if (o.json) std::cout << rep.dump(2) << "\n";
    else std::cout << (s.resumed ? "(resumed)\n" : "") << oracle::format_campaign_report(rep);
  }
  return s.findings ? 1 : 0;
}

int fuzz_report_command(const FuzzReportOptions& o) {
  auto r = oracle::campaign_report(o.db);
  if (auto* e = std::get_if<std::string>(&r)) {
    std::cerr << "error: " << *e << "\n";
    return 2;
  }
  const json& rep = std::get<json>(r);
  if (!o.extract_dir.empty())
    if (auto e = oracle::extract_findings(o.db, o.extract_dir)) {
      std::cerr << "error: " << *e << "\n";
      return 2;
    }
  if (o.json) std::cout << rep.dump(2) << "\n";
  else std::cout << oracle::format_campaign_report(rep);
  return rep["findings"].empty() ? 0 : 1;
}

int fuzz_merge_command(const FuzzMergeOptions& o) {
  oracle::MergeStats st;
  if (auto e = oracle::merge_campaigns(o.out, o.inputs, &st)) {
    std::cerr << "error: " << *e << "\n";
    return 2;
  }
  auto r = oracle::campaign_report(o.out);
  if (auto* e = std::get_if<std::string>(&r)) {
    std::cerr << "error: " << *e << "\n";
    return 2;
  }
  const json& rep = std::get<json>(r);
  std::cout << "merged " << o.inputs.size() << " database(s) into " << o.out << ": " << rep["programs"].get<int64_t>()
            << " programs, " << rep["findings"].size() << " findings (added " << st.runs_added << " programs, "
            << st.findings_added << " findings; duplicate seeds, kept once: " << st.duplicate_runs << " programs, "
            << st.duplicate_findings << " findings)\n";
  for (const std::string& f : st.other_mutant)
    std::cerr << "warning: " << f << " is a campaign with another mutant than the first database\n";
  return 0;
}

/// A crash reproducer: the seed's iteration on the program. When the crash
/// reproduces, this process dies with it.
int fuzz_replay_iteration(const FuzzReplayOptions& o) {
  if (!o.transform.empty() || !o.backend.empty() || !o.inputs.empty()) {
    std::cerr << "error: stax fuzz replay --seed runs a whole iteration: no --transform, --backend or --input\n";
    return 2;
  }
  auto loaded = load_program(o.file);
  if (!loaded) return 2;
  auto runners = backends_or_error(o.backends);
  if (!runners) return 2;
  oracle::FuzzOptions fo;
  fo.shrink = false;
  oracle::IterationResult r = oracle::fuzz_program(*o.seed, *loaded, fo, *runners);
  std::cout << "the iteration of seed " << *o.seed << " completed (" << r.status
            << (r.finding ? ": " + r.finding->message : std::string()) << "): the crash does not reproduce\n";
  return 0;
}

int fuzz_replay_command(const FuzzReplayOptions& o) {
  if (!o.mutant.empty() && !set_mutant(o.mutant)) return 2;
  if (o.seed) return fuzz_replay_iteration(o);
  if (o.transform.empty() == o.backend.empty()) {
    std::cerr << "error: stax fuzz replay needs exactly one of --transform SPEC or --backend NAME\n";
    return 2;
  }
  auto loaded = load_program(o.file);
  if (!loaded) return 2;
  const Program& p = *loaded;
  Inputs in;
  if (!read_inputs(o.inputs, in, &p)) return 2;
  if (auto e = check_inputs(p, in)) {
    std::cerr << "error: " << *e << "\n";
    return 2;
  }
  oracle::Finding f;
  std::vector<oracle::BackendRunner> runners;
  if (!o.transform.empty()) {
    auto steps = pipeline_steps(o.transform);
    if (!steps) return 2;
    f.kind = oracle::FindingKind::Transform;
    f.pipeline = o.transform;
    auto who = oracle::culprit(p, *steps, in);
    if (!who) {
      std::cout << "no difference: " << o.file << " --transform " << o.transform << " passes the oracle\n";
      return 0;
    }
    f.component = *who;
  } else {
    auto r = backends_or_error(o.backend);
    if (!r) return 2;
    runners = *r;
    if (runners.empty()) {
      std::cout << "no difference: the interpreter is the reference\n";
      return 0;
    }
    f.kind = oracle::FindingKind::Backend;
    f.component = runners[0].name;
  }
  auto msg = oracle::reproduces(f, p, in, runners);
  if (!msg) {
    std::cout << "no difference\n";
    return 0;
  }
  std::cout << "FINDING (" << oracle::finding_kind_name(f.kind) << " " << f.component << "): " << *msg << "\n";
  return 1;
}

int fuzz_bench_command(const FuzzBenchOptions& o) {
  if (o.what != "kill-rate" && o.what != "throughput" && o.what != "all") {
    std::cerr << "error: stax fuzz bench expects kill-rate, throughput or all, got '" << o.what << "'\n";
    return 2;
  }
  auto runners = backends_or_error(o.backends);
  if (!runners) return 2;
  json out;
  if (o.what == "kill-rate" || o.what == "all") {
    // Each mutant: campaigns from several start seeds, each stopped at its
    // first finding (or the budget); median time-to-find over the starts.
    std::printf("| mutant | where | found | median time-to-find (s) | median programs | note |\n");
    std::printf("|---|---|---|---|---|---|\n");
    json rows = json::array();
    for (const MutantInfo& m : mutant_catalog()) {
      if (!o.mutant.empty() && m.name != o.mutant) continue;
      bool applicable = std::string_view(m.where).find("codegen") == std::string_view::npos || !runners->empty();
      if (!applicable) {
        // A codegen bug lives in a backend: without one there is nothing to find.
        std::printf("| %s | %s | - | - | - | needs --backends cpu |\n", std::string(m.name).c_str(),
                    std::string(m.where).c_str());
        continue;
      }
      if (!set_mutant(std::string(m.name))) return 2;
      std::vector<double> times, programs;
      std::string first;
      int found = 0;
      for (int k = 0; k < o.starts; ++k) {
        oracle::CampaignOptions c;
        c.seed = o.seed + uint64_t(k) * 1000003ull;
        c.time_limit = o.budget;
        c.stop_after_findings = 1;
        c.mutant = std::string(m.name);
        c.fuzz.shrink = false;
        oracle::CampaignSummary s;
        auto t0 = std::chrono::steady_clock::now();
        if (auto e = oracle::run_campaign(c, *runners, s)) {
          std::cerr << "error: " << *e << "\n";
          return 2;
        }
        double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s.findings) {
          ++found;
          times.push_back(dt);
          programs.push_back(double(s.ran));
        }
      }
      set_active_mutant("");
      std::printf("| %s | %s | %d/%d | %s | %s | %s |\n", std::string(m.name).c_str(), std::string(m.where).c_str(),
                  found, o.starts, found ? std::to_string(median(times)).substr(0, 6).c_str() : "-",
                  found ? std::to_string(int64_t(median(programs))).c_str() : "-",
                  found ? "" : "not found within the budget");
      std::fflush(stdout);
      rows.push_back({{"mutant", m.name}, {"found", found}, {"starts", o.starts}, {"median_s", median(times)},
                      {"median_programs", median(programs)}});
    }
    out["kill_rate"] = rows;
  }
  if (o.what == "throughput" || o.what == "all") {
    set_active_mutant("");
    oracle::CampaignOptions c;
    c.seed = o.seed;
    c.count = uint64_t(o.count);
    c.jobs = 1;
    c.db = "";
    oracle::CampaignSummary s;
    std::string dbfile = (std::filesystem::temp_directory_path() / ("stax-fuzz-bench-" + std::to_string(::getpid()) + ".db")).string();
    c.db = dbfile;
    if (auto e = oracle::run_campaign(c, *runners, s)) {
      std::cerr << "error: " << *e << "\n";
      return 2;
    }
    auto r = std::get<json>(oracle::campaign_report(dbfile));
    std::filesystem::remove(dbfile);
    std::filesystem::remove(dbfile + "-wal");
    std::filesystem::remove(dbfile + "-shm");
    const json& t = r["time_s"];
    double total = s.elapsed;
    std::printf("throughput (backends: %s): %llu programs in %.2f s = %.1f programs/s on one core\n",
                o.backends.c_str(), (unsigned long long)s.ran, total, double(s.ran) / total);
    for (const char* k : {"generate", "transform", "check", "backends"})
      std::printf("  %-10s %7.2f s  %5.1f %%\n", k, t[k].get<double>(), 100.0 * t[k].get<double>() / total);
    out["throughput"] = {{"programs", s.ran}, {"seconds", total}, {"programs_per_s", double(s.ran) / total},
                         {"time_s", t}};
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  return 0;
}

Subcommand register_fuzz(CLI::App& app) {
  auto fz = std::make_shared<FuzzCommandOptions>();
  auto count = std::make_shared<uint64_t>(0);
  auto* fzc = app.add_subcommand("fuzz", "Differential fuzzing campaign: generated programs, random transform "
                                         "pipelines, every backend against the interpreter (SQLite with --db)");
  fzc->add_option("--seed", fz->seed, "first seed of the campaign's seed range (shards: disjoint ranges)");
  auto* count_opt = fzc->add_option("--count", *count, "programs (seeds) in the range");
  fzc->add_option("--time", fz->time, "stop after SEC seconds");
  fzc->add_option("--shard", fz->shard,
                  "K/N: shard K (from 0) of N; with --count, the K-th of N contiguous blocks of the range "
                  "(the first count%N blocks one seed longer); with --time, seeds S+K, S+K+N, ...");
  fzc->add_option("--jobs", fz->jobs, "worker processes (a worker that crashes or hangs is a finding and restarts)");
  fzc->add_option("--iteration-timeout", fz->iteration_timeout, "seconds before a running iteration counts as a hang");
  fzc->add_option("--db", fz->db, "SQLite database: parameters, counts, findings; an existing one is resumed");
  fzc->add_option("--mutant", fz->mutant, "activate a seeded bug (see --list-mutants)");
  fzc->add_option("--backends", fz->backends, "backends compared with the interpreter, e.g. interp,cpu");
  fzc->add_option("--trials", fz->trials, "input sets per transform check");
  fzc->add_flag("--no-shrink", fz->no_shrink, "store findings unshrunk");
  fzc->add_flag("--prove", fz->prove, "after testing, try a proof for all inputs (status proved, or the reason in the note)");
  fzc->add_option("--prove-timeout-ms", fz->prove_timeout_ms, "the prover's time per program");
  fzc->add_option("--shrink-seconds", fz->shrink_seconds, "time budget per finding's shrinking");
  fzc->add_option("--out", fz->out_dir, "write reproducers to DIR/finding-SEED/ (with --db)");
  fzc->add_option("--target", fz->target,
                  "programs (default: generated core-language programs), torch-eager (PyTorch op by op) or "
                  "torch-inductor (torch.compile's outputs against faithful enclosures)");
  fzc->add_option("--torch-python", fz->torch_python,
                  "torch targets: python with torch (default $STAX_TORCH_PYTHON, else the venv of scripts/setup_torch.sh)");
  fzc->add_option("--batch", fz->batch, "torch targets: graphs per PyTorch process");
  fzc->add_option("--torch-threads", fz->torch_threads,
                  "torch targets: PyTorch's intra-op threads (sums are judged in ATen's split for that count)");
  fzc->add_flag("--list-mutants", fz->list_mutants, "list the seeded bugs");
  fzc->add_flag("--quiet", fz->quiet, "no progress line");
  fzc->add_flag("--json", fz->json, "one JSON document");
  fzc->require_subcommand(0, 1);

  auto fzr = std::make_shared<FuzzReportOptions>();
  auto* fzrc = fzc->add_subcommand("report", "Summary of a campaign database");
  fzrc->add_option("--db", fzr->db, "campaign database")->required();
  fzrc->add_option("--extract", fzr->extract_dir, "write reproducers to DIR/finding-SEED/");
  fzrc->add_flag("--json", fzr->json, "one JSON document");

  auto fzm = std::make_shared<FuzzMergeOptions>();
  auto* fzmc = fzc->add_subcommand("merge", "Merge campaign databases (seed-range shards)");
  fzmc->add_option("out", fzm->out, "merged database (created if missing)")->required();
  fzmc->add_option("inputs", fzm->inputs, "shard databases")->required();

  auto fzp = std::make_shared<FuzzReplayOptions>();
  auto* fzpc = fzc->add_subcommand("replay", "Replay a reproducer; exit 1 when the finding reproduces");
  fzpc->add_option("file", fzp->file, "program (.stx)")->required();
  fzpc->add_option("--transform", fzp->transform, "the pipeline of a transform finding");
  fzpc->add_option("--backend", fzp->backend, "the backend of a backend finding");
  fzpc->add_option("--input", fzp->inputs, "NAME=FILE.npy");
  fzpc->add_option("--mutant", fzp->mutant, "the seeded bug the finding was made with");
  fzpc->add_option("--seed", fzp->seed, "a crash finding: run this seed's iteration on the program");
  fzpc->add_option("--backends", fzp->backends, "with --seed: the backends of the campaign");

  auto fzb = std::make_shared<FuzzBenchOptions>();
  auto* fzbc = fzc->add_subcommand("bench", "README figures: kill rate of the mutants, throughput");
  fzbc->add_option("what", fzb->what, "kill-rate, throughput or all");
  fzbc->add_option("--seed", fzb->seed, "first start seed");
  fzbc->add_option("--starts", fzb->starts, "campaigns per mutant (median over them)");
  fzbc->add_option("--budget", fzb->budget, "seconds per campaign");
  fzbc->add_option("--count", fzb->count, "programs for the throughput figure");
  fzbc->add_option("--mutant", fzb->mutant, "only this mutant");
  fzbc->add_option("--backends", fzb->backends, "backends compared with the interpreter");
  fzbc->add_flag("--json", fzb->json, "one JSON document");

  Subcommand fza = register_fuzz_autodiff(*fzc);

  return {fzc, [=] {
            if (*fza.app) return fza.run();
            if (*fzrc) return fuzz_report_command(*fzr);
            if (*fzmc) return fuzz_merge_command(*fzm);
            if (*fzpc) return fuzz_replay_command(*fzp);
            if (*fzbc) return fuzz_bench_command(*fzb);
            if (*count_opt) fz->count = *count;
            if (fz->target != "programs") return fuzz_torch_command(*fz);
            return fuzz_command(*fz);
          }};
}

}  // namespace stax::cli
