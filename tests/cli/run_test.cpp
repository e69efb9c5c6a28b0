// `stax run` end to end: exit codes 0/1/2, .npy in and out, replayable
// random inputs (docs/design.md §8).
#include <catch2/catch.hpp>
#include <filesystem>

#include "semantics/npy.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace stax::sem;
using stax::test::Run;
using stax::test::slurp;

namespace {

/// This file's scratch folder ($TMP/stax_cli_test_<pid>) and the CLI helpers bound to it.
fs::path scratch() { return stax::test::scratch("stax_cli_test"); }
Run run_stax(const std::string& args) { return stax::test::run_stax(scratch(), args); }
fs::path write(const std::string& name, const std::string& text) { return stax::test::write(scratch(), name, text); }

const char* kAdd = "input x : f32[4]\ninput y : f32[4]\nlet z = map(add, x, y)\noutput z\n";

}  // namespace

TEST_CASE("run: success writes outputs as npy") {
  fs::path prog = write("add.stx", kAdd);
  Tensor x(DType::F32, {4}), y(DType::F32, {4});
  for (int i = 0; i < 4; ++i) x.as<float>()[i] = float(i), y.as<float>()[i] = 0.5f;
  write_npy((scratch() / "x.npy").string(), x);
  write_npy((scratch() / "y.npy").string(), y);
  fs::path out = scratch() / "out1";
  Run r = run_stax("run " + prog.string() + " --input x=" + (scratch() / "x.npy").string() + " --input y=" +
               (scratch() / "y.npy").string() + " --out " + out.string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto z = read_npy((out / "z.npy").string());
  REQUIRE(std::holds_alternative<Tensor>(z));
  for (int i = 0; i < 4; ++i) CHECK(std::get<Tensor>(z).as<float>()[i] == float(i) + 0.5f);
}

TEST_CASE("run: random inputs are written and replay to the same bits") {
  fs::path prog = write("add2.stx", kAdd);
  fs::path a = scratch() / "rand_a", b = scratch() / "rand_b";
  REQUIRE(run_stax("run " + prog.string() + " --random-inputs 17 --out " + a.string()).code == 0);
  REQUIRE(fs::exists(a / "inputs" / "x.npy"));
  Run r = run_stax("run " + prog.string() + " --input x=" + (a / "inputs" / "x.npy").string() + " --input y=" +
               (a / "inputs" / "y.npy").string() + " --out " + b.string());
  REQUIRE(r.code == 0);
  CHECK(slurp(a / "z.npy") == slurp(b / "z.npy"));
  // A different seed draws different inputs.
  fs::path c = scratch() / "rand_c";
  REQUIRE(run_stax("run " + prog.string() + " --random-inputs 18 --out " + c.string()).code == 0);
  CHECK(slurp(a / "inputs" / "x.npy") != slurp(c / "inputs" / "x.npy"));
}

TEST_CASE("run: real semantics writes f64") {
  fs::path prog = write("add3.stx", kAdd);
  fs::path d = scratch() / "real";
  REQUIRE(run_stax("run " + prog.string() + " --semantics real --random-inputs 3 --out " + d.string()).code == 0);
  auto z = read_npy((d / "z.npy").string());
  REQUIRE(std::holds_alternative<Tensor>(z));
  CHECK(std::get<Tensor>(z).dtype == DType::F64);
}

TEST_CASE("run: a failing program exits 1 and names the binding") {
  fs::path prog = write("div0.stx",
                        "input x : i32[3]\nlet q = map(fn(a) => floordiv(a, sub(a, a)), x)\noutput q\n");
  Run r = run_stax("run " + prog.string() + " --random-inputs 1");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("'q'") && Catch::Contains("by zero"));
}

TEST_CASE("run: bad input exits 2 with file:line:col, never crashes") {
  fs::path bad = write("bad.stx", "input x : f32[4]\nlet y = map(add, x, q)\noutput y\n");
  Run r = run_stax("run " + bad.string() + " --random-inputs 1");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.stx:2:21") && Catch::Contains("unknown name 'q'"));

  fs::path prog = write("add4.stx", kAdd);
  CHECK(run_stax("run " + prog.string()).code == 2);  // missing inputs
  CHECK_THAT(run_stax("run " + prog.string()).err, Catch::Contains("missing input 'x'"));
  fs::path junk = write("junk.npy", "not numpy at all");
  Run j = run_stax("run " + prog.string() + " --input x=" + junk.string() + " --random-inputs 1");
  CHECK(j.code == 2);
  CHECK_THAT(j.err, Catch::Contains("junk.npy"));
  CHECK(run_stax("run " + prog.string() + " --random-inputs 1 --semantics fuzzy").code == 2);
  CHECK(run_stax("run " + prog.string() + " --random-inputs 1 --backend tpu").code == 2);
  CHECK(run_stax("run /nonexistent.stx").code == 2);
  CHECK(run_stax("frobnicate").code == 2);
  // A wrongly shaped input.
  Tensor w(DType::F32, {5});
  write_npy((scratch() / "w.npy").string(), w);
  Run s = run_stax("run " + prog.string() + " --random-inputs 1 --input x=" + (scratch() / "w.npy").string());
  CHECK(s.code == 2);
  CHECK_THAT(s.err, Catch::Contains("expects f32[4], got f32[5]"));
}

