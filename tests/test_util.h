// Helpers shared by the test files (header-only, namespace stax::test):
// bit-pattern printing, tensor builders, parsing and evaluation that FAIL the
// test on a diagnostic or ⊥, and running the `stax` binary (STAX_BINARY, set
// by tests/CMakeLists.txt) from a per-file scratch folder.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "semantics/dtype.h"
#include "semantics/evaluator.h"
#include "semantics/ir.h"
#include "semantics/parser.h"
#include "semantics/tensor.h"

namespace stax::test {

// ------------------------------------------------------------- bit patterns

/// A bit pattern that Catch prints in zero-padded hex.
template <class U>
struct Hex {
  U v;
  bool operator==(const Hex&) const = default;
};
/// Prints a Hex as 0x followed by 2*sizeof(U) hex digits.
template <class U>
std::ostream& operator<<(std::ostream& os, const Hex<U>& h) {
  return os << "0x" << std::hex << std::setw(int(sizeof(U) * 2)) << std::setfill('0') << uint64_t(h.v) << std::dec;
}
using H16 = Hex<uint16_t>;  ///< f16/bf16 bit pattern.
using H32 = Hex<uint32_t>;  ///< f32 bit pattern.
using H64 = Hex<uint64_t>;  ///< f64 bit pattern.

/// The bits of an f32.
/// Wall-clock budgets of tests (a campaign's time to find a seeded bug) are
/// multiplied by this: 4 under `scripts/test.sh --sanitize` (STAX_SANITIZED),
/// whose instrumented code runs several times slower; 1 otherwise.
inline int time_scale() { return std::getenv("STAX_SANITIZED") ? 4 : 1; }

inline H32 b32(float x) { return {std::bit_cast<uint32_t>(x)}; }
/// The bits of an f64.
inline H64 b64(double x) { return {std::bit_cast<uint64_t>(x)}; }

/// True for an f32 NaN bit pattern (either sign, quiet or signalling).
inline bool is_nan32(H32 h) { return (h.v & 0x7f800000u) == 0x7f800000u && (h.v & 0x007fffffu) != 0; }

inline const float kNaN = std::numeric_limits<float>::quiet_NaN();  ///< f32 quiet NaN.
inline const float kInf = std::numeric_limits<float>::infinity();   ///< f32 +infinity.

// ---------------------------------------------------------------- tensors

/// A tensor of dtype `dt` and `shape` holding `v` (REQUIREs matching element size and count).
template <class T>
sem::Tensor tensor(sem::DType dt, sem::Shape shape, const std::vector<T>& v) {
  REQUIRE(sizeof(T) == size_t(sem::dtype_bytes(dt)));
  sem::Tensor t(dt, std::move(shape));
  REQUIRE(size_t(t.size()) == v.size());
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * sizeof(T));
  return t;
}
/// A 1-D tensor of dtype `dt` holding `v` (REQUIREs matching element size).
template <class T>
sem::Tensor tensor(sem::DType dt, const std::vector<T>& v) {
  REQUIRE(sizeof(T) == size_t(sem::dtype_bytes(dt)));
  sem::Tensor t(dt, {int64_t(v.size())});
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * sizeof(T));
  return t;
}
/// The elements of `t` as host values of type T (REQUIREs matching element size).
template <class T>
std::vector<T> elems(const sem::Tensor& t) {
  REQUIRE(sizeof(T) == size_t(sem::dtype_bytes(t.dtype)));
  std::vector<T> v(size_t(t.size()));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(T));
  return v;
}
/// An f32 tensor of a shape.
inline sem::Tensor f32(sem::Shape s, const std::vector<float>& v) { return tensor(sem::DType::F32, std::move(s), v); }
/// An i32 tensor of a shape.
inline sem::Tensor i32(sem::Shape s, const std::vector<int32_t>& v) { return tensor(sem::DType::I32, std::move(s), v); }
/// An i64 tensor of a shape.
inline sem::Tensor i64(sem::Shape s, const std::vector<int64_t>& v) { return tensor(sem::DType::I64, std::move(s), v); }

