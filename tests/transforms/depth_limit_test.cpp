// The nesting limit of transforms (semantics/expr_util.h, kMaxExprDepth):
// inlining a long chain of single-use bindings stops nesting at 128 levels,
// so the printed result reads back, and it computes the same bits.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include "oracle/checker.h"
#include "semantics/expr_util.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/reassoc.h"
#include "transforms/transform.h"

using namespace stax;
using namespace stax::sem;

namespace {

std::string chain(int n) {
  std::string s = "input x : f32[4]\nlet y0 = map(neg, x)\n";
  for (int i = 1; i < n; ++i) s += "let y" + std::to_string(i) + " = map(neg, y" + std::to_string(i - 1) + ")\n";
  return s + "output y" + std::to_string(n - 1) + "\n";
}

/// `p` after the `inline` pipeline.
xform::Result inline_all(const Program& p, xform::Context& ctx) {
  auto steps = xform::parse_pipeline("inline");
  REQUIRE(std::holds_alternative<std::vector<xform::Step>>(steps));
  return xform::run_pipeline(p, std::get<std::vector<xform::Step>>(steps), ctx);
}

}  // namespace

TEST_CASE("inline keeps a 600-binding chain within the nesting limit, and it reads back") {
  Program p = test::parse_ok(chain(600));
  xform::Context ctx;
  xform::Result r = inline_all(p, ctx);
  CHECK(r.program.bindings.size() > 1);
  CHECK(r.program.bindings.size() < 20);
  for (const Binding& b : r.program.bindings) CHECK(sem::expr_depth(b.expr) <= sem::kMaxExprDepth);
  ParseResult back = parse_program(print_program(r.program));
  REQUIRE(std::holds_alternative<Program>(back));
  Inputs in;
  in["x"] = test::f32({4}, {1.5f, -0.0f, 3.0f, -7.25f});
  IeeeOutcome a = eval_ieee(p, in), b = eval_ieee(r.program, in);
  REQUIRE(!a.failure);
  REQUIRE(!b.failure);
  const std::string out = p.outputs[0];
  CHECK(test::bits32(*a.outputs.at(out)) == test::bits32(*b.outputs.at(out)));

  // The wrong case: substituting every binding into its user regardless of
  // depth nests 600 levels, which the parser refuses to read back.
  Program naive = p;
  while (naive.bindings.size() > 1) {
    Binding b = naive.bindings.front();
    naive.bindings.erase(naive.bindings.begin());
    for (Binding& o : naive.bindings) o.expr = sem::substitute(o.expr, b.name, b.expr);
  }
  CHECK(sem::expr_depth(naive.bindings[0].expr) > 256);
  CHECK(std::holds_alternative<Diag>(parse_program(print_program(naive))));
}

TEST_CASE("inline of one named binding past the limit is refused with a message") {
  Program p = test::parse_ok(chain(200));
  // y0..y198 inlined one by one from the top until the limit; then naming the
  // next one must say why it cannot.
  xform::Context ctx;
  auto all = xform::run_pipeline(p, std::get<std::vector<xform::Step>>(xform::parse_pipeline("inline")), ctx);
  std::string left = all.program.bindings.front().name;
  auto named = xform::parse_pipeline("inline:name=" + left);
  REQUIRE(std::holds_alternative<std::vector<xform::Step>>(named));
  xform::Context ctx2;
  std::string message;
  try {
    xform::run_pipeline(all.program, std::get<std::vector<xform::Step>>(named), ctx2);
  } catch (const xform::TransformError& e) {
    message = e.message;
  }
  CHECK(test::contains(message, "deeper than 128 levels"));
}

TEST_CASE("inline of a 10,000-binding chain: one pass, nesting-limited, same bits") {
  // Each inlining used to copy and rescan the program (19 s for this chain);
  // the use counts are now taken once (inlining moves uses, it does not add any).
  Program p = test::parse_ok(chain(10000));
  xform::Context ctx;
  xform::Result r = inline_all(p, ctx);
  // 10,000 levels in chunks of at most 128.
  CHECK(r.program.bindings.size() >= 10000 / sem::kMaxExprDepth);
  CHECK(r.program.bindings.size() < 200);
  CHECK(ctx.count == int64_t(10000 - r.program.bindings.size()));
  Inputs in;
  in["x"] = test::f32({4}, {1.5f, -0.0f, 3.0f, -7.25f});
  IeeeOutcome a = eval_ieee(p, in), b = eval_ieee(r.program, in);
  REQUIRE(!a.failure);
  REQUIRE(!b.failure);
  CHECK(test::bits32(*a.outputs.at("y9999")) == test::bits32(*b.outputs.at("y9999")));
}

