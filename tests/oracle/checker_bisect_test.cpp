// Bisection of a failing pipeline to its first bad rewrite
// (oracle::check_transform, LLVM debug-counter style over Context::max_rewrites;
// transforms/transform.h). The checker must name the first rewrite after which
// the counterexample's inputs fail, its log line, and nothing at all when the
// pipeline is right. The expected rewrite is found here independently, by
// replaying the pipeline with 0, 1, 2, ... rewrites.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "oracle/checker.h"
#include "semantics/mutants.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;
using xform::SemClass;

namespace {

sem::Program parse(const std::string& s) { return test::parse_ok(s, "<bisect-test>"); }

std::vector<xform::Step> pipeline(const std::string& spec) {
  auto r = xform::parse_pipeline(spec);
  if (auto* e = std::get_if<std::string>(&r)) FAIL("bad pipeline " << spec << ": " << *e);
  return std::get<std::vector<xform::Step>>(r);
}

const oracle::CheckOptions kOpt{16, 3};

struct Replay {
  int64_t total = 0;         ///< rewrites of the whole pipeline
  int64_t first_bad = 0;     ///< the fewest rewrites after which the check fails (0: none fails)
  std::vector<std::string> log;
};

/// The reference: the whole pipeline's rewrite count and log, and the first
/// prefix (by number of rewrites) whose result fails on the inputs that make
/// the whole pipeline fail.
Replay replay(const sem::Program& p, const std::vector<xform::Step>& steps, const sem::Inputs& failing) {
  Replay r;
  xform::Context all;
  xform::Result whole = xform::run_pipeline(p, steps, all);
  r.total = all.count;
  r.log = all.log;
  for (int64_t k = 0; k <= r.total; ++k) {
    xform::Context c;
    c.max_rewrites = k;
    xform::Result part = xform::run_pipeline(p, steps, c);
    if (oracle::compare_on(p, part.program, whole.cls, failing)) {
      r.first_bad = k;
      break;
    }
  }
  return r;
}

/// The log line of rewrite #k ("" if none).
std::string log_line(const std::vector<std::string>& log, int64_t k) {
  std::string tag = "#" + std::to_string(k) + " ";
  for (const std::string& l : log)
    if (l.rfind(tag, 0) == 0) return l;
  return "";
}

/// Checks that the verdict on a failing pipeline names exactly the first bad
/// rewrite, with its log line, and that replaying up to the rewrite before it
/// verifies. Returns the rewrite number.
int64_t require_bisected(const sem::Program& p, const std::string& spec, const std::string& pass) {
  std::vector<xform::Step> steps = pipeline(spec);
  oracle::Verdict v = oracle::check_transform(p, steps, kOpt);
  xform::Context ctx;
  xform::Result r = xform::run_pipeline(p, steps, ctx);
  INFO(spec << "\n" << oracle::format_verdict(v, p, r.program, spec));
  REQUIRE(v.status == oracle::Status::Counterexample);
  REQUIRE(v.cex);
  Replay ref = replay(p, steps, v.cex->inputs);
  INFO("reference: first bad rewrite " << ref.first_bad << " of " << ref.total);
  REQUIRE(ref.first_bad >= 2);  // a good rewrite comes first: the bisection has work to do
  REQUIRE(v.rewrite.has_value());
  CHECK(*v.rewrite == ref.first_bad);
  CHECK(v.rewrite_text == log_line(ref.log, ref.first_bad));
  CHECK(v.rewrite_text.rfind("#" + std::to_string(ref.first_bad) + " " + pass + ":", 0) == 0);
  // The report names it, with the replay flag.
  std::string text = oracle::format_verdict(v, p, r.program, spec);
  CHECK(test::contains(text, "first failing rewrite: " + v.rewrite_text));
  CHECK(test::contains(text, "--max-rewrites " + std::to_string(ref.first_bad)));
  // Stopping one rewrite earlier verifies; stopping at it fails.
  CHECK(oracle::check_transform(p, steps, kOpt, ref.first_bad - 1).status == oracle::Status::Verified);
  CHECK(oracle::check_transform(p, steps, kOpt, ref.first_bad).status == oracle::Status::Counterexample);
  return ref.first_bad;
}

/// The same pipeline without the bug: verified, and no rewrite is named.
void require_clean(const sem::Program& p, const std::string& spec) {
  std::vector<xform::Step> steps = pipeline(spec);
  oracle::Verdict v = oracle::check_transform(p, steps, kOpt);
  xform::Context ctx;
  xform::Result r = xform::run_pipeline(p, steps, ctx);
  INFO(spec << "\n" << oracle::format_verdict(v, p, r.program, spec));
  CHECK(ctx.count >= 2);  // it did rewrite, several times
  CHECK(v.status == oracle::Status::Verified);
  CHECK_FALSE(v.rewrite.has_value());
  CHECK(v.rewrite_text.empty());
  CHECK_FALSE(test::contains(oracle::format_verdict(v, p, r.program, spec), "first failing rewrite"));
}

// ------------------------------------------- a hand-made transform

// "touch" rewrites every binding in turn (one logged rewrite each); with
// bad=K, rewrite #K (counted over the whole pipeline) replaces the binding by
// its counterpart in `wrong`, a program of the same shape that computes
// something else; every other rewrite keeps the binding as it is.
xform::TransformInfo touch_transform(std::shared_ptr<const sem::Program> wrong) {
  xform::TransformInfo t;
  t.name = "touch";
  t.cls = SemClass::Exact;
  t.params = "bad=K";
  t.summary = "test transform: rewrite #K is wrong";
  t.run = [wrong](const sem::Program& p, const xform::Params& prm, xform::Context& ctx) {
    xform::Result r{p, SemClass::Exact};
    auto it = prm.find("bad");
    int64_t bad = it == prm.end() ? -1 : std::stoll(it->second);
    for (size_t i = 0; i < r.program.bindings.size(); ++i) {
      if (!ctx.allow()) break;
      ctx.note("touch: " + r.program.bindings[i].name);
      if (ctx.count == bad) r.program.bindings[i].expr = wrong->bindings[i].expr;
    }
    return r;
  };
  return t;
}

}  // namespace

