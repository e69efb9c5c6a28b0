// Error bounds of reductions (oracle/error_bound/error_bound.h, docs/design.md §4) and the class
// `real` of the oracle (oracle/checker.h): exact per-summand depths for the
// textbook orders, ratios ≤ 1 on random reductions of random shapes, orders
// and dtypes, a nearly attained bound (so an undercounted depth fails), wrong
// reassociations reported as counterexamples, max/min with bound 0.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "oracle/checker.h"
#include "oracle/error_bound/error_bound.h"
#include "oracle/gen/program_gen.h"
#include "semantics/input_gen.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "semantics/random_inputs.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;
using oracle::BoundReport;
using oracle::BoundRow;
using sem::input_kind_name;

namespace {

Program parse(const std::string& text) {
  auto r = parse_program(text, "<test>");
  if (auto* d = std::get_if<Diag>(&r)) FAIL("parse error: " << d->str() << "\n" << text);
  return std::get<Program>(std::move(r));
}

Tensor f32_tensor(Shape shape, const std::vector<float>& v) {
  Tensor t(DType::F32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.as<float>()[i] = v[i];
  return t;
}

Tensor normal_f32(int64_t n, uint64_t seed) {
  Rng rng(seed);
  Tensor t(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) t.as<float>()[i] = float(rng.normal());
  return t;
}

const BoundRow& row_of(const BoundReport& r, const std::string& name) {
  const BoundRow* row = r.row(name);
  if (!row) FAIL("no row " << name << "\n" << oracle::format_bound_report(r, "test"));
  return *row;
}

std::string seq_text(int64_t n, const std::string& init = "0.0") {
  return "input x : f32[" + std::to_string(n) + "]\nlet y : f32[] = red(sum, " + init + ", [" + std::to_string(n) +
         "], x)\noutput y\n";
}

std::string split_text(int64_t k, int64_t m) {
  std::string n = std::to_string(k * m), ks = std::to_string(k), ms = std::to_string(m);
  return "input x : f32[" + n + "]\nlet p : f32[" + ks + "] = red(sum, 0.0, [" + ms + "], view(x, [" + ks + ", " + ms +
         "], (i, j) -> (" + ms + "*i + j)))\nlet y : f32[] = red(sum, 0.0, [" + ks + "], p)\noutput y\n";
}

/// Nested splits by 2 (n = 2^levels), adjacent pairs, each red from -0.0.
std::string pairwise_text(int levels) {
  int64_t n = int64_t(1) << levels;
  std::string s = "input x : f32[" + std::to_string(n) + "]\n", prev = "x";
  for (int l = 1; l <= levels; ++l) {
    int64_t h = n >> l;
    std::string name = l == levels ? "y" : "p" + std::to_string(l);
    std::string ty = l == levels ? "f32[]" : "f32[" + std::to_string(h) + "]";
    std::string v = l == levels ? prev : "view(" + prev + ", [" + std::to_string(h) + ", 2], (i, j) -> (2*i + j))";
    s += "let " + name + " : " + ty + " = red(sum, -0.0, [2], " + v + ")\n";
    prev = name;
  }
  return s + "output y\n";
}

/// Every summand's depth, by its index in x, from the contributions list.
std::map<int64_t, int64_t> depths_of(const Program& p, const Tensor& x) {
  oracle::BoundOptions bo;
  bo.top = int(x.size()) + 4;
  bo.top_always = true;
  BoundReport r = oracle::analyze_bounds(p, {{"x", x}}, bo);
  const BoundRow& row = row_of(r, "y");
  std::map<int64_t, int64_t> d;
  std::regex re(R"(^x\[(\d+)\]$)");
  for (const oracle::Contribution& c : row.top) {
    std::smatch m;
    if (std::regex_match(c.where, m, re)) d[std::stoll(m[1])] = c.depth;
  }
  return d;
}

}  // namespace

TEST_CASE("gamma(n) = n u / (1 - n u)") {
  double u = 0x1.0p-24;
  CHECK(oracle::gamma_n(0, u) == 0.0);
  CHECK(oracle::gamma_n(1, u) == u / (1 - u));
  CHECK(oracle::gamma_n(int64_t(1) << 24, u) == std::numeric_limits<double>::infinity());
}

TEST_CASE("depth analysis: the Higham cases exactly") {
  SECTION("sequential: n-1, element r at depth n - max(r, 1)") {
    for (int64_t n : {1, 2, 7, 64, 1000}) {
      Program p = parse(seq_text(n));
      Tensor x = normal_f32(n, 7);
      BoundReport r = oracle::analyze_bounds(p, {{"x", x}});
      const BoundRow& row = row_of(r, "y");
      INFO(oracle::format_bound_report(r, "sequential n=" + std::to_string(n)));
      CHECK(row.max_depth == n - 1);
      CHECK(row.summands == n);
      CHECK(row.higham.find("sequential") != std::string::npos);
      CHECK(row.higham_match);
      CHECK(r.within());
      if (n <= 64) {
        auto d = depths_of(p, x);
        REQUIRE(d.size() == size_t(n));
        for (int64_t i = 0; i < n; ++i) CHECK(d[i] == n - std::max<int64_t>(i, 1));
      }
    }
  }
  SECTION("a nonzero init is a summand and makes every step round: n") {
    Program p = parse(seq_text(10, "1.5"));
    BoundReport r = oracle::analyze_bounds(p, {{"x", normal_f32(10, 3)}});
    CHECK(row_of(r, "y").max_depth == 10);
    CHECK(row_of(r, "y").summands == 11);
  }
  SECTION("k segments: (n/k-1)+(k-1), element (i, j) at depth (m - max(j,1)) + (k - max(i,1))") {
    for (auto [k, m] : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {4, 16}, {16, 4}, {64, 64}, {3, 11}}) {
      Program p = parse(split_text(k, m));
      Tensor x = normal_f32(k * m, 11);
      BoundReport r = oracle::analyze_bounds(p, {{"x", x}});
      const BoundRow& row = row_of(r, "y");
      INFO(oracle::format_bound_report(r, "split"));
      CHECK(row.max_depth == (m - 1) + (k - 1));
      CHECK(row.higham.find("k segments (k=" + std::to_string(k) + ")") != std::string::npos);
      CHECK(row.higham_match);
      CHECK(r.within());
      CHECK(r.rows.size() == 1);  // p is only a partial of y, not a root of its own
      if (k * m <= 256) {
        auto d = depths_of(p, x);
        REQUIRE(d.size() == size_t(k * m));
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < m; ++j)
            CHECK(d[i * m + j] == (m - std::max<int64_t>(j, 1)) + (k - std::max<int64_t>(i, 1)));
      }
    }
  }
  SECTION("pairwise: ceil(log2 n), every element at the same depth") {
    for (int L : {1, 3, 8, 12}) {
      Program p = parse(pairwise_text(L));
      Tensor x = normal_f32(int64_t(1) << L, 5);
      BoundReport r = oracle::analyze_bounds(p, {{"x", x}});
      const BoundRow& row = row_of(r, "y");
      INFO(oracle::format_bound_report(r, "pairwise"));
      CHECK(row.max_depth == L);
      CHECK(row.higham.find(L == 1 ? "sequential" : "pairwise") != std::string::npos);
      CHECK(row.higham_match);
      if (L <= 8) {
        auto d = depths_of(p, x);
        REQUIRE(d.size() == size_t(1) << L);
        for (const auto& [i, dep] : d) CHECK(dep == L);
      }
    }
  }
  SECTION("identity padding adds no rounding: a -0.0 summand is an exact step") {
    // 5 elements padded to 8 by select(..., -0.0), then a tree over 8.
    Program p = parse(
        "input x : f32[5]\n"
        "let a : f32[4, 2] = map(fn(j, v) => select(lt(j, 5), v, -0.0), view(iota(i64, [8], 0), [4, 2], (i, j) -> "
        "(2*i + j)), view(x, [4, 2], (i, j) -> ((2*i + j) % 5)))\n"
        "let p1 : f32[4] = red(sum, -0.0, [2], a)\n"
        "let p2 : f32[2] = red(sum, -0.0, [2], view(p1, [2, 2], (i, j) -> (2*i + j)))\n"
        "let y : f32[] = red(sum, -0.0, [2], p2)\noutput y\n");
    BoundReport r = oracle::analyze_bounds(p, {{"x", f32_tensor({5}, {1, 2, 3, 4, 5})}});
    const BoundRow& row = row_of(r, "y");
    INFO(oracle::format_bound_report(r, "padded"));
    CHECK(row.max_depth == 3);            // ceil(log2 5), by structure
    CHECK(row.max_effective_depth == 3);  // x[0..3]: 3 roundings; x[4] + (-0.0) is exact
    CHECK(r.within());
  }
}

