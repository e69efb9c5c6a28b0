// From testing to proof: the whole-program prover
// (proofs/program_equiv.h) behind the checker. Each verdict names its
// strength: proved (all inputs at these shapes), tested (N input sets),
// refuted (a counterexample the interpreter reproduces).
#include <catch2/catch.hpp>

#include "oracle/checker.h"
#include "proofs/program_equiv.h"
#include "semantics/parser.h"

using namespace stax;
using oracle::ProveMode;
using xform::SemClass;

namespace {

sem::Program parse(const std::string& text) {
  auto r = sem::parse_program(text);
  if (auto* d = std::get_if<sem::Diag>(&r)) FAIL(d->str());
  return std::get<sem::Program>(std::move(r));
}

oracle::Verdict check(const std::string& a, const std::string& b, SemClass cls, ProveMode mode = ProveMode::Try,
                      int trials = 16) {
  oracle::CheckOptions o{trials, 3};
  o.prove = mode;
  return oracle::check_programs(parse(a), parse(b), cls, o);
}

/// The sum of x : f32[n] from init.
std::string sum_from(const std::string& init, int n) {
  return "input x : f32[" + std::to_string(n) + "]\nlet y = red(sum, " + init + ", [" + std::to_string(n) +
         "], x)\noutput y\n";
}

/// The prover alone, its candidates confirmed by the interpreter.
proofs::EquivResult prove(const std::string& a, const std::string& b, SemClass cls,
                          const proofs::EquivOptions& eo = {}) {
  sem::Program p = parse(a), q = parse(b);
  auto confirm = [&](const sem::Inputs& in) { return oracle::compare_on(p, q, cls, in).has_value(); };
  return proofs::prove_equivalent(p, q, cls == SemClass::Exact ? proofs::Relation::Exact : proofs::Relation::Refines,
                                  eo, confirm);
}

}  // namespace

TEST_CASE("the init of a sum: +0.0 against -0.0 is refuted by the prover at every size", "[prove]") {
  for (int n : {1, 2, 4, 8}) {
    INFO("f32[" << n << "]");
    proofs::EquivResult r = prove(sum_from("0.0", n), sum_from("-0.0", n), SemClass::Exact);
    REQUIRE(r.verdict.kind == sem::ProofVerdict::Refuted);
    // The counterexample is all -0.0 (any other input has a +0 or a nonzero
    // term) and replays on the interpreter.
    const sem::Tensor& x = r.counterexample.at("x");
    for (int64_t k = 0; k < x.size(); ++k) CHECK(x.get_bits(k) == 0x80000000u);
    auto c = oracle::compare_on(parse(sum_from("0.0", n)), parse(sum_from("-0.0", n)), SemClass::Exact, r.counterexample);
    REQUIRE(c);
    CHECK(c->src_value != c->tgt_value);
    // Through the checker: refuted, with the solver's inputs.
    oracle::Verdict v = check(sum_from("0.0", n), sum_from("-0.0", n), SemClass::Exact, ProveMode::Try, 4);
    REQUIRE(v.status == oracle::Status::Counterexample);
    CHECK(oracle::strength_name(v) == "refuted");
  }
  // The same init is proved.
  oracle::Verdict same = check(sum_from("-0.0", 4), sum_from("-0.0", 4), SemClass::Exact);
  CHECK(same.proved);
  CHECK(oracle::strength_name(same) == "proved");
}

TEST_CASE("the input generators draw the extreme patterns testing lacked", "[prove]") {
  // All -0.0 is one of the extreme patterns: testing alone now sees it too.
  oracle::Verdict v = check(sum_from("0.0", 4), sum_from("-0.0", 4), SemClass::Exact, ProveMode::Off, 300);
  REQUIRE(v.status == oracle::Status::Counterexample);
  CHECK(v.cex->kind == sem::InputKind::Extreme);
  CHECK(oracle::strength_name(v) == "refuted");
  // A correct pair tested, not proved, when the prover is off.
  oracle::Verdict t = check(sum_from("0.0", 4), sum_from("0.0", 4), SemClass::Exact, ProveMode::Off);
  CHECK(t.status == oracle::Status::Verified);
  CHECK_FALSE(t.proved);
  CHECK(oracle::strength_name(t) == "tested");
}

