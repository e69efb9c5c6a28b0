#include "oracle/campaign.h"

#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "semantics/mutants.h"
#include "semantics/npy.h"
#include "semantics/printer.h"

namespace stax::oracle {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------- SQLite

class Db {
 public:
  ~Db() {
    if (db_) sqlite3_close(db_);
  }
  std::optional<std::string> open(const std::string& file) {
    if (sqlite3_open(file.empty() ? ":memory:" : file.c_str(), &db_) != SQLITE_OK)
      return "cannot open database " + file + ": " + sqlite3_errmsg(db_);
    sqlite3_busy_timeout(db_, 10000);
    return std::nullopt;
  }
  std::optional<std::string> exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : "error";
      sqlite3_free(err);
      return m + " (in: " + sql.substr(0, 80) + ")";
    }
    return std::nullopt;
  }
  sqlite3* get() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK; }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return ok_; }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& blob(int i, const std::string& v) {
    sqlite3_bind_blob(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool step() { return sqlite3_step(s_) == SQLITE_ROW; }
  bool done() {
    int rc = sqlite3_step(s_);
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    return rc == SQLITE_DONE;
  }
  std::string text(int c) {
    const unsigned char* t = sqlite3_column_text(s_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), size_t(sqlite3_column_bytes(s_, c))) : std::string();
  }
  std::string bytes(int c) {
    const void* b = sqlite3_column_blob(s_, c);
    return b ? std::string(static_cast<const char*>(b), size_t(sqlite3_column_bytes(s_, c))) : std::string();
  }
  int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  double dbl(int c) { return sqlite3_column_double(s_, c); }
  bool null(int c) { return sqlite3_column_type(s_, c) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS params(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value REAL);
CREATE TABLE IF NOT EXISTS runs(seed INTEGER PRIMARY KEY, pipeline TEXT, cls TEXT, status TEXT, backends TEXT,
  note TEXT, backend_skipped INTEGER, t_generate REAL, t_transform REAL, t_check REAL, t_backends REAL,
  t_shrink REAL);
CREATE TABLE IF NOT EXISTS findings(seed INTEGER PRIMARY KEY, kind TEXT, component TEXT, pipeline TEXT, cls TEXT,
  message TEXT, mutant TEXT, found_after REAL, program TEXT, repro TEXT, command TEXT, size_before INTEGER,
  size_after INTEGER, shrink_tests INTEGER);
CREATE TABLE IF NOT EXISTS finding_files(seed INTEGER, name TEXT, data BLOB, PRIMARY KEY(seed, name));
)";

std::optional<std::string> open_db(Db& db, const std::string& file) {
  if (auto e = db.open(file)) return e;
  if (!file.empty())
    if (auto e = db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")) return e;
  return db.exec(kSchema);
}

std::map<std::string, std::string> read_params(Db& db) {
  std::map<std::string, std::string> m;
  Stmt s(db.get(), "SELECT key, value FROM params");
  while (s.step()) m[s.text(0)] = s.text(1);
  return m;
}

double read_meta(Db& db, const std::string& key) {
  Stmt s(db.get(), "SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  return s.step() ? s.dbl(0) : 0.0;
}

// ---------------------------------------------------------------- records

std::string hex(const std::string& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (unsigned char c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}
std::string unhex(const std::string& s) {
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string b;
  for (size_t i = 0; i + 1 < s.size(); i += 2) b += char(v(s[i]) * 16 + v(s[i + 1]));
  return b;
}

/// One program's outcome as stored: what a worker sends to the writer.
json record(const IterationResult& r, const std::optional<Reproducer>& rep, const std::string& mutant) {
  json j = {{"seed", r.seed},
            {"pipeline", r.pipeline},
            {"cls", r.cls},
            {"status", r.status},
            {"note", r.note},
            {"backend_skipped", r.backend_skipped},
            {"t", {r.times.generate, r.times.transform, r.times.check, r.times.backends, r.times.shrink}}};
  std::string b;
  for (const std::string& x : r.backends) b += (b.empty() ? "" : ",") + x;
  j["backends"] = b;
  if (r.finding) {
    const Finding& f = *r.finding;
    json fj = {{"kind", finding_kind_name(f.kind)}, {"component", f.component}, {"pipeline", f.pipeline},
               {"cls", f.cls},   {"message", f.message},  {"mutant", mutant},
               {"program", print_program(f.program)}};
    if (rep) {
      fj["repro"] = rep->stx;
      fj["command"] = rep->command;
      fj["pipeline"] = rep->pipeline.empty() ? r.finding->pipeline : rep->pipeline;
      fj["size_before"] = rep->size_before;
      fj["size_after"] = rep->size_after;
      fj["shrink_tests"] = rep->tests;
      json files = json::object();
      for (const auto& [name, bytes] : rep->npy_files) files[name] = hex(bytes);
      fj["files"] = files;
    }
    j["finding"] = fj;
  }
  return j;
}

class Writer {
 public:
  explicit Writer(Db& db)
      : db_(db),
        run_(db.get(),
             "INSERT OR REPLACE INTO runs VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        find_(db.get(), "INSERT OR REPLACE INTO findings VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        file_(db.get(), "INSERT OR REPLACE INTO finding_files VALUES(?, ?, ?)"),
        meta_(db.get(), "INSERT OR REPLACE INTO meta VALUES(?, ?)") {}

  void add(const json& j, double campaign_time) {
    if (!open_) {
      db_.exec("BEGIN");
      open_ = true;
    }
    const json& t = j["t"];
    run_.bind(1, j["seed"].get<int64_t>())
        .bind(2, j["pipeline"].get<std::string>())
        .bind(3, j["cls"].get<std::string>())
        .bind(4, j["status"].get<std::string>())
        .bind(5, j["backends"].get<std::string>())
        .bind(6, j["note"].get<std::string>())
        .bind(7, j["backend_skipped"].get<int64_t>());
    for (int k = 0; k < 5; ++k) run_.bind(8 + k, t[size_t(k)].get<double>());
    run_.done();
    if (j.contains("finding")) {
      const json& f = j["finding"];
      auto str = [&](const char* k) { return f.contains(k) ? f[k].get<std::string>() : std::string(); };
      auto num = [&](const char* k) { return f.contains(k) ? f[k].get<int64_t>() : int64_t(0); };
      find_.bind(1, j["seed"].get<int64_t>())
          .bind(2, str("kind"))
          .bind(3, str("component"))
          .bind(4, str("pipeline"))
          .bind(5, str("cls"))
          .bind(6, str("message"))
          .bind(7, str("mutant"))
          .bind(8, campaign_time)
          .bind(9, str("program"))
          .bind(10, str("repro"))
          .bind(11, str("command"))
          .bind(12, num("size_before"))
          .bind(13, num("size_after"))
          .bind(14, num("shrink_tests"));
      find_.done();
      if (f.contains("files"))
        for (auto it = f["files"].begin(); it != f["files"].end(); ++it) {
          file_.bind(1, j["seed"].get<int64_t>()).bind(2, it.key()).blob(3, unhex(it.value().get<std::string>()));
          file_.done();
        }
      ++findings_;
    }
    ++pending_;
  }
  void commit(double elapsed_total) {
    if (!open_) return;
    meta_.bind(1, std::string("elapsed")).bind(2, elapsed_total);
    meta_.done();
    db_.exec("COMMIT");
    open_ = false;
    pending_ = 0;
  }
  int pending() const { return pending_; }
  uint64_t findings() const { return findings_; }

 private:
  Db& db_;
  Stmt run_, find_, file_, meta_;
  bool open_ = false;
  int pending_ = 0;
  uint64_t findings_ = 0;
};

json run_seed(uint64_t seed, const CampaignOptions& opt, const std::vector<BackendRunner>& runners) {
  IterationResult r = fuzz_one(seed, opt.fuzz, runners);
  std::optional<Reproducer> rep;
  if (r.finding) {
    auto t = Clock::now();
    if (opt.fuzz.shrink) {
      rep = shrink_finding(*r.finding, runners, opt.fuzz.shrink_seconds, opt.mutant);
    } else {
      Reproducer x;
      x.stx = print_program(r.finding->program);
      x.size_before = x.size_after = x.stx.size();
      for (const sem::Input& i : r.finding->program.inputs)
        x.npy_files.push_back({i.name + sem::npy_suffix(i.type.dtype), sem::format_npy(r.finding->inputs.at(i.name))});
      x.command = replay_command(*r.finding, r.finding->program, opt.mutant);
      rep = x;
    }
    r.times.shrink = std::chrono::duration<double>(Clock::now() - t).count();
  }
  return record(r, rep, opt.mutant);
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

void progress_line(const CampaignSummary& s, uint64_t findings, double elapsed, bool final) {
  double rate = elapsed > 0 ? double(s.ran) / elapsed : 0.0;
  std::fprintf(stderr, "\rfuzz: %llu programs (%.1f/s), %llu findings, %.1f s elapsed%s",
               (unsigned long long)s.programs, rate, (unsigned long long)findings, elapsed, final ? "\n" : "   ");
  std::fflush(stderr);
}

}  // namespace

std::optional<std::string> run_campaign(const CampaignOptions& in, const std::vector<BackendRunner>& runners,
                                        CampaignSummary& out) {
  CampaignOptions opt = in;
  Db db;
  if (auto e = open_db(db, opt.db)) return e;
  auto params = read_params(db);
  if (!params.empty()) {
    // Resume: the stored parameters define the campaign.
    out.resumed = true;
    opt.seed = std::stoull(params["seed"]);
    if (!params["count"].empty()) opt.count = std::stoull(params["count"]);
    else opt.count.reset();
    if (params["mutant"] != opt.mutant)
      return "the database holds a campaign with mutant '" + params["mutant"] + "', not '" + opt.mutant + "'";
    opt.fuzz.trials = std::stoi(params["trials"]);
    opt.fuzz.max_steps = std::stoi(params["max_steps"]);
    opt.fuzz.gen.max_bindings = std::stoi(params["max_bindings"]);
    opt.fuzz.gen.max_extent = std::stoll(params["max_extent"]);
    // An open-range campaign resumed without --time gets what is left of its own.
    if (!opt.count && opt.time_limit <= 0 && !params["time"].empty())
      opt.time_limit = std::stod(params["time"]) - read_meta(db, "elapsed");
    if (!opt.count && opt.time_limit <= 0 && opt.stop_after_findings <= 0) opt.count = 0;  // its time is spent
  } else {
    if (!opt.count && opt.time_limit <= 0) return "a campaign needs --count N or --time SEC";
    db.exec("BEGIN");
    Stmt s(db.get(), "INSERT INTO params VALUES(?, ?)");
    std::vector<std::pair<std::string, std::string>> kv = {
        {"seed", std::to_string(opt.seed)},
        {"count", opt.count ? std::to_string(*opt.count) : ""},
        {"time", std::to_string(opt.time_limit)},
        {"mutant", opt.mutant},
        {"backends", opt.backends},
        {"trials", std::to_string(opt.fuzz.trials)},
        {"max_steps", std::to_string(opt.fuzz.max_steps)},
        {"max_bindings", std::to_string(opt.fuzz.gen.max_bindings)},
        {"max_extent", std::to_string(opt.fuzz.gen.max_extent)},
        {"generator", "stax::oracle::generate_program v2"}};
    for (const auto& [k, v] : kv) s.bind(1, k).bind(2, v).done();
    db.exec("COMMIT");
  }
  if (opt.stop_after_findings <= 0 && !opt.count && opt.time_limit <= 0)
    return "a campaign needs --count N or --time SEC";

  // Seeds already done.
  std::set<uint64_t> done;
  {
    Stmt s(db.get(), "SELECT seed FROM runs");
    while (s.step()) done.insert(uint64_t(s.i64(0)));
  }
  uint64_t stored_findings = 0;
  {
    Stmt s(db.get(), "SELECT count(*) FROM findings");
    if (s.step()) stored_findings = uint64_t(s.i64(0));
  }
  double elapsed_before = read_meta(db, "elapsed");
  out.programs = done.size();

  // The pending seeds, in order (an open range is generated lazily).
  std::vector<uint64_t> pending;
  if (opt.count)
    for (uint64_t k = 0; k < *opt.count; ++k)
      if (!done.count(opt.seed + k)) pending.push_back(opt.seed + k);
  auto open_next = [&, next = opt.seed](uint64_t stride, uint64_t& cursor) mutable {
    (void)next;
    while (done.count(cursor)) cursor += stride;
    uint64_t s = cursor;
    cursor += stride;
    return s;
  };

  auto start = Clock::now();
  auto now_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  Writer w(db);
  auto last_commit = Clock::now();
  double last_progress = -1;
  auto should_stop = [&] {
    if (opt.time_limit > 0 && now_s() >= opt.time_limit) return true;
    if (opt.stop_after_findings > 0 && stored_findings + w.findings() >= uint64_t(opt.stop_after_findings)) return true;
    return false;
  };
  auto take = [&](const json& j) {
    w.add(j, elapsed_before + now_s());
    ++out.ran;
    ++out.programs;
    if (j.contains("finding") && !out.first_finding) out.first_finding = elapsed_before + now_s();
    if (w.pending() >= 64 || std::chrono::duration<double>(Clock::now() - last_commit).count() > 0.25 ||
        j.contains("finding")) {
      w.commit(elapsed_before + now_s());
      last_commit = Clock::now();
    }
    if (opt.progress && now_s() - last_progress > 0.5) {
      progress_line(out, stored_findings + w.findings(), now_s(), false);
      last_progress = now_s();
    }
  };

  int jobs = std::max(1, opt.jobs);
  if (jobs == 1) {
    uint64_t cursor = opt.seed;
    for (size_t k = 0;; ++k) {
      if (should_stop()) break;
      uint64_t seed;
      if (opt.count) {
        if (k >= pending.size()) break;
        seed = pending[k];
      } else {
        seed = open_next(1, cursor);
      }
      take(run_seed(seed, opt, runners));
    }
  } else {
    struct Worker {
      pid_t pid;
      int fd;
      std::string buf;
      bool open = true;
    };
    std::vector<Worker> ws;
    pid_t parent = getpid();
    for (int k = 0; k < jobs; ++k) {
      int p[2];
      if (pipe(p) != 0) return "pipe failed";
      std::fflush(nullptr);
      pid_t pid = fork();
      if (pid < 0) return "fork failed";
      if (pid == 0) {
        ::close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        uint64_t cursor = opt.seed + uint64_t(k);
        for (size_t i = size_t(k);; i += size_t(jobs)) {
          uint64_t seed;
          if (opt.count) {
            if (i >= pending.size()) break;
            seed = pending[i];
          } else {
            seed = open_next(uint64_t(jobs), cursor);
          }
          if (!write_all(p[1], run_seed(seed, opt, runners).dump() + "\n")) break;
        }
        ::close(p[1]);
        _exit(0);
      }
      ::close(p[1]);
      ws.push_back({pid, p[0], {}, true});
    }
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<size_t> who;
      for (size_t k = 0; k < ws.size(); ++k)
        if (ws[k].open) {
          fds.push_back({ws[k].fd, POLLIN, 0});
          who.push_back(k);
        }
      if (fds.empty() || should_stop()) break;
      int n = poll(fds.data(), fds.size(), 200);
      if (n < 0) continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Worker& wk = ws[who[i]];
        char tmp[65536];
        ssize_t got = ::read(wk.fd, tmp, sizeof tmp);
        if (got <= 0) {
          wk.open = false;
          continue;
        }
        wk.buf.append(tmp, size_t(got));
        for (size_t nl; (nl = wk.buf.find('\n')) != std::string::npos;) {
          std::string line = wk.buf.substr(0, nl);
          wk.buf.erase(0, nl + 1);
          json j = json::parse(line, nullptr, false);
          if (!j.is_discarded() && !should_stop()) take(j);
        }
      }
      if (opt.progress && now_s() - last_progress > 0.5) {
        progress_line(out, stored_findings + w.findings(), now_s(), false);
        last_progress = now_s();
      }
    }
    for (Worker& wk : ws) {
      if (wk.open) kill(wk.pid, SIGKILL);
      ::close(wk.fd);
      waitpid(wk.pid, nullptr, 0);
    }
  }
  out.elapsed = now_s();
  w.commit(elapsed_before + out.elapsed);
  if (opt.progress) progress_line(out, stored_findings + w.findings(), out.elapsed, true);
  {
    Stmt s(db.get(), "SELECT count(*) FROM findings");
    if (s.step()) out.findings = uint64_t(s.i64(0));
  }
  if (!out.first_finding) {
    Stmt s(db.get(), "SELECT min(found_after) FROM findings");
    if (s.step() && !s.null(0)) out.first_finding = s.dbl(0);
  }
  return std::nullopt;
}

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
                   "t_backends, t_shrink FROM runs");
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
    if (s.i64(4)) skipped["backend_skipped"] += s.i64(4);
    tg += s.dbl(5);
    tt += s.dbl(6);
    tc += s.dbl(7);
    tb += s.dbl(8);
    ts += s.dbl(9);
  }
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
  const json& t = r["time_s"];
  std::snprintf(buf, sizeof buf,
                "time: generate %.2f s, transform %.2f s, check %.2f s, backends %.2f s, shrink %.2f s\n",
                t["generate"].get<double>(), t["transform"].get<double>(), t["check"].get<double>(),
                t["backends"].get<double>(), t["shrink"].get<double>());
  s += buf;
  for (const json& f : r["findings"]) {
    std::snprintf(buf, sizeof buf, "  seed %lld: %s %s (after %.2f s; reproducer %lld -> %lld bytes)\n",
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

std::optional<std::string> merge_campaigns(const std::string& out, const std::vector<std::string>& inputs) {
  Db db;
  if (auto e = open_db(db, out)) return e;
  double elapsed = read_meta(db, "elapsed");
  for (const std::string& in : inputs) {
    if (!std::filesystem::exists(in)) return "no database " + in;
    {
      Db check;
      if (auto e = open_db(check, in)) return e;
    }
    std::string q = "'" + in + "'";
    for (size_t k = 0; (k = q.find('\'', k + 1)) != std::string::npos && k + 1 < q.size(); k += 2) q.insert(k, "'");
    if (auto e = db.exec("ATTACH DATABASE " + q + " AS shard")) return e;
    auto e = db.exec(
        "BEGIN;"
        "INSERT OR IGNORE INTO params SELECT * FROM shard.params WHERE key <> 'seed' AND key <> 'count';"
        "INSERT OR IGNORE INTO runs SELECT * FROM shard.runs;"
        "INSERT OR IGNORE INTO findings SELECT * FROM shard.findings;"
        "INSERT OR IGNORE INTO finding_files SELECT * FROM shard.finding_files;"
        "COMMIT;");
    if (e) return e;
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
    db.exec("INSERT OR REPLACE INTO params VALUES('count', '" + std::to_string(mm.i64(1) - mm.i64(0) + 1) + "')");
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
      std::ofstream o(d / files.text(0), std::ios::binary);
      std::string b = files.bytes(1);
      o.write(b.data(), std::streamsize(b.size()));
    }
  }
  return std::nullopt;
}

}  // namespace stax::oracle