TEST_CASE("the bound is nearly attained: [1, u, u, ...] loses every u") {
  // 1 + 2^-24 rounds to 1 (a tie to even), so every step loses its whole
  // summand: |error| = (n-1)·u while the bound is (n-1)·u + O(n²u²). A depth
  // undercounted by one would put the ratio above 1.
  const int64_t n = 1000;
  std::vector<float> v(size_t(n), 0x1.0p-24f);
  v[0] = 1.0f;
  Program p = parse(seq_text(n));
  BoundReport r = oracle::analyze_bounds(p, {{"x", f32_tensor({n}, v)}});
  const BoundRow& row = row_of(r, "y");
  INFO(oracle::format_bound_report(r, "tight"));
  CHECK(row.measured == double(n - 1) * 0x1.0p-24);
  CHECK(row.ratio <= 1.0);
  CHECK(row.ratio > 0.99);
  // Two segments of the same data: the segment sums are exact integers added
  // exactly, the bound adds one outer rounding per summand.
  Program q = parse(split_text(2, n / 2));
  std::vector<float> w(size_t(n), 0x1.0p-24f);
  w[0] = 1.0f;
  w[size_t(n / 2)] = 1.0f;
  BoundReport r2 = oracle::analyze_bounds(q, {{"x", f32_tensor({n}, w)}});
  INFO(oracle::format_bound_report(r2, "tight split"));
  CHECK(row_of(r2, "y").ratio <= 1.0);
  CHECK(row_of(r2, "y").ratio > 0.99);
}

