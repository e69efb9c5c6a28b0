// Property test (Halide style): every exact transform, on 1,000 generated
// programs × several input sets, gives zero mismatches under the oracle; and
// every result is well formed and stays a fixed point of print/parse.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "oracle/checker.h"
#include "oracle/gen/program_gen.h"
#include "semantics/mutants.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "transforms/passes.h"

using namespace stax;

namespace {

struct PropertyStats {
  int programs = 0, verified = 0, rewritten = 0, refines = 0;
  std::vector<std::string> failures;  ///< the first few formatted counterexamples
  int failed = 0;
};

// Runs every program to the end: a mismatch is recorded, not thrown, so the
// counts below still say how many programs were checked.
PropertyStats property(const std::string& spec, int programs, int trials) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  PropertyStats st;
  st.programs = programs;
  for (int s = 0; s < programs; ++s) {
    sem::Program p = oracle::generate_program(uint64_t(s) * 7919 + 13);
    xform::Context ctx;
    xform::Result r = xform::run_pipeline(p, steps, ctx);
    st.rewritten += ctx.count > 0;
    st.refines += r.cls == xform::SemClass::Refines;
    oracle::Verdict v = oracle::check_programs(p, r.program, r.cls, {trials, uint64_t(s)});
    if (v.status == oracle::Status::Verified) {
      ++st.verified;
    } else {
      ++st.failed;
      if (st.failures.size() < 3)
        st.failures.push_back("program " + std::to_string(s) + ":\n" + oracle::format_verdict(v, p, r.program, spec));
    }
  }
  return st;
}

void run_property(const std::string& spec, int programs, int trials) {
  PropertyStats st = property(spec, programs, trials);
  INFO(spec << ": " << st.rewritten << " of " << programs << " programs rewritten, " << st.refines
            << " refinements, " << st.failed << " failed");
  for (const std::string& f : st.failures) FAIL_CHECK(f);
  CHECK(st.verified == programs);
  CHECK(st.rewritten > programs / 10);  // the generator exercises the transform
}

}  // namespace

TEST_CASE("inline: no mismatch on generated programs") { run_property("inline", 1000, 3); }
TEST_CASE("realize: no mismatch on generated programs") { run_property("realize", 1000, 3); }
TEST_CASE("cse: no mismatch on generated programs") { run_property("cse", 1000, 3); }
TEST_CASE("dce: no mismatch on generated programs") { run_property("dce", 1000, 3); }
TEST_CASE("compose-views: no mismatch on generated programs") { run_property("compose-views", 1000, 3); }
TEST_CASE("fuse-maps: no mismatch on generated programs") { run_property("fuse-maps", 1000, 3); }
TEST_CASE("merge-loops: no mismatch on generated programs") { run_property("normalize,merge-loops", 1000, 3); }
TEST_CASE("normalize: no mismatch on generated programs, and it reaches normal form") {
  run_property("normalize", 1000, 3);
  for (int s = 0; s < 300; ++s) {
    sem::Program p = oracle::generate_program(uint64_t(s) * 7919 + 13);
    xform::Context ctx;
    xform::Result r = xform::normalize(p, {}, ctx);
    for (const sem::Binding& b : r.program.bindings) {
      INFO(sem::print_program(r.program));
      CHECK(xform::is_kernel_normal_form(b.expr));
    }
  }
}
TEST_CASE("normalize binds a rand operand once (it was a chain of 64 copies)") {
  sem::Program p = std::get<sem::Program>(
      sem::parse_program("input x : f32[4]\nlet y : f32[4] = map(fn(a, b) => add(a, b), x, rand(f32, [4], 7))\noutput y\n"));
  xform::Context ctx;
  xform::Result r = xform::normalize(p, {}, ctx);
  INFO(sem::print_program(r.program));
  CHECK(r.program.bindings.size() == 2);  // the rand, then the map
  CHECK(xform::is_kernel_normal_form(r.program.bindings[0].expr));
  // The wrong case: a map over a rand operand is not itself normal form.
  CHECK_FALSE(xform::is_kernel_normal_form(p.bindings[0].expr));
}

TEST_CASE("a pipeline of all exact transforms: no mismatch") {
  run_property("inline,cse,compose-views,fuse-maps,realize,cse,dce,normalize,merge-loops", 500, 3);
}

// The deliberately wrong case: the same harness, on the same generated
// programs, with a seeded bug in the transform, must count failures; otherwise
// the zero-mismatch results above say nothing.
TEST_CASE("the property harness notices a seeded bug in a transform") {
  const struct {
    const char* mutant;
    const char* spec;
  } cases[] = {
      {"view-offset-off-by-one", "compose-views"},
      {"merge-ignores-stride", "normalize,merge-loops"},
      {"dce-failing-exact", "dce"},
  };
  for (const auto& c : cases) {
    INFO(c.mutant << " in " << c.spec);
    sem::ScopedMutant m(c.mutant);
    PropertyStats st = property(c.spec, 200, 3);
    CHECK(st.failed > 0);
    CHECK(st.verified < st.programs);
    CHECK(st.verified + st.failed == st.programs);
  }
}
