// Fuzz campaigns (docs/design.md §8 `stax fuzz`; the model is stated in
// oracle/campaign.h): running or resuming one. Each program's outcome is a
// JSON record a worker sends to the writer, which stores it in the database
// (oracle/campaign_store.h) in batched transactions.
#include "oracle/campaign.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>

#include "oracle/campaign_store.h"
#include "oracle/shrink.h"
#include "semantics/input_gen.h"
#include "semantics/npy.h"
#include "semantics/printer.h"

namespace stax::oracle {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

using namespace campaign_store;

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
            {"t", {r.times.generate, r.times.transform, r.times.check, r.times.backends, r.times.shrink, r.times.prove}}};
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
             "INSERT OR REPLACE INTO runs(seed, pipeline, cls, status, backends, note, backend_skipped, t_generate, "
             "t_transform, t_check, t_backends, t_shrink, t_prove) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
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
    if (double pr = t[5].get<double>(); pr >= 0) run_.bind(13, pr);  // else NULL: no proof tried
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

// ---------------------------------------------------------------- running a campaign

/// A new campaign stores its parameters; a resumed one takes them from the
/// database (they define the campaign).
std::optional<std::string> load_or_store_params(Db& db, CampaignOptions& opt, CampaignSummary& out) {
  auto params = read_params(db);
  if (!params.empty()) {
    out.resumed = true;
    opt.seed = std::stoull(params["seed"]);
    if (!params["count"].empty()) opt.count = std::stoull(params["count"]);
    else opt.count.reset();
    if (!opt.shard.empty() && params["shard"] != opt.shard) {
      std::string held = params["shard"].empty() ? std::string("a campaign that is no shard") : "shard " + params["shard"];
      return "the database holds " + held + ", not shard " + opt.shard;
    }
    opt.stride = params["stride"].empty() ? 1 : std::stoull(params["stride"]);
    opt.shard = params["shard"];
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
    return std::nullopt;
  }
  if (!opt.count && opt.time_limit <= 0) return "a campaign needs --count N or --time SEC";
  db.exec("BEGIN");
  Stmt s(db.get(), "INSERT INTO params VALUES(?, ?)");
  std::vector<std::pair<std::string, std::string>> kv = {
      {"seed", std::to_string(opt.seed)},
      {"count", opt.count ? std::to_string(*opt.count) : ""},
      {"time", std::to_string(opt.time_limit)},
      {"stride", std::to_string(opt.stride)},
      {"shard", opt.shard},
      {"mutant", opt.mutant},
      {"backends", opt.backends},
      {"trials", std::to_string(opt.fuzz.trials)},
      {"max_steps", std::to_string(opt.fuzz.max_steps)},
      {"max_bindings", std::to_string(opt.fuzz.gen.max_bindings)},
      {"max_extent", std::to_string(opt.fuzz.gen.max_extent)},
      {"generator", "stax::oracle::generate_program v2"}};
  for (const auto& [k, v] : kv) s.bind(1, k).bind(2, v).done();
  db.exec("COMMIT");
  return std::nullopt;
}

std::set<uint64_t> done_seeds(Db& db) {
  std::set<uint64_t> done;
  Stmt s(db.get(), "SELECT seed FROM runs");
  while (s.step()) done.insert(uint64_t(s.i64(0)));
  return done;
}

uint64_t count_findings(Db& db) {
  Stmt s(db.get(), "SELECT count(*) FROM findings");
  return s.step() ? uint64_t(s.i64(0)) : 0;
}

/// The seeds of a counted range not done yet, in order (an open range is
/// generated lazily, by next_open_seed).
std::vector<uint64_t> pending_seeds(const CampaignOptions& opt, const std::set<uint64_t>& done) {
  std::vector<uint64_t> pending;
  if (opt.count)
    for (uint64_t k = 0; k < *opt.count; ++k)
      if (!done.count(opt.seed + k)) pending.push_back(opt.seed + k);
  return pending;
}

/// The next seed of an open range not done yet, from `cursor` in steps of `stride`.
uint64_t next_open_seed(const std::set<uint64_t>& done, uint64_t stride, uint64_t& cursor) {
  while (done.count(cursor)) cursor += stride;
  uint64_t s = cursor;
  cursor += stride;
  return s;
}

