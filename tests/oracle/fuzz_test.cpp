// Differential fuzzing (docs/design.md §8, `stax fuzz`): one iteration, backend comparison through
// an injected runner, the shrinker on planted failures, every transform
// mutant found by a short seeded campaign, and SQLite campaigns (resume after
// SIGKILL, independence from --jobs, shard merge).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include <sqlite3.h>

#include "oracle/campaign.h"
#include "oracle/fuzz.h"
#include "oracle/shrink.h"
#include "semantics/input_gen.h"
#include "semantics/mutants.h"
#include "semantics/npy.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;

namespace {

bool contains_op(const Program& p, const std::string& op) {
  return print_program(p).find(op + "(") != std::string::npos;
}

/// A backend with a planted bug: the interpreter, but the lowest bit of the
/// first element of every f32 output flips when the program uses exp.
oracle::BackendRunner fake_backend() {
  return {"fake", [](const Program& p, const Inputs& in) {
            IeeeOutcome r = eval_ieee(p, in);
            if (r.failure || !contains_op(p, "exp")) return r;
            for (auto& [name, t] : r.outputs) {
              if (t->dtype != DType::F32 || t->size() == 0) continue;
              auto copy = std::make_shared<Tensor>(*t);
              copy->as<uint32_t>()[0] ^= 1u;
              t = copy;
            }
            return r;
          }};
}

std::string temp_db(const std::string& stem) {
  auto p = std::filesystem::temp_directory_path() / ("stax-fuzz-test-" + std::to_string(::getpid()) + "-" + stem + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p.string();
}

int64_t count_rows(const std::string& db, const std::string& table) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return -1;
  }
  sqlite3_busy_timeout(h, 2000);
  sqlite3_stmt* s = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(h, ("SELECT count(*) FROM " + table).c_str(), -1, &s, nullptr) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(h);
  return n;
}

/// seed -> (status, finding component) of every stored run.
std::map<int64_t, std::string> outcomes(const std::string& db) {
  auto r = oracle::campaign_report(db);
  REQUIRE(std::holds_alternative<nlohmann::json>(r));
  const auto& j = std::get<nlohmann::json>(r);
  std::map<int64_t, std::string> m;
  for (const auto& f : j["findings"]) m[f["seed"].get<int64_t>()] = f["component"].get<std::string>();
  return m;
}

}  // namespace

TEST_CASE("fuzz: generator determinism, with rand leaves and wide index maps") {
  int rand_programs = 0, wide = 0;
  oracle::GenOptions g = oracle::with_rand();
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::string a = oracle::generate_program_text(seed, g);
    REQUIRE(a == oracle::generate_program_text(seed, g));
    CHECK(oracle::generate_program_text(seed).find("rand(") == std::string::npos);
    rand_programs += a.find("rand(") != std::string::npos;
    wide += a.find("65537*65537") != std::string::npos || a.find("2147483647*") != std::string::npos;
  }
  CHECK(rand_programs >= 10);
  CHECK(wide >= 3);
}

TEST_CASE("fuzz: one iteration is deterministic and the unmutated product has no findings") {
  oracle::FuzzOptions opt;
  int ok = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    oracle::IterationResult a = oracle::fuzz_one(seed, opt, {});
    oracle::IterationResult b = oracle::fuzz_one(seed, opt, {});
    REQUIRE(a.pipeline == b.pipeline);
    REQUIRE(a.status == b.status);
    INFO("seed " << seed << " pipeline " << a.pipeline << ": "
                 << (a.finding ? a.finding->message + "\n" + print_program(a.finding->program) : a.note));
    REQUIRE(!a.finding);
    ok += a.status == "ok";
  }
  CHECK(ok >= 60);
}

TEST_CASE("fuzz: outcome comparison is bitwise, NaN == NaN, and ⊥ on one side is a difference") {
  Program p = stax::test::parse_ok("input x : f32[2]\nlet y = map(exp, x)\noutput y\n");
  Inputs in;
  in["x"] = Tensor(DType::F32, {2});
  IeeeOutcome a = eval_ieee(p, in);
  CHECK(!oracle::outcome_difference(p, a, a));
  IeeeOutcome b = a;
  auto t = std::make_shared<Tensor>(*a.outputs.at("y"));
  t->as<uint32_t>()[1] = 0x7fc00001u;  // a NaN with a payload
  b.outputs["y"] = t;
  IeeeOutcome c = b;
  auto u = std::make_shared<Tensor>(*t);
  u->as<uint32_t>()[1] = 0xffc00000u;  // another NaN
  c.outputs["y"] = u;
  CHECK(!oracle::outcome_difference(p, b, c));
  REQUIRE(oracle::outcome_difference(p, a, b));
  IeeeOutcome f;
  f.failure = Failure{"y", {0}, "planted", "y"};
  CHECK(oracle::outcome_difference(p, a, f));
  CHECK(!oracle::outcome_difference(p, f, f));
}

