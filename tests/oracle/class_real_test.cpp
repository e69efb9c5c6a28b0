// Class real on whole programs (docs/design.md §3): the false positives that
// long campaigns found (tests/golden/class-real/*/source.stx with the inputs
// the campaign drew) now verify on those very inputs and on generated ones;
// a hand-made wrong target beside some of them (wrong.stx) must still be
// refuted on the same inputs, by the check its first line names.
#include <catch2/catch.hpp>

#include <filesystem>

#include "oracle/checker.h"
#include "semantics/npy.h"
#include "tests/test_util.h"
#include "transforms/transform.h"

namespace fs = std::filesystem;
using namespace stax;

namespace {

sem::Inputs inputs_in(const fs::path& dir, const sem::Program& p) {
  sem::Inputs in;
  for (const sem::Input& i : p.inputs) {
    auto t = sem::read_npy((dir / (i.name + ".npy")).string());
    REQUIRE(std::holds_alternative<sem::Tensor>(t));
    in[i.name] = std::get<sem::Tensor>(std::move(t));
  }
  REQUIRE(!sem::check_inputs(p, in));
  return in;
}

}  // namespace

TEST_CASE("class real: the campaigns' false positives verify; wrong targets beside them are refuted") {
  fs::path root = fs::path(STAX_SOURCE_DIR) / "tests/golden/class-real";
  int sources = 0, wrongs = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    INFO(e.path().filename().string());
    std::string text = test::slurp(e.path() / "source.stx");
    REQUIRE(text.rfind("# EXPECT: verified real\n", 0) == 0);
    sem::Program src = test::parse_ok(text, "source.stx");
    sem::Inputs in = inputs_in(e.path(), src);
    auto steps = xform::parse_pipeline(test::header(text, "TRANSFORM"));
    REQUIRE(std::holds_alternative<std::vector<xform::Step>>(steps));
    xform::Context ctx;
    xform::Result r = xform::run_pipeline(src, std::get<std::vector<xform::Step>>(steps), ctx);
    REQUIRE(r.cls == xform::SemClass::Real);
    bool src_failed = true;
    auto c = oracle::compare_real_on(src, r.program, in, &src_failed);
    CHECK_FALSE(src_failed);
    INFO((c ? c->check + ": " + c->src_value + " vs " + c->tgt_value : std::string("no finding")));
    CHECK_FALSE(c.has_value());
    oracle::CheckOptions opt;
    opt.seed = 7;
    oracle::Verdict v = oracle::check_programs(src, r.program, r.cls, opt);
    INFO(v.message);
    CHECK(v.status != oracle::Status::Counterexample);
    ++sources;

    fs::path wrong = e.path() / "wrong.stx";
    if (!fs::exists(wrong)) continue;
    std::string wtext = test::slurp(wrong);
    const std::string prefix = "# EXPECT: counterexample real (";
    REQUIRE(wtext.rfind(prefix, 0) == 0);
    std::string check = wtext.substr(prefix.size(), wtext.find(')') - prefix.size());
    sem::Program tgt = test::parse_ok(wtext, "wrong.stx");
    auto w = oracle::compare_real_on(src, tgt, in);
    REQUIRE(w.has_value());
    CHECK(w->check == check);
    ++wrongs;
  }
  CHECK(sources == 6);
  CHECK(wrongs == 3);
}