/// The writer's side of a campaign: stores each program's record, commits in
/// batches (at once on a finding, so a killed campaign loses none), decides
/// when to stop, and draws the progress line.
class Collector {
 public:
  Collector(Db& db, const CampaignOptions& opt, CampaignSummary& out, uint64_t stored_findings,
            double elapsed_before)
      : opt_(opt), out_(out), stored_findings_(stored_findings), elapsed_before_(elapsed_before), w_(db) {}

  double now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  bool should_stop() const {
    if (opt_.time_limit > 0 && now() >= opt_.time_limit) return true;
    if (opt_.stop_after_findings > 0 && stored_findings_ + w_.findings() >= uint64_t(opt_.stop_after_findings))
      return true;
    return false;
  }

  void take(const json& j) {
    w_.add(j, elapsed_before_ + now());
    ++out_.ran;
    ++out_.programs;
    if (j.contains("finding") && !out_.first_finding) out_.first_finding = elapsed_before_ + now();
    if (w_.pending() >= 64 || std::chrono::duration<double>(Clock::now() - last_commit_).count() > 0.25 ||
        j.contains("finding")) {
      w_.commit(elapsed_before_ + now());
      last_commit_ = Clock::now();
    }
    progress();
  }

  /// The progress line, at most every half second.
  void progress() {
    if (opt_.progress && now() - last_progress_ > 0.5) {
      progress_line(out_, stored_findings_ + w_.findings(), now(), false);
      last_progress_ = now();
    }
  }

  void finish() {
    out_.elapsed = now();
    w_.commit(elapsed_before_ + out_.elapsed);
    if (opt_.progress) progress_line(out_, stored_findings_ + w_.findings(), out_.elapsed, true);
  }

 private:
  const CampaignOptions& opt_;
  CampaignSummary& out_;
  uint64_t stored_findings_;
  double elapsed_before_;
  Clock::time_point start_ = Clock::now();
  Writer w_;
  Clock::time_point last_commit_ = Clock::now();
  double last_progress_ = -1;
};

/// The text of how a worker ended: "" for a normal exit.
std::string death_of(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "";
}

/// Whether the iteration of `seed` on program `p`, run in a forked child,
/// ends the way `how` says: the same death_of text, or "hang" (still running
/// after `timeout` seconds).
bool dies_the_same(uint64_t seed, const sem::Program& p, const CampaignOptions& opt,
                   const std::vector<BackendRunner>& runners, const std::string& how, double timeout) {
  std::fflush(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    FuzzOptions fo = opt.fuzz;
    fo.shrink = false;
    fuzz_program(seed, p, fo, runners);
    _exit(0);
  }
  auto start = Clock::now();
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > timeout) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return how == "hang";
    }
    usleep(1000);
  }
  return how != "hang" && death_of(status) == how;
}

/// The record of an iteration that died or hung: the program and pipeline
/// of its seed (generation is deterministic), shrunk while the iteration on
/// it still dies the same way (each try in a forked child; a hang is tried
/// with a timeout of at most 5 s), and the command that replays it.
json crash_record(uint64_t seed, const CampaignOptions& opt, const std::vector<BackendRunner>& runners,
                  const std::string& how, const std::string& message) {
  IterationResult r;
  r.seed = seed;
  r.status = "finding";
  r.note = message;
  r.pipeline = join_steps(random_pipeline(seed, opt.fuzz));
  r.backends.push_back("interp");
  Finding f;
  f.kind = FindingKind::Crash;
  f.component = how;
  f.pipeline = r.pipeline;
  f.message = message;
  f.program = generate_program(seed, opt.fuzz.gen);
  Reproducer rep;
  rep.stx = print_program(f.program);
  rep.size_before = rep.size_after = rep.stx.size();
  double timeout = how == "hang" ? std::min(opt.iteration_timeout, 5.0) : std::max(opt.iteration_timeout, 1.0);
  auto t = Clock::now();
  if (opt.fuzz.shrink && dies_the_same(seed, f.program, opt, runners, how, timeout)) {
    ShrinkTarget target;
    target.fails = [&](const sem::Program& q, const sem::Inputs&) {
      return dies_the_same(seed, q, opt, runners, how, timeout);
    };
    // The iteration draws its own inputs; these only keep the shrinker's
    // bookkeeping well-typed.
    target.fresh_inputs = [seed](const sem::Program& q) {
      return std::vector<sem::Inputs>{sem::generate_inputs(q, sem::InputKind::Normal, seed)};
    };
    ShrinkOptions so;
    so.max_seconds = opt.fuzz.shrink_seconds;
    ShrinkResult s = shrink(f.program, sem::generate_inputs(f.program, sem::InputKind::Normal, seed), target, so);
    rep.stx = print_program(s.program);
    rep.size_after = rep.stx.size();
    rep.tests = s.tests;
  }
  r.times.shrink = std::chrono::duration<double>(Clock::now() - t).count();
  r.finding = f;
  std::string backends = opt.backends + (opt.mutant.empty() ? "" : " --mutant " + opt.mutant);
  rep.command = "stax fuzz replay repro.stx --seed " + std::to_string(seed) + " --backends " + backends +
                "  # unshrunk: stax fuzz --seed " + std::to_string(seed) + " --count 1 --backends " + backends;
  return record(r, rep, opt.mutant);
}