TEST_CASE("fuzz: a backend mismatch is found, named and shrunk through an injected runner") {
  oracle::FuzzOptions opt;
  std::vector<oracle::BackendRunner> runners{fake_backend()};
  std::optional<oracle::IterationResult> hit;
  for (uint64_t seed = 1; seed <= 400 && !hit; ++seed) {
    oracle::IterationResult r = oracle::fuzz_one(seed, opt, runners);
    if (r.finding) hit = r;
  }
  REQUIRE(hit);
  const oracle::Finding& f = *hit->finding;
  CHECK(f.kind == oracle::FindingKind::Backend);
  CHECK(f.component == "fake");
  CHECK_THAT(f.message, Catch::Contains("interpreter") && Catch::Contains("backend"));
  REQUIRE(oracle::reproduces(f, f.program, f.inputs, runners));
  oracle::Reproducer rep = oracle::shrink_finding(f, runners, 5);
  Program small = stax::test::parse_ok(rep.stx, "<repro>");
  CHECK(rep.size_after < rep.size_before);
  CHECK(contains_op(small, "exp"));
  CHECK_THAT(rep.command, Catch::StartsWith("stax fuzz replay repro.stx --backend fake"));
  Inputs in;
  for (const auto& [name, bytes] : rep.npy_files) {
    auto t = parse_npy(bytes, name.find(".bf16.") != std::string::npos);
    REQUIRE(std::holds_alternative<Tensor>(t));
    in[name.substr(0, name.find('.'))] = std::get<Tensor>(t);
  }
  CHECK(oracle::reproduces(f, small, in, runners));
}

TEST_CASE("shrink: a planted failure shrinks to a smaller program that still fails") {
  // Planted: "fails" when some output is ⊥-free and the program computes a log of a sum.
  Program p = oracle::generate_program(11);
  std::string big =
      "input x : f32[4, 6]\ninput z : f32[6]\nlet a = map(fn(u, v) => add(mul(u, 2.0), tanh(v)), x, expand(z, [4, 6]))\n"
      "let b = red(sum, 0.0, [6], map(fn(u) => log(abs(u)), a))\nlet c = map(neg, b)\nlet d = permute(a, [1, 0])\n"
      "output c, d\n";
  p = stax::test::parse_ok(big);
  oracle::ShrinkTarget t;
  t.fails = [](const Program& q, const Inputs& in) {
    if (print_program(q).find("log(") == std::string::npos) return false;
    return !eval_ieee(q, in).failure;
  };
  t.fresh_inputs = [](const Program& q) { return std::vector<Inputs>{sem::generate_inputs(q, sem::InputKind::Normal, 3)}; };
  Inputs in = sem::generate_inputs(p, sem::InputKind::Normal, 3);
  REQUIRE(t.fails(p, in));
  oracle::ShrinkResult r = oracle::shrink(p, in, t, {5, 2000});
  INFO(print_program(r.program));
  CHECK(t.fails(r.program, r.inputs));
  CHECK(oracle::program_size(r.program) < oracle::program_size(p) / 2);
  CHECK(r.program.bindings.size() <= 2);
  CHECK(r.accepted > 0);
}

namespace {

struct MutantCase {
  const char* mutant;
  std::vector<std::string> transforms;  ///< the campaign's transform set (empty: all)
  std::set<std::string> components;     ///< where the finding must be pinned
};

}  // namespace

