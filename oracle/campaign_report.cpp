// Fuzz campaign reports (docs/design.md §8 `stax fuzz`): the summary of a campaign
// database (counts by status, transform, class and backend; time per phase;
// every finding), merging shards, and writing the findings' reproducers.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "oracle/campaign.h"
#include "oracle/campaign_store.h"

namespace stax::oracle {

using json = nlohmann::json;
using namespace campaign_store;

std::variant<json, std::string> campaign_report(const std::string& file) {
  if (!std::filesystem::exists(file)) return "no database " + file;
  Db db;
  if (auto e = open_db(db, file)) return *e;
  json r;
  r["database"] = file;
  json params = json::object();
  for (const auto& [k, v] : read_params(db)) params[k] = v;
  r["params"] = params;
  std::map<std::string, int64_t> by_status, by_transform, by_class, by_backend, skipped;
  double tg = 0, tt = 0, tc = 0, tb = 0, ts = 0;
  int64_t programs = 0;
  Stmt s(db.get(), "SELECT pipeline, cls, status, backends, backend_skipped, t_generate, t_transform, t_check, "
                   "t_backends, t_shrink, t_prove FROM runs");
  std::vector<double> proved_ms, unproved_ms;
  while (s.step()) {
    ++programs;
    ++by_status[s.text(2)];
    if (!s.text(1).empty()) ++by_class[s.text(1)];
    std::string p = s.text(0);
    std::set<std::string> names;
    for (size_t i = 0; i <= p.size();) {
      size_t j = p.find(',', i);
      if (j == std::string::npos) j = p.size();
      std::string item = p.substr(i, j - i);
      if (!item.empty()) names.insert(item.substr(0, item.find(':')));
      i = j + 1;
    }
    for (const std::string& n : names) ++by_transform[n];
    std::string b = s.text(3);
    for (size_t i = 0; i <= b.size() && !b.empty();) {
      size_t j = b.find(',', i);
      if (j == std::string::npos) j = b.size();
      ++by_backend[b.substr(i, j - i)];
      i = j + 1;
    }
    // A foreign database may hold any integers: the sum saturates.
    if (int64_t& k = skipped["backend_skipped"]; __builtin_add_overflow(k, s.i64(4), &k))
      k = s.i64(4) > 0 ? INT64_MAX : INT64_MIN;
    tg += s.dbl(5);
    tt += s.dbl(6);
    tc += s.dbl(7);
    tb += s.dbl(8);
    ts += s.dbl(9);
    if (!s.is_null(10)) (s.text(2) == "proved" ? proved_ms : unproved_ms).push_back(s.dbl(10) * 1000);
  }
  auto quantile = [](std::vector<double>& v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
  };
  r["proof"] = {{"tried", int64_t(proved_ms.size() + unproved_ms.size())},
                {"proved", int64_t(proved_ms.size())},
                {"proved_ms", {{"median", quantile(proved_ms, 0.5)},
                               {"p90", quantile(proved_ms, 0.9)},
                               {"max", proved_ms.empty() ? 0.0 : proved_ms.back()}}}};
  r["programs"] = programs;
  r["by_status"] = by_status;
  r["by_transform"] = by_transform;
  r["by_class"] = by_class;
  r["by_backend"] = by_backend;
  r["backend_skipped"] = skipped["backend_skipped"];
  double elapsed = read_meta(db, "elapsed");
  r["elapsed_s"] = elapsed;
  r["programs_per_s"] = elapsed > 0 ? double(programs) / elapsed : 0.0;
  r["time_s"] = {{"generate", tg}, {"transform", tt}, {"check", tc}, {"backends", tb}, {"shrink", ts}};
  json fs = json::array();
  std::map<std::string, int64_t> by_component;
  Stmt f(db.get(), "SELECT seed, kind, component, pipeline, cls, message, mutant, found_after, size_before, "
                   "size_after, command, repro FROM findings ORDER BY seed");
  while (f.step()) {
    ++by_component[f.text(1) + ":" + f.text(2)];
    fs.push_back({{"seed", f.i64(0)},          {"kind", f.text(1)},         {"component", f.text(2)},
                  {"pipeline", f.text(3)},     {"class", f.text(4)},        {"message", f.text(5)},
                  {"mutant", f.text(6)},       {"found_after_s", f.dbl(7)}, {"size_before", f.i64(8)},
                  {"size_after", f.i64(9)},    {"command", f.text(10)},     {"repro", f.text(11)}});
  }
  r["findings"] = fs;
  r["findings_by_component"] = by_component;
  return r;
}

std::string format_campaign_report(const json& r) {
  std::string s;
  char buf[256];
  const json& p = r["params"];
  auto param = [&](const char* k) { return p.contains(k) ? p[k].get<std::string>() : std::string(); };
  s += "campaign " + r["database"].get<std::string>() + ": seeds from " + param("seed") +
       (param("count").empty() ? " (open range)" : ", count " + param("count")) +
       (param("mutant").empty() ? "" : ", mutant " + param("mutant")) + ", backends " + param("backends") + "\n";
  std::snprintf(buf, sizeof buf, "%lld programs in %.1f s (%.1f programs/s), %zu findings\n",
                (long long)r["programs"].get<int64_t>(), r["elapsed_s"].get<double>(),
                r["programs_per_s"].get<double>(), r["findings"].size());
  s += buf;
  auto table = [&](const char* title, const json& m) {
    s += std::string(title) + ":";
    for (auto it = m.begin(); it != m.end(); ++it) s += " " + it.key() + "=" + std::to_string(it.value().get<int64_t>());
    s += "\n";
  };
  table("status", r["by_status"]);
  table("class", r["by_class"]);
  table("transforms", r["by_transform"]);
  table("backends", r["by_backend"]);
  if (int64_t sk = r["backend_skipped"].get<int64_t>(); sk > 0)
    s += "backend runs refused (a program the backend does not support; not compared): " + std::to_string(sk) + "\n";
  const json& t = r["time_s"];
  std::snprintf(buf, sizeof buf,
                "time: generate %.2f s, transform %.2f s, check %.2f s, backends %.2f s, shrink %.2f s\n",
                t["generate"].get<double>(), t["transform"].get<double>(), t["check"].get<double>(),
                t["backends"].get<double>(), t["shrink"].get<double>());
  s += buf;
  if (const json& pr = r["proof"]; pr["tried"].get<int64_t>() > 0) {
    std::snprintf(buf, sizeof buf, "prover: %lld of %lld tried proved; time per proof median %.0f ms, p90 %.0f ms, max %.0f ms\n",
                  (long long)pr["proved"].get<int64_t>(), (long long)pr["tried"].get<int64_t>(),
                  pr["proved_ms"]["median"].get<double>(), pr["proved_ms"]["p90"].get<double>(),
                  pr["proved_ms"]["max"].get<double>());
    s += buf;
  }
  for (const json& f : r["findings"]) {
    std::snprintf(buf, sizeof buf, "  seed %lld: refuted: %s %s (after %.2f s; reproducer %lld -> %lld bytes)\n",
                  (long long)f["seed"].get<int64_t>(), f["kind"].get<std::string>().c_str(),
                  f["component"].get<std::string>().c_str(), f["found_after_s"].get<double>(),
                  (long long)f["size_before"].get<int64_t>(), (long long)f["size_after"].get<int64_t>());
    s += "FINDING" + std::string(buf).substr(1);
    s += "    " + f["message"].get<std::string>().substr(0, 300) + "\n";
    s += "    pipeline: " + f["pipeline"].get<std::string>() + "\n";
    s += "    replay: " + f["command"].get<std::string>() + "\n";
  }
  return s;
}

namespace {

uint64_t count_of(Db& db, const char* sql) {
  Stmt s(db.get(), sql);
  return s.step() ? uint64_t(s.i64(0)) : 0;
}

}  // namespace

std::optional<std::string> merge_campaigns(const std::string& out, const std::vector<std::string>& inputs,
                                           MergeStats* stats) {
  MergeStats local;
  MergeStats& st = stats ? *stats : local;
  Db db;
  if (auto e = open_db(db, out)) return e;
  double elapsed = read_meta(db, "elapsed");
  std::optional<std::string> first_mutant;
  {
    Stmt s(db.get(), "SELECT value FROM params WHERE key = 'mutant'");
    if (s.step()) first_mutant = s.text(0);
  }
  for (const std::string& in : inputs) {
    if (!std::filesystem::exists(in)) return "no database " + in;
    {
      Db check;
      if (auto e = open_db(check, in)) return e;
    }
    std::string q = "'" + in + "'";
    for (size_t k = 0; (k = q.find('\'', k + 1)) != std::string::npos && k + 1 < q.size(); k += 2) q.insert(k, "'");
    if (auto e = db.exec("ATTACH DATABASE " + q + " AS shard")) return e;
    {
      Stmt s(db.get(), "SELECT value FROM shard.params WHERE key = 'mutant'");
      std::string m = s.step() ? s.text(0) : std::string();
      if (!first_mutant) first_mutant = m;
      else if (m != *first_mutant) st.other_mutant.push_back(in);
    }
    // Every seed already present is counted, never silently dropped: a seed's
    // record depends on the seed alone, so the copies are the same result.
    uint64_t dup_runs = count_of(db, "SELECT count(*) FROM shard.runs WHERE seed IN (SELECT seed FROM main.runs)");
    uint64_t dup_findings =
        count_of(db, "SELECT count(*) FROM shard.findings WHERE seed IN (SELECT seed FROM main.findings)");
    uint64_t runs = count_of(db, "SELECT count(*) FROM shard.runs");
    uint64_t findings = count_of(db, "SELECT count(*) FROM shard.findings");
    auto e = db.exec(
        "BEGIN;"
        "INSERT OR IGNORE INTO params SELECT * FROM shard.params WHERE key NOT IN ('seed', 'count', 'stride', 'shard');"
        "INSERT OR IGNORE INTO runs SELECT * FROM shard.runs;"
        "INSERT OR IGNORE INTO findings SELECT * FROM shard.findings;"
        "INSERT OR IGNORE INTO finding_files SELECT * FROM shard.finding_files;"
        "COMMIT;");
    if (e) return e;
    st.duplicate_runs += dup_runs;
    st.duplicate_findings += dup_findings;
    st.runs_added += runs - dup_runs;
    st.findings_added += findings - dup_findings;
    {
      Stmt s(db.get(), "SELECT value FROM shard.meta WHERE key = 'elapsed'");
      if (s.step()) elapsed += s.dbl(0);
    }
    if (auto e2 = db.exec("DETACH DATABASE shard")) return e2;
  }
  // The merged range: from the smallest seed, as many seeds as it spans.
  Stmt mm(db.get(), "SELECT min(seed), max(seed) FROM runs");
  if (mm.step() && !mm.null(0)) {
    db.exec("INSERT OR REPLACE INTO params VALUES('seed', '" + std::to_string(mm.i64(0)) + "')");
    // In unsigned arithmetic: a foreign database may hold any integers (a
    // span from INT64_MIN to INT64_MAX has no count in 64 bits; none is set).
    const uint64_t span = uint64_t(mm.i64(1)) - uint64_t(mm.i64(0));
    if (span != UINT64_MAX)
      db.exec("INSERT OR REPLACE INTO params VALUES('count', '" + std::to_string(span + 1) + "')");
  }
  Stmt m(db.get(), "INSERT OR REPLACE INTO meta VALUES('elapsed', ?)");
  m.bind(1, elapsed).done();
  return std::nullopt;
}

std::optional<std::string> extract_findings(const std::string& file, const std::string& dir) {
  if (!std::filesystem::exists(file)) return "no database " + file;
  Db db;
  if (auto e = open_db(db, file)) return e;
  Stmt f(db.get(), "SELECT seed, repro, command FROM findings");
  while (f.step()) {
    std::filesystem::path d = std::filesystem::path(dir) / ("finding-" + std::to_string(f.i64(0)));
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    if (ec) return "cannot create " + d.string();
    std::ofstream(d / "repro.stx") << f.text(1);
    std::ofstream(d / "replay.sh") << "#!/bin/sh\n# exit 1: the finding reproduces\n" << f.text(2) << "\n";
    Stmt files(db.get(), "SELECT name, data FROM finding_files WHERE seed = ?");
    files.bind(1, f.i64(0));
    while (files.step()) {
      // A database is data from elsewhere (an older or foreign version, a
      // shard): a file name is a plain name, never a path out of `d`.
      std::string name = files.text(0);
      if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos ||
          name.find('\0') != std::string::npos)
        return "finding " + std::to_string(f.i64(0)) + " in " + file + ": file name '" + name +
               "' is not a plain file name";
      std::ofstream o(d / name, std::ios::binary);
      std::string b = files.bytes(1);
      o.write(b.data(), std::streamsize(b.size()));
    }
  }
  return std::nullopt;
}

}  // namespace stax::oracle
