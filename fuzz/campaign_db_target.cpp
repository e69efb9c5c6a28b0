// Fuzz target: campaign databases written by an older or a foreign version.
// The input is an SQL script (seeds: dumps of real campaigns, old schemas);
// it builds a database file, which the report, the merge or the extraction
// of findings then reads (one of the three, by the input's length: each
// opens the database again, and four opens an input ran the target at 130
// executions/s). They may refuse it with a message; they must not crash,
// hang, or write outside the folder they are given.
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <variant>

#include "fuzz/fuzz_target.h"
#include "oracle/campaign.h"
#include "proofs/obligation.h"

using namespace stax;
namespace fs = std::filesystem;

namespace {

/// The script may create and fill tables, nothing else: no ATTACH (files
/// elsewhere), no VACUUM INTO, no extensions; at most a bounded amount of work.
int authorize(void*, int action, const char*, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return SQLITE_DENY;
    default:
      return SQLITE_OK;
  }
}

int progress(void* steps) { return ++*static_cast<int*>(steps) > 500; }  // x 1000 VM steps

/// A private folder, in memory where the machine has /dev/shm (the target is
/// bound by file operations), removed at exit.
const fs::path& workdir() {
  static fs::path dir = [] {
    std::error_code ec;
    fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string t = (base / "stax-fuzz-db-XXXXXX").string();
    if (!mkdtemp(t.data())) fuzz::fail("cannot create a temporary folder");
    std::atexit([] {
      std::error_code e;
      fs::remove_all(workdir(), e);
    });
    return fs::path(t);
  }();
  return dir;
}

bool build(const fs::path& file, const std::string& script) {
  sqlite3* db = nullptr;
  if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  int steps = 0;
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  sqlite3_set_authorizer(db, authorize, nullptr);
  sqlite3_progress_handler(db, 1000, progress, &steps);
  sqlite3_exec(db, script.c_str(), nullptr, nullptr, nullptr);  // a failing statement ends the script
  sqlite3_close(db);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool installed = (stax::proofs::install_default_discharger(), true);
  (void)installed;
  if (size > 65536) return 0;
  const fs::path& dir = workdir();
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  fs::path db = dir / "campaign.db";
  if (!build(db, std::string(fuzz::as_text(data, size)))) return 0;
  switch (size % 3) {
    case 0: {
      auto report = oracle::campaign_report(db.string());
      if (const auto* r = std::get_if<nlohmann::json>(&report)) (void)oracle::format_campaign_report(*r);
      break;
    }
    case 1:
      (void)oracle::extract_findings(db.string(), (dir / "out").string());
      break;
    default: {
      oracle::MergeStats st;
      (void)oracle::merge_campaigns((dir / "merged.db").string(), {db.string()}, &st);
    }
  }
  // Nothing may appear beside the databases and the output folder.
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name != "out" && name.rfind("campaign.db", 0) != 0 && name.rfind("merged.db", 0) != 0)
      fuzz::fail("a file written outside the output folder: " + e.path().string());
  }
  for (const auto& e : fs::recursive_directory_iterator(dir / "out"))
    if (e.path().parent_path().parent_path() != dir / "out" && e.path().parent_path() != dir / "out")
      fuzz::fail("a file written outside a finding's folder: " + e.path().string());
  return 0;
}
