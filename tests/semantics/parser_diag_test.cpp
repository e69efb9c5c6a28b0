// Diagnostics of the `.stx` parser (docs/design.md §2): malformed
// input gives a diagnostic at the right line:col saying what was expected,
// the same programs without the mistake parse, and no input — deeply nested,
// truncated or mutated — crashes or hangs the parser.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "semantics/ir.h"
#include "semantics/parser.h"
#include "tests/semantics/parser_fixture.h"
#include "tests/test_util.h"

using namespace stax::sem;
using namespace stax::test::parser;
using stax::test::bexpr;

// -------------------------------------------------------------- diagnostics

namespace {
struct BadCase {
  const char* what;
  std::string src;
  int line, col;
  const char* message;
};
}  // namespace

TEST_CASE("parser: malformed programs give a diagnostic at the right place", "[parser][diag]") {
  const std::vector<BadCase> cases = {
      {"unknown name", P + "let z = map(neg, w)\noutput z", 6, 18, "unknown name 'w'"},
      {"unknown name in lambda", P + "let z = map(fn(a) => add(a, q), x)", 6, 29, "unknown name 'q' in lambda (parameters: a)"},
      {"unknown op", P + "let z = map(foo, x)", 6, 13, "expected a scalar op name or 'fn(...) => ...', got 'foo'"},
      {"unknown op in lambda", P + "let z = map(fn(a) => foo(a), x)", 6, 22, "unknown scalar op 'foo'"},
      {"wrong arity, op name", P + "let z = map(add, x)", 6, 13, "add expects 2 operand(s), got 1"},
      {"wrong arity in lambda", P + "let z = map(fn(a) => add(a), x)", 6, 22, "add expects 2 operand(s), got 1"},
      {"wrong arity, unary op", P + "let z = map(fn(a) => neg(a, a), x)", 6, 22, "neg expects 1 operand(s), got 2"},
      {"dtype mismatch, op name", P + "let z = map(add, x, n)", 6, 13, "add expects operands of one dtype, got f32 and i32 (insert a cast)"},
      {"dtype mismatch in lambda", P + "let z = map(fn(a, c) => mul(a, c), x, n)", 6, 25, "mul expects operands of one dtype, got f32 and i32"},
      {"map operands of different shapes", P + "let z = map(add, x, permute(x, [1, 0]))", 6, 21, "map operands share one domain: expected shape [2, 3], got f32[3, 2]"},
      {"red extents not trailing", P + "let z = red(sum, 0.0, [2], x)", 6, 23, "red reduces the trailing dims of its operand: expected extents matching the end of f32[2, 3], got [2]"},
      {"red extents longer than rank", P + "let z = red(sum, 0.0, [1, 2, 3], x)", 6, 23, "red reduces the trailing dims"},
      {"bad index variable", P + "let z = view(x, [3], (i) -> (0, k))", 6, 33, "unknown index variable 'k'"},
      {"non-constant multiplication in index", P + "let z = view(x, [2, 3], (i, j) -> (i * j, j))", 6, 38, "'*' in an index expression needs an integer constant on one side"},
      {"floor division by 0", P + "let z = view(x, [2, 3], (i, j) -> (i // 0, j))", 6, 41, "'//' needs a positive constant, got 0"},
      {"modulo by a negative constant", P + "let z = view(x, [2, 3], (i, j) -> (i % -2, j))", 6, 40, "'%' needs a positive constant, got -2"},
      {"modulo by a variable", P + "let z = view(x, [2, 3], (i, j) -> (i % j, j))", 6, 40, "expected a positive integer constant after '%'"},
      {"load of a float tensor", P + "let z = view(x, [4], (i) -> (load(y, i, 0), 0))", 6, 35, "load expects an integer tensor, 'y' is f32[2, 3]"},
      {"load arity", P + "let z = view(x, [4], (i) -> (0, load(idx, i, i)))", 6, 38, "load of 'idx' expects 1 index(es), got 2"},
      {"load of an unknown tensor", P + "let z = view(x, [4], (i) -> (0, load(nope, i)))", 6, 38, "unknown name 'nope'"},
      {"declared shape mismatch", P + "let z : f32[3, 2] = map(neg, x)", 6, 9, "binding 'z' is declared f32[3, 2] but its value is f32[2, 3]"},
      {"declared dtype mismatch", P + "let z : i32[2, 3] = map(neg, x)", 6, 9, "binding 'z' is declared i32[2, 3] but its value is f32[2, 3]"},
      {"duplicate binding", P + "let x = map(neg, y)", 6, 5, "'x' is already defined"},
      {"duplicate input", P + "input y : f32[1]", 6, 7, "'y' is already defined"},
      {"duplicate output", P + "output x, y, x", 6, 14, "output 'x' is listed twice"},
      {"undefined output", P + "output x, q", 6, 11, "output 'q' is not defined"},
      {"no output statement", P + "let z = map(neg, x)\n", 7, 1, "program has no 'output' statement"},
      {"unexpected character", P + "let z = map(neg, x) @", 6, 21, "unexpected character '@'"},
      {"unexpected semicolon", P + "let z = map(neg, x);\noutput z", 6, 20, "unexpected character ';'"},
      {"unterminated expression", P + "let z = map(neg, x", 6, 19, "expected ')', got end of input"},
      {"missing expression at end of input", P + "let z = ", 6, 9, "expected an expression, got end of input"},
      {"output without a name", P + "output\n", 7, 1, "expected an output name, got end of input"},
      {"bad dtype", P + "input q : f31[2]", 6, 11, "expected a dtype (f32, f64, f16, bf16, i32, i64, bool), got 'f31'"},
      {"negative extent", P + "input q : f32[2, -3]", 6, 14, "extents must be non-negative, got -3"},
      {"float extent", P + "input q : f32[2.5]", 6, 15, "expected an extent, got '2.5'"},
      {"extent out of int64 range", P + "input q : f32[99999999999999999999]", 6, 15, "integer '99999999999999999999' is out of range"},
      {"too many elements", P + "input q : f32[100000000, 100000000]", 6, 14, "shape has more than 2^48 elements"},
      {"too large an empty shape", P + "input q : f32[100000000, 0, 100000000]", 6, 14, "shape has more than 2^48 elements"},
      {"slice with step 0", P + "let z = slice(x, 1, 0, 3, 0)", 6, 18, "slice expects a positive step"},
      {"slice with negative step", P + "let z = slice(x, 1, 3, 0, -1)", 6, 18, "slice expects a positive step"},
      {"slice dim out of range", P + "let z = slice(x, 2, 0, 1, 1)", 6, 18, "slice dim out of range for a rank-2 tensor"},
      {"reshape element count", P + "let z = reshape(x, [4])", 6, 20, "reshape of [2, 3] (6 elements) to [4] (4 elements)"},
      {"reshape -1 not inferable", P + "let z = reshape(x, [4, -1])", 6, 20, "reshape: cannot infer the -1 extent"},
      {"reshape two -1", P + "let z = reshape(x, [-1, -1])", 6, 20, "reshape allows at most one -1"},
      {"squeeze of a non-1 dim", P + "let z = squeeze(x, 0)", 6, 20, "squeeze expects dim 0 of extent 1, got 2"},
      {"unsqueeze dim out of range", P + "let z = unsqueeze(x, 4)", 6, 22, "unsqueeze dim out of range for a rank-2 tensor"},
      {"permute not a permutation", P + "let z = permute(x, [0, 0])", 6, 20, "permute expects a permutation of 0..1"},
      {"permute wrong length", P + "let z = permute(x, [0])", 6, 20, "permute expects 2 dims, got 1"},
      {"expand of a non-1 dim", P + "let z = expand(x, [4, 3])", 6, 19, "expand: dim 0 of extent 2 cannot become 4 (only extent-1 dims broadcast)"},
      {"expand dropping dims", P + "let z = expand(x, [3])", 6, 19, "expand cannot drop dims"},
      {"gather with a float index", P + "let z = gather(x, 0, y)", 6, 22, "gather expects an integer index tensor, 'y' is f32[2, 3]"},
      {"gather dim out of range", P + "let z = gather(x, 5, idx)", 6, 19, "gather dim out of range for a rank-2 tensor"},
      {"iota dim out of range", P + "let z = iota(i64, [3], 1)", 6, 24, "iota dim 1 out of range for rank 1"},
      {"iota negative dim", P + "let z = iota(i64, [3], -1)", 6, 24, "iota dim -1 out of range for rank 1"},
      {"iota of bool", P + "let z = iota(bool, [3], 0)", 6, 14, "iota expects an int or float dtype, got bool"},
      {"3.5 for an i32", P + "let z = map(fn(a) => add(a, 3.5), n)", 6, 29, "expected an integer constant for dtype i32, got '3.5'"},
      {"1e10 for an i32", P + "let z = map(fn(a) => add(a, 1e10), n)", 6, 29, "expected an integer constant for dtype i32, got '1e10'"},
      {"integer too large for i32", P + "let z = full(i32[2], 10000000000)", 6, 22, "integer constant 10000000000 does not fit in i32"},
      {"integer too large for i64", P + "let z = full(i64[2], 99999999999999999999)", 6, 22, "expected an integer constant for dtype i64"},
      {"red init not an integer", P + "let z = red(sum, 0.5, [3], n)", 6, 18, "expected an integer constant for dtype i32, got '0.5'"},
      {"bool constant in float context", P + "let z = map(fn(a) => add(a, true), x)", 6, 29, "a bool constant 'true' cannot have dtype f32"},
      {"bool constant in full of float", P + "let z = full(f32[], false)", 6, 21, "a bool constant 'false' cannot have dtype f32"},
      {"float constant in bool context", P + "let z = map(fn(p) => logical_and(p, 1.0), b)", 6, 37, "expected a bool constant (true or false), got '1.0'"},
      {"negated bool", P + "let z = full(bool[], -true)", 6, 22, "expected a constant, got '-'"},
      {"hex integer literal", P + "let z = full(f32[], 0x10)", 6, 21, "hexadecimal literal must be a hex float with a 'p' exponent"},
      {"malformed number", P + "let z = full(f32[], 12abc)", 6, 21, "malformed number '12a'"},
      {"malformed exponent", P + "let z = full(f32[], 1e+)", 6, 21, "malformed exponent in number"},
      {"lambda parameter count", P + "let z = map(fn(a, c) => add(a, c), x)", 6, 13, "lambda takes 2 parameter(s) but map has 1 operand(s)"},
      {"duplicate lambda parameter", P + "let z = map(fn(a, a) => add(a, a), x, y)", 6, 19, "parameter 'a' is listed twice"},
      {"constant lambda body", P + "let z = map(fn(a) => 1.0, x)", 6, 22, "cannot infer the dtype of a constant lambda body"},
      {"constant inside cast", P + "let z = map(fn(a) => add(a, cast(1.0, f32)), x)", 6, 34, "cannot infer the dtype of a constant inside cast"},
      {"comparison of constants", P + "let z = map(fn(a) => select(lt(1.0, 2.0), a, a), x)", 6, 29, "cannot infer the dtype of the operands of lt"},
      {"map without operands", P + "let z = map(neg)", 6, 9, "map expects at least one operand"},
      {"red of bool", P + "let z = red(sum, 0, [3], b)", 6, 26, "red(sum) expects an int or float operand, got bool[2, 3]"},
      {"unknown reduction", P + "let z = red(avg, 0.0, [3], x)", 6, 13, "expected a reduction op (sum, prod, max, min, argmax, argmin), got 'avg'"},
      {"select with a float condition", P + "let z = map(select, x, x, x)", 6, 13, "select expects a bool condition, got f32"},
      {"float op on integers", P + "let z = map(exp, n)", 6, 13, "exp expects a float operand, got i32"},
      {"view index count", P + "let z = view(x, [3], (i) -> (i))", 6, 22, "index map gives 1 index expression(s) but the viewed tensor has rank 2"},
      {"view variable count", P + "let z = view(x, [2, 3], (i) -> (i, 0))", 6, 25, "index map has 1 variable(s) but the view has rank 2"},
      {"duplicate index variable", P + "let z = view(x, [2, 3], (i, i) -> (i, i))", 6, 29, "index variable 'i' is listed twice"},
      {"let-in shadowing", P + "let z = let x = map(neg, y) in x", 6, 13, "'x' is already defined"},
      {"let-in name out of scope", P + "let z = let t = map(neg, x) in t\noutput t", 7, 8, "output 't' is not defined"},
      {"let-in without in", P + "let z = let t = map(neg, x) t", 6, 29, "expected 'in', got 't'"},
      {"bad statement keyword", P + "lett z = x", 6, 1, "expected 'input', 'let' or 'output', got 'lett'"},
      {"missing =", P + "let z map(neg, x)", 6, 7, "expected '=', got 'map'"},
      {"keyword as a name", P + "input map : f32[2]", 6, 7, "expected an input name, got 'map'"},
      {"expand to too many elements", P + "let z = expand(full(f32[1], 1.0), [100000000, 100000000])", 6, 35, "shape has more than 2^48 elements"},
      {"expand to a wrapping element count", P + "let z = expand(full(f32[1], 1.0), [4294967296, 4294967296])", 6, 35, "shape has more than 2^48 elements"},
      {"gather to too many elements", P + "input big : f32[16777216, 16777216]\ninput bi : i64[16777216, 2]\nlet z = gather(big, 0, bi)", 8, 21, "shape has more than 2^48 elements"},
      {"reshape with an overflowing element count", P + "let z = reshape(x, [4294967296, 4294967296, 4294967296])", 6, 20, "too many elements"},
      {"input reusing a let-in name", P + "let z = let w = map(neg, x) in w\ninput w : f32[3]", 7, 7, "'w' is already defined as a let-in name"},
      {"garbage bytes", "\xff\xfe\x01garbage", 1, 1, "unexpected character '\\xff'"},
      {"NUL byte", std::string("input x : f32[2]\0", 17), 1, 17, "unexpected character '\\x00'"},
      {"control character", P + "let z = map(neg,\x01 x)", 6, 17, "unexpected character '\\x01'"},
      {"empty file", "", 1, 1, "program has no 'output' statement"},
      {"comments only", "# nothing\n# here\n", 3, 1, "program has no 'output' statement"},
  };
  REQUIRE(cases.size() >= 30);
  for (const BadCase& c : cases) {
    INFO(c.what << "\n--- source:\n" << c.src);
    Diag d = parse_bad(c.src);
    INFO("got: " << d.str());
    CHECK(d.file == "t.stx");
    CHECK(d.loc.line == c.line);
    CHECK(d.loc.col == c.col);
    CHECK_THAT(d.message, Catch::Contains(c.message));
    CHECK(d.loc.line >= 1);
    CHECK(d.str() == "t.stx:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: " + d.message);
  }
}

