// Golden before/after files: tests/golden/transforms/NAME.stx states its
// expected verdict and the transform in its first two lines; NAME.expected.stx
// holds the printed T(P). Both the text and the oracle's verdict must match.
#include <catch2/catch.hpp>
#include <filesystem>

#include "oracle/checker.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace stax;
using stax::test::slurp;

namespace {
std::string header(const std::string& text, const std::string& key) {
  size_t k = text.find("# " + key + ": ");
  REQUIRE(k != std::string::npos);
  size_t b = k + key.size() + 4;
  return text.substr(b, text.find('\n', b) - b);
}
}  // namespace

TEST_CASE("golden transform files") {
  fs::path dir = fs::path(STAX_SOURCE_DIR) / "tests/golden/transforms";
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() != ".stx" || name.find(".expected.") != std::string::npos) continue;
    ++n;
    INFO(name);
    std::string text = slurp(e.path());
    REQUIRE(text.rfind("# EXPECT: ", 0) == 0);  // the verdict is the first line
    std::string expect = header(text, "EXPECT");
    std::string spec = header(text, "TRANSFORM");
    auto parsed = sem::parse_program(text, name);
    REQUIRE(std::holds_alternative<sem::Program>(parsed));
    const sem::Program& p = std::get<sem::Program>(parsed);
    auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec));
    xform::Context ctx;
    xform::Result r = xform::run_pipeline(p, steps, ctx);
    std::string printed = "# class: " + std::string(xform::class_name(r.cls)) + "\n" + sem::print_program(r.program);
    fs::path exp = e.path();
    exp.replace_extension(".expected.stx");
    CHECK(printed == slurp(exp));
    oracle::Verdict v = oracle::check_programs(p, r.program, r.cls, {16, 7});
    std::string got = std::string(oracle::status_name(v.status)) + " " + std::string(xform::class_name(v.cls));
    CHECK(got == expect);
  }
  CHECK(n >= 16);
}
