// Bad input, stated: every golden bad-input case
// (tests/golden/bad_input, and the graph goldens of tests/golden/compiler and
// tests/golden/autodiff) run against the `stax` binary: the exit code and the
// first line of the message as the case states them, never a crash or a
// hang; every case listed in docs/bad-input.md; and the deliberately wrong
// cases (tests/golden/bad_input/wrong, a crashing and a hanging binary) must
// be reported as failures.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "tests/cli/bad_input_cases.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
namespace bi = stax::test::bad_input;

namespace {

const char* kFolders[] = {"bad_input", "compiler", "autodiff"};

fs::path scratch() { return stax::test::scratch("stax_bad_input_test"); }

/// A copy of the golden folders in the scratch folder (commands that write,
/// e.g. `stax fuzz merge OUT`, write there, not into the source tree).
fs::path golden_copy() {
  fs::path root = scratch() / "golden";
  static bool done = false;
  if (!done) {
    fs::remove_all(root);
    fs::create_directories(root);
    for (const char* d : kFolders)
      fs::copy(fs::path(STAX_SOURCE_DIR) / "tests/golden" / d, root / d, fs::copy_options::recursive);
    done = true;
  }
  return root;
}

std::vector<bi::Case> cases_of(const fs::path& root, const std::string& dir) {
  std::vector<bi::Case> out;
  for (auto& c : bi::list_cases(root, dir)) {
    if (auto* e = std::get_if<std::string>(&c)) FAIL(*e);
    out.push_back(std::get<bi::Case>(c));
  }
  return out;
}

std::vector<bi::Case> all_cases(const fs::path& root) {
  std::vector<bi::Case> all;
  for (const char* d : kFolders)
    for (bi::Case& c : cases_of(root, d)) all.push_back(std::move(c));
  return all;
}

}  // namespace

TEST_CASE("bad input: every golden case gives its stated exit code and message, never a crash or a hang") {
  fs::path root = golden_copy();
  std::vector<bi::Case> all = all_cases(root);
  CHECK(all.size() >= 100);
  int failed = 0;
  for (const bi::Case& c : all) {
    bi::Outcome r = bi::run_case(STAX_BINARY, root, c.args, 60, scratch());
    auto why = bi::judge(c, r);
    INFO(c.subject << ": stax " << c.args);
    INFO(why.value_or(""));
    if (why) ++failed;
    CHECK_FALSE(why.has_value());
  }
  WARN(all.size() << " bad-input cases run, " << failed << " failed");
}

TEST_CASE("bad input: docs/bad-input.md lists every case, and every file it names exists") {
  fs::path root = golden_copy();
  std::string doc = bi::slurp_file(fs::path(STAX_SOURCE_DIR) / "docs/bad-input.md");
  REQUIRE(doc.find("## Every case") != std::string::npos);
  for (const bi::Case& c : all_cases(root)) {
    INFO(c.subject);
    size_t at = doc.find("`" + c.subject + "`", doc.find("## Every case"));
    REQUIRE(at != std::string::npos);
    // Its row shows the stated message (the table may cut it after 97
    // characters; '|' is escaped there).
    size_t b = doc.rfind('\n', at) + 1, e = doc.find('\n', at);
    std::string row = doc.substr(b, e - b);
    std::string want = bi::replace_all(c.text, "|", "\\|").substr(0, 60);
    INFO(row);
    CHECK(row.find(want) != std::string::npos);
  }
  static const std::regex named(R"(`((bad_input|compiler|autodiff)/[A-Za-z0-9_./]+)`)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), named); it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(fs::exists(fs::path(STAX_SOURCE_DIR) / "tests/golden" / (*it)[1].str()));
  }
}

// Every check ships with a deliberately wrong case that must fail: cases
// whose stated verdict is wrong (exit code, column, message, stream), and
// binaries that crash or hang, must each be reported.
TEST_CASE("bad input: the driver reports wrong expectations, crashes and hangs") {
  fs::path root = golden_copy();
  std::vector<bi::Case> wrong = cases_of(root, "bad_input/wrong");
  REQUIRE(wrong.size() >= 5);
  for (const bi::Case& c : wrong) {
    INFO(c.subject << ": stax " << c.args);
    bi::Outcome r = bi::run_case(STAX_BINARY, root, c.args, 60, scratch());
    CHECK(bi::judge(c, r).has_value());
  }
  // A header that states no verdict is an error, not a silently passing case.
  fs::path bad = stax::test::write(scratch(), "no_verdict.stx", "# expect: nothing much\n# run: stax run x\n");
  CHECK(std::holds_alternative<std::string>(bi::parse_header(bad, "no_verdict.stx")));
  // A crash and a hang, whatever the case states, are failures.
  bi::Case c = std::get<bi::Case>(bi::parse_header(root / "bad_input/unknown_name.stx", "bad_input/unknown_name.stx"));
  fs::path crash = stax::test::write(scratch(), "crash.sh", "#!/bin/sh\nkill -SEGV $$\n");
  fs::path hang = stax::test::write(scratch(), "hang.sh", "#!/bin/sh\nexec sleep 30\n");
  fs::permissions(crash, fs::perms::owner_all);
  fs::permissions(hang, fs::perms::owner_all);
  auto crashed = bi::judge(c, bi::run_case(crash.string(), root, c.args, 20, scratch()));
  REQUIRE(crashed.has_value());
  CHECK_THAT(*crashed, Catch::StartsWith("crash: killed by signal 11"));
  auto hung = bi::judge(c, bi::run_case(hang.string(), root, c.args, 1, scratch()));
  REQUIRE(hung.has_value());
  CHECK_THAT(*hung, Catch::StartsWith("hang"));
}
