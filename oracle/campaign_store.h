// The SQLite store of fuzz campaigns (docs/design.md §8 `stax fuzz`), private to
// oracle/campaign*.cpp: a thin wrapper over the C API, the schema (params,
// meta, runs, findings, finding_files) and the readers both the campaign
// runner and the reports share.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace stax::oracle::campaign_store {

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
  bool is_null(int c) { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  bool null(int c) { return sqlite3_column_type(s_, c) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

inline constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS params(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value REAL);
CREATE TABLE IF NOT EXISTS runs(seed INTEGER PRIMARY KEY, pipeline TEXT, cls TEXT, status TEXT, backends TEXT,
  note TEXT, backend_skipped INTEGER, t_generate REAL, t_transform REAL, t_check REAL, t_backends REAL,
  t_shrink REAL, t_prove REAL);
CREATE TABLE IF NOT EXISTS findings(seed INTEGER PRIMARY KEY, kind TEXT, component TEXT, pipeline TEXT, cls TEXT,
  message TEXT, mutant TEXT, found_after REAL, program TEXT, repro TEXT, command TEXT, size_before INTEGER,
  size_after INTEGER, shrink_tests INTEGER);
CREATE TABLE IF NOT EXISTS finding_files(seed INTEGER, name TEXT, data BLOB, PRIMARY KEY(seed, name));
)";

inline std::optional<std::string> open_db(Db& db, const std::string& file) {
  if (auto e = db.open(file)) return e;  // names the file
  if (!file.empty())
    if (auto e = db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"))
      return file + ": " + *e + " (not a campaign database)";
  if (auto e = db.exec(kSchema)) return e;
  // A database from before the prover has no t_prove column.
  bool has_prove = false;
  Stmt cols(db.get(), "PRAGMA table_info(runs)");
  while (cols.step()) has_prove |= cols.text(1) == "t_prove";
  if (!has_prove) return db.exec("ALTER TABLE runs ADD COLUMN t_prove REAL");
  return std::nullopt;
}

inline std::map<std::string, std::string> read_params(Db& db) {
  std::map<std::string, std::string> m;
  Stmt s(db.get(), "SELECT key, value FROM params");
  while (s.step()) m[s.text(0)] = s.text(1);
  return m;
}

inline double read_meta(Db& db, const std::string& key) {
  Stmt s(db.get(), "SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  return s.step() ? s.dbl(0) : 0.0;
}

}  // namespace stax::oracle::campaign_store
