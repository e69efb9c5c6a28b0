// Zero extents and empty reductions through every transform (docs/design.md §3: a
// reduction over no element is its init; a tensor with a zero extent has no
// element to fail). The shrinker and seeded bugs produce such programs, so
// each transform must either leave the program as the oracle accepts it or
// refuse with a user error — never crash, divide by zero or read out of range
// (the suite runs under ASan/UBSan with -DSTAX_SANITIZE=ON). The deliberately
// wrong case: a wrong "transform" of a zero-extent program (another init) is
// refuted.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "oracle/checker.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

using namespace stax;

namespace {

const std::vector<std::string> kPrograms = {
    "input x : f32[1, 0, 3]\nlet y = map(neg, x)\noutput y\n",
    "input x : f32[4, 0]\nlet y = red(sum, 0.0, [0], x)\noutput y\n",
    "let f = full(f32[1, 0, 3, 3], inf)\nlet y = red(max, -inf, [3, 3], f)\noutput y\n",
    "input x : f32[0, 5]\nlet y = permute(x, [1, 0])\nlet z = map(add, y, y)\noutput z\n",
    "input x : f32[0, 6]\nlet y = reshape(x, [0, 2, 3])\nlet z = red(sum, 0.0, [3], y)\noutput z\n",
    "input x : f32[6, 0]\nlet y = red(prod, 1.0, [0], map(exp, x))\nlet z = map(fn(a) => div(1.0, a), y)\noutput z\n",
    "input x : f32[5]\ninput i : i64[0]\nlet y = gather(x, 0, i)\nlet z = map(mul, y, y)\noutput z\n",
    "input x : i32[3, 0]\nlet s = red(sum, 0, [0], x)\nlet m = map(mod, s, s)\noutput m\n",
    "input x : f32[2, 0, 4]\nlet a = red(sum, 0.0, [0, 4], x)\nlet b = red(sum, -0.0, [0], view(x, [2, 4, 0], (i, j, k) -> (i, k, j)))\noutput a, b\n",
};

/// Every registered transform with its default parameters, and the
/// parameterised reorderings with small factors.
std::vector<std::string> pipelines() {
  std::vector<std::string> v;
  for (const xform::TransformInfo& t : xform::registry()) v.push_back(t.name);
  for (const char* s : {"split-reduction:k=2", "split-reduction:k=3", "interleave-lanes:w=2", "pairwise:base=2",
                        "pairwise:base=3", "normalize:fuse=0", "inline,fuse-maps,compose-views,merge-loops",
                        "normalize,split-reduction:k=4,interleave-lanes:w=2"})
    v.push_back(s);
  return v;
}

}  // namespace

TEST_CASE("zero extents: every transform keeps the program or refuses with a user error") {
  int checked = 0, refused = 0;
  for (const std::string& spec : pipelines()) {
    auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
    for (const std::string& text : kPrograms) {
      sem::Program p = test::parse_ok(text);
      xform::Context ctx;
      xform::Result r;
      try {
        r = xform::run_pipeline(p, steps, ctx);
      } catch (const xform::TransformError&) {
        ++refused;
        continue;
      }
      oracle::Verdict v = oracle::check_programs(p, r.program, r.cls, {3, 1});
      INFO(spec << " on\n" << text << "gave\n" << sem::print_program(r.program));
      CHECK(v.status == oracle::Status::Verified);
      ++checked;
    }
  }
  CHECK(checked + refused == int(pipelines().size() * kPrograms.size()));
  CHECK(checked > refused);
}

TEST_CASE("zero extents: the deliberately wrong case, another init for an empty sum, is refuted") {
  sem::Program p = test::parse_ok(kPrograms[1]);
  sem::Program wrong = test::parse_ok("input x : f32[4, 0]\nlet y = red(sum, -0.0, [0], x)\noutput y\n");
  oracle::Verdict v = oracle::check_programs(p, wrong, xform::SemClass::Exact, {3, 1});
  CHECK(v.status == oracle::Status::Counterexample);
}
