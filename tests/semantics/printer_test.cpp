// Tests of the `.stx` printer (docs/design.md §2): print(parse(s)) is a fixed point and
// reads back to the same program; floats print so that they read back to the
// same bits; views print back in sugar form.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "semantics/ir.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "tests/test_util.h"

using namespace stax::sem;
using namespace stax::test;

namespace {

/// Structural equality of two programs (names, types, bindings by expr_equal, outputs).
bool same_program(const Program& a, const Program& b) {
  if (a.inputs.size() != b.inputs.size() || a.bindings.size() != b.bindings.size() || a.outputs != b.outputs)
    return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (a.inputs[i].name != b.inputs[i].name || !(a.inputs[i].type == b.inputs[i].type)) return false;
  for (size_t i = 0; i < a.bindings.size(); ++i) {
    const Binding &x = a.bindings[i], &y = b.bindings[i];
    if (x.name != y.name || !expr_equal(x.expr, y.expr) || x.expr->hash != y.expr->hash) return false;
  }
  return true;
}

/// parse -> print -> parse -> print: the printed texts agree and the programs are equal.
std::string round_trip(const std::string& src, const std::string& what) {
  INFO(what << "\n--- source:\n" << src);
  Program p1 = parse_ok(src, what);
  std::string t1 = print_program(p1);
  INFO("--- printed:\n" << t1);
  Program p2 = parse_ok(t1, what + " (printed)");
  std::string t2 = print_program(p2);
  CHECK(t1 == t2);
  CHECK(same_program(p1, p2));
  for (size_t i = 0; i < p1.bindings.size() && i < p2.bindings.size(); ++i) {
    INFO("binding " << p1.bindings[i].name);
    CHECK(expr_equal(p1.bindings[i].expr, p2.bindings[i].expr));
  }
  return t1;
}

// Programs covering every form of the grammar.
const char* const kPrograms[] = {
    // 0: docs/design.md §2's example
    R"(# h = x @ W ; y = sum(gelu(h))
input x : f32[32, 64]
input W : f32[64, 64]
let h : f32[32, 64] = red(sum, 0.0, [64],
    map(mul, view(x, [32, 64, 64], (i, j, k) -> (i, k)),
             view(W, [32, 64, 64], (i, j, k) -> (k, j))))
let g = map(fn(a) => mul(mul(a, 0.5), add(1.0, erf(mul(a, 0.7071067811865476)))), h)
let y : f32[] = red(sum, 0.0, [32, 64], g)
output y
)",
    // 1: every dtype, op names of every arity
    "input a : f32[2]\ninput c : f64[2]\ninput d : f16[2]\ninput e : bf16[2]\ninput f : i32[2]\ninput g : i64[2]\n"
    "input h : bool[2]\n"
    "let a1 = map(add, a, a)\nlet c1 = map(sqrt, c)\nlet d1 = map(tanh, d)\nlet e1 = map(maximum, e, e)\n"
    "let f1 = map(floordiv, f, f)\nlet g1 = map(mod, g, g)\nlet h1 = map(logical_not, h)\n"
    "let s1 = map(select, h, a, a)\nlet m1 = map(fma, c, c, c)\nlet b1 = map(le, f, f)\n"
    "output a1, c1, d1, e1, f1, g1, h1, s1, m1, b1\n",
    // 2: lambdas: nested ops, casts, comparisons, reordered and unused parameters
    "input x : f32[3]\ninput y : f32[3]\ninput k : i32[3]\ninput b : bool[3]\n"
    "let u = map(fn(p, q) => add(mul(p, q), cast(cast(p, f64), f32)), x, y)\n"
    "let v = map(fn(p, q) => sub(q, p), x, y)\n"
    "let w = map(fn(p, q) => p, x, k)\n"
    "let z = map(fn(c, p, q) => select(logical_and(c, gt(p, q)), p, neg(q)), b, x, y)\n"
    "let r = map(fn(m, p) => add(cast(m, f32), p), k, x)\n"
    "let s = map(fn(p) => cast(gt(p, 0.0), i32), x)\n"
    "let t = map(fn(p) => add(p, neg(1.0)), x)\n"
    "let h = map(fn(p) => cast(mul(p, 0.5), f16), x)\n"
    "let hh = map(fn(p) => add(p, 0.1), h)\n"
    "output u, v, w, z, r, s, t, h, hh\n",
    // 3: constants of every form
    "input x : f32[2]\ninput c : f64[2]\ninput k : i64[2]\ninput b : bool[2]\n"
    "let a1 = map(fn(p) => add(mul(p, 0x1.8p+3), -0.0), x)\n"
    "let a2 = map(fn(p) => select(gt(p, inf), nan, maximum(p, -inf)), x)\n"
    "let a3 = map(fn(p) => add(p, 1e-45), x)\n"
    "let a4 = map(fn(p) => mul(p, 3.4028235e38), x)\n"
    "let a5 = map(fn(p) => add(p, 5e-324), c)\n"
    "let a6 = map(fn(p) => add(p, 0.1), c)\n"
    "let a7 = map(fn(p) => add(p, -9223372036854775808), k)\n"
    "let a8 = map(fn(p) => logical_or(p, logical_and(true, false)), b)\n"
    "let a9 = map(fn(p) => add(p, -nan), x)\n"
    "let a10 = map(fn(p) => add(p, 3), x)\n"
    "output a1, a2, a3, a4, a5, a6, a7, a8, a9, a10\n",
    // 4: views with affine maps that are not sugar
    "input x : f32[2, 7]\ninput v : f32[10]\n"
    "let a = view(x, [3, 2], (i, j) -> (j, 2*i + 1))\n"
    "let c = view(v, [5], (i) -> (9 - i*2))\n"
    "let d = view(x, [2, 2, 7], (i, j, k) -> (i, k))\n"
    "let e = view(v, [], () -> (3))\n"
    "let f = view(x, [2], (i) -> (i, (i + 1) * 3 - i))\n"
    "let g = view(v, [3], (i) -> (-1 + i - -2))\n"
    "let h = view(v, [3], (i) -> (2 + i))\n"
    "let m = view(x, [2, 3], (i, j) -> (i, 2*(3*j) - 3*(j + 1) + 3))\n"
    // steps and offsets near the int64 limits (no overflow while recognising sugar)
    "let n = view(v, [3], (i) -> (4611686018427387904*i))\n"
    "let o = view(v, [2], (i) -> (4611686018427387904*i + 9223372036854775807))\n"
    "let q = view(v, [3], (i) -> (9223372036854775807*(2*i)))\n"
    "let r = slice(v, 0, 1, 10, 9223372036854775807)\n"
    "output a, c, d, e, f, g, h, m, n, o, q, r\n",
    // 5: floor/mod and load index maps
    "input x : f32[2, 3]\ninput v : f32[10]\ninput idx : i64[4]\ninput idx2 : i32[2, 3]\n"
    "let a = view(x, [6], (f) -> (f // 3, f % 3))\n"
    "let b = view(v, [4], (i) -> ((i + 1) % 4))\n"
    "let c = view(v, [4], (i) -> (load(idx, (i + 1) % 4) + 2*i))\n"
    "let d = view(v, [2, 3], (i, j) -> (load(idx2, i, 2 - j) % 10))\n"
    "let e = view(v, [4], (i) -> ((2*i) // 3 + (i // 2) * 2 - -3 // 2))\n"
    "output a, b, c, d, e\n",
    // 6: every reduction
    "input m : f32[2, 3, 4]\ninput k : i32[2, 3]\ninput l : i64[5]\n"
    "let s = red(sum, 0.0, [4], m)\nlet q = red(prod, 1.0, [3, 4], m)\nlet hi = red(max, -inf, [2, 3, 4], m)\n"
    "let lo = red(min, inf, [], m)\nlet am = red(argmax, -inf, [4], m)\nlet an = red(argmin, inf, [3, 4], m)\n"
    "let ks = red(sum, 0, [3], k)\nlet ka = red(argmax, -2147483648, [3], k)\n"
    "let ls = red(min, 9223372036854775807, [5], l)\nlet neg0 = red(sum, -0.0, [4], m)\n"
    "output s, q, hi, lo, am, an, ks, ka, ls, neg0\n",
    // 7: iota and full of every dtype
    "let a = iota(i64, [3, 4], 1)\nlet c = iota(f16, [5], 0)\nlet d = iota(i32, [2, 2, 2], 2)\n"
    "let e = iota(bf16, [3], 0)\nlet f = iota(f64, [1, 2], 1)\nlet g = iota(f32, [0], 0)\n"
    "let h = full(f16[2, 2], 1.5)\nlet i = full(bool[], true)\nlet j = full(i64[3], -5)\n"
    "let k = full(f64[1], 0x1p-1074)\nlet l = full(bf16[2], -0.0)\nlet m = full(f32[], nan)\n"
    "let n = full(i32[2, 0], 7)\nlet o = full(bool[1], false)\n"
    "output a, c, d, e, f, g, h, i, j, k, l, m, n, o\n",
    // 8: let-in, nested, with a gather by a local index
    "input x : f32[2, 3]\ninput y : f32[2, 3]\n"
    "let z = let t = map(neg, x) in map(add, t, t)\n"
    "let w = let t = x in let u = map(mul, t, y) in red(sum, 0.0, [3], u)\n"
    "let g = let j = iota(i64, [4], 0) in gather(x, 1, j)\n"
    "let n = map(add, let a = x in a, let a = y in a)\n"
    "output z, w, g, n\n",
    // 9: every sugar form
    "input x : f32[2, 3]\ninput v : f32[10]\ninput r : f32[1, 3]\ninput idx : i64[4]\ninput idx2 : i32[2, 3]\n"
    "let pe = permute(x, [1, 0])\nlet sl = slice(x, 1, 0, 3, 2)\nlet sn = slice(v, 0, -3, 10, 2)\n"
    "let sm = slice(v, -1, 2, -2, 1)\nlet ex = expand(r, [4, 2, 3])\nlet em = expand(r, [2, -1])\n"
    "let rs = reshape(x, [3, -1])\nlet rf = reshape(x, [6])\nlet u1 = unsqueeze(x, 1)\nlet un = unsqueeze(x, -1)\n"
    "let sq = squeeze(r, 0)\nlet ga = gather(x, 1, idx)\nlet g2 = gather(v, 0, idx2)\n"
    "output pe, sl, sn, sm, ex, em, rs, rf, u1, un, sq, ga, g2\n",
    // 10: sugar composed, and sugar of sugar
    "input x : f32[4, 6]\n"
    "let a = permute(slice(reshape(x, [2, 2, 6]), 2, 1, 6, 2), [2, 0, 1])\n"
    "let b = squeeze(unsqueeze(expand(unsqueeze(x, 0), [3, 4, 6]), 2), 2)\n"
    "let c = reshape(permute(x, [1, 0]), [-1])\n"
    "output a, b, c\n",
    // 11: rank 0 and empty tensors
    "input s : f32[]\ninput e : f32[0, 3]\ninput v : f32[5]\n"
    "let a = map(neg, s)\nlet b = view(s, [], () -> ())\nlet c = permute(s, [])\nlet d = expand(s, [2, 3])\n"
    "let f = map(exp, e)\nlet g = red(sum, 0.0, [3], e)\nlet h = slice(v, 0, 4, 2, 1)\nlet i = unsqueeze(s, 0)\n"
    "let j = squeeze(i, 0)\nlet k = reshape(s, [1, 1])\n"
    "output a, b, c, d, f, g, h, i, j, k\n",
    // 12: identity and near-identity views
    "input x : f32[2, 3]\n"
    "let a = view(x, [2, 3], (i, j) -> (i, j))\n"
    "let b = view(x, [2, 3], (i, j) -> (i + 0, j))\n"
    "let c = view(x, [2, 3], (i, j) -> (1*i, j))\n"
    "let d = view(x, [3, 2], (i, j) -> (j, i))\n"
    "output a, b, c, d\n",
    // 13: comments everywhere and odd spacing
    "# header\n\ninput   x:f32[ 2 ,3 ]# trailing\nlet y =\n  map( # inside\n neg ,\n\tx )\r\n"
    "# between\noutput y# at the end, no newline",
    // 14: half types
    "input h : f16[4]\ninput g : bf16[4]\n"
    "let a = map(fn(p) => mul(p, 0.1), h)\nlet b = map(fn(p) => add(p, 65504), h)\n"
    "let c = map(fn(p) => maximum(p, 3.3895314e38), g)\nlet d = map(fn(p) => cast(p, f16), g)\n"
    "let e = red(sum, 0.0, [4], h)\nlet f = full(f16[2], 6e-8)\n"
    "output a, b, c, d, e, f\n",
    // 15: inputs after bindings, outputs split over statements
    "input x : f32[2]\nlet a = map(neg, x)\noutput a\ninput y : f32[2]\nlet b = map(add, a, y)\noutput b, y\n",
    // 16: integer arithmetic that may fail and gathers from bindings
    "input k : i32[8]\ninput x : f32[8]\n"
    "let q = map(fn(a) => div(a, sub(a, 1)), k)\nlet i = map(fn(a) => mod(mul(a, 3), 8), k)\n"
    "let g = gather(x, 0, i)\nlet h = gather(q, 0, i)\n"
    "output q, g, h\n",
    // 17: a load view that is not a gather (index read at another place)
    "input x : f32[8]\ninput i : i64[8]\n"
    "let a = view(x, [8], (j) -> (load(i, 7 - j)))\nlet b = view(x, [4, 2], (j, k) -> (load(i, 2*j + k) % 8))\n"
    "output a, b\n",
    // 18: operands that are whole expressions
    "input x : f32[4, 4]\n"
    "let a = map(add, red(max, -inf, [4], x), red(min, inf, [4], permute(x, [1, 0])))\n"
    "let b = red(argmax, -inf, [4], map(fn(p, q) => mul(p, q), x, expand(full(f32[4], 2.0), [4, 4])))\n"
    "output a, b\n",
    // 19: rand (uniform inputs by key)
    "let r = rand(f32, [2, 3], 7)\nlet s = map(add, r, rand(f32, [2, 3], 0))\noutput s\n",
};

}  // namespace