TEST_CASE("bisection names exactly the wrong rewrite of a hand-made transform, wherever it is") {
  const std::string good =
      "input x : f32[8]\nlet a = map(exp, x)\nlet b = map(neg, x)\nlet c = map(add, a, b)\nlet y = map(mul, c, x)\n"
      "output y\n";
  // Each binding differs from its counterpart above on every input.
  const std::string bad =
      "input x : f32[8]\nlet a = map(fn(v) => add(exp(v), 1.0), x)\nlet b = map(fn(v) => sub(neg(v), 1.0), x)\n"
      "let c = map(fn(u, v) => add(add(u, v), 1.0), a, b)\nlet y = map(fn(u, v) => add(mul(u, v), 1.0), c, x)\n"
      "output y\n";
  sem::Program p = parse(good);
  auto wrong = std::make_shared<const sem::Program>(parse(bad));
  xform::TransformInfo info = touch_transform(wrong);
  // Three steps over four bindings: twelve rewrites, counted over the whole
  // pipeline; rewrite #K is the wrong one, in whichever step it falls.
  for (int64_t k : {1, 2, 5, 8, 11, 12}) {
    INFO("wrong rewrite #" << k);
    std::string spec = "touch:bad=" + std::to_string(k);
    xform::Params prm{{"bad", std::to_string(k)}};
    std::vector<xform::Step> steps = {{&info, prm, spec}, {&info, prm, spec}, {&info, prm, spec}};
    oracle::Verdict v = oracle::check_transform(p, steps, kOpt);
    REQUIRE(v.status == oracle::Status::Counterexample);
    REQUIRE(v.rewrite.has_value());
    CHECK(*v.rewrite == k);
    CHECK(v.rewrite_text == "#" + std::to_string(k) + " touch: " + p.bindings[size_t((k - 1) % 4)].name);
  }
}

