// Tests of the `.stx` parser and type checker (docs/design.md §2): every grammar form
// parses with the right types and shapes (its diagnostics are in
// parser_diag_test.cpp).
#include <catch2/catch.hpp>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "semantics/ir.h"
#include "semantics/parser.h"
#include "semantics/views.h"
#include "tests/semantics/parser_fixture.h"
#include "tests/test_util.h"

using namespace stax::sem;
using namespace stax::test::parser;
using stax::test::bexpr;
using stax::test::binding;

namespace {

template <class T>
const T& as(const Expr& e) {
  REQUIRE(std::holds_alternative<T>(e->p));
  return std::get<T>(e->p);
}

TensorType tt(DType d, Shape s) { return {d, std::move(s)}; }

bool is_var(const IExpr& e, int index) { return e->kind == IExprNode::Kind::Var && e->value == index; }
bool is_iconst(const IExpr& e, int64_t v) { return e->kind == IExprNode::Kind::Const && e->value == v; }

/// The constants of a lambda, in instruction order.
std::vector<Const> lambda_consts(const Lambda& f) {
  std::vector<Const> out;
  for (const Instr& in : f.code)
    if (in.kind == Instr::Kind::Const) out.push_back(in.value);
  return out;
}

}  // namespace

// ------------------------------------------------------------- statements

TEST_CASE("parser: the docs/design.md example parses with the documented types", "[parser]") {
  const std::string src = R"(# h = x @ W ; y = sum(gelu(h))
input x : f32[32, 64]
input W : f32[64, 64]
let h : f32[32, 64] = red(sum, 0.0, [64],
    map(mul, view(x, [32, 64, 64], (i, j, k) -> (i, k)),
             view(W, [32, 64, 64], (i, j, k) -> (k, j))))
let g = map(fn(a) => mul(mul(a, 0.5), add(1.0, erf(mul(a, 0.7071067811865476)))), h)
let y : f32[] = red(sum, 0.0, [32, 64], g)
output y
)";
  Program p = parse_ok(src);
  REQUIRE(p.file == "t.stx");
  REQUIRE(p.inputs.size() == 2);
  CHECK(p.inputs[0].name == "x");
  CHECK(p.inputs[0].type == tt(DType::F32, {32, 64}));
  CHECK(p.inputs[0].loc.line == 2);
  CHECK(p.inputs[0].loc.col == 7);
  CHECK(p.inputs[1].name == "W");
  REQUIRE(p.bindings.size() == 3);
  CHECK(p.bindings[0].name == "h");
  CHECK(p.bindings[1].name == "g");
  CHECK(p.bindings[2].name == "y");
  CHECK(p.bindings[2].loc.line == 8);
  CHECK(p.outputs == std::vector<std::string>{"y"});

  const Expr& h = bexpr(p, "h");
  CHECK(h->type == tt(DType::F32, {32, 64}));
  const RedE& r = as<RedE>(h);
  CHECK(r.op == RedOp::Sum);
  CHECK(r.init == Const::f32(0.0f));
  CHECK(r.extents == Shape{64});
  const MapE& m = as<MapE>(r.src);
  CHECK(r.src->type == tt(DType::F32, {32, 64, 64}));
  REQUIRE(m.args.size() == 2);
  const ViewE& vx = as<ViewE>(m.args[0]);
  CHECK(m.args[0]->type == tt(DType::F32, {32, 64, 64}));
  CHECK(as<NameE>(vx.src).name == "x");
  CHECK(vx.map.vars == std::vector<std::string>{"i", "j", "k"});
  REQUIRE(vx.map.exprs.size() == 2);
  CHECK(is_var(vx.map.exprs[0], 0));
  CHECK(is_var(vx.map.exprs[1], 2));
  const ViewE& vw = as<ViewE>(m.args[1]);
  CHECK(is_var(vw.map.exprs[0], 2));
  CHECK(is_var(vw.map.exprs[1], 1));

  const Expr& g = bexpr(p, "g");
  CHECK(g->type == tt(DType::F32, {32, 64}));
  const MapE& gm = as<MapE>(g);
  CHECK(gm.fn.params == std::vector<std::string>{"a"});
  CHECK(gm.fn.param_types == std::vector<DType>{DType::F32});
  CHECK(gm.fn.result_type() == DType::F32);
  auto cs = lambda_consts(gm.fn);
  REQUIRE(cs.size() == 3);
  CHECK(cs[0] == Const::f32(0.5f));
  CHECK(cs[1] == Const::f32(1.0f));
  CHECK(cs[2] == Const::f32(0.7071067811865476f));
  bool has_erf = false;
  for (const Instr& in : gm.fn.code) has_erf |= in.kind == Instr::Kind::Op && in.op == ScalarOp::Erf;
  CHECK(has_erf);
  // Operands precede their users.
  for (size_t i = 0; i < gm.fn.code.size(); ++i) {
    const Instr& in = gm.fn.code[i];
    if (in.kind == Instr::Kind::Op || in.kind == Instr::Kind::Cast)
      for (int32_t o : {in.a, in.b, in.c}) CHECK(o < int32_t(i));
  }

  const Expr& y = bexpr(p, "y");
  CHECK(y->type == tt(DType::F32, {}));
  CHECK(as<RedE>(y).extents == Shape{32, 64});
  CHECK(as<NameE>(as<RedE>(y).src).name == "g");
  CHECK(*p.type_of("g") == tt(DType::F32, {32, 64}));
  CHECK(p.type_of("nope") == nullptr);
}