TEST_CASE("examples: every example runs under both semantics") {
  Run r = run_stax(std::string("examples ") + STAX_SOURCE_DIR + "/examples");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("listing_6_2.stx") && Catch::Contains("example_6_3_g2.stx"));
  CHECK_THAT(r.out, !Catch::Contains("⊥"));
}

// `stax run` reads an input in one call and writes an output in one call
// (bench/run_e2e.py): the file paths of read_npy/write_npy, not just the
// in-memory parse, must give the same tensors and the same messages.
TEST_CASE("run: .npy files read and written whole, large tensors included") {
  // Large enough for the huge-page allocation path (>= 4 MiB).
  const int64_t n = int64_t(1) << 21;
  Tensor x(DType::F32, {n}), y(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) x.as<float>()[i] = float(i) * 0.25f, y.as<float>()[i] = 1.0f - float(i % 7);
  fs::path xf = scratch() / "big_x.npy", yf = scratch() / "big_y.npy";
  REQUIRE(!write_npy(xf.string(), x));
  REQUIRE(!write_npy(yf.string(), y));
  CHECK(slurp(xf) == format_npy(x));
  auto back = read_npy(xf.string());
  REQUIRE(std::holds_alternative<Tensor>(back));
  CHECK(std::get<Tensor>(back).data == x.data);

  fs::path prog = write("big_add.stx", "input x : f32[" + std::to_string(n) + "]\ninput y : f32[" +
                                           std::to_string(n) + "]\nlet z = map(add, x, y)\noutput z\n");
  for (const char* backend : {"interp", "cpu"}) {
    fs::path out = scratch() / (std::string("big_out_") + backend);
    Run r = run_stax("run " + prog.string() + " --backend " + backend + " --input x=" + xf.string() +
                     " --input y=" + yf.string() + " --out " + out.string());
    INFO(backend << ": " << r.err);
    REQUIRE(r.code == 0);
    auto z = read_npy((out / "z.npy").string());
    REQUIRE(std::holds_alternative<Tensor>(z));
    const Tensor& zt = std::get<Tensor>(z);
    REQUIRE(zt.size() == n);
    bool same = true;
    for (int64_t i = 0; i < n; ++i) same = same && zt.as<float>()[i] == x.as<float>()[i] + y.as<float>()[i];
    CHECK(same);
  }
}

TEST_CASE("run: .npy files with long version-2 headers, Fortran order or bad bytes") {
  // A version 2.0 header longer than the first read of the file.
  Tensor x(DType::I32, {2, 3});
  int32_t colmajor[] = {0, 3, 1, 4, 2, 5};
  std::memcpy(x.data.data(), colmajor, sizeof colmajor);
  std::string dict = "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }";
  dict += std::string(6000 - dict.size(), ' ') + "\n";
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) v2 += char((dict.size() >> (8 * i)) & 0xff);
  v2 += dict;
  v2.append(reinterpret_cast<const char*>(x.data.data()), x.data.size());
  fs::path f = write("long_header.npy", v2);
  auto r = read_npy(f.string());
  REQUIRE(std::holds_alternative<Tensor>(r));
  for (int i = 0; i < 6; ++i) CHECK(std::get<Tensor>(r).as<int32_t>()[i] == i);

  // Malformed files: the same messages as parse_npy, after the path.
  Tensor g(DType::F32, {4});
  std::string good = format_npy(g);
  std::vector<std::pair<std::string, std::string>> bad = {
      {"", "bad magic"},
      {good.substr(0, 20), "truncated"},
      {good.substr(0, good.size() - 3), "data size mismatch"},
      {good + "xx", "data size mismatch"},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    fs::path b = write("bad" + std::to_string(i) + ".npy", bad[i].first);
    auto e = read_npy(b.string());
    INFO(bad[i].second);
    REQUIRE(std::holds_alternative<std::string>(e));
    CHECK_THAT(std::get<std::string>(e), Catch::Contains(b.string()) && Catch::Contains(bad[i].second));
  }
  CHECK(write_npy((scratch() / "no_such_dir" / "z.npy").string(), g).has_value());
}