TEST_CASE("parser: the same programs without the mistake parse", "[parser][diag]") {
  // Controls for the table above: the diagnostics come from the mistake, not the surroundings.
  for (const char* body_text :
       {"let z = map(neg, x)\noutput z", "let z = map(add, x, n)\noutput x", "let z = map(add, x, y)\noutput z",
        "let z = map(fn(a, c) => mul(a, cast(c, f32)), x, n)\noutput z",
        "let z = red(sum, 0.0, [3], x)\noutput z", "let z = view(x, [2, 3], (i, j) -> (i // 1, j * 1))\noutput z",
        "let z = view(x, [4], (i) -> (0, load(idx, i) % 3))\noutput z",
        "let z : f32[2, 3] = map(neg, x)\noutput z", "let z = slice(x, 1, 0, 3, 1)\noutput z",
        "let z = reshape(x, [3, 2])\noutput z", "let z = map(fn(a) => add(a, 3), n)\noutput z",
        "let z = full(i32[2], 2147483647)\noutput z", "let z = map(fn(p) => logical_and(p, true), b)\noutput z",
        "let z = iota(i64, [3], 0)\noutput z", "let z = expand(full(f32[1, 3], 1.0), [4, 3])\noutput z"}) {
    const std::string body = body_text;
    INFO(body);
    const std::string src = P + body;
    if (body.find("map(add, x, n)") != std::string::npos) {
      // Deliberately wrong: an op over mixed dtypes must NOT parse.
      CHECK(std::holds_alternative<Diag>(parse_program(src)));
    } else {
      parse_ok(src);
    }
  }
}