TEST_CASE("parser: inputs of every dtype and rank, lets with and without types, several outputs", "[parser]") {
  Program p = parse_ok(
      "input a : f32[]\ninput c : f64[1]\ninput d : f16[2, 3]\ninput e : bf16[4, 0, 2]\n"
      "input f : i32[5]\ninput g : i64[1, 1, 1, 1]\ninput h : bool[7]\n"
      "let u = map(neg, c)\n"
      "let v : f16[2, 3] = map(abs, d)\n"
      "let w : bool[7] = map(logical_not, h)\n"
      "output w, u, a, v\n");
  REQUIRE(p.inputs.size() == 7);
  CHECK(p.inputs[0].type == tt(DType::F32, {}));
  CHECK(p.inputs[1].type == tt(DType::F64, {1}));
  CHECK(p.inputs[2].type == tt(DType::F16, {2, 3}));
  CHECK(p.inputs[3].type == tt(DType::BF16, {4, 0, 2}));
  CHECK(p.inputs[4].type == tt(DType::I32, {5}));
  CHECK(p.inputs[5].type == tt(DType::I64, {1, 1, 1, 1}));
  CHECK(p.inputs[6].type == tt(DType::Bool, {7}));
  CHECK(bexpr(p, "u")->type == tt(DType::F64, {1}));
  CHECK(bexpr(p, "v")->type == tt(DType::F16, {2, 3}));
  CHECK(bexpr(p, "w")->type == tt(DType::Bool, {7}));
  CHECK(p.outputs == std::vector<std::string>{"w", "u", "a", "v"});
  // An input can be an output; outputs may be split over statements.
  Program q = parse_ok("input a : f32[2]\nlet b = map(neg, a)\noutput a\noutput b\n");
  CHECK(q.outputs == std::vector<std::string>{"a", "b"});
}

TEST_CASE("parser: map with op names", "[parser]") {
  Program p = parse_ok(P +
                       "let s = map(add, x, y)\n"
                       "let c = map(lt, x, y)\n"
                       "let sel = map(select, b, x, y)\n"
                       "let f = map(fma, x, y, x)\n"
                       "let i = map(floordiv, n, n)\n"
                       "output s, c, sel, f, i\n");
  const MapE& s = as<MapE>(bexpr(p, "s"));
  CHECK(bexpr(p, "s")->type == tt(DType::F32, {2, 3}));
  REQUIRE(s.fn.code.size() == 3);
  CHECK(s.fn.code[0].kind == Instr::Kind::Param);
  CHECK(s.fn.code[1].kind == Instr::Kind::Param);
  CHECK(s.fn.code[2].kind == Instr::Kind::Op);
  CHECK(s.fn.code[2].op == ScalarOp::Add);
  CHECK(s.fn.code[2].a == 0);
  CHECK(s.fn.code[2].b == 1);
  CHECK(bexpr(p, "c")->type == tt(DType::Bool, {2, 3}));
  CHECK(bexpr(p, "sel")->type == tt(DType::F32, {2, 3}));
  CHECK(as<MapE>(bexpr(p, "sel")).fn.param_types == std::vector<DType>{DType::Bool, DType::F32, DType::F32});
  CHECK(as<MapE>(bexpr(p, "f")).args.size() == 3);
  CHECK(bexpr(p, "i")->type == tt(DType::I32, {2, 3}));
  CHECK(as<MapE>(bexpr(p, "i")).fn.may_fail());
  CHECK_FALSE(as<MapE>(bexpr(p, "s")).fn.may_fail());
  // An op name and the equivalent lambda are the same lambda.
  Program q = parse_ok(P + "let s = map(fn(u, v) => add(u, v), x, y)\noutput s\n");
  CHECK(as<MapE>(bexpr(q, "s")).fn == s.fn);
  CHECK(expr_equal(bexpr(q, "s"), bexpr(p, "s")));
  // ... but a lambda with swapped operands is not.
  Program r = parse_ok(P + "let s = map(fn(u, v) => sub(v, u), x, y)\noutput s\n");
  Program r2 = parse_ok(P + "let s = map(sub, x, y)\noutput s\n");
  CHECK_FALSE(expr_equal(bexpr(r, "s"), bexpr(r2, "s")));
}

