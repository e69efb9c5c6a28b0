// Reduction reassociation transforms (§6.5, Theorem 6.3, Listing 6.4;
// docs/design.md §4): golden before/after text, print/parse round trips,
// bit-exactness of max/min reassociation (NaN, ±0), real-semantics
// preservation of sum/prod, the -0.0 padding identity (and the +0.0 mistake),
// 16 lanes against a plain C++ loop, and NumPy's pairwise_sum bit for bit.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "oracle/checker.h"
#include "oracle/gen/program_gen.h"
#include "semantics/input_gen.h"
#include "semantics/evaluator.h"
#include "semantics/input_gen.h"
#include "semantics/npy.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "semantics/random_inputs.h"
#include "transforms/passes.h"

using namespace stax;
namespace fs = std::filesystem;

namespace {

sem::Program parse(const std::string& text) {
  auto r = sem::parse_program(text, "<test>");
  if (auto* d = std::get_if<sem::Diag>(&r)) FAIL(d->str() << "\n" << text);
  return std::get<sem::Program>(r);
}

xform::Result run_spec(const sem::Program& p, const std::string& spec, xform::Context* out_ctx = nullptr) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  xform::Context ctx;
  xform::Result r = xform::run_pipeline(p, steps, ctx);
  if (out_ctx) *out_ctx = ctx;
  return r;
}

// The binding line of `name` in a printed program.
std::string line_of(const sem::Program& p, const std::string& name) {
  std::istringstream in(sem::print_program(p));
  std::string l;
  while (std::getline(in, l))
    if (l.rfind("let " + name + " ", 0) == 0) return l;
  return "";
}

void check_round_trip(const sem::Program& p) {
  std::string text = sem::print_program(p);
  INFO(text);
  CHECK_FALSE(oracle::malformed(p).has_value());
  CHECK(sem::print_program(parse(text)) == text);
}

sem::Tensor f32_tensor(const sem::Shape& shape, const std::vector<float>& v) {
  sem::Tensor t(sem::DType::F32, shape);
  REQUIRE(int64_t(v.size()) == t.size());
  for (size_t i = 0; i < v.size(); ++i) t.as<float>()[i] = v[i];
  return t;
}

std::shared_ptr<const sem::Tensor> eval1(const sem::Program& p, const sem::Inputs& in, const std::string& out) {
  sem::IeeeOutcome o = sem::eval_ieee(p, in);
  if (o.failure) FAIL(o.failure->str());
  return o.outputs.at(out);
}

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

const char* const kAll[] = {"split-reduction:k=4",   "split-reduction",        "interleave-lanes:w=4",
                            "interleave-lanes:w=16", "interleave-lanes:w=3:combine=seq", "pairwise",
                            "pairwise:base=8",       "pairwise:base=3",        "reorder-reduction-dims",
                            "reorder-reduction-dims:perm=2/0/1", "numpy-pairwise", "numpy-pairwise:bufsize=16"};

}  // namespace

// ---------------------------------------------------------------- golden text

