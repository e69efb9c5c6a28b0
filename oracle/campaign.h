// Fuzz campaigns in SQLite (docs/design.md §8 `stax fuzz`): a campaign is a
// seed range [seed, seed + count) (or an open range with a time limit); every
// program's outcome and every finding with its shrunk reproducer is stored in
// one transaction with it, in WAL mode, so a campaign killed with SIGKILL
// resumes with the same database and loses no finding. Seeds are the unit of
// sharding: machines run disjoint ranges and `merge_campaigns` unions them.
// Workers are forked processes; each seed's result depends on the seed
// alone, so the results do not depend on the number of workers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/fuzz.h"

namespace stax::oracle {

struct CampaignOptions {
  uint64_t seed = 1;                ///< first seed
  /// Seeds seed, seed + stride, seed + 2 stride, ...: an open range's shard K
  /// of N has seed S + K and stride N (a counted range's shard is a block).
  uint64_t stride = 1;
  std::string shard;                ///< "K/N" when a shard, recorded and checked on resume
  std::optional<uint64_t> count;    ///< seeds in the range; none: open range, needs time_limit
  double time_limit = 0;            ///< seconds (0: none)
  int jobs = 1;                     ///< forked worker processes (at least one)
  std::string db;                   ///< the database file ("" : in memory)
  std::string mutant;               ///< recorded; the caller activates it
  std::string backends = "interp";  ///< recorded
  FuzzOptions fuzz;
  bool progress = false;         ///< a live line on stderr
  int stop_after_findings = 0;   ///< stop once this many findings are stored (0: never)
  /// An iteration still running after this many seconds is killed and
  /// recorded as a hang; a worker that dies records a crash. Either way the
  /// campaign restarts the worker after that seed and goes on.
  double iteration_timeout = 600;
};

struct CampaignSummary {
  uint64_t programs = 0;  ///< stored in the database, this run and earlier ones
  uint64_t ran = 0;       ///< run by this call
  uint64_t findings = 0;
  double elapsed = 0;     ///< this call, seconds
  bool resumed = false;
  std::optional<double> first_finding;  ///< campaign time of the first finding, seconds
};

/// Runs (or resumes) a campaign. Returns an error message for a bad database
/// or bad parameters.
std::optional<std::string> run_campaign(const CampaignOptions& opt, const std::vector<BackendRunner>& runners,
                                        CampaignSummary& out);

/// The summary of a campaign database: parameters, counts by status, per
/// transform, per class and per backend, time per phase, and every finding.
std::variant<nlohmann::json, std::string> campaign_report(const std::string& db);
/// The report as prose.
std::string format_campaign_report(const nlohmann::json& r);

/// What a merge added and what it found twice.
struct MergeStats {
  uint64_t runs_added = 0, findings_added = 0;
  /// Seeds (runs, findings) already in `out` or an earlier input: kept once
  /// (a seed's result depends on the seed alone).
  uint64_t duplicate_runs = 0, duplicate_findings = 0;
  /// Inputs whose mutant differs from the first input's (merged all the same).
  std::vector<std::string> other_mutant;
};

/// Unions campaign databases (shards) into `out` (created if missing).
std::optional<std::string> merge_campaigns(const std::string& out, const std::vector<std::string>& inputs,
                                           MergeStats* stats = nullptr);

/// Shard `k` of `n` of a counted range [seed, seed + count): the contiguous
/// block [seed + k*q + min(k, r), ...) of q or q + 1 seeds (q = count / n,
/// r = count % n; the first r shards get one more). Returns {first, count}.
std::pair<uint64_t, uint64_t> shard_block(uint64_t seed, uint64_t count, uint64_t k, uint64_t n);

/// Writes every finding's reproducer as DIR/finding-SEED/{repro.stx, *.npy, replay.sh}.
std::optional<std::string> extract_findings(const std::string& db, const std::string& dir);

}  // namespace stax::oracle