TEST_CASE("parser: fn lambdas with nested ops, casts and constants", "[parser]") {
  Program p = parse_ok(P +
                       "let a = map(fn(u, v) => add(mul(u, v), cast(cast(u, f64), f32)), x, y)\n"
                       "let c = map(fn(u) => cast(u, f64), x)\n"
                       "let d = map(fn(k, u) => add(cast(k, f32), u), n, x)\n"
                       "let e = map(fn(u) => select(gt(u, 0.0), u, mul(u, 0.01)), x)\n"
                       "let f = map(fn(k) => mod(mul(k, 3), 128), n)\n"
                       "let g = map(fn(u) => u, x)\n"
                       "let h = map(fn(u, v) => u, x, n)\n"
                       "let i = map(fn(u) => add(u, neg(1.0)), x)\n"
                       "let j = map(fn(p, q) => logical_or(p, logical_not(q)), b, b)\n"
                       "output a, c, d, e, f, g, h, i, j\n");
  const Lambda& a = as<MapE>(bexpr(p, "a")).fn;
  CHECK(bexpr(p, "a")->type == tt(DType::F32, {2, 3}));
  int casts = 0;
  for (const Instr& in : a.code) casts += in.kind == Instr::Kind::Cast;
  CHECK(casts == 2);
  // The param instruction of u is shared by its two uses.
  int params = 0;
  for (const Instr& in : a.code) params += in.kind == Instr::Kind::Param;
  CHECK(params == 2);
  CHECK(bexpr(p, "c")->type == tt(DType::F64, {2, 3}));
  CHECK(bexpr(p, "d")->type == tt(DType::F32, {2, 3}));
  const Lambda& e = as<MapE>(bexpr(p, "e")).fn;
  CHECK(lambda_consts(e) == std::vector<Const>{Const::f32(0.0f), Const::f32(0.01f)});
  CHECK(e.result_type() == DType::F32);
  const Lambda& f = as<MapE>(bexpr(p, "f")).fn;
  CHECK(lambda_consts(f) == std::vector<Const>{Const::i64(3, DType::I32), Const::i64(128, DType::I32)});
  CHECK(bexpr(p, "f")->type == tt(DType::I32, {2, 3}));
  CHECK(bexpr(p, "g")->type == tt(DType::F32, {2, 3}));
  CHECK(as<MapE>(bexpr(p, "g")).fn.code.size() == 1);
  CHECK(bexpr(p, "h")->type == tt(DType::F32, {2, 3}));
  // A constant-only operand takes the dtype of the other operand.
  CHECK(lambda_consts(as<MapE>(bexpr(p, "i")).fn) == std::vector<Const>{Const::f32(1.0f)});
  CHECK(bexpr(p, "j")->type == tt(DType::Bool, {2, 3}));
}

TEST_CASE("parser: lambda constants take the dtype of the other operand", "[parser]") {
  Program p = parse_ok(
      "input a : f64[2]\ninput h : f16[2]\ninput k : i64[2]\n"
      "let u = map(fn(v) => mul(v, 0.1), a)\n"
      "let w = map(fn(v) => mul(v, 0.1), h)\n"
      "let z = map(fn(v) => add(-5, v), k)\n"
      "output u, w, z\n");
  CHECK(lambda_consts(as<MapE>(bexpr(p, "u")).fn) == std::vector<Const>{Const::f64(0.1)});
  CHECK(lambda_consts(as<MapE>(bexpr(p, "w")).fn) == std::vector<Const>{Const{DType::F16, 0x2E66}});
  CHECK(bexpr(p, "w")->type == tt(DType::F16, {2}));
  CHECK(lambda_consts(as<MapE>(bexpr(p, "z")).fn) == std::vector<Const>{Const::i64(-5)});
}

namespace {
// The constant a literal becomes in three places: a lambda, full and red.
Const lambda_const(const std::string& lit, const std::string& dt) {
  bool is_b = dt == "bool";
  Program p = parse_ok("input a : " + dt + "[2]\nlet z = map(fn(v) => " + (is_b ? "logical_and" : "add") + "(v, " +
                       lit + "), a)\noutput z\n");
  auto cs = lambda_consts(as<MapE>(bexpr(p, "z")).fn);
  REQUIRE(cs.size() == 1);
  return cs[0];
}
Const full_const(const std::string& lit, const std::string& dt) {
  Program p = parse_ok("let z = full(" + dt + "[], " + lit + ")\noutput z\n");
  CHECK(bexpr(p, "z")->type == tt(*dtype_from_name(dt), {}));
  return as<FullE>(bexpr(p, "z")).value;
}
Const red_const(const std::string& lit, const std::string& dt) {
  Program p = parse_ok("input a : " + dt + "[3]\nlet z = red(max, " + lit + ", [3], a)\noutput z\n");
  return as<RedE>(bexpr(p, "z")).init;
}
}  // namespace