TEST_CASE("parser: deeply nested input gives a diagnostic, not a crash", "[parser][diag]") {
  auto nest = [](const std::string& open, const std::string& mid, const std::string& close, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += mid;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  struct Deep {
    const char* what;
    std::string src;
    int col;
    const char* message;
  };
  const Deep cases[] = {
      // "let z = " is 8 columns; each "map(neg, " 9: the map at depth 257 starts at 9 + 9*257.
      {"map", P + "let z = " + nest("map(neg, ", "x", ")", 10000) + "\noutput z", 9 + 9 * 257,
       "expression nested deeper than 256 levels"},
      {"permute", P + "let z = " + nest("permute(", "x", ", [1, 0])", 10000) + "\noutput z", 9 + 8 * 257,
       "expression nested deeper than 256 levels"},
      {"lambda ops", P + "let z = map(fn(a) => " + nest("neg(", "a", ")", 10000) + ", x)\noutput z",
       22 + 4 * 256, "expression nested deeper than 256 levels"},
      {"index parentheses", P + "let z = view(x, [2, 3], (i, j) -> (" + nest("(", "i", ")", 10000) + ", j))\noutput z",
       36 + 256, "index expression nested deeper than 256 levels"},
      {"long index sum", P + "let z = view(x, [2, 3], (i, j) -> (i" + nest(" + j", "", "", 100000) + ", j))\noutput z",
       38 + 4 * 255, "index expression nested deeper than 256 levels"},
      {"long index product", P + "let z = view(x, [2, 3], (i, j) -> (i" + nest(" * 1", "", "", 100000) + ", j))\noutput z",
       38 + 4 * 255, "index expression nested deeper than 256 levels"},
  };
  for (const Deep& c : cases) {
    INFO(c.what);
    Diag d = parse_bad(c.src);
    INFO("got: " << d.str().substr(0, 300));
    CHECK(d.loc.line == 6);
    CHECK(d.loc.col == c.col);
    CHECK_THAT(d.message, Catch::Contains(c.message));
  }
  // Just under the limit still parses.
  Program ok = parse_ok(P + "let z = " + nest("map(neg, ", "x", ")", 200) + "\noutput z\n");
  CHECK(bexpr(ok, "z")->type == TensorType{DType::F32, {2, 3}});
}

TEST_CASE("parser: every prefix and many mutations of a program give a value or a located diagnostic",
          "[parser][diag]") {
  const std::string src = P +
                          "let h : f32[2, 4] = red(sum, 0.0, [3], map(mul, expand(unsqueeze(x, 1), [2, 4, 3]),\n"
                          "    view(y, [2, 4, 3], (i, j, k) -> (i, (k + j) % 3))))\n"
                          "let g = map(fn(a) => select(gt(a, 0x1p-2), cast(a, f64), -0.0), h) # comment\n"
                          "let q = let t = gather(x, 1, idx) in red(argmax, -inf, [4], t)\n"
                          "output g, q\n";
  parse_ok(src);
  int lines = 1;
  for (char ch : src) lines += ch == '\n';
  auto check = [&](const std::string& s) {
    ParseResult r = parse_program(s, "m.stx");
    if (const Diag* d = std::get_if<Diag>(&r)) {
      INFO(s << "\n-> " << d->str());
      REQUIRE(d->loc.line >= 1);
      REQUIRE(d->loc.line <= lines + 1);
      REQUIRE(d->loc.col >= 1);
      REQUIRE(!d->message.empty());
    }
  };
  for (size_t k = 0; k <= src.size(); ++k) check(src.substr(0, k));
  const char repl[] = {'(', ')', ',', '0', '-', 'x', '#', '\n', '[', '\xff'};
  for (size_t k = 0; k < src.size(); ++k) {
    for (char c : repl) {
      std::string s = src;
      s[k] = c;
      check(s);
    }
    check(src.substr(0, k) + src.substr(k + 1));
  }
}

