// Property test (Halide habit): the prover agrees with the interpreter on
// 400 generated programs (the proofs bench covers 1,000). A program whose in-bounds obligations are all
// proved never fails on an index out of range, whatever the inputs; an
// in-bounds obligation refuted without any load (a definite bug, exit 1 of
// `stax prove`) makes the program fail on every input; no obligation is
// unknown and no Interval claim is unsound.
#include <catch2/catch.hpp>

#include "oracle/gen/program_gen.h"
#include "proofs/obligation.h"
#include "semantics/program_obligations.h"
#include "semantics/evaluator.h"
#include "semantics/printer.h"
#include "semantics/program_obligations.h"
#include "semantics/random_inputs.h"

using namespace stax;
using sem::ProofVerdict;

TEST_CASE("prover verdicts agree with the interpreter on generated programs") {
  int all_proved = 0, definite = 0, runs = 0;
  for (int s = 0; s < 400; ++s) {
    sem::Program p = oracle::generate_program(uint64_t(s) * 7919 + 13);
    bool every_in_bounds_proved = true, fails_for_sure = false;
    for (const sem::Obligation& ob : sem::program_obligations(p)) {
      ProofVerdict v = proofs::discharge(ob);
      INFO(sem::print_program(p) << sem::kind_name(ob.kind) << " " << ob.site << ": " << ob.formula << " -> "
                                 << sem::verdict_name(v.kind) << " " << v.counterexample << v.reason);
      REQUIRE(v.kind != ProofVerdict::Unknown);
      if (ob.kind == sem::ObligationKind::Interval) REQUIRE(v.kind == ProofVerdict::Proved);
      if (ob.kind != sem::ObligationKind::InBounds) continue;
      if (v.kind != ProofVerdict::Proved) every_in_bounds_proved = false;
      if (v.kind == ProofVerdict::Refuted && ob.if_not_proved == sem::Consequence::Fails) fails_for_sure = true;
    }
    all_proved += every_in_bounds_proved;
    definite += fails_for_sure;
    if (!every_in_bounds_proved && !fails_for_sure) continue;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      sem::IeeeOutcome o;
      try {
        o = sem::eval_ieee(p, sem::random_inputs(p, seed));
      } catch (const sem::ResourceError&) {
        continue;
      }
      ++runs;
      INFO(sem::print_program(p) << (o.failure ? o.failure->str() : std::string("no failure")));
      if (every_in_bounds_proved && o.failure)
        CHECK(o.failure->reason.find("out of range") == std::string::npos);
      if (fails_for_sure) CHECK(o.failure);
    }
  }
  WARN(all_proved << " programs with every access proved in bounds, " << definite << " that must fail; " << runs
                  << " runs");
  CHECK(all_proved > 200);
  CHECK(definite > 0);
  CHECK(runs > 400);
}