// ------------------------------------------------------------ round trips

TEST_CASE("printer: inline programs covering every form round-trip", "[printer]") {
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    INFO("program " << i);
    round_trip(kPrograms[i], "program " + std::to_string(i));
  }
}

TEST_CASE("printer: the examples folder round-trips", "[printer]") {
  const std::filesystem::path dir = std::filesystem::path(STAX_SOURCE_DIR) / "examples";
  std::vector<std::filesystem::path> files;
  REQUIRE(std::filesystem::is_directory(dir));
  for (const auto& ent : std::filesystem::recursive_directory_iterator(dir))
    if (ent.is_regular_file() && ent.path().extension() == ".stx") files.push_back(ent.path());
  // An empty or misplaced folder must not pass: examples/ holds six programs.
  REQUIRE(files.size() >= 6);
  for (const auto& f : files) {
    INFO(f.string());
    ParseResult r = parse_file(f.string());
    if (const Diag* d = std::get_if<Diag>(&r)) FAIL("example does not parse: " << d->str());
    const Program& p1 = std::get<Program>(r);
    std::string t1 = print_program(p1);
    INFO("--- printed:\n" << t1);
    Program p2 = parse_ok(t1, f.string() + " (printed)");
    CHECK(print_program(p2) == t1);
    CHECK(same_program(p1, p2));
  }
}