TEST_CASE("parser: constants of every form", "[parser]") {
  struct C {
    const char* lit;
    const char* dt;
    DType dtype;
    uint64_t bits;
  };
  const C cases[] = {
      {"1.5", "f32", DType::F32, 0x3FC00000},
      {"0.1", "f32", DType::F32, 0x3DCCCCCD},
      {"3", "f32", DType::F32, 0x40400000},
      {"1e-45", "f32", DType::F32, 0x00000001},
      {"3.4028235e38", "f32", DType::F32, 0x7F7FFFFF},
      {"1e39", "f32", DType::F32, 0x7F800000},
      {"0x1.8p+3", "f32", DType::F32, 0x41400000},
      {"0x1p-149", "f32", DType::F32, 0x00000001},
      {"inf", "f32", DType::F32, 0x7F800000},
      {"-inf", "f32", DType::F32, 0xFF800000},
      {"-0.0", "f32", DType::F32, 0x80000000},
      {"0.0", "f32", DType::F32, 0x00000000},
      {"-2.5e-3", "f32", DType::F32, std::bit_cast<uint32_t>(-2.5e-3f)},
      {"0.1", "f64", DType::F64, 0x3FB999999999999A},
      {"0x1.8p+3", "f64", DType::F64, 0x4028000000000000},
      {"0x1p-1074", "f64", DType::F64, 0x0000000000000001},
      {"5e-324", "f64", DType::F64, 0x0000000000000001},
      {"-0.0", "f64", DType::F64, 0x8000000000000000},
      {"-inf", "f64", DType::F64, 0xFFF0000000000000},
      {"1.5", "f16", DType::F16, 0x3E00},
      {"0.1", "f16", DType::F16, 0x2E66},
      {"65504", "f16", DType::F16, 0x7BFF},
      {"65520", "f16", DType::F16, 0x7C00},  // rounds up to inf
      {"6e-8", "f16", DType::F16, 0x0001},   // smallest subnormal 2^-24
      {"-0.0", "f16", DType::F16, 0x8000},
      {"-inf", "f16", DType::F16, 0xFC00},
      // Rounded once: a naive decimal -> f32 -> f16 rounds this to the tie, then to even (0x3C00).
      {"1.000488281250001", "f16", DType::F16, 0x3C01},
      {"1.00048828125", "f16", DType::F16, 0x3C00},
      {"0x1.8p+3", "f16", DType::F16, 0x4A00},
      {"0.1", "bf16", DType::BF16, 0x3DCD},
      {"-0.0", "bf16", DType::BF16, 0x8000},
      {"inf", "bf16", DType::BF16, 0x7F80},
      {"-7", "i32", DType::I32, uint64_t(int64_t(-7))},
      {"2147483647", "i32", DType::I32, 0x7FFFFFFF},
      {"-2147483648", "i32", DType::I32, uint64_t(int64_t(INT32_MIN))},
      {"9223372036854775807", "i64", DType::I64, 0x7FFFFFFFFFFFFFFF},
      {"-9223372036854775808", "i64", DType::I64, 0x8000000000000000},
      {"true", "bool", DType::Bool, 1},
      {"false", "bool", DType::Bool, 0},
  };
  for (const C& c : cases) {
    INFO(c.lit << " as " << c.dt);
    const Const want{c.dtype, c.bits};
    CHECK(lambda_const(c.lit, c.dt) == want);
    CHECK(full_const(c.lit, c.dt) == want);
    if (c.dtype != DType::Bool) CHECK(red_const(c.lit, c.dt) == want);
    // const_from_literal is what the parser uses.
    auto r = const_from_literal(c.lit, c.dtype);
    REQUIRE(std::holds_alternative<Const>(r));
    CHECK(std::get<Const>(r) == want);
  }
  // NaN: quiet, sign as written (the printer writes -nan for a negative NaN).
  for (const char* dt : {"f32", "f64", "f16", "bf16"}) {
    INFO(dt);
    Const pn = full_const("nan", dt), nn = full_const("-nan", dt);
    CHECK(std::isnan(pn.as_double()));
    CHECK_FALSE(std::signbit(pn.as_double()));
    CHECK(std::isnan(nn.as_double()));
    CHECK(std::signbit(nn.as_double()));
    CHECK(lambda_const("nan", dt) == pn);
  }
  CHECK(full_const("nan", "f32").bits == 0x7FC00000);
  CHECK(full_const("nan", "f16").bits == 0x7E00);
}

// ------------------------------------------------------------------ views

TEST_CASE("parser: view with affine index maps", "[parser]") {
  Program p = parse_ok(
      "input x : f32[2, 7]\ninput v : f32[10]\n"
      "let a = view(x, [3, 2], (i, j) -> (j, 2*i + 1))\n"
      "let c = view(v, [5], (i) -> (9 - i*2))\n"
      "let d = view(x, [2, 2, 7], (i, j, k) -> (i, k))\n"
      "let e = view(v, [], () -> (3))\n"
      "let f = view(x, [2], (i) -> (i, (i + 1) * 3 - i))\n"
      "output a, c, d, e, f\n");
  const Expr& a = bexpr(p, "a");
  CHECK(a->type == tt(DType::F32, {3, 2}));
  const ViewE& av = as<ViewE>(a);
  REQUIRE(av.map.exprs.size() == 2);
  CHECK(is_var(av.map.exprs[0], 1));
  const IExpr& e1 = av.map.exprs[1];
  REQUIRE(e1->kind == IExprNode::Kind::Add);
  REQUIRE(e1->args[0]->kind == IExprNode::Kind::Mul);
  CHECK(e1->args[0]->value == 2);
  CHECK(is_var(e1->args[0]->args[0], 0));
  CHECK(is_iconst(e1->args[1], 1));
  auto af = as_affine(av.map, 2);
  REQUIRE(af);
  CHECK(af->a == std::vector<std::vector<int64_t>>{{0, 1}, {2, 0}});
  CHECK(af->c == std::vector<int64_t>{0, 1});

  auto cf = as_affine(as<ViewE>(bexpr(p, "c")).map, 1);
  REQUIRE(cf);
  CHECK(cf->a == std::vector<std::vector<int64_t>>{{-2}});
  CHECK(cf->c == std::vector<int64_t>{9});
  CHECK(bexpr(p, "d")->type == tt(DType::F32, {2, 2, 7}));
  CHECK(bexpr(p, "e")->type == tt(DType::F32, {}));
  CHECK(is_iconst(as<ViewE>(bexpr(p, "e")).map.exprs[0], 3));
  auto ff = as_affine(as<ViewE>(bexpr(p, "f")).map, 1);
  REQUIRE(ff);
  CHECK(ff->a == std::vector<std::vector<int64_t>>{{1}, {2}});
  CHECK(ff->c == std::vector<int64_t>{0, 3});
  // j < 2 and 2*i + 1 <= 5 < 7: in bounds; 9 - 2*i in [1, 9]: in bounds.
  CHECK(view_statically_in_bounds({2, 7}, {3, 2}, av.map));
  CHECK(view_statically_in_bounds({10}, {5}, as<ViewE>(bexpr(p, "c")).map));
  CHECK(view_statically_in_bounds({2, 7}, {2}, as<ViewE>(bexpr(p, "f")).map));
  // An out-of-range view parses (it fails at run time) but is not statically in bounds.
  Program q = parse_ok("input v : f32[10]\nlet z = view(v, [5], (i) -> (i + 6))\noutput z\n");
  CHECK_FALSE(view_statically_in_bounds({10}, {5}, as<ViewE>(bexpr(q, "z")).map));
  CHECK(expr_may_fail(bexpr(q, "z")));
  CHECK_FALSE(expr_may_fail(bexpr(p, "a")));
}