/// The elements of a 4-byte tensor as bit patterns.
inline std::vector<H32> bits32(const sem::Tensor& t) {
  std::vector<H32> r;
  for (uint32_t u : elems<uint32_t>(t)) r.push_back({u});
  return r;
}
/// The elements of a 2-byte tensor as bit patterns.
inline std::vector<H16> bits16(const sem::Tensor& t) {
  std::vector<H16> r;
  for (uint16_t u : elems<uint16_t>(t)) r.push_back({u});
  return r;
}

// ------------------------------------------------------ parsing, evaluation

/// Parses `text` (as file `file`); FAILs with the diagnostic and the source if it does not parse.
inline sem::Program parse_ok(const std::string& text, const std::string& file = "<input>") {
  sem::ParseResult r = sem::parse_program(text, file);
  if (const sem::Diag* d = std::get_if<sem::Diag>(&r))
    FAIL("unexpected diagnostic: " << d->str() << "\n--- source:\n" << text);
  return std::get<sem::Program>(std::move(r));
}

/// The binding called `name` in `p`; FAILs if there is none.
inline const sem::Binding& binding(const sem::Program& p, const std::string& name) {
  for (const sem::Binding& b : p.bindings)
    if (b.name == name) return b;
  FAIL("no binding " << name);
  throw 0;
}
/// The expression of the binding called `name` in `p`; FAILs if there is none.
inline const sem::Expr& bexpr(const sem::Program& p, const std::string& name) { return binding(p, name).expr; }

/// Parses and evaluates `text` in the Ieee domain; FAILs if it does not parse or rejects `in`.
inline sem::IeeeOutcome eval(const std::string& text, const sem::Inputs& in) {
  sem::Program p = parse_ok(text);
  auto bad = sem::check_inputs(p, in);
  if (bad) FAIL("inputs rejected: " << *bad);
  return sem::eval_ieee(p, in);
}

/// Output `out` of `text` run in the Ieee domain; FAILs as eval does, and on ⊥.
inline sem::Tensor run(const std::string& text, const sem::Inputs& in, const std::string& out = "y") {
  sem::IeeeOutcome o = eval(text, in);
  if (o.failure) FAIL("program failed: " << o.failure->str());
  return *o.outputs.at(out);
}

/// True if `part` occurs in `s`.
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// -------------------------------------------------------------------- CLI

/// Exit code and captured stdout/stderr of one `stax` run.
struct Run {
  int code;
  std::string out, err;
};

/// The folder $TMP/<prefix>_<pid>, created if missing; give each test file its own prefix.
inline std::filesystem::path scratch(const std::string& prefix) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(p);
  return p;
}

/// The whole content of a file ("" if it cannot be read).
/// The value of a golden file's "# KEY: value" header line.
inline std::optional<std::string> optional_header(const std::string& text, const std::string& key) {
  size_t k = text.find("# " + key + ": ");
  if (k == std::string::npos) return std::nullopt;
  size_t b = k + key.size() + 4;
  return text.substr(b, text.find('\n', b) - b);
}
inline std::string header(const std::string& text, const std::string& key) {
  auto h = optional_header(text, key);
  REQUIRE(h);
  return *h;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `STAX_BINARY args` through the shell, capturing stdout/stderr via files in `dir`.
inline Run run_stax(const std::filesystem::path& dir, const std::string& args) {
  std::filesystem::path o = dir / "stdout.txt", e = dir / "stderr.txt";
  std::string cmd = std::string(STAX_BINARY) + " " + args + " >" + o.string() + " 2>" + e.string();
  int st = std::system(cmd.c_str());
  return {WEXITSTATUS(st), slurp(o), slurp(e)};
}

/// Writes `text` to `dir`/`name` and returns that path.
inline std::filesystem::path write(const std::filesystem::path& dir, const std::string& name,
                                   const std::string& text) {
  std::filesystem::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace stax::test
