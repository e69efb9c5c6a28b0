// Property test (Halide style): every exact transform, on 1,000 generated
// programs × several input sets, gives zero mismatches under the oracle; and
// every result is well formed and stays a fixed point of print/parse.
#include <catch2/catch.hpp>

#include "oracle/checker.h"
#include "oracle/program_gen.h"
#include "semantics/printer.h"
#include "transforms/passes.h"

using namespace stax;

namespace {

void run_property(const std::string& spec, int programs, int trials) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  int verified = 0, rewritten = 0, refines = 0;
  for (int s = 0; s < programs; ++s) {
    sem::Program p = oracle::generate_program(uint64_t(s) * 7919 + 13);
    xform::Context ctx;
    xform::Result r = xform::run_pipeline(p, steps, ctx);
    rewritten += ctx.count > 0;
    refines += r.cls == xform::SemClass::Refines;
    oracle::Verdict v = oracle::check_programs(p, r.program, r.cls, {trials, uint64_t(s)});
    if (v.status != oracle::Status::Verified) FAIL(oracle::format_verdict(v, p, r.program, spec));
    ++verified;
  }
  INFO(spec << ": " << rewritten << " of " << programs << " programs rewritten, " << refines << " refinements");
  CHECK(verified == programs);
  CHECK(rewritten > programs / 10);  // the generator exercises the transform
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
TEST_CASE("a pipeline of all exact transforms: no mismatch") {
  run_property("inline,cse,compose-views,fuse-maps,realize,cse,dce,normalize,merge-loops", 500, 3);
}