TEST_CASE("parser: index maps with coefficients beyond int64 are not affine", "[parser]") {
  Program p = parse_ok(
      "input v : f32[10]\n"
      "let a = view(v, [3], (i) -> (9223372036854775807*(2*i)))\n"
      "let b = view(v, [3], (i) -> (4611686018427387904*i + 4611686018427387904*i))\n"
      "let c = view(v, [3], (i) -> (9223372036854775807 + 9223372036854775807 - i))\n"
      "let d = view(v, [3], (i) -> (4611686018427387904*i))\n"
      "output a, b, c, d\n");
  CHECK_FALSE(as_affine(as<ViewE>(bexpr(p, "a")).map, 1));
  CHECK_FALSE(as_affine(as<ViewE>(bexpr(p, "b")).map, 1));  // 2^62 + 2^62 overflows
  CHECK_FALSE(as_affine(as<ViewE>(bexpr(p, "c")).map, 1));
  auto d = as_affine(as<ViewE>(bexpr(p, "d")).map, 1);
  REQUIRE(d);
  CHECK(d->a[0][0] == int64_t(1) << 62);
  CHECK_FALSE(view_statically_in_bounds({10}, {3}, as<ViewE>(bexpr(p, "d")).map));
}

TEST_CASE("parser: view with floor division, modulo and load index maps", "[parser]") {
  Program p = parse_ok(
      "input x : f32[2, 3]\ninput v : f32[10]\ninput idx : i64[4]\ninput idx2 : i32[2, 3]\n"
      "let a = view(x, [6], (f) -> (f // 3, f % 3))\n"
      "let c = view(v, [4], (i) -> (load(idx, i)))\n"
      "let d = view(v, [2, 3], (i, j) -> (load(idx2, i, 2 - j) % 10))\n"
      "let e = view(v, [4], (i) -> (load(idx, (i + 1) % 4) + 2*i))\n"
      "output a, c, d, e\n");
  const ViewE& a = as<ViewE>(bexpr(p, "a"));
  CHECK(bexpr(p, "a")->type == tt(DType::F32, {6}));
  REQUIRE(a.map.exprs.size() == 2);
  CHECK(a.map.exprs[0]->kind == IExprNode::Kind::FloorDiv);
  CHECK(a.map.exprs[0]->value == 3);
  CHECK(is_var(a.map.exprs[0]->args[0], 0));
  CHECK(a.map.exprs[1]->kind == IExprNode::Kind::Mod);
  CHECK(a.map.exprs[1]->value == 3);
  CHECK_FALSE(as_affine(a.map, 1));
  // It is exactly the map reshape(x, [6]) expands to (Prop. 6.4's floor/mod form).
  auto rs = expand_reshape({2, 3}, {6});
  REQUIRE(std::holds_alternative<ViewShape>(rs));
  CHECK(std::get<ViewShape>(rs).map == a.map);

  const ViewE& c = as<ViewE>(bexpr(p, "c"));
  CHECK(bexpr(p, "c")->type == tt(DType::F32, {4}));
  REQUIRE(c.map.exprs[0]->kind == IExprNode::Kind::Load);
  CHECK(c.map.exprs[0]->name == "idx");
  REQUIRE(c.map.exprs[0]->args.size() == 1);
  CHECK(is_var(c.map.exprs[0]->args[0], 0));
  CHECK(iexpr_has_load(c.map.exprs[0]));
  CHECK(expr_may_fail(bexpr(p, "c")));
  const IExpr& d0 = as<ViewE>(bexpr(p, "d")).map.exprs[0];
  REQUIRE(d0->kind == IExprNode::Kind::Mod);
  REQUIRE(d0->args[0]->kind == IExprNode::Kind::Load);
  CHECK(d0->args[0]->name == "idx2");
  CHECK(d0->args[0]->args.size() == 2);
  CHECK(d0->args[0]->args[1]->kind == IExprNode::Kind::Sub);
  std::vector<std::string> names;
  collect_free_names(bexpr(p, "d"), names);
  CHECK(names == std::vector<std::string>{"v", "idx2"});
  CHECK(as<ViewE>(bexpr(p, "e")).map.exprs[0]->kind == IExprNode::Kind::Add);
}

