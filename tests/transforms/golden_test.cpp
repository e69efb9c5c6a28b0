// Golden before/after files: tests/golden/transforms/NAME.stx states its
// expected verdict and the transform in its first two lines; NAME.expected.stx
// holds the printed T(P). Both the text and the oracle's verdict must match.
//
// Positive files expect "verified <class>". Negative files (wrong_*.stx)
// expect "counterexample <class>" and name, in a third header line
// "# MUTANT: NAME", the seeded bug (semantics/mutants.h) that makes the
// transform wrong: with it the oracle must find a counterexample, and
// without it the same file must verify. Their .expected.stx holds the wrong
// T(P). STAX_UPDATE_GOLDEN=1 in the environment rewrites the .expected.stx
// files from the current output (review the diff before committing).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "oracle/checker.h"
#include "semantics/mutants.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace stax;
using stax::test::slurp;

using stax::test::header;
using stax::test::optional_header;

namespace {

struct Outcome {
  std::string printed;  ///< "# class: ...\n" + T(P)
  oracle::Verdict verdict;
  sem::Program target;
};

/// 16 input sets, seed 7, and a proof attempt: the goldens
/// state which verdicts are proofs for all inputs at their shapes.
oracle::CheckOptions with_proof() {
  oracle::CheckOptions o{16, 7};
  o.prove = oracle::ProveMode::Try;
  o.prove_timeout_ms = 10000;
  return o;
}

Outcome transform_and_check(const sem::Program& p, const std::string& spec) {
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
  xform::Context ctx;
  xform::Result r = xform::run_pipeline(p, steps, ctx);
  Outcome o{"# class: " + std::string(xform::class_name(r.cls)) + "\n" + sem::print_program(r.program),
            oracle::check_programs(p, r.program, r.cls, with_proof()), r.program};
  return o;
}

std::string verdict_text(const oracle::Verdict& v) {
  return std::string(oracle::strength_name(v)) + " " + std::string(xform::class_name(v.cls));
}
}  // namespace

TEST_CASE("golden transform files") {
  fs::path dir = fs::path(STAX_SOURCE_DIR) / "tests/golden/transforms";
  REQUIRE(fs::is_directory(dir));
  const bool update = std::getenv("STAX_UPDATE_GOLDEN") != nullptr;
  int positive = 0, negative = 0, proved = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() != ".stx" || name.find(".expected.") != std::string::npos) continue;
    INFO(name);
    std::string text = slurp(e.path());
    REQUIRE(text.rfind("# EXPECT: ", 0) == 0);  // the verdict is the first line
    std::string expect = header(text, "EXPECT");
    std::string spec = header(text, "TRANSFORM");
    std::optional<std::string> mutant = optional_header(text, "MUTANT");
    bool refuted = expect.rfind("refuted ", 0) == 0;
    // A file expects one of the verdicts; a refutation needs a seeded bug
    // (without one, a counterexample would be a bug in the product).
    REQUIRE((refuted || expect.rfind("proved ", 0) == 0 || expect.rfind("tested ", 0) == 0));
    REQUIRE(refuted == mutant.has_value());
    CHECK(refuted == (name.rfind("wrong_", 0) == 0));
    auto parsed = sem::parse_program(text, name);
    REQUIRE(std::holds_alternative<sem::Program>(parsed));
    const sem::Program& p = std::get<sem::Program>(parsed);
    std::optional<Outcome> got;
    {
      std::optional<sem::ScopedMutant> m;
      if (mutant) m.emplace(*mutant);
      got = transform_and_check(p, spec);
    }
    fs::path exp = e.path();
    exp.replace_extension(".expected.stx");
    if (update) std::ofstream(exp) << got->printed;
    CHECK(got->printed == slurp(exp));
    INFO(oracle::format_verdict(got->verdict, p, got->target, spec));
    CHECK(verdict_text(got->verdict) == expect);
    if (!refuted) {
      ++positive;
      proved += got->verdict.proved;
      continue;
    }
    ++negative;
    // The counterexample is concrete: inputs, and either two differing values
    // or a definedness/interface difference, in an Alive2-style report.
    REQUIRE(got->verdict.status == oracle::Status::Counterexample);
    std::string report = oracle::format_verdict(got->verdict, p, got->target, spec);
    CHECK(report.rfind("REFUTED: ", 0) == 0);
    if (got->verdict.cex) {
      const oracle::Counterexample& c = *got->verdict.cex;
      CHECK_FALSE(c.inputs.empty());
      CHECK(c.src_value != c.tgt_value);
      CHECK(test::contains(report, "inputs ("));
    }
    // The refutation is the seeded bug's: the real transform verifies.
    Outcome clean = transform_and_check(p, spec);
    INFO(oracle::format_verdict(clean.verdict, p, clean.target, spec + " without " + *mutant));
    CHECK(clean.verdict.status == oracle::Status::Verified);
    CHECK(clean.printed != got->printed);
  }
  CHECK(positive >= 17);
  CHECK(proved >= 12);
  CHECK(negative >= 7);
}