TEST_CASE("reassociation: golden before/after text") {
  sem::Program sum13 = parse("input x : f32[13]\nlet y : f32[] = red(sum, 0.0, [13], x)\noutput y\n");
  sem::Program max234 = parse("input x : f32[2, 3, 4]\nlet y : f32[2] = red(max, -inf, [3, 4], x)\noutput y\n");
  struct Golden {
    const sem::Program* p;
    std::string spec, cls, text;
  };
  const Golden goldens[] = {
      {&sum13, "split-reduction:k=4", "real",
       "let y : f32[] = red(sum, 0.0, [4], red(sum, -0.0, [4], map(fn(j, x) => select(lt(j, 13), x, -0.0), "
       "reshape(iota(i64, [16], 0), [4, 4]), view(x, [4, 4], (i0, i1) -> ((4*i0 + i1) % 13)))))"},
      {&sum13, "interleave-lanes:w=4", "real",
       "let y : f32[] = red(sum, 0.0, [2], red(sum, -0.0, [2], view(red(sum, -0.0, [4], map(fn(j, x) => "
       "select(lt(j, 13), x, -0.0), view(iota(i64, [16], 0), [4, 4], (i0, i1) -> (i0 + 4*i1)), view(x, [4, 4], "
       "(i0, i1) -> ((i0 + 4*i1) % 13)))), [2, 2], (i0, i1) -> (i0 + 2*i1))))"},
      {&sum13, "interleave-lanes:w=4:combine=seq", "real",
       "let y : f32[] = red(sum, 0.0, [4], red(sum, -0.0, [4], map(fn(j, x) => select(lt(j, 13), x, -0.0), "
       "view(iota(i64, [16], 0), [4, 4], (i0, i1) -> (i0 + 4*i1)), view(x, [4, 4], (i0, i1) -> ((i0 + 4*i1) % "
       "13)))))"},
      {&sum13, "pairwise", "real",
       "let y : f32[] = red(sum, 0.0, [2], red(sum, -0.0, [2], reshape(red(sum, -0.0, [2], reshape(red(sum, -0.0, "
       "[2], reshape(map(fn(j, x) => select(lt(j, 13), x, -0.0), iota(i64, [16], 0), view(x, [16], (i0) -> (i0 % "
       "13))), [8, 2])), [4, 2])), [2, 2])))"},
      {&sum13, "pairwise:base=4", "real",
       "let y : f32[] = red(sum, 0.0, [2], red(sum, -0.0, [2], reshape(red(sum, -0.0, [4], map(fn(j, x) => "
       "select(lt(j, 13), x, -0.0), reshape(iota(i64, [16], 0), [4, 4]), view(x, [4, 4], (i0, i1) -> ((4*i0 + "
       "i1) % 13)))), [2, 2])))"},
      {&sum13, "numpy-pairwise", "real",
       "let y : f32[] = red(sum, 0.0, [1], unsqueeze(map(add, map(add, map(add, map(add, map(add, red(sum, -0.0, "
       "[2], red(sum, -0.0, [2], reshape(red(sum, -0.0, [2], reshape(slice(x, 0, 0, 8, 1), [4, 2])), [2, 2]))), "
       "view(x, [], () -> (8))), view(x, [], () -> (9))), view(x, [], () -> (10))), view(x, [], () -> (11))), "
       "view(x, [], () -> (12))), 0))"},
      {&max234, "reorder-reduction-dims", "exact",
       "let y : f32[2] = red(max, -inf, [4, 3], permute(x, [0, 2, 1]))"},
      {&max234, "split-reduction:k=3", "exact", "let y : f32[2] = red(max, -inf, [3], red(max, -inf, [4], x))"},
      {&max234, "split-reduction:k=5", "exact",
       "let y : f32[2] = red(max, -inf, [5], red(max, -inf, [3], map(fn(j, x) => select(lt(j, 12), x, -inf), "
       "view(iota(i64, [15], 0), [2, 5, 3], (i0, i1, i2) -> (3*i1 + i2)), view(x, [2, 5, 3], (i0, i1, i2) -> (i0, "
       "(i2 + 3*(i1 % 4)) // 4, (i2 + 3*(i1 % 4)) % 4)))))"},
      {&max234, "interleave-lanes:w=4", "exact",
       "let y : f32[2] = red(max, -inf, [2], red(max, -inf, [2], view(red(max, -inf, [3], permute(x, [0, 2, 1])), "
       "[2, 2, 2], (i0, i1, i2) -> (i0, i1 + 2*i2))))"},
  };
  for (const Golden& g : goldens) {
    INFO(g.spec);
    xform::Context ctx;
    xform::Result r = run_spec(*g.p, g.spec, &ctx);
    CHECK(xform::class_name(r.cls) == g.cls);
    CHECK(line_of(r.program, "y") == g.text);
    CHECK(ctx.count == 1);
    check_round_trip(r.program);
  }
}