TEST_CASE("printer: the printed form is canonical", "[printer]") {
  // Every binding gets its type; outputs are one statement; comments go.
  std::string t = round_trip("input x : f32[2]\nlet a = map(neg, x) # c\noutput a\nlet b = map(abs, a)\noutput b\n", "c");
  CHECK(t == "input x : f32[2]\nlet a : f32[2] = map(neg, x)\nlet b : f32[2] = map(abs, a)\noutput a, b\n");
  // A lambda that is one op over its parameters in order prints as the op.
  t = round_trip("input x : f32[2]\nlet a = map(fn(p, q) => add(p, q), x, x)\noutput a\n", "plain");
  CHECK(contains(t, "map(add, x, x)"));
  t = round_trip("input x : f32[2]\nlet a = map(fn(p, q) => add(q, p), x, x)\noutput a\n", "swapped");
  CHECK(contains(t, "map(fn(p, q) => add(q, p), x, x)"));
  // The docs/design.md example prints as expected.
  t = round_trip(kPrograms[0], "design");
  CHECK(contains(t, "let h : f32[32, 64] = red(sum, 0.0, [64], map(mul, view(x, [32, 64, 64], (i, j, k) -> (i, k)), "
                    "view(W, [32, 64, 64], (i, j, k) -> (k, j))))"));
  CHECK(contains(t, "let g : f32[32, 64] = map(fn(a) => mul(mul(a, 0.5), add(1.0, erf(mul(a, 0.70710677)))), h)"));
  // Half constants print as written when that reads back (not as their f32 value 0.099975586).
  t = round_trip("input h : f16[2]\nlet a = map(fn(p) => mul(p, 0.1), h)\nlet b = full(bf16[2], 0.1)\noutput a, b\n",
                 "half");
  CHECK(contains(t, "map(fn(p) => mul(p, 0.1), h)"));
  CHECK(contains(t, "full(bf16[2], 0.1)"));
  // Index expressions keep their structure and precedence.
  t = round_trip(kPrograms[4], "affine");
  CHECK(contains(t, "(i, j) -> (j, 2*i + 1)"));
  CHECK(contains(t, "(i) -> (9 - 2*i)"));
  CHECK(contains(t, "(i) -> (-1 + i - -2)"));
  CHECK(contains(t, "(i) -> (i, 3*(i + 1) - i)"));
  t = round_trip(kPrograms[5], "floor/mod");
  CHECK(contains(t, "view(v, [4], (i) -> ((i + 1) % 4))"));
  CHECK(contains(t, "(load(idx, (i + 1) % 4) + 2*i)"));
  CHECK(contains(t, "(2*i) // 3 + 2*(i // 2) - -3 // 2"));
}

