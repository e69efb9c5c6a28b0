// torch-sum (transforms/torch_sum.cpp, transforms/torch_order.h): PyTorch's
// CPU torch.sum order, checked bit for bit against goldens that torch wrote
// (tests/golden/torch_sum/, python/stax_torch): every length 1..4,096 and a
// sample up to 10^6 for f32 (1..1,024 and the sample for f64), last-dim sums
// of 2-D shapes, and full sums on 2, 3, 4 and 8 threads. Deliberately wrong
// orders (numpy-pairwise, the cascade step one level off, 16 lanes, the
// one-thread model on more threads, the sequential fold) must differ; the
// class-real bound must hold and the tree must stay small.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <map>

#include "oracle/checker.h"
#include "oracle/error_bound/error_bound.h"
#include "oracle/gen/program_gen.h"
#include "semantics/expr_util.h"
#include "semantics/input_gen.h"
#include "semantics/npy.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/passes.h"
#include "transforms/torch_order.h"

using namespace stax;

namespace {

// ------------------------------------------------ inputs (python/stax_torch)

constexpr uint64_t kSeed = 0x5354415854534D31ull;  // "STAXTSM1"
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t hash_at(int64_t i) { return mix64(kSeed + uint64_t(i + 1) * kGolden); }
int64_t exponent(uint64_t h) { return int64_t((h >> 32) % 17) - 8; }

float f32_input(int64_t i) {
  uint64_t h = hash_at(i);
  uint32_t b = uint32_t(h >> 63) << 31 | uint32_t(exponent(h) + 127) << 23 | uint32_t(h & 0x7FFFFF);
  return std::bit_cast<float>(b);
}
double f64_input(int64_t i) {
  uint64_t h = hash_at(i);
  uint64_t b = (h >> 63) << 63 | uint64_t(exponent(h) + 1023) << 52 | (h & ((uint64_t(1) << 52) - 1));
  return std::bit_cast<double>(b);
}

template <class T>
const std::vector<T>& inputs() {
  static const std::vector<T> v = [] {
    std::vector<T> x(1000000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = sizeof(T) == 4 ? T(f32_input(int64_t(i))) : T(f64_input(int64_t(i)));
    return x;
  }();
  return v;
}

// ------------------------------------------------------------- goldens

const std::string kDir = std::string(STAX_SOURCE_DIR) + "/tests/golden/torch_sum/";

sem::Tensor golden(const std::string& name) {
  auto r = sem::read_npy(kDir + name);
  if (auto* e = std::get_if<std::string>(&r)) FAIL("golden " << name << ": " << *e);
  return std::get<sem::Tensor>(r);
}
std::vector<int64_t> golden_i64(const std::string& name) {
  sem::Tensor t = golden(name);
  REQUIRE(t.dtype == sem::DType::I64);
  return std::vector<int64_t>(t.as<int64_t>(), t.as<int64_t>() + t.size());
}
template <class T>
std::vector<T> golden_vals(const std::string& name) {
  sem::Tensor t = golden(name);
  REQUIRE(t.dtype == (sizeof(T) == 4 ? sem::DType::F32 : sem::DType::F64));
  return std::vector<T>(t.as<T>(), t.as<T>() + t.size());
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ------------------------------------------------ the transform, interpreted

xform::Result run_spec(const sem::Program& p, const std::string& spec, xform::Context* out = nullptr) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  xform::Context ctx;
  xform::Result r = xform::run_pipeline(p, steps, ctx);
  if (out) *out = ctx;
  return r;
}

template <class T>
const char* dname() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

/// `input x : T[rows, n]` (or T[n] when rows == 0) summed over its last dim.
template <class T>
sem::Program sum_program(int64_t rows, int64_t n) {
  std::string shape = rows > 0 ? std::to_string(rows) + ", " + std::to_string(n) : std::to_string(n);
  return test::parse_ok("input x : " + std::string(dname<T>()) + "[" + shape + "]\nlet y = red(sum, 0.0, [" +
                        std::to_string(n) + "], x)\noutput y\n");
}

template <class T>
sem::Tensor input_tensor(int64_t rows, int64_t n) {
  sem::Shape shape = rows > 0 ? sem::Shape{rows, n} : sem::Shape{n};
  sem::Tensor x(sizeof(T) == 4 ? sem::DType::F32 : sem::DType::F64, shape);
  std::memcpy(x.data.data(), inputs<T>().data(), size_t(x.size()) * sizeof(T));
  return x;
}

/// y of `spec` applied to the sum of x[:rows·n] in the interpreter.
template <class T>
std::vector<T> interpreted(int64_t rows, int64_t n, const std::string& spec) {
  sem::Program p = sum_program<T>(rows, n);
  sem::Program q = spec.empty() ? p : run_spec(p, spec).program;
  sem::IeeeOutcome o = sem::eval_ieee(q, {{"x", input_tensor<T>(rows, n)}});
  if (o.failure) FAIL(o.failure->str());
  const sem::Tensor& y = *o.outputs.at("y");
  return std::vector<T>(y.as<T>(), y.as<T>() + y.size());
}

template <class T>
T interpreted1(int64_t n, const std::string& spec) {
  return interpreted<T>(0, n, spec)[0];
}

int64_t count_nodes(const sem::Expr& e) {
  int64_t c = 1;
  for (const sem::Expr& k : sem::children(e)) c += count_nodes(k);
  return c;
}

}  // namespace

TEST_CASE("torch-sum goldens: written by torch, first line states the verdict") {
  std::ifstream in(kDir + "README.txt");
  std::string first;
  REQUIRE(std::getline(in, first));
  CHECK(first.rfind("bits identical", 0) == 0);
  // The hash is python/stax_torch's: x[0..2] as torch saw them.
  CHECK(test::b32(f32_input(0)) == test::b32(inputs<float>()[0]));
  CHECK(golden_vals<float>("f32_prefix.npy").size() == 4096);
  CHECK(same_bits(golden_vals<float>("f32_prefix.npy")[0], 0.0f + f32_input(0)));
}

TEST_CASE("torch_order.h: the plain C++ order reproduces every torch.sum golden") {
  namespace to = xform::torch_order;
  const auto& x = inputs<float>();
  const auto& x64 = inputs<double>();
  std::vector<float> pre = golden_vals<float>("f32_prefix.npy");
  std::vector<double> pre64 = golden_vals<double>("f64_prefix.npy");
  int64_t mism = 0, checked = 0;
  for (int64_t n = 1; n <= 4096; ++n, ++checked) mism += !same_bits(to::reference_sum(x.data(), n), pre[size_t(n - 1)]);
  for (int64_t n = 1; n <= 1024; ++n, ++checked)
    mism += !same_bits(to::reference_sum(x64.data(), n), pre64[size_t(n - 1)]);
  std::vector<int64_t> lens = golden_i64("sample_lengths.npy"), threads = golden_i64("threads.npy");
  std::vector<float> s32 = golden_vals<float>("f32_sample.npy"), t32 = golden_vals<float>("f32_sample_threads.npy");
  std::vector<double> s64 = golden_vals<double>("f64_sample.npy"), t64 = golden_vals<double>("f64_sample_threads.npy");
  REQUIRE(t32.size() == threads.size() * lens.size());
  int64_t one_thread_model_differs = 0;
  for (size_t k = 0; k < lens.size(); ++k) {
    int64_t n = lens[k];
    mism += !same_bits(to::reference_sum(x.data(), n), s32[k]);
    mism += !same_bits(to::reference_sum(x64.data(), n), s64[k]);
    checked += 2;
    for (size_t t = 0; t < threads.size(); ++t, checked += 2) {
      float want = t32[t * lens.size() + k];
      mism += !same_bits(to::reference_sum(x.data(), n, threads[t]), want);
      mism += !same_bits(to::reference_sum(x64.data(), n, threads[t]), t64[t * lens.size() + k]);
      one_thread_model_differs += !same_bits(to::reference_sum(x.data(), n), want);
    }
  }
  INFO(checked << " sums checked");
  CHECK(mism == 0);
  // Threads change the bits (the split), so the thread model has teeth.
  CHECK(one_thread_model_differs > 10);
}

TEST_CASE("torch-sum: f32 every length 1..4096 bit for bit with torch.sum; wrong orders differ") {
  std::vector<float> want = golden_vals<float>("f32_prefix.npy");
  int64_t mism = 0, numpy_differs = 0, minlevel3_differs = 0, lanes16_differs = 0, seq_differs = 0;
  for (int64_t n = 1; n <= 4096; ++n) {
    float w = want[size_t(n - 1)];
    float g = interpreted1<float>(n, "torch-sum");
    if (!same_bits(g, w) && ++mism <= 5) FAIL_CHECK("n=" << n << ": torch " << test::b32(w) << ", stax " << test::b32(g));
    // The wrong variants on a sample of lengths (all of them take 3x longer).
    if (n % 7 == 0 || n < 64) {
      numpy_differs += !same_bits(interpreted1<float>(n, "numpy-pairwise"), w);
      minlevel3_differs += !same_bits(interpreted1<float>(n, "torch-sum:minlevel=3"), w);
      lanes16_differs += !same_bits(interpreted1<float>(n, "torch-sum:lanes=16"), w);
      seq_differs += !same_bits(interpreted1<float>(n, ""), w);
    }
  }
  CHECK(mism == 0);
  CHECK(numpy_differs > 100);
  CHECK(minlevel3_differs > 100);
  CHECK(lanes16_differs > 100);
  CHECK(seq_differs > 100);
}

TEST_CASE("torch-sum: sampled lengths up to 10^6, f64, and 2, 3, 4, 8 threads bit for bit") {
  std::vector<int64_t> lens = golden_i64("sample_lengths.npy"), threads = golden_i64("threads.npy");
  std::vector<float> s32 = golden_vals<float>("f32_sample.npy"), t32 = golden_vals<float>("f32_sample_threads.npy");
  std::vector<double> s64 = golden_vals<double>("f64_sample.npy"), t64 = golden_vals<double>("f64_sample_threads.npy");
  std::vector<double> pre64 = golden_vals<double>("f64_prefix.npy");
  int64_t mism = 0, checked = 0, single_model_differs = 0;
  auto check = [&](auto got, auto want, const std::string& what) {
    ++checked;
    if (!same_bits(got, want) && ++mism <= 8) FAIL_CHECK(what << ": torch " << want << ", stax " << got);
  };
  for (int64_t n = 1; n <= 1024; ++n) check(interpreted1<double>(n, "torch-sum"), pre64[size_t(n - 1)], "f64 n=" + std::to_string(n));
  for (size_t k = 0; k < lens.size(); ++k) {
    int64_t n = lens[k];
    float one = interpreted1<float>(n, "torch-sum");
    check(one, s32[k], "f32 n=" + std::to_string(n));
    check(interpreted1<double>(n, "torch-sum"), s64[k], "f64 n=" + std::to_string(n));
    for (size_t t = 0; t < threads.size(); ++t) {
      std::string spec = "torch-sum:threads=" + std::to_string(threads[t]);
      float w = t32[t * lens.size() + k];
      check(interpreted1<float>(n, spec), w, "f32 n=" + std::to_string(n) + " " + spec);
      single_model_differs += !same_bits(one, w);
      if (n >= 32768)  // f64 threads where the split happens
        check(interpreted1<double>(n, spec), t64[t * lens.size() + k], "f64 n=" + std::to_string(n) + " " + spec);
    }
  }
  INFO(checked << " sums checked");
  CHECK(mism == 0);
  CHECK(single_model_differs > 10);  // threads=1 is wrong for split sums
}

TEST_CASE("torch-sum: last-dim sums of 2-D shapes do not depend on threads; [1, n] is a full sum") {
  struct Shape2 {
    int64_t r, c;
  };
  int64_t mism = 0, rows_checked = 0;
  for (Shape2 s : {Shape2{4, 5}, {3, 100}, {1000, 37}, {64, 1000}, {7, 4101}, {2, 70000}, {1, 100000}}) {
    for (int64_t t : {1, 4}) {
      std::string name = "f32_rows_" + std::to_string(s.r) + "x" + std::to_string(s.c) + "_t" + std::to_string(t) + ".npy";
      std::vector<float> want = golden_vals<float>(name);
      REQUIRE(int64_t(want.size()) == s.r);
      std::vector<float> got = interpreted<float>(s.r, s.c, "torch-sum:threads=" + std::to_string(t));
      for (int64_t i = 0; i < s.r; ++i, ++rows_checked)
        if (!same_bits(got[size_t(i)], want[size_t(i)]) && ++mism <= 5)
          FAIL_CHECK(name << " row " << i << ": torch " << want[size_t(i)] << ", stax " << got[size_t(i)]);
    }
  }
  CHECK(rows_checked == 2 * (4 + 3 + 1000 + 64 + 7 + 2 + 1));
  CHECK(mism == 0);
  // The one-row case really is split: 4 threads differ from 1 there.
  CHECK_FALSE(same_bits(golden_vals<float>("f32_rows_1x100000_t1.npy")[0], golden_vals<float>("f32_rows_1x100000_t4.npy")[0]));
}

TEST_CASE("torch-sum: compact trees, class real verified, error bounds hold up to 10^6") {
  for (int64_t n : {5, 100, 4096, 100003, 1000000}) {
    sem::Program p = sum_program<float>(0, n);
    for (const char* spec : {"torch-sum", "torch-sum:threads=4"}) {
      xform::Context ctx;
      xform::Result r = run_spec(p, spec, &ctx);
      INFO(spec << " n=" << n << "\n" << sem::print_program(r.program));
      CHECK(r.cls == xform::SemClass::Real);
      REQUIRE(ctx.count == 1);
      CHECK(count_nodes(r.program.bindings.back().expr) < 300);
      // Well formed, and its text parses back to the same program.
      CHECK_FALSE(oracle::malformed(r.program).has_value());
      std::string text = sem::print_program(r.program);
      CHECK(sem::print_program(test::parse_ok(text)) == text);
      oracle::BoundReport b = oracle::analyze_bounds(r.program, {{"x", input_tensor<float>(0, n)}});
      INFO(oracle::format_bound_report(b, spec));
      CHECK(b.within());
      if (n <= 4096) {
        oracle::Verdict v = oracle::check_programs(p, r.program, xform::SemClass::Real, {4, uint64_t(n)});
        CHECK(v.status == oracle::Status::Verified);
      }
    }
  }
  // Rows, f64.
  for (const std::string& text :
       {std::string("input x : f32[9, 77]\nlet y = red(sum, 0.0, [77], x)\noutput y\n"),
        std::string("input x : f64[3, 4, 50]\nlet y = red(sum, 0.0, [4, 50], x)\noutput y\n"),
        std::string("input x : f32[300]\nlet y = red(sum, 0.0, [300], map(fn(a) => mul(a, a), x))\noutput y\n")}) {
    sem::Program p = test::parse_ok(text);
    xform::Context ctx;
    xform::Result r = run_spec(p, "torch-sum", &ctx);
    INFO(sem::print_program(r.program));
    CHECK(ctx.count == 1);
    oracle::Verdict v = oracle::check_programs(p, r.program, xform::SemClass::Real, {6, 7});
    CHECK(v.status == oracle::Status::Verified);
  }
}

TEST_CASE("torch-sum: refuses what it does not model, with a logged reason") {
  struct Case {
    const char* text;
    const char* reason;
  };
  for (Case c : {Case{"input x : f32[40]\nlet y = red(prod, 1.0, [40], x)\noutput y\n", "sums only"},
                 Case{"input x : f16[40]\nlet y = red(sum, 0.0, [40], x)\noutput y\n", "f32/f64"},
                 Case{"input x : i32[40]\nlet y = red(sum, 0, [40], x)\noutput y\n", "f32/f64"},
                 Case{"input x : f32[8, 40]\nlet y = red(sum, 0.0, [8], permute(x, [1, 0]))\noutput y\n",
                      "permute view"}}) {
    sem::Program p = test::parse_ok(c.text);
    xform::Context ctx;
    xform::Result r = run_spec(p, "torch-sum", &ctx);
    INFO(c.text);
    CHECK(ctx.count == 0);
    CHECK(sem::print_program(r.program) == sem::print_program(p));
    REQUIRE(ctx.log.size() == 1);
    CHECK(test::contains(ctx.log[0], c.reason));
  }
  // A reshape keeps the contiguous layout: accepted.
  sem::Program p = test::parse_ok("input x : f32[8, 40]\nlet y = red(sum, 0.0, [320], reshape(x, [320]))\noutput y\n");
  xform::Context ctx;
  run_spec(p, "torch-sum", &ctx);
  CHECK(ctx.count == 1);
  // Bad parameters are user errors.
  for (const char* spec : {"torch-sum:threads=0", "torch-sum:lanes=-1", "torch-sum:minlevel=0", "torch-sum:k=2"})
    CHECK_THROWS_AS(run_spec(p, spec), xform::TransformError);
}

TEST_CASE("torch-sum on generated programs: well formed, class real verified, bounds hold") {
  int rewritten = 0, verified = 0;
  for (const char* spec : {"torch-sum", "torch-sum:lanes=2:minlevel=1", "torch-sum:lanes=1:minlevel=1:threads=3"}) {
    for (int s = 0; s < 40; ++s) {
      sem::Program p = oracle::generate_program(uint64_t(s) * 104729 + 17);
      xform::Context ctx;
      xform::Result r = run_spec(p, spec, &ctx);
      INFO(spec << "\n" << sem::print_program(p) << "target:\n" << sem::print_program(r.program));
      REQUIRE_FALSE(oracle::malformed(r.program).has_value());
      REQUIRE_FALSE(oracle::interface_mismatch(p, r.program).has_value());
      std::string text = sem::print_program(r.program);
      CHECK(sem::print_program(test::parse_ok(text)) == text);
      if (ctx.count == 0) continue;
      ++rewritten;
      oracle::BoundReport b = oracle::analyze_bounds(r.program, sem::generate_inputs(r.program, sem::InputKind::Normal, uint64_t(s)));
      INFO(oracle::format_bound_report(b, spec));
      if (!b.failure) CHECK(b.max_ratio <= 1.0);
      oracle::Verdict v = oracle::check_programs(p, r.program, r.cls, {4, uint64_t(s)});
      if (v.status != oracle::Status::Verified) FAIL(oracle::format_verdict(v, p, r.program, spec));
      ++verified;
    }
  }
  CHECK(rewritten >= 20);
  CHECK(verified == rewritten);
}

TEST_CASE("torch-sum: past 2^24 f32 elements (2^19 cascade rows) the step grows to 2^5, as in torch") {
  std::vector<int64_t> lens = golden_i64("large_lengths.npy");
  std::vector<float> want = golden_vals<float>("f32_large.npy");
  REQUIRE(lens.size() == want.size());
  const int64_t n_max = *std::max_element(lens.begin(), lens.end());
  std::vector<float> x(static_cast<size_t>(n_max));
  for (int64_t i = 0; i < n_max; ++i) x[size_t(i)] = f32_input(i);
  for (size_t k = 0; k < lens.size(); ++k) {
    const int64_t n = lens[k];
    INFO("n=" << n);
    CHECK(test::b32(xform::torch_order::reference_sum(x.data(), n)) == test::b32(want[k]));
    sem::Program p = sum_program<float>(0, n);
    xform::Result r = run_spec(p, "torch-sum");
    // 2^19 rows keep the 2^4 step; one more row switches to 2^5.
    CHECK(test::contains(sem::print_program(r.program), "[32]") == (n / 32 > (int64_t(1) << 19)));
    sem::Tensor xt(sem::DType::F32, {n});
    std::memcpy(xt.data.data(), x.data(), size_t(n) * 4);
    sem::IeeeOutcome o = sem::eval_ieee(r.program, {{"x", xt}});
    REQUIRE_FALSE(o.failure);
    CHECK(test::b32(o.outputs.at("y")->as<float>()[0]) == test::b32(want[k]));
  }
}
