// `stax bench --backend gpu|gpu-emu` end to end: the JSON
// schema (compile time, launch configuration, bytes, GB/s, the copy
// ratio, the bits), a codegen mutant reported as bits NOT identical, and
// `--backend gpu` without a driver: a clear message and exit 2, never a
// crash. Each check has a deliberately wrong case that must fail it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "semantics/npy.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using stax::test::Run;
using namespace stax::sem;

namespace {

fs::path scratch() { return stax::test::scratch("stax_bench_gpu_test"); }
Run run_stax(const std::string& args) { return stax::test::run_stax(scratch(), args); }
fs::path write(const std::string& name, const std::string& text) { return stax::test::write(scratch(), name, text); }

// A row reduction (8 rows of 1024): with gpu-reduce:threads=64:warp=32 one
// block-reduction kernel of 64 threads per row, 2 warps' partials in
// __shared__ memory.
const char* kRows =
    "input x : f32[8, 1024]\n"
    "let s : f32[8] = red(sum, 0.0, [1024], map(fn(a) => mul(a, a), x))\n"
    "output s\n";
// a * b + c: the fma-contract mutant computes it with one rounding.
const char* kMulAdd =
    "input a : f32[4096]\ninput b : f32[4096]\ninput c : f32[4096]\n"
    "let y : f32[4096] = map(fn(p, q, r) => add(mul(p, q), r), a, b, c)\n"
    "output y\n";

json parse(const Run& r) {
  INFO(r.out << r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE(!j.is_discarded());
  return j;
}

/// Every field the device script reads, with sane values; "" when the
/// report is well formed, else what is wrong.
std::string schema_problem(const json& j) {
  for (const char* k : {"backend", "compiler", "time_source", "bits"})
    if (!j.contains(k) || !j[k].is_string()) return std::string("no string ") + k;
  if (!j.contains("compile_ms") || !j["compile_ms"].is_number() || j["compile_ms"].get<double>() <= 0)
    return "compile_ms";
  if (!j.contains("bits_identical") || !j["bits_identical"].is_boolean()) return "bits_identical";
  if (!j.contains("kernels") || !j["kernels"].is_array() || j["kernels"].empty()) return "kernels";
  for (const json& k : j["kernels"]) {
    for (const char* f : {"kernel", "name", "text"})
      if (!k.contains(f) || !k[f].is_string()) return std::string("kernel field ") + f;
    for (const char* f : {"compile_ms", "run_ms", "gb_per_s", "copy_ms", "copy_gb_per_s", "ratio_to_copy"})
      if (!k.contains(f) || !k[f].is_number() || k[f].get<double>() < 0) return std::string("kernel field ") + f;
    if (!k.contains("bytes") || !k["bytes"].is_number_integer() || k["bytes"].get<int64_t>() <= 0) return "bytes";
    if (k["copy_gb_per_s"].get<double>() <= 0) return "copy_gb_per_s not positive";
    const json& l = k.value("launch", json());
    if (!l.is_object() || !l.contains("grid") || !l.contains("block") || !l.contains("shared_bytes") ||
        !l.contains("block_reduction"))
      return "launch";
    if (l["grid"].get<int64_t>() < 1 || l["block"].get<int64_t>() < 1) return "launch grid/block";
  }
  return "";
}

/// `stax bench PROG --backend gpu-emu` after gpu-reduce, as JSON: it
/// must succeed and pass the schema check.
json bench_ok(const fs::path& prog, const std::string& more) {
  Run r = run_stax("bench " + prog.string() + " --backend gpu-emu --transform gpu-reduce:threads=64:warp=32 --json " +
                   more);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  json j = parse(r);
  CHECK(schema_problem(j) == "");
  return j;
}

}  // namespace

TEST_CASE("bench gpu-emu: per kernel compile time, launch, bytes, GB/s, copy ratio, bits identical") {
  fs::path prog = write("rows.stx", kRows);
  json j = bench_ok(prog, "--repeats 2");
  CHECK(j["backend"] == "gpu-emu");
  CHECK(j["compiler"] == "host c++ (emulator)");
  CHECK(j["time_source"].get<std::string>().find("emulator") != std::string::npos);
  CHECK(j["bits_identical"] == true);
  CHECK(j["bits"] == "identical to the interpreter");
  // The block reduction: 64 threads, one block per row, 2 warps' f32
  // partials in __shared__, reading x once and writing s.
  bool found = false;
  for (const json& k : j["kernels"])
    if (k["launch"]["block_reduction"] == true) {
      found = true;
      CHECK(k["launch"]["block"] == 64);
      CHECK(k["launch"]["shared_bytes"] == 2 * 4);
      CHECK(k["bytes"] == 8 * 1024 * 4 + 8 * 4);
    }
  CHECK(found);
  CHECK(!j.contains("compile_base_ms"));  // only with --compile-each
  CHECK(!j["kernels"][0].contains("compile_own_ms"));

  // --compile-each: the prelude and math library alone, each kernel alone.
  json e = bench_ok(prog, "--repeats 1 --compile-each");
  CHECK(e["compile_base_ms"].get<double>() > 0);
  for (const json& k : e["kernels"]) {
    CHECK(k["compile_alone_ms"].get<double>() > 0);
    CHECK(k["compile_own_ms"].get<double>() >= 0);
  }

  // The wrong case: the schema check rejects a report missing the launch
  // configuration, or with no copy measured.
  json broken = j;
  broken["kernels"][0].erase("launch");
  CHECK(schema_problem(broken) == "launch");
  broken = j;
  broken["kernels"][0]["copy_gb_per_s"] = 0.0;
  CHECK(schema_problem(broken) != "");
}

TEST_CASE("bench gpu-emu: the human-readable table names the emulator's clock") {
  fs::path prog = write("muladd.stx", kMulAdd);
  Run r = run_stax("bench " + prog.string() + " --backend gpu-emu --repeats 1");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("emulator: host wall time") != std::string::npos);
  CHECK(r.out.find("identical to the interpreter") != std::string::npos);
}