TEST_CASE("count_all_uses_in agrees with count_uses_in name by name (lets and loads included)") {
  Program p = test::parse_ok(
      "input x : f32[4]\ninput i : i32[2]\nlet y = map(neg, x)\n"
      "let z = view(y, [2], (j) -> (load(i, j)))\n"
      "let w = let t = map(exp, y) in map(add, t, view(z, [4], (k) -> (k % 2)))\n"
      "output w\n");
  for (const Binding& b : p.bindings) {
    std::map<std::string, sem::Uses> all;
    sem::count_all_uses_in(b.expr, all);
    for (const char* name : {"x", "i", "y", "z", "w", "t"}) {
      sem::Uses one;
      sem::count_uses_in(b.expr, name, one);
      INFO(b.name << " " << name);
      CHECK(all[name].operand == one.operand);
      CHECK(all[name].load == one.load);
    }
  }
}

TEST_CASE("reassociations of nested reds stay within the nesting limit (campaign seed 5000777934)") {
  // The shrunk reproducer of the 10^6 campaign's one finding: two gpu-reduce
  // steps and interleave-lanes nested v4 past the 256 levels the parser reads.
  const std::string src =
      "input x2 : i64[3, 1, 1]\n"
      "let v4 : i64[2] = map(fn(a) => cast(a, i64), expand(red(sum, 0.0, [2], red(prod, 1.0, [3, 3], "
      "full(f32[1, 2, 3, 3], 0.0))), [2]))\n"
      "let v5 : i64[3, 1, 1] = x2\noutput v5\n";
  Program p = test::parse_ok(src);
  auto steps = xform::parse_pipeline("gpu-reduce:threads=8:warp=4,gpu-reduce:threads=8:warp=2,interleave-lanes");
  REQUIRE(std::holds_alternative<std::vector<xform::Step>>(steps));
  xform::Context ctx;
  xform::Result r = xform::run_pipeline(p, std::get<std::vector<xform::Step>>(steps), ctx);
  for (const Binding& b : r.program.bindings) CHECK(sem::expr_depth(b.expr) <= sem::kMaxExprDepth);
  bool left = false;
  for (const std::string& line : ctx.log) left |= test::contains(line, "interleave-lanes: left v4 as it was");
  CHECK(left);
  // The undone rewrites gave their numbers back: the last note is #count.
  std::string last_note;
  for (const std::string& line : ctx.log)
    if (line.rfind("#", 0) == 0) last_note = line;
  CHECK(ctx.count > 0);
  CHECK(last_note.rfind("#" + std::to_string(ctx.count) + " ", 0) == 0);
  REQUIRE(std::holds_alternative<Program>(parse_program(print_program(r.program))));
  oracle::CheckOptions co;
  co.trials = 3;
  oracle::Verdict v = oracle::check_programs(p, r.program, r.cls, co);
  CHECK(v.status != oracle::Status::Counterexample);

  // The wrong case: interleave-lanes rewriting every red of the gpu-reduced
  // program regardless of depth (what the pass did before) nests past 256;
  // the printed target does not read back and the oracle calls it malformed.
  xform::Context ctx2;
  xform::Result twice = xform::run_pipeline(
      p, std::get<std::vector<xform::Step>>(xform::parse_pipeline("gpu-reduce:threads=8:warp=4,gpu-reduce:threads=8:warp=2")),
      ctx2);
  Program naive = twice.program;
  naive.bindings[0].expr = sem::rewrite_bottom_up(naive.bindings[0].expr, [](const Expr& e) -> std::optional<Expr> {
    const auto* red = std::get_if<RedE>(&e->p);
    if (!red || num_elements(red->extents) < 2) return std::nullopt;
    xform::reassoc::Site s = xform::reassoc::site_of(e);
    bool padded = false;
    Expr lanes = xform::reassoc::interleaved_lanes(s, 16, &padded);
    return xform::reassoc::finish(s, xform::reassoc::tree(s, lanes, /*adjacent=*/false, s.init));
  });
  CHECK(sem::expr_depth(naive.bindings[0].expr) > sem::kMaxExprDepth);
  CHECK(std::holds_alternative<Diag>(parse_program(print_program(naive))));
  oracle::Verdict bad = oracle::check_programs(p, naive, xform::SemClass::Real, co);
  CHECK(bad.status == oracle::Status::Counterexample);
  CHECK(test::contains(bad.message, "malformed"));
}