TEST_CASE("reassociation: registry entries and parameter errors") {
  for (const char* name :
       {"split-reduction", "interleave-lanes", "pairwise", "reorder-reduction-dims", "numpy-pairwise"}) {
    const xform::TransformInfo* t = xform::find_transform(name);
    REQUIRE(t != nullptr);
    CHECK(t->cls == xform::SemClass::Real);
    CHECK_FALSE(t->summary.empty());
  }
  sem::Program p = parse("input x : f32[8]\nlet y : f32[] = red(sum, 0.0, [8], x)\noutput y\n");
  CHECK_THROWS_AS(run_spec(p, "interleave-lanes:w=12"), xform::TransformError);  // tree needs a power of two
  CHECK_NOTHROW(run_spec(p, "interleave-lanes:w=12:combine=seq"));
  CHECK_THROWS_AS(run_spec(p, "interleave-lanes:combine=zigzag"), xform::TransformError);
  CHECK_THROWS_AS(run_spec(p, "split-reduction:k=0"), xform::TransformError);
  CHECK_THROWS_AS(run_spec(p, "pairwise:base=0"), xform::TransformError);
  CHECK_THROWS_AS(run_spec(p, "split-reduction:binding=nope"), xform::TransformError);
  CHECK_THROWS_AS(run_spec(p, "split-reduction:binding=x"), xform::TransformError);
  CHECK_THROWS_AS(run_spec(p, "reorder-reduction-dims:perm=0/0"), xform::TransformError);
  // Unknown keys are rejected, not ignored (a misspelt base= would run base=1).
  std::string message;
  try {
    run_spec(p, "pairwise:bsae=4");
  } catch (const xform::TransformError& e) {
    message = e.message;
  }
  CHECK(message == "pairwise: unknown parameter 'bsae' (known: binding, base)");
  CHECK_THROWS_AS(run_spec(p, "cse:k=1"), xform::TransformError);
  CHECK_NOTHROW(run_spec(p, "pairwise:base=4:binding=y"));
}

TEST_CASE("reassociation: argmax/argmin are refused with a log line; binding= selects") {
  sem::Program p = parse(
      "input x : f32[4, 6]\n"
      "let a : i64[4] = red(argmax, -inf, [6], x)\n"
      "let b : i64[4] = red(argmin, inf, [6], x)\n"
      "let s : f32[4] = red(sum, 0.0, [6], x)\n"
      "let t : f32[4] = red(max, -inf, [6], x)\n"
      "output a, b, s, t\n");
  for (const char* spec : kAll) {
    INFO(spec);
    xform::Context ctx;
    xform::Result r = run_spec(p, spec, &ctx);
    CHECK(line_of(r.program, "a") == line_of(p, "a"));
    CHECK(line_of(r.program, "b") == line_of(p, "b"));
    int refusals = 0;
    for (const std::string& l : ctx.log) refusals += l.find("refused a red(arg") != std::string::npos;
    CHECK(refusals == 2);
  }
  xform::Context ctx;
  xform::Result r = run_spec(p, "split-reduction:k=2:binding=t", &ctx);
  CHECK(ctx.count == 1);
  CHECK(r.cls == xform::SemClass::Exact);
  CHECK(line_of(r.program, "s") == line_of(p, "s"));
  CHECK(line_of(r.program, "t") != line_of(p, "t"));
  // max_rewrites stops the pass after the first rewrite (bisection support).
  xform::Context lim;
  lim.max_rewrites = 1;
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline("pairwise"));
  xform::Result one = xform::run_pipeline(p, steps, lim);
  CHECK(lim.count == 1);
  CHECK(line_of(one.program, "t") == line_of(p, "t"));
}

// ---------------------------------------------------------------- round trips