TEST_CASE("integer ops, casts, halves and gathers with symbolic indices", "[prove]") {
  SECTION("Python floor division is not C division") {
    std::string a = "input a : i32[3]\ninput b : i32[3]\nlet y = map(fn(u, v) => floordiv(u, v), a, b)\noutput y\n";
    std::string b = "input a : i32[3]\ninput b : i32[3]\nlet y = map(fn(u, v) => div(u, v), a, b)\noutput y\n";
    proofs::EquivResult r = prove(a, b, SemClass::Exact);
    REQUIRE(r.verdict.kind == sem::ProofVerdict::Refuted);
    CHECK(prove(a, a, SemClass::Exact).verdict.kind == sem::ProofVerdict::Proved);
  }
  SECTION("a division by zero is ⊥ on both sides: exact; dropped by the target: refines, not exact") {
    std::string a = "input a : i64[2]\ninput b : i64[2]\nlet q = map(fn(u, v) => floordiv(u, v), a, b)\n"
                    "let y = map(fn(u) => add(u, 1), a)\noutput y\n";
    std::string b = "input a : i64[2]\ninput b : i64[2]\nlet y = map(fn(u) => add(u, 1), a)\noutput y\n";
    CHECK(prove(a, b, SemClass::Refines).verdict.kind == sem::ProofVerdict::Proved);
    proofs::EquivResult r = prove(a, b, SemClass::Exact);
    REQUIRE(r.verdict.kind == sem::ProofVerdict::Refuted);
    const sem::Tensor& d = r.counterexample.at("b");
    CHECK((d.get_int(0) == 0 || d.get_int(1) == 0));
  }
  SECTION("f16 rounding: dropping a cast is refuted, keeping it proved") {
    std::string a = "input x : f16[4]\nlet t = map(fn(v) => mul(v, 3.0), x)\nlet y = map(fn(v) => div(v, 3.0), t)\noutput y\n";
    std::string bad = "input x : f16[4]\nlet y = map(fn(v) => div(mul(v, 3.0), 3.0), x)\noutput y\n";
    std::string good = "input x : f16[4]\nlet y = map(fn(v) => div(cast(mul(v, 3.0), f16), 3.0), x)\noutput y\n";
    CHECK(prove(a, bad, SemClass::Exact).verdict.kind == sem::ProofVerdict::Refuted);
    CHECK(prove(a, good, SemClass::Exact).verdict.kind == sem::ProofVerdict::Proved);
  }
  SECTION("a gather: Python's wrapping of negative indices, and ⊥ out of range") {
    std::string g = "input x : f32[5]\ninput idx : i64[2]\nlet y = map(neg, gather(x, 0, idx))\noutput y\n";
    // The same gather through a view written by hand.
    std::string h = "input x : f32[5]\ninput idx : i64[2]\nlet y = map(neg, view(x, [2], (i) -> (load(idx, i))))\noutput y\n";
    CHECK(prove(g, h, SemClass::Exact).verdict.kind == sem::ProofVerdict::Proved);
    // Clamping instead of failing: defined where the source is ⊥ (refines
    // holds: the target may be defined where the source is not) but not exact.
    std::string clamp = "input x : f32[5]\ninput idx : i64[2]\n"
                        "let y = map(neg, view(x, [2], (i) -> ((load(idx, i) % 5))))\noutput y\n";
    proofs::EquivResult r = prove(g, clamp, SemClass::Exact);
    REQUIRE(r.verdict.kind == sem::ProofVerdict::Refuted);
    bool out_of_range = false;
    const sem::Tensor& ix = r.counterexample.at("idx");
    for (int64_t k = 0; k < ix.size(); ++k) out_of_range |= ix.get_int(k) < -5 || ix.get_int(k) >= 5;
    CHECK(out_of_range);
    CHECK(prove(g, clamp, SemClass::Refines).verdict.kind == sem::ProofVerdict::Proved);
  }
}

TEST_CASE("transcendental functions are shared uninterpreted functions", "[prove]") {
  // One element: each element is its own goal of about 1.5 s of solver time.
  std::string e = "input x : f32[1]\nlet y = map(exp, x)\noutput y\n";
  std::string e1 = "input x : f32[1]\nlet y = map(fn(v) => mul(exp(v), 1.0), x)\noutput y\n";
  proofs::EquivResult r = prove(e, e1, SemClass::Exact);
  CHECK(r.verdict.kind == sem::ProofVerdict::Proved);
  CHECK(r.uninterpreted == std::vector<std::string>{"exp"});
  // exp(v) + 0.0 differs from exp(v) only where exp(v) = -0, which the
  // solver may assume of an uninterpreted exp but the interpreter never
  // reproduces: no refutation, no proof.
  std::string e0 = "input x : f32[1]\nlet y = map(fn(v) => add(exp(v), 0.0), x)\noutput y\n";
  std::string ex = "input x : f32[1]\nlet y = map(exp, x)\noutput y\n";
  proofs::EquivOptions eo;
  eo.max_unconfirmed = 2;
  proofs::EquivResult u = prove(ex, e0, SemClass::Exact, eo);
  CHECK(u.verdict.kind == sem::ProofVerdict::Unknown);
  CHECK(u.unconfirmed == 2);
  // A wrong rewrite of the argument is refuted (and confirmed).
  std::string wrong = "input x : f32[1]\nlet y = map(fn(v) => exp(neg(v)), x)\noutput y\n";
  CHECK(prove(e, wrong, SemClass::Exact).verdict.kind == sem::ProofVerdict::Refuted);
}