namespace {

// ---- Random reductions of random shapes, dtypes and orders, as .stx text ----

struct Gen {
  Rng rng;
  explicit Gen(uint64_t s) : rng(s) {}
  int64_t pick(int64_t lo, int64_t hi) { return rng.range(lo, hi + 1); }  // [lo, hi]
  bool coin(double p = 0.5) { return rng.uniform() < p; }
};

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

struct Case {
  std::string text, order;
};

/// An operand over batch ++ [k, m] reading x[batch, j] with j = f(i, j) < n, or
/// the -0.0 identity where j >= n (padding, as the transforms write it).
std::string segmented(const std::vector<int64_t>& batch, const std::string& dt, int64_t n, int64_t k, int64_t m,
                      const std::string& jexpr) {
  std::vector<std::string> bv, dims, vars;
  for (size_t i = 0; i < batch.size(); ++i) {
    bv.push_back("b" + std::to_string(i));
    dims.push_back(std::to_string(batch[i]));
  }
  vars = bv;
  vars.push_back("i");
  vars.push_back("j");
  std::vector<std::string> shape = dims;
  shape.push_back(std::to_string(k));
  shape.push_back(std::to_string(m));
  std::vector<std::string> src = bv;
  if (k * m == n) {
    src.push_back(jexpr);
    return "view(x, [" + join(shape) + "], (" + join(vars) + ") -> (" + join(src) + "))";
  }
  src.push_back("(" + jexpr + ") % " + std::to_string(n));
  (void)dt;
  return "map(fn(q, v) => select(lt(q, " + std::to_string(n) + "), v, -0.0), view(iota(i64, [" +
         std::to_string(k * m) + "], 0), [" + join(shape) + "], (" + join(vars) + ") -> (" + jexpr + ")), view(x, [" +
         join(shape) + "], (" + join(vars) + ") -> (" + join(src) + ")))";
}

Case random_case(Gen& g) {
  static const char* dts[] = {"f32", "f32", "f32", "f64", "f16", "bf16"};
  static const char* inits[] = {"0.0", "0.0", "-0.0", "1.5", "-2.0"};
  std::string dt = dts[g.pick(0, 5)];
  std::string init = inits[g.pick(0, 4)];
  std::vector<int64_t> batch;
  int nb = int(g.pick(0, 2));
  for (int i = 0; i < nb; ++i) batch.push_back(g.pick(1, 3));
  int64_t n = g.coin(0.2) ? g.pick(1, 4) : g.pick(2, 300);
  std::vector<std::string> dims, bv;
  for (size_t i = 0; i < batch.size(); ++i) {
    dims.push_back(std::to_string(batch[i]));
    bv.push_back("b" + std::to_string(i));
  }
  auto ty = [&](std::vector<int64_t> extra) {
    std::vector<std::string> d = dims;
    for (int64_t e : extra) d.push_back(std::to_string(e));
    return dt + "[" + join(d) + "]";
  };
  std::string out_ty = ty({});
  std::string head = "input x : " + ty({n}) + "\n";
  std::string ns = std::to_string(n);
  int order = int(g.pick(0, 7));
  switch (order) {
    case 0:  // sequential
      return {head + "let y : " + out_ty + " = red(sum, " + init + ", [" + ns + "], x)\noutput y\n", "sequential"};
    case 1: {  // k segments, maybe padded
      int64_t k = g.pick(1, std::min<int64_t>(n, 24)), m = (n + k - 1) / k;
      std::string op = segmented(batch, dt, n, k, m, std::to_string(m) + "*i + j");
      return {head + "let p : " + ty({k}) + " = red(sum, -0.0, [" + std::to_string(m) + "], " + op + ")\nlet y : " +
                  out_ty + " = red(sum, " + init + ", [" + std::to_string(k) + "], p)\noutput y\n",
              "split k=" + std::to_string(k)};
    }
    case 2: {  // W interleaved lanes, sequential combine
      int64_t w = g.pick(1, 17), t = (n + w - 1) / w;
      std::string op = segmented(batch, dt, n, w, t, std::to_string(w) + "*j + i");
      return {head + "let l : " + ty({w}) + " = red(sum, -0.0, [" + std::to_string(t) + "], " + op + ")\nlet y : " +
                  out_ty + " = red(sum, " + init + ", [" + std::to_string(w) + "], l)\noutput y\n",
              "lanes w=" + std::to_string(w)};
    }
    case 3: {  // 4 lanes combined by a map: ((l0 + l1) + (l2 + l3)), nested reds, a let
      int64_t t = (n + 3) / 4;
      std::string op = segmented(batch, dt, n, 4, t, "4*j + i");
      std::vector<std::string> lv;
      for (int c = 0; c < 4; ++c) {
        std::vector<std::string> src = bv;
        src.push_back(std::to_string(c));
        lv.push_back("view(l, [" + join(dims) + "], (" + (bv.empty() ? std::string("") : join(bv)) + ") -> (" +
                     join(src) + "))");
      }
      return {head + "let y : " + out_ty + " = let l = red(sum, -0.0, [" + std::to_string(t) + "], " + op +
                  ") in map(fn(a, b, c, d) => add(add(a, b), add(c, d)), " + join(lv) + ")\noutput y\n",
              "lanes 4 + tree map"};
    }
    case 4: {  // pairwise: padded to a power of two, nested reds over [2] inline, init on a red over [1]
      int64_t P = 1;
      while (P < n) P *= 2;
      std::string cur = "x";
      if (P > 1) {
        cur = "red(sum, -0.0, [2], " + segmented(batch, dt, n, P / 2, 2, "2*i + j") + ")";
        for (int64_t h = P / 4; h >= 1; h /= 2) {
          std::vector<std::string> shape = dims, vars = bv, src = bv;
          shape.push_back(std::to_string(h));
          shape.push_back("2");
          vars.push_back("i");
          vars.push_back("j");
          src.push_back("2*i + j");
          cur = "red(sum, -0.0, [2], view(" + cur + ", [" + join(shape) + "], (" + join(vars) + ") -> (" +
                join(src) + ")))";
        }
      }
      return {head + "let y : " + out_ty + " = red(sum, " + init + ", [1], " + cur + ")\noutput y\n",
              "pairwise P=" + std::to_string(P)};
    }
    case 5: {  // a two-dim reduction folded in the other order (reorder-reduction-dims)
      int64_t a = g.pick(1, 16), b = g.pick(1, 16);
      std::string h2 = "input x : " + ty({a, b}) + "\n";
      std::vector<std::string> shape = dims, vars = bv, src = bv;
      shape.push_back(std::to_string(b));
      shape.push_back(std::to_string(a));
      vars.push_back("i");
      vars.push_back("j");
      src.push_back("j");
      src.push_back("i");
      return {h2 + "let y : " + out_ty + " = red(sum, " + init + ", [" + std::to_string(b) + ", " + std::to_string(a) +
                  "], view(x, [" + join(shape) + "], (" + join(vars) + ") -> (" + join(src) + ")))\noutput y\n",
              "reordered dims"};
    }
    case 6: {  // NumPy-like: halves summed separately, added by a map, then added to the init
      if (n < 2) return {head + "let y : " + out_ty + " = red(sum, " + init + ", [" + ns + "], x)\noutput y\n", "seq"};
      int64_t h = n / 2;
      auto half = [&](int64_t off, int64_t len) {
        std::vector<std::string> shape = dims, vars = bv, src = bv;
        shape.push_back(std::to_string(len));
        vars.push_back("j");
        src.push_back("j + " + std::to_string(off));
        return "red(sum, -0.0, [" + std::to_string(len) + "], view(x, [" + join(shape) + "], (" + join(vars) +
               ") -> (" + join(src) + ")))";
      };
      std::string m = "map(add, " + half(0, h) + ", " + half(h, n - h) + ")";
      std::string top = "unsqueeze(" + m + ", " + std::to_string(batch.size()) + ")";
      return {head + "let y : " + out_ty + " = red(sum, " + init + ", [1], " + top + ")\noutput y\n",
              "halves + map"};
    }
    default: {  // a registered transform of the sequential program
      static const char* specs[] = {"split-reduction:k=3", "split-reduction", "interleave-lanes:w=8",
                                    "interleave-lanes:w=4:combine=seq", "pairwise", "pairwise:base=4",
                                    "reorder-reduction-dims", "numpy-pairwise"};
      std::string spec = specs[g.pick(0, 7)];
      return {head + "let y : " + out_ty + " = red(sum, " + init + ", [" + ns + "], x)\noutput y\n", "T:" + spec};
    }
  }
}

}  // namespace