TEST_CASE("reassociation: transformed programs print and parse back, for many shapes and dtypes") {
  const char* programs[] = {
      "input x : f32[13]\nlet y : f32[] = red(sum, 0.0, [13], x)\noutput y\n",
      "input x : f16[3, 2, 5]\nlet y : f16[3] = red(sum, 0.0, [2, 5], x)\noutput y\n",
      "input x : bf16[7]\nlet y : bf16[] = red(max, -inf, [7], x)\noutput y\n",
      "input x : f64[2, 3, 4, 5]\nlet y : f64[2] = red(prod, 1.0, [3, 4, 5], map(fn(a) => add(a, 1.0), x))\noutput y\n",
      "input x : i32[4, 9]\nlet y : i32[4] = red(sum, 3, [9], x)\nlet z : i32[4] = red(min, 7, [9], x)\noutput y, z\n",
      "input x : f32[5, 6]\nlet y : f32[] = red(min, inf, [5, 6], let u = map(neg, x) in u)\noutput y\n",
  };
  for (const char* text : programs) {
    sem::Program p = parse(text);
    for (const char* spec : kAll) {
      INFO(text << spec);
      check_round_trip(run_spec(p, spec).program);
    }
  }
}

// ---------------------------------------------------------------- max/min: exact

namespace {

// Values that exercise IEEE maximum/minimum: ±0, ±inf, NaN, ties.
sem::Tensor tricky(sem::DType t, const sem::Shape& shape, uint64_t seed, double nan_rate) {
  sem::Rng rng(seed);
  sem::Tensor out(t, shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    double u = rng.uniform(), v;
    if (u < nan_rate) v = NAN;
    else if (u < 0.35) v = (rng.next() & 1) ? -0.0 : 0.0;
    else if (u < 0.4) v = (rng.next() & 1) ? -INFINITY : INFINITY;
    else v = double(int(rng.next() % 7) - 3);  // many ties
    switch (t) {
      case sem::DType::F32: out.as<float>()[i] = float(v); break;
      case sem::DType::F64: out.as<double>()[i] = v; break;
      case sem::DType::F16: out.as<uint16_t>()[i] = sem::f64_to_f16_bits(v); break;
      case sem::DType::BF16: out.as<uint16_t>()[i] = sem::f64_to_bf16_bits(v); break;
      default: FAIL("float dtypes only");
    }
  }
  return out;
}

}  // namespace

TEST_CASE("reassociation: max/min reassociation is bit-exact, NaN and ±0 included") {
  const char* programs[] = {
      "input x : f32[3, 13]\nlet y : f32[3] = red(max, -inf, [13], x)\nlet z : f32[3] = red(min, inf, [13], x)\noutput y, z\n",
      "input x : f32[2, 3, 5]\nlet y : f32[2] = red(max, -0.0, [3, 5], x)\nlet z : f32[2] = red(min, 0.0, [3, 5], x)\noutput y, z\n",
      "input x : f64[37]\nlet y : f64[] = red(max, 0.0, [37], x)\nlet z : f64[] = red(min, -inf, [37], x)\noutput y, z\n",
      "input x : f16[2, 19]\nlet y : f16[2] = red(max, -inf, [19], x)\nlet z : f16[2] = red(min, inf, [19], x)\noutput y, z\n",
      "input x : bf16[4, 2, 3]\nlet y : bf16[4] = red(max, -inf, [2, 3], x)\nlet z : bf16[4] = red(min, inf, [2, 3], x)\noutput y, z\n",
      "input x : i32[3, 11]\nlet y : i32[3] = red(max, 0, [11], x)\nlet z : i32[3] = red(sum, 5, [11], x)\noutput y, z\n",
  };
  const char* specs[] = {"split-reduction:k=4", "split-reduction",    "interleave-lanes:w=4", "interleave-lanes:w=16",
                         "interleave-lanes:w=5:combine=seq", "pairwise", "pairwise:base=2", "reorder-reduction-dims:perm=1/0"};
  for (const char* text : programs) {
    sem::Program p = parse(text);
    for (const char* spec : specs) {
      INFO(text << spec);
      xform::Result r = run_spec(p, spec);
      CHECK(r.cls == xform::SemClass::Exact);
      // The oracle's generated inputs (normal, uniform, cancellation, special).
      oracle::Verdict v = oracle::check_programs(p, r.program, xform::SemClass::Exact, {8, 11});
      if (v.status != oracle::Status::Verified) FAIL(oracle::format_verdict(v, p, r.program, spec));
      // Inputs dense in ±0 and ties, with and without NaN.
      const sem::Input& in = p.inputs[0];
      if (!sem::is_float(in.type.dtype)) continue;
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        sem::Inputs inputs{{in.name, tricky(in.type.dtype, in.type.shape, seed, seed % 2 ? 0.0 : 0.05)}};
        auto c = oracle::compare_on(p, r.program, xform::SemClass::Exact, inputs);
        if (c) FAIL("seed " << seed << ": output " << c->output << " " << c->src_value << " vs " << c->tgt_value);
      }
    }
  }
}