TEST_CASE("over the size limit: testing, and the verdict says so", "[prove]") {
  std::string a = sum_from("0.0", 64), b = sum_from("0.0", 64);
  oracle::CheckOptions o{8, 1};
  o.prove = ProveMode::Try;
  o.prove_max_elements = 16;
  oracle::Verdict v = oracle::check_programs(parse(a), parse(b), SemClass::Exact, o);
  CHECK(v.status == oracle::Status::Verified);
  CHECK_FALSE(v.proved);
  CHECK(oracle::strength_name(v) == "tested");
  CHECK_THAT(v.message, Catch::Contains("no difference on 8 input set(s)") && Catch::Contains("not proved: ") &&
                            Catch::Contains("over the size limit"));
  // A proof required and impossible: not checkable (exit 3 in the CLI).
  o.prove = ProveMode::Require;
  oracle::Verdict w = oracle::check_programs(parse(a), parse(b), SemClass::Exact, o);
  CHECK(w.status == oracle::Status::NotCheckable);
  CHECK_THAT(w.message, Catch::Contains("a proof was required"));
  // The term budget too.
  o.prove = ProveMode::Try;
  o.prove_max_elements = 4096;
  o.prove_max_terms = 10;
  oracle::Verdict t = oracle::check_programs(parse(a), parse(b), SemClass::Exact, o);
  CHECK_FALSE(t.proved);
  CHECK_THAT(t.message, Catch::Contains("over the size limit"));
}

TEST_CASE("over the size limit: proved at shrunk shapes where shape-generic, still tested here", "[prove]") {
  // A max over rows split in 4 (class exact) at f32[64, 128]: over a limit of
  // 16 elements, so the source is shrunk (every extent ≤ k) and the
  // transform re-applied to it.
  sem::Program p = parse("input x : f32[64, 128]\nlet y = red(max, -inf, [128], x)\noutput y\n");
  oracle::CheckOptions o{8, 1};
  o.prove = ProveMode::Try;
  o.prove_max_elements = 16;
  std::vector<xform::Step> steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline("split-reduction:k=4"));
  oracle::Verdict v = oracle::check_transform(p, steps, o);
  CHECK(v.status == oracle::Status::Verified);
  CHECK_FALSE(v.proved);
  CHECK(oracle::strength_name(v) == "tested");
  REQUIRE(v.shrunk.size() == 4);  // the shapes [1,1] .. [4,4]: [4,4] has 16 elements
  for (const oracle::ShrunkCheck& c : v.shrunk) CHECK(c.verdict == "proved");
  CHECK(v.shrunk[2].shapes == "x f32[3, 3]");
  CHECK_THAT(v.message, Catch::Contains("proved at shrunk shapes") && Catch::Contains("not at these"));
  // A required proof is still not given by shrunk shapes.
  o.prove = ProveMode::Require;
  CHECK(oracle::check_transform(p, steps, o).status == oracle::Status::NotCheckable);

  // Deliberately not shape-generic: a rotation whose index map names the
  // extent 128, so shrinking would change what the program means.
  std::string rot = "input x : f32[4, 128]\nlet y = map(neg, view(x, [4, 128], (i, j) -> (i, (j + 1) % 128)))\n"
                    "output y\n";
  std::string rot2 = "input x : f32[4, 128]\nlet y = map(fn(v) => neg(v), view(x, [4, 128], (i, j) -> (i, (j + 1) % "
                     "128)))\noutput y\n";
  o.prove = ProveMode::Try;
  oracle::Verdict w = oracle::check_programs(parse(rot), parse(rot2), SemClass::Exact, o);
  CHECK_FALSE(w.proved);
  CHECK(w.shrunk.empty());
  CHECK_THAT(w.shrunk_note, Catch::Contains("not shape-generic"));

  // A wrong pair at every size, over the limit, on one set of normal
  // inputs (which cannot show it): the shrunk family refutes it at f32[1].
  o.trials = 1;
  oracle::Verdict z = oracle::check_programs(parse(sum_from("0.0", 64)), parse(sum_from("-0.0", 64)),
                                             SemClass::Exact, o);
  CHECK(z.status == oracle::Status::Verified);
  REQUIRE_FALSE(z.shrunk.empty());
  CHECK(z.shrunk.front().verdict == "refuted");
  CHECK(z.shrunk.front().shapes == "x f32[1]");
  CHECK_THAT(z.message, Catch::Contains("refuted at x f32[1]"));
}