TEST_CASE("bound ratios <= 1 on 10,000 random reductions of random shapes and orders") {
  // 10,000 random programs, each on one of the oracle's input kinds in turn
  // (normal, uniform, cancellation, special).
  Gen g(20240604);
  int64_t programs = 0, reductions = 0, checked = 0, skipped = 0, with_error = 0, transformed = 0;
  double max_ratio = 0;
  std::string max_case;
  std::map<std::string, int64_t> by_order;
  auto t0 = std::chrono::steady_clock::now();
  while (programs < 10000) {
    Case c = random_case(g);
    Program p = parse(c.text);
    std::string order = c.order;
    if (order.rfind("T:", 0) == 0) {
      std::string spec = order.substr(2);
      if (!xform::find_transform(spec.substr(0, spec.find(':')))) continue;  // not registered in this build
      auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
      xform::Context ctx;
      try {
        p = xform::run_pipeline(p, steps, ctx).program;
      } catch (const xform::TransformError&) {
        continue;  // e.g. numpy-pairwise refuses halves
      }
      ++transformed;
    }
    ++programs;
    ++by_order[order.rfind("T:", 0) == 0 ? order.substr(0, order.find(':', 2)) : order.substr(0, order.find(' '))];
    {
      sem::InputKind kind = sem::kInputKinds[size_t(programs) % std::size(sem::kInputKinds)];
      Inputs in = sem::generate_inputs(p, kind, uint64_t(programs) * 7 + uint64_t(kind));
      BoundReport r = oracle::analyze_bounds(p, in);
      INFO(c.order << "\n" << print_program(p) << oracle::format_bound_report(r, c.order));
      REQUIRE_FALSE(r.failure);
      REQUIRE(r.row("y"));
      for (const BoundRow& row : r.rows) {
        REQUIRE(row.ratio <= 1.0);
        reductions += row.elements;
        checked += row.checked;
        skipped += row.skipped;
        if (row.measured > 0) ++with_error;
        if (row.ratio > max_ratio) {
          max_ratio = row.ratio;
          max_case = c.order + " " + std::string(dtype_name(row.dtype)) + " " + std::string(sem::input_kind_name(kind));
        }
      }
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string orders;
  for (const auto& [o, k] : by_order) orders += o + " " + std::to_string(k) + "; ";
  INFO("programs " << programs << ", reductions " << reductions << ", checked " << checked << ", outside the model "
                   << skipped << ", rounding errors seen " << with_error << ", max ratio " << max_ratio << ", "
                   << secs << " s; " << orders);
  CHECK(reductions >= 10000);
  CHECK(checked >= reductions * 6 / 10);  // most elements are inside the model (special inputs are not)
  CHECK(with_error >= 2000);              // the roundings are real, not all exact
  CHECK(max_ratio > 0.05);    // and measured: the bound is not vacuous
  WARN("random reductions: " << programs << " programs (" << transformed << " via transforms), " << reductions
                             << " reductions, " << checked << " checked, max ratio " << max_ratio << " ("
                             << max_case << "), " << secs << " s; " << orders);
}

TEST_CASE("half reductions: the f16 stores are roundings of their own") {
  Program p = parse(
      "input x : f16[256]\n"
      "let p : f16[16] = red(sum, 0.0, [16], view(x, [16, 16], (i, j) -> (16*i + j)))\n"
      "let y : f16[] = red(sum, 0.0, [16], p)\noutput y\n");
  for (sem::InputKind kind : {sem::InputKind::Normal, sem::InputKind::Uniform}) {
    BoundReport r = oracle::analyze_bounds(p, sem::generate_inputs(p, kind, 3));
    const BoundRow& row = row_of(r, "y");
    INFO(oracle::format_bound_report(r, "f16 split"));
    CHECK(row.acc == DType::F32);
    CHECK(row.max_depth == 30);
    CHECK(row.extra_roundings == "+2 f16");
    CHECK(row.ratio <= 1.0);
    CHECK(row.measured > 0);
  }
}

TEST_CASE("products: relative bound gamma(D); max/min: bound 0") {
  Program p = parse("input x : f32[4, 40]\nlet y : f32[4] = red(prod, 1.0, [40], x)\noutput y\n");
  Rng rng(9);
  Tensor x(DType::F32, {4, 40});
  for (int64_t i = 0; i < x.size(); ++i) x.as<float>()[i] = float(0.5 + 1.5 * rng.uniform());
  BoundReport r = oracle::analyze_bounds(p, {{"x", x}});
  const BoundRow& row = row_of(r, "y");
  INFO(oracle::format_bound_report(r, "prod"));
  CHECK(row.op == RedOp::Prod);
  CHECK(row.max_depth == 39);
  CHECK(row.checked == 4);
  CHECK(row.bound > 0);
  CHECK(row.ratio <= 1.0);

  for (const char* op : {"max", "min"}) {
    std::string o = op;
    Program m = parse("input x : f32[64]\nlet p : f32[8] = red(" + o + ", " + (o == "max" ? "-inf" : "inf") +
                      ", [8], view(x, [8, 8], (i, j) -> (8*i + j)))\nlet y : f32[] = red(" + o + ", " +
                      (o == "max" ? "-inf" : "inf") + ", [8], p)\noutput y\n");
    for (sem::InputKind kind : sem::kInputKinds) {
      BoundReport rm = oracle::analyze_bounds(m, sem::generate_inputs(m, kind, 4));
      const BoundRow& mr = row_of(rm, "y");
      INFO(oracle::format_bound_report(rm, o));
      CHECK(mr.bound == 0.0);
      CHECK(mr.measured == 0.0);
      CHECK(mr.ratio == 0.0);
      CHECK(mr.summands == 64 + 9);  // the leaves and the inits
    }
  }
}

namespace {

oracle::Verdict tv_real(const std::string& src, const std::string& tgt, int trials = 16) {
  return oracle::check_programs(parse(src), parse(tgt), xform::SemClass::Real, {trials, 5});
}

}  // namespace

TEST_CASE("tv --class real: correct reassociations verify") {
  for (const std::string& tgt : {split_text(16, 16), pairwise_text(8)}) {
    oracle::Verdict v = tv_real(seq_text(256), tgt);
    INFO(oracle::format_verdict(v, parse(seq_text(256)), parse(tgt), "correct"));
    CHECK(v.status == oracle::Status::Verified);
    CHECK(v.bound_checked >= 8);
    CHECK(v.max_ratio <= 1.0);
  }
}

TEST_CASE("tv --class real: wrong reassociations are counterexamples beyond the bound") {
  std::string src = seq_text(256);
  SECTION("an element dropped") {
    std::string tgt =
        "input x : f32[256]\n"
        "let p : f32[16] = red(sum, 0.0, [16], map(fn(q, v) => select(lt(q, 255), v, -0.0), view(iota(i64, [256], "
        "0), [16, 16], (i, j) -> (16*i + j)), view(x, [16, 16], (i, j) -> (16*i + j))))\n"
        "let y : f32[] = red(sum, 0.0, [16], p)\noutput y\n";
    oracle::Verdict v = tv_real(src, tgt);
    std::string text = oracle::format_verdict(v, parse(src), parse(tgt), "drop");
    INFO(text);
    REQUIRE(v.status == oracle::Status::Counterexample);
    REQUIRE(v.cex);
    CHECK(v.cex->check == "real");
    CHECK(v.cex->output == "y");
    REQUIRE(v.cex->ratio);
    CHECK(*v.cex->ratio > 1.0);
    CHECK_THAT(text, Catch::Contains("target's error bound") && Catch::Contains("ratio"));
  }
  SECTION("a segment counted twice") {
    std::string tgt =
        "input x : f32[256]\n"
        "let p : f32[16] = red(sum, 0.0, [16], view(x, [16, 16], (i, j) -> (16*i + j)))\n"
        "let y : f32[] = red(sum, 0.0, [17], view(p, [17], (i) -> (i % 16)))\noutput y\n";
    oracle::Verdict v = tv_real(src, tgt);
    INFO(oracle::format_verdict(v, parse(src), parse(tgt), "twice"));
    REQUIRE(v.status == oracle::Status::Counterexample);
    CHECK(v.cex->check == "real");
    REQUIRE(v.cex->ratio);
    CHECK(*v.cex->ratio > 1.0);
  }
  SECTION("a max reassociation that loses half the elements") {
    std::string s = "input x : f32[16]\nlet y : f32[] = red(max, -inf, [16], x)\noutput y\n";
    std::string ok =
        "input x : f32[16]\nlet p : f32[4] = red(max, -inf, [4], view(x, [4, 4], (i, j) -> (4*i + j)))\n"
        "let y : f32[] = red(max, -inf, [4], p)\noutput y\n";
    std::string bad =
        "input x : f32[16]\nlet p : f32[4] = red(max, -inf, [4], view(x, [4, 4], (i, j) -> (4*(i % 2) + j)))\n"
        "let y : f32[] = red(max, -inf, [4], p)\noutput y\n";
    CHECK(tv_real(s, ok).status == oracle::Status::Verified);
    CHECK(oracle::check_programs(parse(s), parse(ok), xform::SemClass::Exact, {16, 5}).status ==
          oracle::Status::Verified);
    oracle::Verdict v = tv_real(s, bad);
    INFO(oracle::format_verdict(v, parse(s), parse(bad), "max"));
    REQUIRE(v.status == oracle::Status::Counterexample);
    CHECK(v.cex->check == "real");
  }
}

TEST_CASE("Real-domain equality: MPFR rounding is not a difference, a dropped 2^-100 is") {
  auto val = [](double a, double b, long prec) {
    RVal x(prec), y(prec);
    mpfr_set_d(x.f, a, MPFR_RNDN);
    mpfr_set_d(y.f, a, MPFR_RNDN);
    mpfr_nextabove(y.f);  // one ulp at this precision
    bool near = oracle::real_equal(x, y, DType::F64, prec);
    mpfr_add_d(y.f, x.f, b, MPFR_RNDN);
    bool far = oracle::real_equal(x, y, DType::F64, prec);
    return std::make_pair(near, far);
  };
  auto [near, far] = val(3.0, std::ldexp(1.0, -100), 256);
  CHECK(near);
  CHECK_FALSE(far);
  RVal n1(256), n2(256);
  mpfr_set_nan(n1.f);
  mpfr_set_nan(n2.f);
  CHECK(oracle::real_equal(n1, n2, DType::F32, 256));
  mpfr_set_inf(n2.f, 1);
  CHECK_FALSE(oracle::real_equal(n1, n2, DType::F32, 256));
}

TEST_CASE("a 2^24-element sum is bounded in under 10 s") {
  int64_t n = int64_t(1) << 24;
  Program p = parse(seq_text(n));
  Rng rng(1);
  Tensor x(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) x.as<float>()[i] = float(rng.uniform());
  auto t0 = std::chrono::steady_clock::now();
  BoundReport r = oracle::analyze_bounds(p, {{"x", x}});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const BoundRow& row = row_of(r, "y");
  CHECK(row.summands == n);
  CHECK(row.max_depth == n - 1);
  CHECK(row.ratio <= 1.0);
  CHECK(row.measured > 0);
  CHECK(secs < 10.0 * test::time_scale());
  WARN("2^24 sequential sum: bound check " << secs << " s, error " << row.measured << ", bound " << row.bound);
}

TEST_CASE("stax bound and stax tv --class real on the command line") {
  std::string dir = std::string(STAX_SOURCE_DIR) + "/build-test-tmp-error-bound";
  std::string mk = "mkdir -p '" + dir + "'";
  REQUIRE(std::system(mk.c_str()) == 0);
  auto write = [&](const std::string& name, const std::string& text) {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    REQUIRE(f);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return dir + "/" + name;
  };
  auto run = [&](const std::string& args) {
    std::string cmd = std::string(STAX_BINARY) + " " + args + " >'" + dir + "/out.txt' 2>&1";
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  std::string seq = write("seq.stx", seq_text(1024));
  std::string split = write("split.stx", split_text(32, 32));
  std::string twice = write("twice.stx",
                            "input x : f32[1024]\n"
                            "let p : f32[32] = red(sum, 0.0, [32], view(x, [32, 32], (i, j) -> (32*i + j)))\n"
                            "let y : f32[] = red(sum, 0.0, [33], view(p, [33], (i) -> (i % 32)))\noutput y\n");
  auto out = [&] {
    std::string text;
    FILE* f = std::fopen((dir + "/out.txt").c_str(), "r");
    REQUIRE(f);
    char buf[4096];
    size_t k;
    while ((k = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, k);
    std::fclose(f);
    return text;
  };
  CHECK(run("bound " + seq) == 0);
  CHECK_THAT(out(), Catch::Contains("sequential: n-1 = 1024-1 = 1023") && Catch::Contains("within the bounds"));
  CHECK(run("bound " + seq + " --transform split-reduction:k=32") == 0);
  CHECK_THAT(out(), Catch::Contains("k segments (k=32)"));
  CHECK(run("bound " + split + " --json --random-inputs 3 --data cancellation") == 0);
  nlohmann::json j = nlohmann::json::parse(out());
  CHECK(j["verdict"] == "within");
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["max_depth"] == 62);
  CHECK(j["rows"][0]["ratio"].get<double>() <= 1.0);
  CHECK(run("bound " + seq + " --data nonsense") == 2);
  CHECK(run("bound " + dir + "/missing.stx") == 2);
  CHECK(run("tv " + seq + " " + split + " --class real --trials 4") == 0);
  CHECK(run("tv " + seq + " " + twice + " --class real --trials 4") == 1);
  std::string rm = "rm -rf '" + dir + "'";
  CHECK(std::system(rm.c_str()) == 0);
}

TEST_CASE("a violation names the element and its largest summands") {
  BoundReport r;
  BoundRow w;
  w.name = "y";
  w.output = true;
  w.shape = {4};
  w.elements = w.checked = 4;
  w.worst = 2;
  w.worst_index = {2};
  w.computed = 1.5;
  w.exact = 1.0;
  w.measured = 0.5;
  w.bound = 0.25;
  w.ratio = 2.0;
  w.higham = "sequential: n-1 = 3";
  w.top = {{"x[2, 7]", 3.0, 5, "5", 0.2}, {"x[2, 1]", -1.0, 3, "3", 0.05}};
  r.rows.push_back(w);
  r.max_ratio = 2.0;
  CHECK_FALSE(r.within());
  std::string text = oracle::format_bound_report(r, "synthetic");
  CHECK_THAT(text, Catch::Contains("BOUND EXCEEDED at y[2]") && Catch::Contains("x[2, 7]") &&
                       Catch::Contains("x[2, 1]") && Catch::Contains("ratio 2.000e+00"));
  nlohmann::json j = oracle::bound_report_json(r, "synthetic");
  CHECK(j["verdict"] == "exceeded");
  CHECK(j["rows"][0]["contributions"][0]["where"] == "x[2, 7]");
}

TEST_CASE("class real on generated programs: every reassociation verifies, every bound holds") {
  // Programs with maps, views, gathers, lets, halves and every red op: the
  // analysis must find the reduction roots of any program and stay sound.
  // STAX_STRESS=N runs N programs per transform instead of 40 (1,500 pass).
  const char* specs[] = {"split-reduction:k=3", "interleave-lanes:w=4", "interleave-lanes:w=3:combine=seq",
                         "pairwise", "pairwise:base=3", "reorder-reduction-dims", "numpy-pairwise"};
  int real_checked = 0, rows = 0;
  for (const char* spec : specs) {
    std::string name(spec);
    if (!xform::find_transform(name.substr(0, name.find(':')))) continue;
    auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
    int n_programs = std::getenv("STAX_STRESS") ? std::atoi(std::getenv("STAX_STRESS")) : 40;
    for (int s = 0; s < n_programs; ++s) {
      Program p = oracle::generate_program(uint64_t(s) * 104729 + 17);
      xform::Context ctx;
      xform::Result r = xform::run_pipeline(p, steps, ctx);
      INFO(spec << "\n" << print_program(p) << "target:\n" << print_program(r.program));
      // The bound of the program as written and of its transform.
      for (const Program* q : {&p, &r.program}) {
        BoundReport b = oracle::analyze_bounds(*q, sem::generate_inputs(*q, sem::InputKind::Normal, uint64_t(s)));
        INFO(oracle::format_bound_report(b, spec));
        if (b.failure) continue;  // the program is ⊥ on these inputs (integer division, gathers)
        CHECK(b.max_ratio <= 1.0);
        rows += int(b.rows.size());
      }
      if (r.cls != xform::SemClass::Real) continue;
      oracle::Verdict v = oracle::check_programs(p, r.program, xform::SemClass::Real, {4, uint64_t(s)});
      if (v.status != oracle::Status::Verified) FAIL(oracle::format_verdict(v, p, r.program, spec));
      ++real_checked;
    }
  }
  CHECK(real_checked >= 20);
  CHECK(rows >= 100);
}
