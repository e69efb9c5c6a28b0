// `stax fuzz --shard K/N` (docs/campaigns.md): bad values, shards of a counted
// range are contiguous blocks that partition it, shards of an open (--time)
// range are residues mod N, a shard's database refuses another shard, and
// `stax fuzz merge` keeps every finding and counts duplicate seeds.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <map>
#include <set>

#include "oracle/campaign.h"
#include "tests/test_util.h"

using stax::test::run_stax;
using json = nlohmann::json;

namespace {

void remove_db(const std::string& f) {
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(f + s);
}

std::vector<uint64_t> seeds_of(const std::string& db, const char* table) {
  sqlite3* h = nullptr;
  std::vector<uint64_t> r;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  std::string sql = std::string("SELECT seed FROM ") + table + " ORDER BY seed";
  REQUIRE(sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) r.push_back(uint64_t(sqlite3_column_int64(s, 0)));
  sqlite3_finalize(s);
  sqlite3_close(h);
  return r;
}

/// An empty campaign database at `db` (as `fuzz merge` creates one), then
/// `sql` run on it: the rows of a foreign version.
void foreign_db(const std::string& db, const std::string& sql) {
  remove_db(db);
  REQUIRE(!stax::oracle::merge_campaigns(db, {}));
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  CHECK(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(h);
}

}  // namespace

TEST_CASE("shard_block: N contiguous blocks partition the range, the first count%N one seed longer") {
  for (uint64_t count = 0; count <= 40; ++count)
    for (uint64_t n = 1; n <= 7; ++n) {
      uint64_t next = 100;
      for (uint64_t k = 0; k < n; ++k) {
        auto [first, cnt] = stax::oracle::shard_block(100, count, k, n);
        INFO("count " << count << " shard " << k << "/" << n);
        CHECK(first == next);
        CHECK(cnt == count / n + (k < count % n ? 1 : 0));
        next = first + cnt;
      }
      CHECK(next == 100 + count);
    }
  // No overflow near the top of the seed space.
  auto [first, cnt] = stax::oracle::shard_block(0, UINT64_MAX, 2, 3);
  CHECK(first == 2 * (UINT64_MAX / 3));
  CHECK(cnt == UINT64_MAX / 3);
}

TEST_CASE("stax fuzz --shard: bad values, blocks, resume, merge with duplicates") {
  auto dir = stax::test::scratch("stax_fuzz_shard");
  for (const char* bad : {"3/3", "a/2", "1/0", "1", "-1/2", "1/2/3", "/2", "1/", "99999999999999999999/2"}) {
    auto r = run_stax(dir, std::string("fuzz --count 5 --shard '") + bad + "'");
    INFO(bad << ": " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--shard"));
  }

  const std::string camp = "fuzz --seed 1 --count 40 --mutant view-offset-off-by-one --no-shrink --quiet";
  std::string whole = (dir / "whole.db").string();
  remove_db(whole);
  REQUIRE(run_stax(dir, camp + " --db " + whole).code == 1);

  std::vector<std::string> shards;
  std::set<uint64_t> seen;
  const uint64_t first[] = {1, 15, 28}, count[] = {14, 13, 13};
  for (int k = 0; k < 3; ++k) {
    std::string db = (dir / ("s" + std::to_string(k) + ".db")).string();
    remove_db(db);
    auto r = run_stax(dir, camp + " --shard " + std::to_string(k) + "/3 --json --db " + db);
    INFO(r.err);
    REQUIRE(r.code <= 1);
    json rep = json::parse(r.out);
    CHECK(rep["params"]["seed"] == std::to_string(first[k]));
    CHECK(rep["params"]["count"] == std::to_string(count[k]));
    CHECK(rep["params"]["shard"] == std::to_string(k) + "/3");
    for (uint64_t s : seeds_of(db, "runs")) {
      CHECK(s >= first[k]);
      CHECK(s < first[k] + count[k]);
      CHECK(seen.insert(s).second);
    }
    shards.push_back(db);
  }
  CHECK(seen.size() == 40);

  // A shard's database resumes as that shard only.
  auto other = run_stax(dir, camp + " --shard 1/3 --db " + shards[0]);
  CHECK(other.code == 2);
  CHECK_THAT(other.err, Catch::Contains("holds shard 0/3, not shard 1/3"));
  auto again = run_stax(dir, camp + " --shard 0/3 --db " + shards[0]);
  CHECK(again.code <= 1);
  CHECK_THAT(again.out, Catch::Contains("(resumed)"));

  // The merge of the shards is the whole campaign; a shard merged twice is counted as duplicates.
  std::string merged = (dir / "merged.db").string();
  remove_db(merged);
  auto m = run_stax(dir, "fuzz merge " + merged + " " + shards[0] + " " + shards[1] + " " + shards[2] + " " + shards[0]);
  INFO(m.out << m.err);
  CHECK(m.code == 0);
  CHECK_THAT(m.out, Catch::Contains("40 programs") && Catch::Contains("duplicate seeds, kept once: 14 programs"));
  CHECK(seeds_of(merged, "runs") == seeds_of(whole, "runs"));
  CHECK(seeds_of(merged, "findings") == seeds_of(whole, "findings"));
  CHECK(!seeds_of(whole, "findings").empty());
  // The deliberately wrong merge: without shard 1, findings are missing.
  std::string partial = (dir / "partial.db").string();
  remove_db(partial);
  REQUIRE(run_stax(dir, "fuzz merge " + partial + " " + shards[0] + " " + shards[2]).code == 0);
  CHECK(seeds_of(partial, "runs").size() == 27);

  // An open range: shard 1 of 4 with two workers takes the seeds 101, 105, 109, ...
  std::string open = (dir / "open.db").string();
  remove_db(open);
  auto o = run_stax(dir, "fuzz --seed 100 --time 1 --jobs 2 --shard 1/4 --quiet --db " + open);
  INFO(o.err);
  CHECK(o.code <= 1);
  auto seeds = seeds_of(open, "runs");
  CHECK(seeds.size() >= 2);
  for (uint64_t s : seeds) CHECK(s % 4 == 1);
  for (uint64_t s : seeds) CHECK(s >= 101);
  std::filesystem::remove_all(dir);
}

TEST_CASE("fuzz merge: seeds of a foreign database anywhere in int64, the merged range without overflow") {
  auto dir = stax::test::scratch("stax_fuzz_merge_span");
  auto params_of = [](const std::string& db) {
    std::map<std::string, std::string> m;
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(h, "SELECT key, value FROM params", -1, &s, nullptr) == SQLITE_OK);
    while (sqlite3_step(s) == SQLITE_ROW)
      m[reinterpret_cast<const char*>(sqlite3_column_text(s, 0))] =
          reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    sqlite3_finalize(s);
    sqlite3_close(h);
    return m;
  };
  // (lowest seed, highest seed, the merged count; "" where none fits 64 bits)
  const struct {
    const char *lo, *hi, *count;
  } cases[] = {{"-1", "9223372036854775807", "9223372036854775809"},
               {"5", "7", "3"},
               {"-9223372036854775808", "9223372036854775807", ""}};
  for (const auto& c : cases) {
    INFO(c.lo << " .. " << c.hi);
    std::string in = (dir / "in.db").string(), out = (dir / "out.db").string();
    remove_db(out);
    foreign_db(in, std::string("INSERT INTO runs(seed) VALUES(") + c.lo + "), (" + c.hi + ");");
    stax::oracle::MergeStats st;
    REQUIRE(!stax::oracle::merge_campaigns(out, {in}, &st));
    CHECK(st.runs_added == 2);
    auto p = params_of(out);
    CHECK(p["seed"] == c.lo);
    CHECK(p["count"] == c.count);
  }
}

TEST_CASE("fuzz report: refused backend runs of a foreign database summed without overflow") {
  auto dir = stax::test::scratch("stax_fuzz_report_sum");
  std::string db = (dir / "in.db").string();
  const struct {
    const char* values;
    int64_t sum;
  } cases[] = {{"(1, 2), (2, 3)", 5},
               {"(1, 9223372036854775807), (2, 9223372036854775807)", INT64_MAX},
               {"(1, -9223372036854775808), (2, -1)", INT64_MIN}};
  for (const auto& c : cases) {
    INFO(c.values);
    foreign_db(db, std::string("INSERT INTO runs(seed, backend_skipped) VALUES") + c.values + ";");
    auto r = stax::oracle::campaign_report(db);
    REQUIRE(std::holds_alternative<json>(r));
    CHECK(std::get<json>(r)["backend_skipped"].get<int64_t>() == c.sum);
  }
}