TEST_CASE("printer: views print back in sugar form", "[printer]") {
  std::string t = round_trip(kPrograms[9], "sugar");
  Program p = parse_ok(t, "sugar");
  const struct {
    const char* name;
    const char* text;
  } want[] = {
      {"pe", "permute(x, [1, 0])"},   {"sl", "slice(x, 1, 0, 3, 2)"},   {"sn", "slice(v, 0, 7, 10, 2)"},
      {"sm", "slice(v, 0, 2, 8, 1)"}, {"ex", "expand(r, [4, 2, 3])"},   {"em", "expand(r, [2, 3])"},
      {"rs", "reshape(x, [3, 2])"},   {"rf", "reshape(x, [6])"},        {"u1", "unsqueeze(x, 1)"},
      {"un", "unsqueeze(x, 2)"},      {"sq", "squeeze(r, 0)"},          {"ga", "gather(x, 1, idx)"},
      {"g2", "gather(v, 0, idx2)"},
  };
  for (const auto& w : want) {
    INFO(w.name);
    CHECK(print_expr(bexpr(p, w.name), &p) == w.text);
  }
  CHECK_FALSE(contains(t, "view("));
  CHECK_FALSE(contains(t, "load("));
  // A view written out in full prints as the sugar it equals.
  t = round_trip(
      "input x : f32[2, 3]\ninput i : i64[5]\n"
      "let a = view(x, [3, 2], (p, q) -> (q, p))\n"
      "let b = view(x, [6], (f) -> (f // 3, f % 3))\n"
      "let c = view(x, [2, 1, 3], (p, q, r) -> (p, r))\n"
      "let d = view(x, [5, 3], (p, q) -> (load(i, p), q))\n"
      "let e = view(x, [2, 2], (p, q) -> (p, q + 1))\n"
      "let f = view(x, [4, 2, 3], (p, q, r) -> (q, r))\n"
      "output a, b, c, d, e, f\n",
      "spelled out");
  CHECK(contains(t, "let a : f32[3, 2] = permute(x, [1, 0])"));
  CHECK(contains(t, "let b : f32[6] = reshape(x, [6])"));
  CHECK(contains(t, "let c : f32[2, 1, 3] = unsqueeze(x, 1)"));
  CHECK(contains(t, "let d : f32[5, 3] = gather(x, 0, i)"));
  CHECK(contains(t, "let e : f32[2, 2] = slice(x, 1, 1, 3, 1)"));
  CHECK(contains(t, "let f : f32[4, 2, 3] = expand(x, [4, 2, 3])"));
  // Views that are no sugar print as views.
  t = round_trip(kPrograms[17], "loads");
  CHECK(contains(t, "view(x, [8], (j) -> (load(i, 7 - j)))"));
  // Without a scope, a gather's index shape is unknown: it prints as a view, which reads back the same.
  const Expr& ga = bexpr(p, "ga");
  std::string bare = print_expr(ga, nullptr);
  CHECK(contains(bare, "view(x, [2, 4], "));
  CHECK(contains(bare, "load(idx, i1)"));
  Program q = parse_ok("input x : f32[2, 3]\ninput idx : i64[4]\nlet ga = " + bare + "\noutput ga\n", "bare");
  CHECK(expr_equal(bexpr(q, "ga"), ga));
}