TEST_CASE("parser: red with every reduction op", "[parser]") {
  Program p = parse_ok(
      "input m : f32[2, 3, 4]\ninput k : i32[2, 3]\n"
      "let s = red(sum, 0.0, [4], m)\n"
      "let q = red(prod, 1.0, [3, 4], m)\n"
      "let hi = red(max, -inf, [2, 3, 4], m)\n"
      "let lo = red(min, inf, [], m)\n"
      "let am = red(argmax, -inf, [4], m)\n"
      "let an = red(argmin, inf, [3, 4], m)\n"
      "let ks = red(sum, 0, [3], k)\n"
      "let ka = red(argmax, -2147483648, [3], k)\n"
      "output s, q, hi, lo, am, an, ks, ka\n");
  struct R {
    const char* name;
    RedOp op;
    TensorType type;
    Shape extents;
    Const init;
  };
  const R want[] = {
      {"s", RedOp::Sum, tt(DType::F32, {2, 3}), {4}, Const::f32(0.0f)},
      {"q", RedOp::Prod, tt(DType::F32, {2}), {3, 4}, Const::f32(1.0f)},
      {"hi", RedOp::Max, tt(DType::F32, {}), {2, 3, 4}, Const::f32(-INFINITY)},
      {"lo", RedOp::Min, tt(DType::F32, {2, 3, 4}), {}, Const::f32(INFINITY)},
      {"am", RedOp::ArgMax, tt(DType::I64, {2, 3}), {4}, Const::f32(-INFINITY)},
      {"an", RedOp::ArgMin, tt(DType::I64, {2}), {3, 4}, Const::f32(INFINITY)},
      {"ks", RedOp::Sum, tt(DType::I32, {2}), {3}, Const::i64(0, DType::I32)},
      {"ka", RedOp::ArgMax, tt(DType::I64, {2}), {3}, Const::i64(INT32_MIN, DType::I32)},
  };
  for (const R& r : want) {
    INFO(r.name);
    const Expr& e = bexpr(p, r.name);
    CHECK(e->type == r.type);
    const RedE& x = as<RedE>(e);
    CHECK(x.op == r.op);
    CHECK(x.extents == r.extents);
    CHECK(x.init == r.init);
  }
  CHECK(red_is_arg(RedOp::ArgMin));
  CHECK_FALSE(red_is_arg(RedOp::Max));
  for (const char* n : {"sum", "prod", "max", "min", "argmax", "argmin"}) CHECK(red_name(*red_from_name(n)) == n);
  CHECK_FALSE(red_from_name("mean"));
}

TEST_CASE("parser: iota and full", "[parser]") {
  Program p = parse_ok(
      "let a = iota(i64, [3, 4], 1)\n"
      "let c = iota(f16, [5], 0)\n"
      "let d = iota(i32, [2, 2, 2], 2)\n"
      "let e = full(f16[2, 2], 1.5)\n"
      "let f = full(bool[], true)\n"
      "let g = full(i64[3], -5)\n"
      "let h = full(f64[1], 0x1p-1074)\n"
      "output a, c, d, e, f, g, h\n");
  CHECK(bexpr(p, "a")->type == tt(DType::I64, {3, 4}));
  CHECK(as<IotaE>(bexpr(p, "a")).dim == 1);
  CHECK(bexpr(p, "c")->type == tt(DType::F16, {5}));
  CHECK(as<IotaE>(bexpr(p, "c")).dim == 0);
  CHECK(as<IotaE>(bexpr(p, "d")).dim == 2);
  CHECK(bexpr(p, "e")->type == tt(DType::F16, {2, 2}));
  CHECK(as<FullE>(bexpr(p, "e")).value == Const{DType::F16, 0x3E00});
  CHECK(bexpr(p, "f")->type == tt(DType::Bool, {}));
  CHECK(as<FullE>(bexpr(p, "f")).value == Const::boolean(true));
  CHECK(as<FullE>(bexpr(p, "g")).value == Const::i64(-5));
  CHECK(as<FullE>(bexpr(p, "h")).value == Const{DType::F64, 1});
  CHECK(p.inputs.empty());
}

TEST_CASE("parser: let-in expressions", "[parser]") {
  Program p = parse_ok(P +
                       "let z = let t = map(neg, x) in map(add, t, t)\n"
                       "let w = let t = x in let u = map(mul, t, y) in red(sum, 0.0, [3], u)\n"
                       "let g = let j = iota(i64, [4], 0) in gather(x, 1, j)\n"
                       "output z, w, g\n");
  const Expr& z = bexpr(p, "z");
  CHECK(z->type == tt(DType::F32, {2, 3}));
  const LetE& l = as<LetE>(z);
  CHECK(l.name == "t");
  CHECK(l.value->type == tt(DType::F32, {2, 3}));
  const MapE& body = as<MapE>(l.body);
  CHECK(as<NameE>(body.args[0]).name == "t");
  std::vector<std::string> names;
  collect_free_names(z, names);
  CHECK(names == std::vector<std::string>{"x"});
  const Expr& w = bexpr(p, "w");
  CHECK(w->type == tt(DType::F32, {2}));
  CHECK(as<LetE>(as<LetE>(w).body).name == "u");
  CHECK(bexpr(p, "g")->type == tt(DType::F32, {2, 4}));
  // The local names are not program names.
  CHECK(p.type_of("t") == nullptr);
}