// ---------------------------------------------------------------- sum/prod: real

namespace {

// Same real value (both NaN counts as the same).
bool same_real(const sem::RVal& a, const sem::RVal& b) {
  if (mpfr_nan_p(a.f) || mpfr_nan_p(b.f)) return mpfr_nan_p(a.f) && mpfr_nan_p(b.f);
  return mpfr_equal_p(a.f, b.f) != 0;
}

}  // namespace

TEST_CASE("reassociation: sum and prod keep their real semantics (Theorem 6.3)") {
  const char* programs[] = {
      "input x : f32[3, 13]\nlet y : f32[3] = red(sum, 0.0, [13], x)\noutput y\n",
      "input x : f32[2, 3, 7]\nlet y : f32[2] = red(sum, 1.5, [3, 7], map(fn(a) => mul(a, a), x))\noutput y\n",
      "input x : f16[50]\nlet y : f16[] = red(sum, -0.0, [50], x)\noutput y\n",
      "input x : f64[2, 40]\nlet y : f64[2] = red(sum, 0.0, [40], x)\noutput y\n",
      "input x : f32[2, 4, 3]\nlet y : f32[2] = red(prod, 2.0, [4, 3], x)\noutput y\n",
  };
  const char* specs[] = {"split-reduction:k=4", "split-reduction", "interleave-lanes:w=4", "interleave-lanes:w=16",
                         "interleave-lanes:w=3:combine=seq", "pairwise", "pairwise:base=4", "reorder-reduction-dims",
                         "numpy-pairwise"};
  for (const char* text : programs) {
    sem::Program p = parse(text);
    for (const char* spec : specs) {
      INFO(text << spec);
      xform::Context ctx;
      xform::Result r = run_spec(p, spec, &ctx);
      if (ctx.count == 0) continue;  // e.g. reorder of a 1-D reduction, numpy-pairwise of f16/prod
      CHECK(r.cls == xform::SemClass::Real);
      for (sem::InputKind kind : {sem::InputKind::Normal, sem::InputKind::Uniform,
                                     sem::InputKind::Cancellation}) {
        sem::Inputs in = sem::generate_inputs(p, kind, 5);
        sem::RealOutcome a = sem::eval_real(p, in), b = sem::eval_real(r.program, in);
        REQUIRE_FALSE(a.failure);
        REQUIRE_FALSE(b.failure);
        const sem::RealTensor& ta = *a.outputs.at("y");
        const sem::RealTensor& tb = *b.outputs.at("y");
        REQUIRE(ta.shape == tb.shape);
        bool is_prod = std::string(text).find("prod") != std::string::npos;
        for (int64_t i = 0; i < ta.size(); ++i) {
          if (!is_prod) {
            // Sums of floats of this range are exact at 256 bits: equal reals.
            CHECK(same_real(ta.data[size_t(i)], tb.data[size_t(i)]));
          } else {
            // Products round at 256 bits in another order: equal after
            // rounding to f64.
            CHECK(mpfr_get_d(ta.data[size_t(i)].f, MPFR_RNDN) == mpfr_get_d(tb.data[size_t(i)].f, MPFR_RNDN));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- the identity

TEST_CASE("reassociation: -0.0 is the padding identity of a sum, +0.0 is not") {
  // n = 3, k = 2: segments [x0, x1] and [x2, pad].
  sem::Program p = parse("input x : f32[3]\nlet y : f32[] = red(sum, -0.0, [3], x)\noutput y\n");
  xform::Result r = run_spec(p, "split-reduction:k=2");
  sem::Inputs zeros{{"x", f32_tensor({3}, {-0.0f, -0.0f, -0.0f})}};
  CHECK(bits(eval1(p, zeros, "y")->as<float>()[0]) == 0x80000000u);         // sequential: -0.0
  CHECK(bits(eval1(r.program, zeros, "y")->as<float>()[0]) == 0x80000000u);  // split: -0.0 too
  // The same split padded with +0.0: -0.0 + +0.0 = +0.0 turns the result positive.
  std::string text = sem::print_program(r.program);
  size_t at = text.find("x, -0.0)");
  REQUIRE(at != std::string::npos);
  std::string wrong = text.substr(0, at) + "x, 0.0)" + text.substr(at + 8);
  sem::Program w = parse(wrong);
  CHECK(bits(eval1(w, zeros, "y")->as<float>()[0]) == 0x00000000u);
  // Every transform keeps -0.0 for an all -0.0 sum from -0.0.
  for (const char* spec : kAll) {
    INFO(spec);
    sem::Program z = parse("input x : f32[2, 13]\nlet y : f32[2] = red(sum, -0.0, [13], x)\noutput y\n");
    sem::Tensor t(sem::DType::F32, {2, 13});
    for (int64_t i = 0; i < t.size(); ++i) t.as<float>()[i] = -0.0f;
    sem::Inputs in{{"x", t}};
    auto out = eval1(run_spec(z, spec).program, in, "y");
    CHECK(bits(out->as<float>()[0]) == 0x80000000u);
    CHECK(bits(out->as<float>()[1]) == 0x80000000u);
  }
}

TEST_CASE("reassociation: non-divisible extents (n = 13, k = 4) and the init used once") {
  sem::Program p = parse("input x : f32[2, 13]\nlet y : f32[2] = red(sum, 100.0, [13], x)\noutput y\n");
  xform::Result r = run_spec(p, "split-reduction:k=4");
  // Small integers: every order is exact in f32, so the bits must agree; an
  // init counted twice or a padded element read as data would show.
  sem::Tensor t(sem::DType::F32, {2, 13});
  for (int64_t i = 0; i < t.size(); ++i) t.as<float>()[i] = float(i + 1);
  sem::Inputs in{{"x", t}};
  auto a = eval1(p, in, "y"), b = eval1(r.program, in, "y");
  CHECK(a->as<float>()[0] == 100.0f + 91.0f);
  CHECK(b->as<float>()[0] == a->as<float>()[0]);
  CHECK(b->as<float>()[1] == a->as<float>()[1]);
}

TEST_CASE("reassociation: a sequential f32 sum and its split differ in bits for some input") {
  sem::Program p = parse("input x : f32[1000]\nlet y : f32[] = red(sum, 0.0, [1000], x)\noutput y\n");
  sem::Program s = run_spec(p, "split-reduction:k=32").program;
  bool differs = false;
  for (uint64_t seed = 1; seed <= 20 && !differs; ++seed) {
    sem::Inputs in = sem::generate_inputs(p, sem::InputKind::Normal, seed);
    differs = !sem::element_equal(*eval1(p, in, "y"), *eval1(s, in, "y"), 0);
  }
  CHECK(differs);
}

// ---------------------------------------------------------------- 16 lanes

namespace {

// What a vectorised CPU loop computes: 16 accumulators from -0.0, element i
// into lane i % 16, then the stated combine, then init.
float lanes16(const float* x, int64_t n, float init, bool tree) {
  float acc[16];
  for (float& a : acc) a = -0.0f;
  for (int64_t i = 0; i < n; ++i) acc[i % 16] += x[i];
  if (!tree) {
    float r = init;
    for (float a : acc) r += a;
    return r;
  }
  for (int h = 8; h >= 1; h /= 2)
    for (int l = 0; l < h; ++l) acc[l] = acc[l] + acc[l + h];
  return init + acc[0];
}

}  // namespace

TEST_CASE("reassociation: interleave-lanes:w=16 gives the bits of a C++ loop with 16 accumulators") {
  for (bool tree : {true, false}) {
    for (float init : {0.0f, -0.0f, 1.5f}) {
      for (int64_t n : {1, 5, 16, 17, 100, 1000, 4099}) {
        std::string text = "input x : f32[3, " + std::to_string(n) + "]\nlet y : f32[3] = red(sum, " +
                           (init == 0 && std::signbit(init) ? std::string("-0.0") : std::to_string(init)) + ", [" +
                           std::to_string(n) + "], x)\noutput y\n";
        sem::Program p = parse(text);
        sem::Program t = run_spec(p, tree ? "interleave-lanes:w=16" : "interleave-lanes:w=16:combine=seq").program;
        for (sem::InputKind kind : sem::kInputKinds) {
          sem::Inputs in = sem::generate_inputs(p, kind, uint64_t(n) + 3);
          auto y = eval1(t, in, "y");
          const float* x = in.at("x").as<float>();
          for (int64_t row = 0; row < 3; ++row) {
            float want = lanes16(x + row * n, n, init, tree);
            INFO("n=" << n << " init=" << init << " tree=" << tree << " kind=" << sem::input_kind_name(kind)
                      << " row " << row);
            float got = y->as<float>()[row];
            CHECK(((std::isnan(want) && std::isnan(got)) || bits(want) == bits(got)));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- generated programs

TEST_CASE("reassociation: well formed on generated programs; exact applications verified") {
  int exact_checked = 0;
  for (const char* spec : kAll) {
    for (int s = 0; s < 60; ++s) {
      sem::Program p = oracle::generate_program(uint64_t(s) * 7919 + 5);
      xform::Result r = run_spec(p, spec);
      INFO(spec << "\n" << sem::print_program(p));
      check_round_trip(r.program);
      REQUIRE_FALSE(oracle::interface_mismatch(p, r.program).has_value());
      if (r.cls != xform::SemClass::Exact) continue;
      oracle::Verdict v = oracle::check_programs(p, r.program, xform::SemClass::Exact, {3, uint64_t(s)});
      if (v.status != oracle::Status::Verified) FAIL(oracle::format_verdict(v, p, r.program, spec));
      ++exact_checked;
    }
  }
  CHECK(exact_checked > 0);
}

// ---------------------------------------------------------------- NumPy

namespace {

bool have_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("reassociation: numpy-pairwise reproduces numpy.sum of float32 bit for bit") {
  if (!have_numpy()) {
    WARN("skipped: /usr/bin/python3 has no numpy (Debian python3-numpy)");
    return;
  }
  // Lengths: every one up to 1024, then a dense sample up to 8192 (every 7th,
  // plus the neighbourhoods of multiples of 128 where the splits change), and
  // a few beyond NumPy's 8192-element buffer, where numpy.sum adds the
  // pairwise sums of the blocks in turn. (All of 1..8192 pass too; they take
  // about 5x longer.)
  struct Case {
    int64_t n, bufsize;
  };
  std::vector<Case> cases;
  for (int64_t n = 1; n <= 1024; ++n) cases.push_back({n, 8192});
  for (int64_t n = 1025; n <= 8192; ++n)
    if (n % 7 == 0 || n % 128 <= 1 || n % 128 == 127 || n == 8192) cases.push_back({n, 8192});
  for (int64_t n : {8193, 10000, 16384, 20000, 65541, 100003}) cases.push_back({n, 8192});
  // The blocking model with another buffer size (np.setbufsize(128)).
  for (int64_t n = 1; n <= 300; ++n) cases.push_back({n, 128});
  for (int64_t n : {513, 1000, 1029}) cases.push_back({n, 128});
  const int64_t rows = 2;
  int64_t total = 0;
  for (const Case& c : cases) total += rows * c.n;
  // Values of varied magnitude and sign, so that the summation order shows.
  sem::Tensor data(sem::DType::F32, {total});
  sem::Rng rng(20240601);
  for (int64_t i = 0; i < total; ++i)
    data.as<float>()[i] = float(rng.normal() * std::ldexp(1.0, int(rng.next() % 17) - 8));
  fs::path dir = fs::temp_directory_path() / ("stax_numpy_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  REQUIRE_FALSE(sem::write_npy((dir / "data.npy").string(), data).has_value());
  {
    std::ofstream ls(dir / "cases.txt");
    for (const Case& c : cases) ls << c.n << " " << c.bufsize << "\n";
  }
  std::string script =
      "import numpy as np, sys\n"
      "d = np.load(sys.argv[1]); off = 0\n"
      "for line in open(sys.argv[2]):\n"
      "    n, bs = map(int, line.split())\n"
      "    if np.getbufsize() != bs: np.setbufsize(bs)\n"
      "    for r in range(" + std::to_string(rows) + "):\n"
      "        a = d[off:off + n]; off += n\n"
      "        assert a.flags['C_CONTIGUOUS'] and a.dtype == np.float32\n"
      "        print('%08x' % np.sum(a).view(np.uint32))\n";
  {
    std::ofstream py(dir / "sums.py");
    py << script;
  }
  std::string cmd = "/usr/bin/python3 " + (dir / "sums.py").string() + " " + (dir / "data.npy").string() + " " +
                    (dir / "cases.txt").string();
  FILE* f = ::popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  std::vector<uint32_t> want;
  char line[64];
  while (std::fgets(line, sizeof line, f)) want.push_back(uint32_t(std::stoul(line, nullptr, 16)));
  CHECK(::pclose(f) == 0);
  fs::remove_all(dir);
  REQUIRE(want.size() == cases.size() * size_t(rows));

  int64_t off = 0, mismatches = 0, seq_differs = 0;
  size_t k = 0;
  for (const Case& c : cases) {
    int64_t n = c.n;
    std::string text = "input x : f32[" + std::to_string(rows) + ", " + std::to_string(n) +
                       "]\nlet y : f32[" + std::to_string(rows) + "] = red(sum, 0.0, [" + std::to_string(n) +
                       "], x)\noutput y\n";
    sem::Program p = parse(text);
    xform::Result r = run_spec(p, "numpy-pairwise:bufsize=" + std::to_string(c.bufsize));
    sem::Tensor x(sem::DType::F32, {rows, n});
    std::memcpy(x.data.data(), data.as<float>() + off, size_t(rows * n) * 4);
    off += rows * n;
    sem::Inputs in{{"x", x}};
    auto got = eval1(r.program, in, "y");
    auto seq = eval1(p, in, "y");
    for (int64_t row = 0; row < rows; ++row, ++k) {
      uint32_t g = bits(got->as<float>()[row]);
      seq_differs += bits(seq->as<float>()[row]) != want[k];
      if (g != want[k] && ++mismatches <= 5)
        FAIL_CHECK("n=" << n << " bufsize=" << c.bufsize << " row " << row << ": numpy " << std::hex << want[k]
                        << ", stax " << g);
    }
  }
  CHECK(mismatches == 0);
  // The check has teeth: the sequential order differs from NumPy's often.
  CHECK(seq_differs > int64_t(cases.size()) / 2);
}
