// The JIT's on-disk object cache (backends/cpu/object_cache.h): a hit runs
// the stored object and gives the bits of a fresh compile; an entry that is
// truncated, corrupted or stored under another key (another LLVM version) is
// a miss and the kernel is compiled again. The deliberately wrong cases are
// the damaged and foreign entries, which must not load. Every directory is
// a temporary one (catch_main.cpp keeps the user's cache out of the tests).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/object_cache.h"
#include "oracle/fuzz.h"
#include "semantics/input_gen.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;
namespace fs = std::filesystem;

namespace {

/// Two kernels, one a reduction, with NaN-sensitive and rounding-sensitive
/// arithmetic, so that a wrong object would show in the bits.
Program program() {
  return test::parse_ok(
      "input x : f32[8, 64]\ninput w : f32[8, 64]\n"
      "let y : f32[8, 64] = map(fn(a, b) => add(mul(a, 3.1), div(b, 7.0)), x, w)\n"
      "let s : f32[8] = red(sum, 0.0, [64], map(fn(a) => mul(a, a), y))\noutput s\noutput y\n",
      "<jit-disk-cache-test>");
}

struct Compiled {
  IeeeOutcome out;
  int kernels = 0, disk_hits = 0;
};

/// Compiles afresh (the in-memory cache emptied) and runs on fixed inputs.
Compiled compile_and_run(const Program& p, int opt) {
  cpu::Jit::instance().clear();
  cpu::CompiledProgram cp(p, {1, false, opt});
  Compiled c;
  for (const cpu::KernelReport& k : cp.kernels()) {
    ++c.kernels;
    c.disk_hits += k.disk_cached;
  }
  c.out = cp.run(sem::generate_inputs(p, sem::kInputKinds[0], 11));
  return c;
}

std::string diff(const Program& p, const IeeeOutcome& a, const IeeeOutcome& b) {
  auto d = oracle::outcome_difference(p, a, b);
  return d ? *d : "";
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> r;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".o") r.push_back(e.path());
  return r;
}

/// Flips one byte at `frac` of the file's length.
void flip_byte(const fs::path& f, double frac) {
  std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
  io.seekg(0, std::ios::end);
  auto n = int64_t(io.tellg());
  int64_t at = int64_t(double(n) * frac);
  io.seekg(at);
  char c;
  io.get(c);
  io.seekp(at);
  io.put(char(c ^ 0x10));
}

struct TempDir {
  fs::path dir = test::scratch("jit_disk_cache") / "jit";
  TempDir() { fs::remove_all(dir); }
  ~TempDir() {
    cpu::Jit::instance().set_cache_dir(std::nullopt);
    fs::remove_all(dir.parent_path());
  }
};

}  // namespace

TEST_CASE("object file cache: round trip; truncated, corrupted and foreign entries miss") {
  TempDir t;
  cpu::ObjectFileCache c(t.dir.string());
  std::string key = cpu::code_generator_identity() + "\nsome kernel";
  std::string obj(5000, '\0');
  for (size_t i = 0; i < obj.size(); ++i) obj[i] = char(i * 7 + 1);
  CHECK(!c.load(key));
  c.store(key, obj);
  REQUIRE(c.load(key) == obj);
  CHECK(entries(t.dir).size() == 1);  // no temporary file left behind

  SECTION("a flipped byte in the object is detected") {
    flip_byte(c.path_of(key), 0.9);
    CHECK(!c.load(key));
  }
  SECTION("a flipped byte in the stored key is detected") {
    flip_byte(c.path_of(key), 0.02);
    CHECK(!c.load(key));
  }
  SECTION("a truncated entry is detected") {
    fs::resize_file(c.path_of(key), fs::file_size(c.path_of(key)) - 1);
    CHECK(!c.load(key));
  }
  SECTION("an entry of another LLVM version misses, even in this key's file") {
    std::string foreign = key;
    size_t v = foreign.find("LLVM ");
    REQUIRE(v != std::string::npos);
    foreign.replace(v, foreign.find('\n', v) - v, "LLVM 99.0.0");
    CHECK(!c.load(foreign));
    fs::copy_file(c.path_of(key), c.path_of(foreign));  // as a hash collision would
    CHECK(!c.load(foreign));
    CHECK(c.load(key) == obj);
  }
  SECTION("the deliberately wrong case: an intact copy still loads") {
    CHECK(c.load(key) == obj);
  }
}

TEST_CASE("jit disk cache: a hit gives the bits of a fresh compile; a damaged entry is compiled again") {
  TempDir t;
  cpu::Jit& jit = cpu::Jit::instance();
  Program p = program();
  for (int opt : {1, 3}) {
    INFO("opt level " << opt);
    fs::remove_all(t.dir);
    jit.set_cache_dir(std::nullopt);
    Compiled fresh = compile_and_run(p, opt);
    REQUIRE(!fresh.out.failure);
    REQUIRE(fresh.kernels >= 2);
    CHECK(fresh.disk_hits == 0);
    CHECK(diff(p, eval_ieee(p, sem::generate_inputs(p, sem::kInputKinds[0], 11)), fresh.out) == "");

    jit.set_cache_dir(t.dir.string(), 0);  // store every kernel, however quick
    Compiled cold = compile_and_run(p, opt);
    CHECK(cold.disk_hits == 0);
    CHECK(int(entries(t.dir).size()) == cold.kernels);
    Compiled warm = compile_and_run(p, opt);
    CHECK(warm.disk_hits == warm.kernels);
    CHECK(diff(p, fresh.out, warm.out) == "");

    // Damaged entries: every kernel is compiled again (and its entry
    // rewritten, so the next compile hits).
    for (const fs::path& f : entries(t.dir)) flip_byte(f, 0.7);
    Compiled damaged = compile_and_run(p, opt);
    CHECK(damaged.disk_hits == 0);
    CHECK(diff(p, fresh.out, damaged.out) == "");
    Compiled again = compile_and_run(p, opt);
    CHECK(again.disk_hits == again.kernels);
    CHECK(diff(p, fresh.out, again.out) == "");

    for (const fs::path& f : entries(t.dir)) fs::resize_file(f, fs::file_size(f) / 2);
    Compiled truncated = compile_and_run(p, opt);
    CHECK(truncated.disk_hits == 0);
    CHECK(diff(p, fresh.out, truncated.out) == "");
  }
}

TEST_CASE("jit disk cache: a kernel held while its key compiles again; what is not stored") {
  TempDir t;
  cpu::Jit& jit = cpu::Jit::instance();
  Program p = program();
  jit.set_cache_dir(t.dir.string(), 0);
  jit.clear();
  cpu::CompiledProgram held(p, {1, false, 2});
  // The same kernels again while `held` defines their names: compiled under
  // other names, not from the disk.
  Compiled second = compile_and_run(p, 2);
  CHECK(second.disk_hits == 0);
  Inputs in = sem::generate_inputs(p, sem::kInputKinds[0], 11);
  CHECK(diff(p, held.run(in), second.out) == "");

  // A threshold no compile reaches: nothing is stored.
  fs::remove_all(t.dir);
  jit.set_cache_dir(t.dir.string(), 1e9);
  compile_and_run(p, 3);
  CHECK(!fs::exists(t.dir));

  // O0 kernels never go through the disk cache.
  jit.set_cache_dir(t.dir.string(), 0);
  compile_and_run(p, 0);
  CHECK(!fs::exists(t.dir));
}