/// Where a worker is in its share of the seeds: the next index into the
/// pending list (a counted range) or the next cursor (an open range).
struct Position {
  size_t index = 0;
  uint64_t cursor = 0;
};

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buf;
  bool open = false;
  std::optional<uint64_t> running;  ///< the seed it announced and has not finished
  Position resume;                  ///< where to restart after `running`
  /// Seconds `running` has had to run (Worker::tick), and the last tick.
  double ran = 0;
  Clock::time_point ticked = Clock::now();

  void restart_clock() {
    ran = 0;
    ticked = Clock::now();
  }

  /// Adds the wall time since the last tick, unless the worker was stopped
  /// (SIGSTOP: state T in /proc) or the supervisor itself did not run for
  /// longer than kTickGap (the whole campaign stopped, a suspended machine):
  /// a campaign paused by its user is not a hang.
  void tick() {
    auto now = Clock::now();
    double d = std::chrono::duration<double>(now - ticked).count();
    ticked = now;
    if (d < kTickGap && !stopped()) ran += d;
  }

  bool stopped() const {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t r = stat.rfind(')');
    return r != std::string::npos && r + 2 < stat.size() && (stat[r + 2] == 'T' || stat[r + 2] == 't');
  }

  /// The supervisor polls every 200 ms: a longer gap means it was not running.
  static constexpr double kTickGap = 5.0;
};

/// In a forked worker: its share of the seeds from `at`. Before each seed a
/// line {"start": seed, "index"/"cursor": where to resume after it}; then the
/// seed's record; until the range ends or the parent stops reading.
[[noreturn]] void worker_main(int jobs, int fd, Position at, const CampaignOptions& opt,
                              const std::vector<BackendRunner>& runners, const std::set<uint64_t>& done,
                              const std::vector<uint64_t>& pending) {
  for (;;) {
    uint64_t seed;
    if (opt.count) {
      if (at.index >= pending.size()) break;
      seed = pending[at.index];
      at.index += size_t(jobs);
    } else {
      seed = next_open_seed(done, uint64_t(jobs) * opt.stride, at.cursor);
    }
    json start = {{"start", seed}, {"index", at.index}, {"cursor", at.cursor}};
    if (!write_all(fd, start.dump() + "\n")) break;
    if (!write_all(fd, run_seed(seed, opt, runners).dump() + "\n")) break;
  }
  ::close(fd);
  _exit(0);
}