TEST_CASE("printer: mutated programs that still parse round-trip", "[printer]") {
  const std::string src = std::string(kPrograms[9]) +
                          "let h : f32[2, 4] = red(sum, 0.0, [3], map(mul, expand(unsqueeze(x, 1), [2, 4, 3]),\n"
                          "    view(x, [2, 4, 3], (i, j, k) -> (i, (k + j) % 3))))\n"
                          "let g = map(fn(a) => select(gt(a, 0x1p-2), cast(a, f64), -0.0), h)\n"
                          "let q = let t = gather(x, 1, idx) in red(argmax, -inf, [4], t)\n"
                          "output g, q\n";
  const char repl[] = {'0', '1', '2', '-', '(', ')', ',', 'x', 'i', '+', '*', '\n'};
  int parsed = 0;
  for (size_t k = 0; k < src.size(); ++k) {
    for (char c : repl) {
      std::string s = src;
      s[k] = c;
      if (std::holds_alternative<Diag>(parse_program(s))) continue;
      ++parsed;
      round_trip(s, "mutation at " + std::to_string(k));
    }
  }
  CHECK(parsed > 100);  // the mutations do exercise the printer
}

TEST_CASE("printer: structural comparison detects real differences", "[printer]") {
  // Deliberately wrong cases: these must be told apart, or the round-trip checks above prove nothing.
  const std::string base = "input x : f32[2, 3]\nlet a = map(fn(p) => add(p, 0.1), x)\noutput a\n";
  Program p = parse_ok(base, "base");
  const char* const others[] = {
      "input x : f32[2, 3]\nlet a = map(fn(p) => add(p, 0.10000001), x)\noutput a\n",  // next float up
      "input x : f32[2, 3]\nlet a = map(fn(p) => add(0.1, p), x)\noutput a\n",         // operands swapped
      "input x : f32[2, 3]\nlet a = map(fn(p) => sub(p, 0.1), x)\noutput a\n",
      "input x : f32[3, 2]\nlet a = map(fn(p) => add(p, 0.1), x)\noutput a\n",
      "input y : f32[2, 3]\nlet a = map(fn(p) => add(p, 0.1), y)\noutput a\n",
      "input x : f32[2, 3]\nlet b = map(fn(p) => add(p, 0.1), x)\noutput b\n",
      "input x : f32[2, 3]\nlet a = map(fn(p) => add(p, 0.1), permute(permute(x, [1, 0]), [1, 0]))\noutput a\n",
  };
  CHECK(same_program(p, parse_ok(base, "again")));
  for (const char* o : others) {
    INFO(o);
    Program q = parse_ok(o, "other");
    CHECK_FALSE(same_program(p, q));
    CHECK(print_program(p) != print_program(q));
  }
  // -0.0 and 0.0 differ; so do two NaNs of different sign.
  Program z1 = parse_ok("let z = full(f32[], 0.0)\noutput z\n", "z1");
  Program z2 = parse_ok("let z = full(f32[], -0.0)\noutput z\n", "z2");
  CHECK_FALSE(same_program(z1, z2));
  CHECK(print_program(z2) == "let z : f32[] = full(f32[], -0.0)\noutput z\n");
  // A program with a type error does not parse, so it has no printed form.
  CHECK(std::holds_alternative<Diag>(parse_program("input x : f32[2]\ninput k : i32[2]\nlet a = map(add, x, k)\noutput a\n")));
}