TEST_CASE("parser: view sugar expands into index maps", "[parser]") {
  Program p = parse_ok(
      "input x : f32[2, 3]\ninput v : f32[10]\ninput r : f32[1, 3]\ninput idx : i64[4]\ninput idx2 : i32[2, 3]\n"
      "let pe = permute(x, [1, 0])\n"
      "let sl = slice(x, 1, 0, 3, 2)\n"
      "let sn = slice(v, 0, -3, 10, 2)\n"
      "let sm = slice(v, -1, 2, -2, 1)\n"
      "let ex = expand(r, [4, 2, 3])\n"
      "let em = expand(r, [2, -1])\n"
      "let rs = reshape(x, [3, -1])\n"
      "let rf = reshape(x, [6])\n"
      "let u1 = unsqueeze(x, 1)\n"
      "let un = unsqueeze(x, -1)\n"
      "let sq = squeeze(r, 0)\n"
      "let s2 = squeeze(unsqueeze(x, 2), -1)\n"
      "let ga = gather(x, 1, idx)\n"
      "let g2 = gather(v, 0, idx2)\n"
      "let sh = slice(x, 1, 1, 3, 9223372036854775807)\n"
      "output pe, sl, sn, sm, ex, em, rs, rf, u1, un, sq, s2, ga, g2, sh\n");
  struct S {
    const char* name;
    Shape shape;
    ViewResult expected;
  };
  const S want[] = {
      {"pe", {3, 2}, expand_permute({2, 3}, {1, 0})},
      {"sl", {2, 2}, expand_slice({2, 3}, 1, 0, 3, 2)},
      {"sn", {2}, expand_slice({10}, 0, 7, 10, 2)},
      {"sm", {6}, expand_slice({10}, 0, 2, 8, 1)},
      {"ex", {4, 2, 3}, expand_expand({1, 3}, {4, 2, 3})},
      {"em", {2, 3}, expand_expand({1, 3}, {2, 3})},
      {"rs", {3, 2}, expand_reshape({2, 3}, {3, 2})},
      {"rf", {6}, expand_reshape({2, 3}, {6})},
      {"u1", {2, 1, 3}, expand_unsqueeze({2, 3}, 1)},
      {"un", {2, 3, 1}, expand_unsqueeze({2, 3}, 2)},
      {"sq", {3}, expand_squeeze({1, 3}, 0)},
      {"s2", {2, 3}, expand_permute({2, 3}, {0, 1})},  // squeeze(unsqueeze(x)) is the identity, as a view of a view
      {"ga", {2, 4}, expand_gather({2, 3}, 1, "idx", {4})},
      {"g2", {2, 3}, expand_gather({10}, 0, "idx2", {2, 3})},
      {"sh", {2, 1}, expand_slice({2, 3}, 1, 1, 3, INT64_MAX)},  // one element; the step must not overflow
  };
  for (const S& s : want) {
    INFO(s.name);
    const Expr& e = bexpr(p, s.name);
    CHECK(e->type == tt(DType::F32, s.shape));
    REQUIRE(std::holds_alternative<ViewShape>(s.expected));
    const ViewShape& v = std::get<ViewShape>(s.expected);
    CHECK(v.shape == s.shape);
    if (std::string(s.name) != "s2") CHECK(as<ViewE>(e).map == v.map);
  }
  // Hand-checked maps.
  const IndexMap& pe = as<ViewE>(bexpr(p, "pe")).map;
  CHECK(is_var(pe.exprs[0], 1));
  CHECK(is_var(pe.exprs[1], 0));
  const IExpr& sn = as<ViewE>(bexpr(p, "sn")).map.exprs[0];  // 2*i + 7
  REQUIRE(sn->kind == IExprNode::Kind::Add);
  CHECK(sn->args[0]->kind == IExprNode::Kind::Mul);
  CHECK(sn->args[0]->value == 2);
  CHECK(is_iconst(sn->args[1], 7));
  const IndexMap& ex = as<ViewE>(bexpr(p, "ex")).map;  // (i0, i1, i2) -> (0, i2)
  REQUIRE(ex.exprs.size() == 2);
  CHECK(is_iconst(ex.exprs[0], 0));
  CHECK(is_var(ex.exprs[1], 2));
  const IndexMap& u1 = as<ViewE>(bexpr(p, "u1")).map;  // (i0, i1, i2) -> (i0, i2)
  CHECK(is_var(u1.exprs[0], 0));
  CHECK(is_var(u1.exprs[1], 2));
  const IndexMap& sq = as<ViewE>(bexpr(p, "sq")).map;  // (i0) -> (0, i0)
  CHECK(is_iconst(sq.exprs[0], 0));
  CHECK(is_var(sq.exprs[1], 0));
  const IndexMap& ga = as<ViewE>(bexpr(p, "ga")).map;  // (i0, i1) -> (i0, load(idx, i1))
  CHECK(is_var(ga.exprs[0], 0));
  REQUIRE(ga.exprs[1]->kind == IExprNode::Kind::Load);
  CHECK(ga.exprs[1]->name == "idx");
  CHECK(is_var(ga.exprs[1]->args[0], 1));
  // The sugar is a view of the operand.
  CHECK(as<NameE>(as<ViewE>(bexpr(p, "pe")).src).name == "x");
  const ViewE& s2 = as<ViewE>(bexpr(p, "s2"));
  CHECK(as<ViewE>(s2.src).src->type == tt(DType::F32, {2, 3}));
}

