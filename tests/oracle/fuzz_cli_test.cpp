// `stax fuzz` end to end (docs/design.md §8): exit codes, the database,
// reports, reproducer files that replay, resume, merge, --list-mutants.
#include <catch2/catch.hpp>

#include "tests/test_util.h"

using stax::test::run_stax;

namespace {
/// `stax args` run from `dir` (a reproducer names its files relative to its folder); the exit code.
int run_in(const std::filesystem::path& dir, const std::string& args) {
  std::string cmd = "cd '" + dir.string() + "' && " + STAX_BINARY + " " + args + " >/dev/null 2>&1";
  int st = std::system(cmd.c_str());
  return WEXITSTATUS(st);
}
}  // namespace

TEST_CASE("stax fuzz: a mutant campaign stores findings whose reproducers replay") {
  auto dir = stax::test::scratch("stax_fuzz_cli");
  std::string db = (dir / "c.db").string(), out = (dir / "found").string();
  std::filesystem::remove_all(out);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db + s);

  auto list = run_stax(dir, "fuzz --list-mutants");
  CHECK(list.code == 0);
  for (const char* m : {"fma-contract", "floormod-negative", "split-pos-zero-pad", "cse-merge-rand"})
    CHECK_THAT(list.out, Catch::Contains(m));
  CHECK(run_stax(dir, "fuzz --count 5 --mutant no-such-bug").code == 2);
  CHECK(run_stax(dir, "fuzz").code == 2);
  CHECK(run_stax(dir, "fuzz --count 3 --backends nosuch").code == 2);

  auto r = run_stax(dir, "fuzz --seed 1 --count 40 --mutant view-offset-off-by-one --shrink-seconds 2 --db " + db +
                             " --out " + out);
  INFO(r.out << r.err);
  REQUIRE(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("FINDING") && Catch::Contains("40 programs"));
  CHECK_THAT(r.err, Catch::Contains("programs (") && Catch::Contains("findings"));  // the progress line

  auto rep = run_stax(dir, "fuzz report --json --db " + db);
  CHECK(rep.code == 1);
  CHECK_THAT(rep.out, Catch::Contains("\"by_transform\"") && Catch::Contains("\"interp\": 40"));

  int replayed = 0;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    std::string cmd = stax::test::slurp(e.path() / "replay.sh");
    size_t at = cmd.find("stax fuzz replay");
    REQUIRE(at != std::string::npos);
    std::string args = cmd.substr(at + 5);
    args = args.substr(0, args.find('\n'));
    INFO(args);
    CHECK(run_in(e.path(), args) == 1);
    // Without the mutant the product passes the same reproducer.
    std::string clean = args.substr(0, args.find(" --mutant"));
    CHECK(run_in(e.path(), clean) == 0);
    ++replayed;
  }
  CHECK(replayed >= 1);

  // Resuming a finished campaign runs nothing new; merging shards unions them.
  auto resumed = run_stax(dir, "fuzz --mutant view-offset-off-by-one --quiet --db " + db);
  CHECK(resumed.code == 1);
  CHECK_THAT(resumed.out, Catch::Contains("(resumed)") && Catch::Contains("40 programs"));
  std::string db2 = (dir / "d.db").string(), merged = (dir / "m.db").string();
  for (const std::string& f : {db2, merged})
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(f + s);
  CHECK(run_stax(dir, "fuzz --seed 41 --count 10 --mutant view-offset-off-by-one --quiet --db " + db2).code <= 1);
  auto m = run_stax(dir, "fuzz merge " + merged + " " + db + " " + db2);
  CHECK(m.code == 0);
  CHECK_THAT(m.out, Catch::Contains("50 programs"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("stax fuzz --backends gpu-emu: the GPU kernels on the emulator against the interpreter") {
  auto dir = stax::test::scratch("stax_fuzz_gpu_emu");
  // A campaign on gpu-emu into a fresh database; returns its exit code.
  auto campaign = [&](const std::string& db, const std::string& args) {
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db + s);
    auto r = run_stax(dir, "fuzz --backends gpu-emu --quiet --db " + db + " " + args);
    INFO(r.out << r.err);
    return r.code;
  };
  // Without a mutant: no finding; the report counts the programs run on gpu-emu.
  std::string db = (dir / "g.db").string(), bdb = (dir / "bad.db").string();
  CHECK(campaign(db, "--seed 100 --count 12") == 0);
  CHECK_THAT(run_stax(dir, "fuzz report --db " + db).out, Catch::Contains("gpu-emu=12"));
  // The wrong case: a GPU codegen mutant (negative gather indices not
  // wrapped) is found by the same campaign loop.
  CHECK(campaign(bdb, "--seed 1 --count 30 --mutant neg-index-unwrapped --no-shrink") == 1);
  auto found = run_stax(dir, "fuzz report --json --db " + bdb);
  CHECK_THAT(found.out, Catch::Contains("\"component\": \"gpu-emu\""));
}