// ------------------------------------------------------------ float constants

namespace {

/// const -> text -> const gives the same bits (NaNs: NaN of the same sign).
void check_const_round_trip(const Const& c) {
  std::string s = const_to_string(c);
  INFO(dtype_name(c.dtype) << " bits 0x" << std::hex << c.bits << " printed " << s);
  auto r = const_from_literal(s, c.dtype);
  REQUIRE(std::holds_alternative<Const>(r));
  const Const& d = std::get<Const>(r);
  if (is_float(c.dtype) && std::isnan(c.as_double())) {
    CHECK(std::isnan(d.as_double()));
    CHECK(std::signbit(d.as_double()) == std::signbit(c.as_double()));
  } else {
    CHECK(d == c);
  }
}

/// A literal through a program: in full, in a lambda and as a red init, parse -> print -> parse.
void check_literal_in_programs(const std::string& lit, const std::string& dt) {
  INFO(lit << " as " << dt);
  DType t = *dtype_from_name(dt);
  const std::string src = "input a : " + dt + "[3]\nlet f = full(" + dt + "[2], " + lit + ")\nlet m = map(fn(v) => add(v, " +
                          lit + "), a)\nlet r = red(max, " + lit + ", [3], a)\noutput f, m, r\n";
  Program p1 = parse_ok(src, "lit");
  std::string t1 = print_program(p1);
  Program p2 = parse_ok(t1, "lit printed");
  CHECK(print_program(p2) == t1);
  CHECK(same_program(p1, p2));
  auto lit_const = std::get<Const>(const_from_literal(lit, t));
  const Const& f1 = std::get<FullE>(bexpr(p1, "f")->p).value;
  const Const& f2 = std::get<FullE>(bexpr(p2, "f")->p).value;
  CHECK(f1 == lit_const);
  CHECK(f2 == f1);
  CHECK(std::get<RedE>(bexpr(p2, "r")->p).init == std::get<RedE>(bexpr(p1, "r")->p).init);
  const Lambda& l2 = std::get<MapE>(bexpr(p2, "m")->p).fn;
  bool found = false;
  for (const Instr& in : l2.code)
    if (in.kind == Instr::Kind::Const) found = in.value == f1;
  CHECK(found);
}

}  // namespace