TEST_CASE("parser: comments and free whitespace", "[parser]") {
  const std::string a = "input x : f32[2]\nlet y = map(neg, x)\noutput y\n";
  const std::string b =
      "# leading comment\n\n  input   x:f32[ 2 ]   # trailing comment\n"
      "let y =\n  map(  # inside an expression\n neg ,\n\tx )\r\n"
      "# between statements\noutput y# at the end, no newline";
  const std::string c = "input x : f32[2] let y = map(neg, x) output y";
  Program pa = parse_ok(a), pb = parse_ok(b), pc = parse_ok(c);
  for (const Program* q : {&pb, &pc}) {
    REQUIRE(q->bindings.size() == 1);
    CHECK(q->inputs[0].type == pa.inputs[0].type);
    CHECK(expr_equal(q->bindings[0].expr, pa.bindings[0].expr));
    CHECK(q->outputs == pa.outputs);
  }
  // Locations count lines and columns after comments.
  CHECK(pb.inputs[0].loc.line == 3);
  CHECK(pb.inputs[0].loc.col == 11);
  CHECK(pb.bindings[0].loc.line == 4);
  // A '#' comments out the rest of the line only.
  Diag d = parse_bad("input x : f32[2] # let y = map(neg, x)\noutput y\n");
  CHECK(d.loc.line == 2);
  CHECK(d.message == "output 'y' is not defined");
}

TEST_CASE("parser: nested selects and long lambdas parse in linear time", "[parser]") {
  std::string s = "a";
  for (int i = 0; i < 200; ++i) s = "select(c, " + s + ", a)";
  std::string t = "a";
  for (int i = 0; i < 200; ++i) t = "add(" + t + ", mul(a, 2.0))";
  auto t0 = std::chrono::steady_clock::now();
  Program p = parse_ok("input x : f32[2]\ninput b : bool[2]\nlet z = map(fn(c, a) => " + s +
                       ", b, x)\nlet w = map(fn(a) => " + t + ", x)\noutput z, w\n");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 2.0 * stax::test::time_scale());
  CHECK(bexpr(p, "z")->type == tt(DType::F32, {2}));
  CHECK(as<MapE>(bexpr(p, "w")).fn.code.size() == 1 + 200 * 3);
}

TEST_CASE("parser: long programs parse in linear time", "[parser]") {
  auto program = [](int n) {
    std::string s = "input x0 : f32[2]\n";
    for (int i = 1; i < n; ++i) s += "let x" + std::to_string(i) + " = map(neg, x" + std::to_string(i - 1) + ")\n";
    s += "output x0";
    for (int i = 1; i < n; ++i) s += ", x" + std::to_string(i);
    return s + "\n";
  };
  auto seconds = [](const std::string& src) {
    double best = 1e9;
    for (int rep = 0; rep < 2; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      ParseResult r = parse_program(src);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      REQUIRE(std::holds_alternative<Program>(r));
    }
    return best;
  };
  const std::string small = program(5000), large = program(40000);
  double ts = seconds(small), tl = seconds(large);
  INFO("5000 bindings: " << ts << " s, 40000 bindings: " << tl << " s");
  // 8x the bindings: linear is ~8x the time, quadratic ~64x.
  CHECK(tl < 20 * ts + 0.05 * stax::test::time_scale());
  Program p = parse_ok(large);
  CHECK(p.bindings.size() == 39999);
  CHECK(p.outputs.size() == 40000);
}

TEST_CASE("parser: parse_file", "[parser]") {
  ParseResult missing = parse_file("/nonexistent/dir/no_such_file.stx");
  REQUIRE(std::holds_alternative<Diag>(missing));
  const Diag& d = std::get<Diag>(missing);
  CHECK(d.file == "/nonexistent/dir/no_such_file.stx");
  CHECK(d.loc.line == 0);
  CHECK_THAT(d.message, Catch::Contains("cannot open"));

  ParseResult dir = parse_file(std::filesystem::temp_directory_path().string());
  CHECK(std::holds_alternative<Diag>(dir));  // a directory is not a program

  const auto path = std::filesystem::temp_directory_path() / "stax_parser_test_file.stx";
  {
    std::ofstream out(path);
    out << "input x : f32[3]\nlet y = map(exp, x)\noutput y\n";
  }
  ParseResult ok = parse_file(path.string());
  REQUIRE(std::holds_alternative<Program>(ok));
  CHECK(std::get<Program>(ok).file == path.string());
  CHECK(std::get<Program>(ok).bindings.size() == 1);
  {
    std::ofstream out(path);
    out << "input x : f32[3]\nlet y = map(exp, z)\noutput y\n";
  }
  ParseResult bad = parse_file(path.string());
  REQUIRE(std::holds_alternative<Diag>(bad));
  CHECK(std::get<Diag>(bad).str() == path.string() + ":2:18: error: unknown name 'z'");
  std::filesystem::remove(path);
}
