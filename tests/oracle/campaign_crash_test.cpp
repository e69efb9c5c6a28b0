// A crash is a finding, never the end of a campaign (docs/design.md §8, `stax fuzz`):
// an iteration that dies by a signal or hangs past the iteration timeout is
// recorded as a finding of kind "crash" with its seed, program and the
// command that runs that seed again, and the worker restarts after it, so
// every seed of the range is accounted for. The deliberately wrong case: the
// same backend without its planted crash gives no crash finding.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include <csignal>

#include "oracle/campaign.h"
#include "semantics/evaluator.h"
#include "semantics/printer.h"

using namespace stax;

namespace {

void remove_db(const std::string& p) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p + suffix);
}

/// A scratch database, removed when the test's process ends.
std::string temp_db(const std::string& stem) {
  auto p = std::filesystem::temp_directory_path() /
           ("stax-crash-test-" + std::to_string(::getpid()) + "-" + stem + ".db");
  remove_db(p.string());
  static std::vector<std::string> made;
  static struct Cleanup {
    ~Cleanup() {
      for (const std::string& d : made) remove_db(d);
    }
  } cleanup;
  made.push_back(p.string());
  return p.string();
}

/// The interpreter, except that it dies or hangs on the programs `pick`
/// selects (a property of the program text, so the same seeds every time).
oracle::BackendRunner planted(std::function<bool(const std::string&)> pick, int sig) {
  return {"planted", [pick, sig](const sem::Program& p, const sem::Inputs& in) {
            if (pick(sem::print_program(p))) {
              if (sig == 0)
                for (;;) ::pause();  // a hang
              std::signal(sig, SIG_DFL);  // die plainly, not through Catch's report in this forked child
              ::raise(sig);
            }
            return sem::eval_ieee(p, in);
          }};
}

bool every_third(const std::string& text) { return std::hash<std::string>{}(text) % 3 == 0; }

nlohmann::json report(const std::string& db) {
  auto r = oracle::campaign_report(db);
  REQUIRE(std::holds_alternative<nlohmann::json>(r));
  return std::get<nlohmann::json>(r);
}

oracle::CampaignOptions options(const std::string& db, int jobs) {
  oracle::CampaignOptions o;
  o.seed = 100;
  o.count = 24;
  o.jobs = jobs;
  o.db = temp_db(db);
  o.fuzz.shrink = false;
  o.iteration_timeout = 3;
  return o;
}

int crashes(const nlohmann::json& r, const std::string& component_part) {
  int n = 0;
  for (const auto& f : r["findings"])
    if (f["kind"].get<std::string>() == "crash" && f["component"].get<std::string>().find(component_part) != std::string::npos) {
      CHECK(f["command"].get<std::string>().find("--seed " + std::to_string(f["seed"].get<int64_t>())) !=
            std::string::npos);
      CHECK(!f["repro"].get<std::string>().empty());
      ++n;
    }
  return n;
}

}  // namespace

TEST_CASE("campaign: a worker killed by a signal is a crash finding; the campaign goes on") {
  for (int jobs : {1, 2}) {
    oracle::CampaignOptions o = options("sig" + std::to_string(jobs), jobs);
    oracle::CampaignSummary s;
    REQUIRE(!oracle::run_campaign(o, {planted(every_third, SIGFPE)}, s));
    CHECK(s.programs == 24);  // every seed recorded, the crashed ones as findings
    nlohmann::json r = report(o.db);
    int n = crashes(r, "SIGFPE");
    INFO("jobs " << jobs << ": " << n << " SIGFPE crash findings of " << s.findings);
    CHECK(n >= 1);
  }
}

TEST_CASE("campaign: an iteration past the timeout is a hang finding; the campaign goes on") {
  oracle::CampaignOptions o = options("hang", 2);
  o.count = 8;
  oracle::CampaignSummary s;
  REQUIRE(!oracle::run_campaign(o, {planted(every_third, 0)}, s));
  CHECK(s.programs == 8);
  CHECK(crashes(report(o.db), "hang") >= 1);
}

TEST_CASE("campaign: the same backend without the planted crash gives no crash finding") {
  oracle::CampaignOptions o = options("none", 2);
  oracle::CampaignSummary s;
  REQUIRE(!oracle::run_campaign(o, {planted([](const std::string&) { return false; }, SIGFPE)}, s));
  CHECK(s.programs == 24);
  CHECK(crashes(report(o.db), "") == 0);
}

TEST_CASE("campaign: a crash finding is shrunk while the iteration still dies the same way") {
  oracle::CampaignOptions o = options("shrink", 1);
  o.count = 6;
  o.fuzz.shrink = true;
  o.fuzz.shrink_seconds = 5;
  auto has_map = [](const std::string& text) { return text.find("map(") != std::string::npos; };
  oracle::CampaignSummary s;
  REQUIRE(!oracle::run_campaign(o, {planted(has_map, SIGABRT)}, s));
  nlohmann::json r = report(o.db);
  int shrunk = 0;
  for (const auto& f : r["findings"]) {
    if (f["kind"].get<std::string>() != "crash") continue;
    std::string repro = f["repro"].get<std::string>();
    INFO(repro);
    CHECK(has_map(repro));  // the planted cause survives
    CHECK(f["size_after"].get<int64_t>() <= f["size_before"].get<int64_t>());
    shrunk += f["size_after"].get<int64_t>() < f["size_before"].get<int64_t>();
    CHECK(f["command"].get<std::string>().find("stax fuzz replay repro.stx --seed ") == 0);
  }
  CHECK(shrunk >= 1);
}

TEST_CASE("campaign: a worker stopped (SIGSTOP) past the timeout is not a hang; one asleep as long is") {
  // The planted iteration stops its own worker; a grandchild continues it
  // after twice the iteration timeout. Stopped time is not iteration time,
  // so the campaign ends with no finding. The deliberately wrong case: the
  // same wait spent asleep instead of stopped is a hang.
  for (bool stop : {true, false}) {
    oracle::CampaignOptions o = options(stop ? "stopped" : "asleep", 1);
    o.count = 4;
    o.iteration_timeout = 1;
    oracle::BackendRunner r{"paused", [stop](const sem::Program& p, const sem::Inputs& in) {
                              static bool done = false;  // once per worker process
                              if (!done) {
                                done = true;
                                if (!stop) {
                                  ::sleep(2);
                                } else {
                                  pid_t me = ::getpid();
                                  if (::fork() == 0) {
                                    ::sleep(2);
                                    ::kill(me, SIGCONT);
                                    ::_exit(0);
                                  }
                                  ::raise(SIGSTOP);
                                }
                              }
                              return sem::eval_ieee(p, in);
                            }};
    oracle::CampaignSummary s;
    REQUIRE(!oracle::run_campaign(o, {r}, s));
    CHECK(s.programs == 4);
    INFO((stop ? "stopped" : "asleep"));
    int hangs = crashes(report(o.db), "hang");
    if (stop) CHECK(hangs == 0);
    else CHECK(hangs >= 1);  // each restarted worker sleeps once more
  }
}