TEST_CASE("printer: float constants read back to the same bits", "[printer][const]") {
  const char* const lits[] = {"0.1",       "1e-45",        "3.4028235e38", "-0.0",     "0.0",   "nan",
                              "-nan",      "inf",          "-inf",         "1.5",      "1e-40", "1.17549435e-38",
                              "5e-324",    "2.2250738585072014e-308", "1.7976931348623157e308", "65504",
                              "65520",     "6e-8",         "6.1e-5",       "0x1.8p+3", "3.3895314e38", "0.3333333333333333",
                              "1e100",     "-1e-300",      "123456789",    "1.000488281250001", "9.183549615799121e-41"};
  for (const char* dt : {"f32", "f64", "f16", "bf16"}) {
    DType t = *dtype_from_name(dt);
    for (const char* lit : lits) {
      INFO(lit << " as " << dt);
      auto r = const_from_literal(lit, t);
      REQUIRE(std::holds_alternative<Const>(r));
      check_const_round_trip(std::get<Const>(r));
      check_literal_in_programs(lit, dt);
    }
  }
}

TEST_CASE("printer: constants print in their shortest form", "[printer][const]") {
  CHECK(const_to_string(Const::f32(0.1f)) == "0.1");
  CHECK(const_to_string(Const::f64(0.1)) == "0.1");
  CHECK(const_to_string(Const::f32(3.0f)) == "3.0");
  CHECK(const_to_string(Const::f64(-2.0)) == "-2.0");
  CHECK(const_to_string(Const::f32(-0.0f)) == "-0.0");
  CHECK(const_to_string(Const::f32(0.0f)) == "0.0");
  CHECK(const_to_string(Const::f32(std::bit_cast<float>(1u))) == "1e-45");
  CHECK(const_to_string(Const::f64(std::bit_cast<double>(uint64_t(1)))) == "5e-324");
  CHECK(const_to_string(Const::f32(3.4028235e38f)) == "3.4028235e+38");
  CHECK(const_to_string(Const::f64(1e100)) == "1e+100");
  CHECK(const_to_string(Const::f32(INFINITY)) == "inf");
  CHECK(const_to_string(Const::f64(-INFINITY)) == "-inf");
  CHECK(const_to_string(Const::f32(NAN)) == "nan");
  // Half types: the fewest digits that read back as that dtype (as numpy prints float16).
  CHECK(const_to_string(Const{DType::F16, 0x3E00}) == "1.5");
  CHECK(const_to_string(Const{DType::F16, 0x2E66}) == "0.1");
  CHECK(const_to_string(Const{DType::F16, 0x3555}) == "0.3333");
  CHECK(const_to_string(Const{DType::F16, 0x7BFF}) == "65500.0");
  CHECK(const_to_string(Const{DType::F16, 0x0001}) == "6e-08");
  CHECK(const_to_string(Const{DType::F16, 0x8000}) == "-0.0");
  CHECK(const_to_string(Const{DType::F16, 0x7C00}) == "inf");
  CHECK(const_to_string(Const{DType::BF16, 0x3F80}) == "1.0");
  CHECK(const_to_string(Const{DType::BF16, 0x3DCD}) == "0.1");
  CHECK(const_to_string(Const{DType::BF16, 0x4049}) == "3.14");
  CHECK(const_to_string(Const{DType::BF16, 0xFF80}) == "-inf");
  CHECK(const_to_string(Const::i64(-7, DType::I32)) == "-7");
  CHECK(const_to_string(Const::i64(INT64_MIN)) == "-9223372036854775808");
  CHECK(const_to_string(Const::boolean(true)) == "true");
  CHECK(const_to_string(Const::boolean(false)) == "false");
  // The float printed is the f32 value, not its f64 widening.
  CHECK(const_to_string(Const::f32(0.7071067811865476f)) == "0.70710677");
}