TEST_CASE("bisection: later good rewrites do not move the blame off the first bad one") {
  // The wrong rewrite is in the first step; the later steps rewrite too.
  sem::Program p = parse("input x : f32[8]\nlet a = map(exp, x)\nlet y = map(neg, a)\noutput y\n");
  auto wrong = std::make_shared<const sem::Program>(
      parse("input x : f32[8]\nlet a = map(exp, x)\nlet y = map(abs, a)\noutput y\n"));
  xform::TransformInfo info = touch_transform(wrong);
  std::vector<xform::Step> steps = {{&info, {{"bad", "2"}}, "touch:bad=2"}, {&info, {}, "touch"}, {&info, {}, "touch"}};
  oracle::Verdict v = oracle::check_transform(p, steps, kOpt);
  REQUIRE(v.status == oracle::Status::Counterexample);
  REQUIRE(v.rewrite.has_value());
  CHECK(*v.rewrite == 2);
  CHECK(v.rewrite_text == "#2 touch: y");
}

TEST_CASE("bisection names nothing when the hand-made transform is right") {
  sem::Program p = parse("input x : f32[8]\nlet a = map(exp, x)\nlet y = map(neg, a)\noutput y\n");
  auto wrong = std::make_shared<const sem::Program>(p);  // bad=K replaces a binding by itself
  xform::TransformInfo info = touch_transform(wrong);
  std::vector<xform::Step> steps = {{&info, {{"bad", "3"}}, "touch:bad=3"}, {&info, {}, "touch"}};
  oracle::Verdict v = oracle::check_transform(p, steps, kOpt);
  CHECK(v.status == oracle::Status::Verified);
  CHECK_FALSE(v.rewrite.has_value());
  CHECK(v.rewrite_text.empty());
}

// ----------------------------------------------- seeded mutants

namespace {

struct MutantCase {
  const char* mutant;
  const char* spec;   ///< a pipeline whose earlier rewrites are right
  const char* pass;   ///< the pass whose rewrite is wrong
  const char* program;
};

const MutantCase kMutantCases[] = {
    {"view-offset-off-by-one", "cse,compose-views,dce", "compose-views",
     "input x : f32[8, 6]\nlet a = map(neg, x)\nlet b = map(neg, x)\nlet c = map(neg, x)\n"
     "let s = map(add, a, map(mul, b, c))\nlet dead = map(exp, x)\n"
     "let y = permute(slice(s, 0, 1, 7, 1), [1, 0])\noutput y\n"},
    {"fusion-drops-bf16-round", "dce,inline,fuse-maps", "fuse-maps",
     "input x : bf16[16]\nlet dead = map(exp, x)\nlet a = map(fn(v) => div(v, 3.0), x)\n"
     "let y = map(fn(v) => mul(v, 3.0), a)\noutput y\n"},
    {"sum-reassoc-exact", "cse,split-reduction:k=4", "split-reduction",
     "input x : f32[4, 64]\nlet a = map(exp, x)\nlet b = map(exp, x)\nlet y = red(sum, 0.0, [64], map(add, a, b))\n"
     "output y\n"},
    {"dce-failing-exact", "cse,dce", "dce",
     "input x : f32[8]\ninput n : i32[8]\nlet dead = map(fn(v) => floordiv(100, v), n)\nlet a = map(exp, x)\n"
     "let b = map(exp, x)\nlet y = map(add, a, b)\noutput y\n"},
};

}  // namespace

TEST_CASE("bisection names the first rewrite of the pass carrying a seeded mutant") {
  for (const MutantCase& c : kMutantCases) {
    DYNAMIC_SECTION(c.mutant) {
      sem::Program p = parse(c.program);
      require_clean(p, c.spec);  // without the bug: verified, nothing named
      sem::ScopedMutant m(c.mutant);
      require_bisected(p, c.spec, c.pass);
    }
  }
}

TEST_CASE("bisection names nothing for correct multi-step pipelines") {
  const char* const programs[] = {
      "input x : f32[8, 6]\nlet a = map(neg, x)\nlet b = map(neg, x)\nlet s = map(add, a, b)\nlet dead = map(exp, x)\n"
      "let y = permute(slice(s, 0, 1, 7, 1), [1, 0])\noutput y\n",
      "input x : f32[4, 64]\nlet a = map(exp, x)\nlet b = map(exp, x)\nlet dead = map(neg, x)\n"
      "let y = red(max, -inf, [64], map(add, a, permute(permute(b, [1, 0]), [1, 0])))\noutput y\n",
  };
  for (const char* prog : programs)
    for (const char* spec : {"cse,compose-views,dce", "inline,cse,fuse-maps,realize,cse,dce,normalize"}) {
      INFO(prog);
      require_clean(parse(prog), spec);
    }
}