TEST_CASE("bench gpu-emu: kernels built under a codegen mutant report bits NOT identical") {
  // fma-contract: a*b + c in one rounding (PyTorch #122260).
  fs::path prog = write("muladd2.stx", kMulAdd);
  Run good = run_stax("bench " + prog.string() + " --backend gpu-emu --repeats 1 --json");
  REQUIRE(good.code == 0);
  CHECK(parse(good)["bits_identical"] == true);
  Run bad = run_stax("bench " + prog.string() + " --backend gpu-emu --repeats 1 --json --mutant fma-contract");
  INFO(bad.out << bad.err);
  CHECK(bad.code == 1);
  json j = parse(bad);
  CHECK(j["bits_identical"] == false);
  CHECK(j["bits"] != "identical to the interpreter");
  CHECK(j["mutant"] == "fma-contract");

  // shuffle-wrong-offset in a block reduction: a lane's value read twice,
  // another's dropped. Finite inputs (the drawn ones hold NaN, and a NaN
  // sum hides the order).
  fs::path rows = write("rows2.stx", kRows);
  Tensor x(DType::F32, {8, 1024});
  for (int i = 0; i < 8 * 1024; ++i) x.as<float>()[i] = 1.0f + float(i % 97) * 0.0137f;
  const std::string npy = (scratch() / "rows_x.npy").string();
  REQUIRE(!write_npy(npy, x));
  const std::string args = "bench " + rows.string() + " --input x=" + npy +
                           " --backend gpu-emu --transform gpu-reduce:threads=64:warp=32 --repeats 1 --json";
  Run fine = run_stax(args);
  INFO(fine.out << fine.err);
  CHECK(fine.code == 0);
  CHECK(parse(fine)["bits_identical"] == true);
  Run shuf = run_stax(args + " --mutant shuffle-wrong-offset");
  INFO(shuf.out << shuf.err);
  CHECK(shuf.code == 1);
  CHECK(parse(shuf)["bits_identical"] == false);

  Run unknown = run_stax("bench " + prog.string() + " --backend gpu-emu --mutant no-such-mutant");
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("unknown mutant") != std::string::npos);
}

TEST_CASE("bench --backend gpu without a driver: a clear message, exit 2") {
  fs::path prog = write("muladd3.stx", kMulAdd);
  // A driver library that does not exist, so that this holds on a machine
  // with a GPU too.
  ::setenv("STAX_CUDA_DRIVER", (scratch() / "no" / "libcuda.so.1").c_str(), 1);
  Run r = run_stax("bench " + prog.string() + " --backend gpu --repeats 1 --json");
  Run run = run_stax("run " + prog.string() + " --backend gpu --random-inputs 1");
  ::unsetenv("STAX_CUDA_DRIVER");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("no GPU driver") != std::string::npos);
  CHECK(r.err.find("gpu-emu") != std::string::npos);  // says what to use instead
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.out.empty());
  CHECK(run.code == 2);
  CHECK(run.err.find("no GPU driver") != std::string::npos);

  // The wrong case: the same bench on the emulator has no such message.
  Run emu = run_stax("bench " + prog.string() + " --backend gpu-emu --repeats 1 --json");
  CHECK(emu.code == 0);
  CHECK(emu.err.find("no GPU driver") == std::string::npos);

  // Bad usage is exit 2 too.
  CHECK(run_stax("bench " + prog.string() + " --backend gpu-emu --arch sm_5").code == 2);
  CHECK(run_stax("bench " + prog.string() + " --backend tpu").code == 2);
}