TEST_CASE("printer: every f16 and bf16 bit pattern reads back to itself", "[printer][const]") {
  for (DType t : {DType::F16, DType::BF16})
    for (uint32_t b = 0; b < 0x10000; ++b) {
      Const c{t, b};
      check_const_round_trip(c);
      // Never longer than the f32 text of the same value.
      if (!std::isnan(c.as_double())) CHECK(const_to_string(c).size() <= const_to_string(Const::f32(float(c.as_double()))).size());
    }
}

TEST_CASE("printer: f32 and f64 bit patterns read back to themselves", "[printer][const]") {
  std::mt19937_64 rng(20240601);
  std::vector<uint64_t> f32s = {0, 1, 2, 0x007FFFFF, 0x00800000, 0x00800001, 0x3F800000, 0x3F800001, 0x7F7FFFFF,
                                0x7F800000, 0x7FC00000, 0x7F800001, 0x3DCCCCCD, 0x4B800000, 0x4B7FFFFF, 0x33800000};
  for (int i = 0; i < 50000; ++i) f32s.push_back(rng() & 0xFFFFFFFFu);
  for (uint64_t b : f32s) {
    check_const_round_trip(Const{DType::F32, b});
    check_const_round_trip(Const{DType::F32, b | 0x80000000u});
  }
  std::vector<uint64_t> f64s = {0, 1, 2, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000,
                                0x3FF0000000000001, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0x7FF8000000000000,
                                0x3FB999999999999A, 0x4340000000000000, 0x433FFFFFFFFFFFFF};
  for (int i = 0; i < 50000; ++i) f64s.push_back(rng());
  // Values of every magnitude, not only the exponents uniform bits favour.
  for (int e = -1074; e <= 1023; ++e) f64s.push_back(std::bit_cast<uint64_t>(std::ldexp(1.0 + double(rng() >> 12) * 0x1p-52, e)));
  for (uint64_t b : f64s) {
    check_const_round_trip(Const{DType::F64, b});
    check_const_round_trip(Const{DType::F64, b ^ 0x8000000000000000ull});
  }
}

TEST_CASE("printer: integer and bool constants read back to themselves", "[printer][const]") {
  for (int64_t v : {int64_t(0), int64_t(1), int64_t(-1), int64_t(INT32_MAX), int64_t(INT32_MIN), INT64_MAX, INT64_MIN,
                    int64_t(123456789012345)}) {
    check_const_round_trip(Const::i64(v));
    check_const_round_trip(Const::i64(v, DType::I32));
  }
  check_const_round_trip(Const::boolean(true));
  check_const_round_trip(Const::boolean(false));
  check_literal_in_programs("-2147483648", "i32");
  check_literal_in_programs("-9223372036854775808", "i64");
}
