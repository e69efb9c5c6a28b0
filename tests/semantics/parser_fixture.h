// Shared by the parser's tests (parser_test.cpp, parser_diag_test.cpp):
// parsing as file t.stx, expecting a diagnostic, and the usual inputs.
#pragma once

#include <string>
#include <variant>

#include "semantics/parser.h"
#include "tests/test_util.h"

namespace stax::test::parser {

/// stax::test::parse_ok as file t.stx.
inline sem::Program parse_ok(const std::string& src) { return stax::test::parse_ok(src, "t.stx"); }

/// The diagnostic of `src` (as file t.stx); FAILs if it parses.
inline sem::Diag parse_bad(const std::string& src) {
  sem::ParseResult r = sem::parse_program(src, "t.stx");
  if (std::holds_alternative<sem::Program>(r)) FAIL("expected a diagnostic, but it parsed:\n" << src);
  return std::get<sem::Diag>(r);
}

/// Inputs of every kind the parser tests refer to.
inline const std::string P =
    "input x : f32[2, 3]\ninput y : f32[2, 3]\ninput n : i32[2, 3]\ninput idx : i64[4]\ninput b : bool[2, 3]\n";

}  // namespace stax::test::parser