TEST_CASE("fuzz: every transform mutant is found by a short seeded campaign and pinned on its transform") {
  std::vector<MutantCase> cases = {
      {"floormod-negative", {"compose-views", "normalize"}, {"compose-views", "normalize"}},
      {"sum-reassoc-exact", {"split-reduction", "pairwise", "interleave-lanes"}, {"split-reduction", "pairwise", "interleave-lanes"}},
      {"cse-merge-rand", {"cse"}, {"cse"}},
      {"fusion-drops-bf16-round", {"fuse-maps"}, {"fuse-maps"}},
      {"view-offset-off-by-one", {"compose-views"}, {"compose-views"}},
      {"merge-ignores-stride", {"normalize", "merge-loops"}, {"merge-loops"}},
      {"dce-failing-exact", {"dce"}, {"dce"}},
      {"split-pos-zero-pad", {"split-reduction"}, {"split-reduction"}},
  };
  for (const MutantCase& c : cases) {
    DYNAMIC_SECTION(c.mutant) {
      oracle::FuzzOptions opt;
      opt.transforms = c.transforms;
      // The unmutated product passes the same campaign prefix...
      auto t0 = std::chrono::steady_clock::now();
      std::optional<oracle::IterationResult> hit;
      uint64_t seed = 1;
      {
        ScopedMutant m(c.mutant);
        for (; seed <= 3000 && !hit; ++seed) {
          oracle::IterationResult r = oracle::fuzz_one(seed, opt, {});
          if (r.finding) hit = r;
          if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(8 * test::time_scale())) break;
        }
        REQUIRE(hit);
        CHECK(c.components.count(hit->finding->component));
        CHECK(hit->finding->kind == oracle::FindingKind::Transform);
      }
      // ...and passes on the very program that exposed the mutant.
      CHECK(!oracle::fuzz_one(hit->seed, opt, {}).finding);
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      WARN(c.mutant << ": found at seed " << hit->seed << " in " << dt << " s");
    }
  }
}

TEST_CASE("campaign: resumes after SIGKILL without losing a finding; results do not depend on --jobs") {
  ScopedMutant m("view-offset-off-by-one");
  oracle::CampaignOptions base;
  base.seed = 1;
  base.count = 60;
  base.mutant = "view-offset-off-by-one";
  base.fuzz.transforms = {"compose-views", "normalize"};
  base.fuzz.shrink_seconds = 0.2;

  // Reference: one uninterrupted campaign.
  oracle::CampaignOptions ref = base;
  ref.db = temp_db("ref");
  oracle::CampaignSummary rs;
  REQUIRE(!oracle::run_campaign(ref, {}, rs));
  REQUIRE(rs.programs == 60);
  REQUIRE(rs.findings >= 2);
  auto expected = outcomes(ref.db);

  // Killed: a child runs the campaign and is SIGKILLed once a finding is stored.
  oracle::CampaignOptions killed = base;
  killed.db = temp_db("killed");
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    oracle::CampaignSummary s;
    oracle::run_campaign(killed, {}, s);
    _exit(0);
  }
  auto t0 = std::chrono::steady_clock::now();
  while (count_rows(killed.db, "findings") < 1 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20 * test::time_scale()))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  int64_t before = count_rows(killed.db, "runs");
  CHECK(before < 60);
  CHECK(count_rows(killed.db, "findings") >= 1);
  oracle::CampaignSummary ks;
  REQUIRE(!oracle::run_campaign(killed, {}, ks));
  CHECK(ks.resumed);
  CHECK(ks.programs == 60);
  CHECK(int64_t(ks.ran) == 60 - before);
  CHECK(outcomes(killed.db) == expected);

  // Two worker processes: the same outcomes.
  oracle::CampaignOptions two = base;
  two.db = temp_db("jobs2");
  two.jobs = 2;
  oracle::CampaignSummary ts;
  REQUIRE(!oracle::run_campaign(two, {}, ts));
  CHECK(ts.programs == 60);
  CHECK(outcomes(two.db) == expected);

  // Shards [1, 31) and [31, 61) merge into the same campaign.
  oracle::CampaignOptions a = base, b = base;
  a.db = temp_db("shard-a");
  a.count = 30;
  b.db = temp_db("shard-b");
  b.seed = 31;
  b.count = 30;
  oracle::CampaignSummary as, bs;
  REQUIRE(!oracle::run_campaign(a, {}, as));
  REQUIRE(!oracle::run_campaign(b, {}, bs));
  std::string merged = temp_db("merged");
  REQUIRE(!oracle::merge_campaigns(merged, {a.db, b.db}));
  CHECK(count_rows(merged, "runs") == 60);
  CHECK(outcomes(merged) == expected);
  auto rep = std::get<nlohmann::json>(oracle::campaign_report(merged));
  CHECK(rep["params"]["count"] == "60");
  CHECK(oracle::format_campaign_report(rep).find("FINDING") != std::string::npos);

  // Reproducers come out as files with a replay command.
  auto dir = std::filesystem::temp_directory_path() / ("stax-fuzz-test-" + std::to_string(::getpid()) + "-extract");
  REQUIRE(!oracle::extract_findings(ref.db, dir.string()));
  int found = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    CHECK(std::filesystem::exists(e.path() / "repro.stx"));
    CHECK(std::filesystem::exists(e.path() / "replay.sh"));
    ++found;
  }
  CHECK(found == int(expected.size()));
  std::filesystem::remove_all(dir);
  for (const std::string& f : {ref.db, killed.db, two.db, a.db, b.db, merged})
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(f + suffix);
}