std::optional<std::string> start_worker(Worker& wk, int jobs, const CampaignOptions& opt,
                                        const std::vector<BackendRunner>& runners, const std::set<uint64_t>& done,
                                        const std::vector<uint64_t>& pending) {
  int p[2];
  if (pipe(p) != 0) return "pipe failed";
  pid_t parent = getpid();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(p[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    worker_main(jobs, p[1], wk.resume, opt, runners, done, pending);
  }
  ::close(p[1]);
  wk.pid = pid;
  wk.fd = p[0];
  wk.buf.clear();
  wk.open = true;
  wk.running.reset();
  wk.restart_clock();
  return std::nullopt;
}

/// Takes the complete lines a worker wrote: start announcements update its
/// position, records go to the collector.
void take_lines(Worker& wk, Collector& c) {
  for (size_t nl; (nl = wk.buf.find('\n')) != std::string::npos;) {
    std::string line = wk.buf.substr(0, nl);
    wk.buf.erase(0, nl + 1);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    if (j.contains("start")) {
      wk.running = j["start"].get<uint64_t>();
      wk.resume = {j["index"].get<size_t>(), j["cursor"].get<uint64_t>()};
      wk.restart_clock();
    } else if (!c.should_stop()) {
      wk.running.reset();
      c.take(j);
    }
  }
}

/// A worker's pipe closed or its iteration timed out: reaps it; an iteration
/// it left unfinished is a crash (or hang) finding, and the worker restarts
/// after that seed.
std::optional<std::string> end_worker(Worker& wk, bool hung, int jobs, const CampaignOptions& opt,
                                      const std::vector<BackendRunner>& runners, const std::set<uint64_t>& done,
                                      const std::vector<uint64_t>& pending, Collector& c) {
  if (hung) kill(wk.pid, SIGKILL);
  ::close(wk.fd);
  wk.open = false;
  int status = 0;
  waitpid(wk.pid, &status, 0);
  if (!wk.running || c.should_stop()) return std::nullopt;
  std::string how = hung ? "hang" : death_of(status);
  if (how.empty()) how = "exit before the end of its iteration";
  std::string message = hung ? "the iteration ran past " + std::to_string(int64_t(opt.iteration_timeout)) + " s"
                             : "the iteration died: " + how;
  c.take(crash_record(*wk.running, opt, runners, hung ? "hang" : how, message));
  return start_worker(wk, jobs, opt, runners, done, pending);
}

/// `jobs` forked workers (seeds are dealt round-robin); this process writes
/// the database and survives any worker's crash or hang.
std::optional<std::string> run_workers(int jobs, const CampaignOptions& opt, const std::vector<BackendRunner>& runners,
                                       const std::set<uint64_t>& done, const std::vector<uint64_t>& pending,
                                       Collector& c) {
  std::vector<Worker> ws(static_cast<size_t>(jobs));
  for (int k = 0; k < jobs; ++k) {
    ws[size_t(k)].resume = {size_t(k), opt.seed + uint64_t(k) * opt.stride};
    if (auto e = start_worker(ws[size_t(k)], jobs, opt, runners, done, pending)) return e;
  }
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<size_t> who;
    for (size_t k = 0; k < ws.size(); ++k)
      if (ws[k].open) {
        fds.push_back({ws[k].fd, POLLIN, 0});
        who.push_back(k);
      }
    if (fds.empty() || c.should_stop()) break;
    int n = poll(fds.data(), fds.size(), 200);
    for (size_t i = 0; n >= 0 && i < fds.size(); ++i) {
      Worker& wk = ws[who[i]];
      wk.tick();
      bool hung = wk.running && wk.ran > opt.iteration_timeout;
      if (!hung && !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char tmp[65536];
      ssize_t got = hung ? 0 : ::read(wk.fd, tmp, sizeof tmp);
      if (got > 0) {
        wk.buf.append(tmp, size_t(got));
        take_lines(wk, c);
        continue;
      }
      if (auto e = end_worker(wk, hung, jobs, opt, runners, done, pending, c)) return e;
    }
    c.progress();
  }
  for (Worker& wk : ws) {
    if (!wk.open) continue;
    kill(wk.pid, SIGKILL);
    ::close(wk.fd);
    waitpid(wk.pid, nullptr, 0);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> run_campaign(const CampaignOptions& in, const std::vector<BackendRunner>& runners,
                                        CampaignSummary& out) {
  CampaignOptions opt = in;
  Db db;
  if (auto e = open_db(db, opt.db)) return e;
  if (auto e = load_or_store_params(db, opt, out)) return e;
  if (opt.stop_after_findings <= 0 && !opt.count && opt.time_limit <= 0)
    return "a campaign needs --count N or --time SEC";

  std::set<uint64_t> done = done_seeds(db);
  uint64_t stored_findings = count_findings(db);
  double elapsed_before = read_meta(db, "elapsed");
  out.programs = done.size();
  std::vector<uint64_t> pending = pending_seeds(opt, done);

  Collector c(db, opt, out, stored_findings, elapsed_before);
  int jobs = std::max(1, opt.jobs);
  if (auto e = run_workers(jobs, opt, runners, done, pending, c)) return e;
  c.finish();

  out.findings = count_findings(db);
  if (!out.first_finding) {
    Stmt s(db.get(), "SELECT min(found_after) FROM findings");
    if (s.step() && !s.null(0)) out.first_finding = s.dbl(0);
  }
  return std::nullopt;
}

std::pair<uint64_t, uint64_t> shard_block(uint64_t seed, uint64_t count, uint64_t k, uint64_t n) {
  uint64_t q = count / n, r = count % n;
  return {seed + k * q + std::min(k, r), q + (k < r ? 1 : 0)};
}

}  // namespace stax::oracle
