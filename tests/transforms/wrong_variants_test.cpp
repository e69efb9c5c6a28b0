// Deliberately wrong variants of every transform, kept in the test tree (not
// in the product): the oracle must reject each with a counterexample, while
// the real transform on the same program verifies.
#include <catch2/catch.hpp>

#include "oracle/checker.h"
#include "proofs/program_equiv.h"
#include "semantics/expr_util.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "tests/test_util.h"
#include "transforms/index_simplify.h"
#include "transforms/passes.h"

using namespace stax;
using namespace stax::sem;
using xform::SemClass;

namespace {

/// stax::test::parse_ok as file <test>.
Program parse(const std::string& s) { return stax::test::parse_ok(s, "<test>"); }

oracle::Verdict check(const Program& src, const Program& tgt, SemClass cls) {
  return oracle::check_programs(src, tgt, cls, {24, 5});
}

/// The prover alone refutes the wrong variant too, with inputs
/// the interpreter reproduces: not only the input generators find it.
void require_refuted_by_prover(const Program& src, const Program& tgt, SemClass cls) {
  if (cls == SemClass::Real) return;  // the prover judges exact and refines
  auto confirm = [&](const Inputs& in) { return oracle::compare_on(src, tgt, cls, in).has_value(); };
  proofs::EquivResult r = proofs::prove_equivalent(
      src, tgt, cls == SemClass::Exact ? proofs::Relation::Exact : proofs::Relation::Refines, {}, confirm);
  INFO("prover: " << sem::verdict_name(r.verdict.kind) << " " << r.verdict.reason);
  REQUIRE(r.verdict.kind == sem::ProofVerdict::Refuted);
  CHECK(oracle::compare_on(src, tgt, cls, r.counterexample));
}

void require_rejected(const Program& src, const Program& tgt, SemClass cls) {
  require_refuted_by_prover(src, tgt, cls);
  oracle::Verdict v = check(src, tgt, cls);
  INFO(oracle::format_verdict(v, src, tgt, "wrong variant"));
  REQUIRE(v.status == oracle::Status::Counterexample);
  // The report is Alive2-style: it names the programs and, for values, both bits.
  std::string text = oracle::format_verdict(v, src, tgt, "wrong variant");
  CHECK_THAT(text, Catch::Contains("source program:") && Catch::Contains("target program:"));
  if (v.cex && !v.cex->output.empty()) CHECK_THAT(text, Catch::Contains("source:") && Catch::Contains("target:"));
}

xform::Result run(const Program& p, const std::string& spec) {
  xform::Context ctx;
  return xform::run_pipeline(p, std::get<std::vector<xform::Step>>(xform::parse_pipeline(spec)), ctx);
}

void require_verified(const Program& p, const std::string& spec) {
  xform::Result r = run(p, spec);
  oracle::Verdict v = check(p, r.program, r.cls);
  INFO(oracle::format_verdict(v, p, r.program, spec));
  REQUIRE(v.status == oracle::Status::Verified);
}

Expr& binding(Program& p, const std::string& n) {
  for (Binding& b : p.bindings)
    if (b.name == n) return b.expr;
  FAIL("no binding " << n);
  static Expr none;
  return none;
}

}  // namespace

TEST_CASE("fuse-maps that drops the bf16 rounding is rejected") {
  Program p = parse("input x : bf16[16]\nlet y = map(fn(a) => mul(a, 3.0), map(fn(a) => div(a, 3.0), x))\noutput y\n");
  require_verified(p, "fuse-maps");
  Program t = p;
  const auto& g = std::get<MapE>(binding(t, "y")->p);
  const auto& f = std::get<MapE>(g.args[0]->p);
  Lambda fused = sem::compose_lambda(g.fn, 0, f.fn, std::nullopt);  // wrong: no cast(.., bf16)
  binding(t, "y") = make_expr(binding(t, "y")->type, MapE{fused, f.args});
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("fuse-maps that forgets the view on the fused operands is rejected") {
  Program p = parse("input x : f32[6, 6]\nlet y = map(neg, permute(map(exp, x), [1, 0]))\noutput y\n");
  require_verified(p, "fuse-maps");
  Program t = p;
  const auto& g = std::get<MapE>(binding(t, "y")->p);
  const auto& f = std::get<MapE>(std::get<ViewE>(g.args[0]->p).src->p);
  binding(t, "y") = make_expr(binding(t, "y")->type, MapE{sem::compose_lambda(g.fn, 0, f.fn, std::nullopt), f.args});
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("cse that merges two rand nodes is rejected") {
  Program p = parse(
      "input x : f32[8]\nlet a = map(mul, x, rand(f32, [8], 1))\nlet b = map(mul, x, rand(f32, [8], 2))\n"
      "let c = map(sub, a, b)\noutput c\n");
  require_verified(p, "cse");
  Program t = p;  // wrong: b "equals" a when rand keys are ignored
  t.bindings.erase(t.bindings.begin() + 1);
  binding(t, "c") = sem::rename(binding(t, "c"), "b", "a");
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("cse that ignores lambda constants is rejected") {
  Program p = parse(
      "input x : f32[8]\nlet a = map(fn(v) => add(v, 1.0), x)\nlet b = map(fn(v) => add(v, 2.0), x)\n"
      "let c = map(mul, a, b)\noutput c\n");
  require_verified(p, "cse");
  Program t = p;
  t.bindings.erase(t.bindings.begin() + 1);
  binding(t, "c") = sem::rename(binding(t, "c"), "b", "a");
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("compose-views with an off-by-one offset is rejected") {
  Program p = parse("input x : f32[8, 6]\nlet y = map(neg, slice(permute(x, [1, 0]), 1, 1, 8, 2))\noutput y\n");
  require_verified(p, "compose-views");
  Program t = run(p, "compose-views").program;
  const auto& m = std::get<MapE>(binding(t, "y")->p);
  const auto& v = std::get<ViewE>(m.args[0]->p);
  IndexMap wrong = v.map;
  wrong.exprs[0] = iadd(wrong.exprs[0], iconst(1));  // wrong offset
  Expr view = make_expr(m.args[0]->type, ViewE{v.src, wrong});
  binding(t, "y") = make_expr(binding(t, "y")->type, MapE{m.fn, {view}});
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("compose-views that composes in the wrong order is rejected") {
  Program p = parse("input x : f32[3, 3, 3]\nlet y = map(neg, permute(permute(x, [1, 2, 0]), [0, 2, 1]))\noutput y\n");
  require_verified(p, "compose-views");
  Program t = p;
  const auto& m = std::get<MapE>(binding(t, "y")->p);
  const auto& outer = std::get<ViewE>(m.args[0]->p);
  const auto& inner = std::get<ViewE>(outer.src->p);
  IndexMap wrong = sem::compose_maps(outer.map, inner.map);  // swapped
  Expr view = make_expr(m.args[0]->type, ViewE{inner.src, wrong});
  binding(t, "y") = make_expr(binding(t, "y")->type, MapE{m.fn, {view}});
  require_rejected(p, t, SemClass::Exact);
}

namespace {
// Merges dims 0, 1 of a map over one permuted input using the address formula
// a_1·m, without checking a_0 = s_1·a_1 (wrong variant), or with the wrong divisor.
Program merge_unchecked(const Program& p, bool wrong_divisor) {
  Program t = p;
  Expr& e = binding(t, "y");
  const auto& m = std::get<MapE>(e->p);
  const auto& v = std::get<ViewE>(m.args[0]->p);
  Shape s = e->type.shape;
  Shape merged = {s[0] * s[1]};
  IndexMap nm;
  nm.vars = {"m"};
  if (wrong_divisor) {
    for (const IExpr& c : v.map.exprs)
      nm.exprs.push_back(sem::substitute_vars(c, {ifloordiv(ivar(0), s[0]), imod(ivar(0), s[1])}));
  } else {
    auto af = *as_affine(v.map, 2);
    const Shape& sx = v.src->type.shape;
    int64_t a1 = af.a[0][1] * sx[1] + af.a[1][1];  // address coefficient of i1
    IExpr addr = imul(a1, ivar(0));
    nm.exprs = {ifloordiv(addr, sx[1]), imod(addr, sx[1])};
  }
  Expr view = make_expr({v.src->type.dtype, merged}, ViewE{v.src, nm});
  Expr kernel = make_expr({e->type.dtype, merged}, MapE{m.fn, {view}});
  t.bindings.insert(t.bindings.begin(), Binding{"y_m", kernel, {}});  // invalidates `e`
  binding(t, "y") = parse("input y_m : f32[" + std::to_string(merged[0]) + "]\nlet y = reshape(y_m, [" + std::to_string(s[0]) + ", " +
            std::to_string(s[1]) + "])\noutput y\n")
          .bindings[0]
          .expr;
  return t;
}
}  // namespace

TEST_CASE("merge-loops that ignores the stride condition is rejected") {
  Program p = parse("input x : f32[6, 4]\nlet y : f32[4, 6] = map(neg, permute(x, [1, 0]))\noutput y\n");
  require_verified(p, "merge-loops");
  // The real transform refuses (the program is unchanged).
  CHECK(print_program(run(p, "merge-loops").program) == print_program(p));
  require_rejected(p, merge_unchecked(p, false), SemClass::Exact);
}

TEST_CASE("merge-loops with the wrong divisor is rejected") {
  Program p = parse("input x : f32[4, 6]\nlet y : f32[4, 6] = map(neg, permute(permute(x, [1, 0]), [1, 0]))\noutput y\n");
  require_verified(p, "compose-views,merge-loops");
  require_rejected(p, merge_unchecked(p, true), SemClass::Exact);
}

TEST_CASE("dce of a failing binding claimed exact is rejected") {
  Program p = parse(
      "input x : f32[8]\ninput n : i32[8]\nlet dead : i32[8] = map(fn(a) => floordiv(100, a), n)\n"
      "let y = map(exp, x)\noutput y\n");
  xform::Result r = run(p, "dce");
  CHECK(r.cls == SemClass::Refines);  // the real transform says refines...
  REQUIRE(check(p, r.program, r.cls).status == oracle::Status::Verified);
  require_rejected(p, r.program, SemClass::Exact);  // ...and claiming exact is caught
}

TEST_CASE("dce that ignores uses in index loads is rejected") {
  Program p = parse(
      "input x : f32[8]\nlet idx = map(fn(i) => mod(mul(i, 3), 8), iota(i64, [8], 0))\n"
      "let y = map(neg, gather(x, 0, idx))\noutput y\n");
  require_verified(p, "dce");
  Program t = p;
  t.bindings.erase(t.bindings.begin());  // wrong: idx is live through load(idx, ...)
  oracle::Verdict v = check(p, t, SemClass::Exact);
  REQUIRE(v.status == oracle::Status::Counterexample);
  CHECK_THAT(v.message, Catch::Contains("malformed") && Catch::Contains("unknown name 'idx'"));
}

TEST_CASE("inline that substitutes the wrong binding is rejected") {
  Program p = parse(
      "input x : f32[8]\nlet a = map(exp, x)\nlet b = map(neg, x)\nlet c = map(add, b, x)\noutput c\n");
  require_verified(p, "inline");
  Program t = p;
  binding(t, "c") = sem::substitute(binding(t, "c"), "b", binding(t, "a"));  // wrong expression
  t.bindings.erase(t.bindings.begin() + 1);
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("inline that drops a view is rejected") {
  Program p = parse("input x : f32[5, 5]\nlet a = permute(x, [1, 0])\nlet c = map(exp, a)\noutput c\n");
  require_verified(p, "inline");
  Program t = p;
  binding(t, "c") = sem::substitute(binding(t, "c"), "a", make_expr(p.inputs[0].type, NameE{"x"}));
  t.bindings.erase(t.bindings.begin());
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("realize into a narrower buffer (bf16 storage of an f32 value) is rejected") {
  Program p = parse("input x : f32[16]\nlet y = map(fn(a) => mul(a, 3.0), map(fn(a) => div(a, 7.0), x))\noutput y\n");
  require_verified(p, "realize");
  Program t = parse(
      "input x : f32[16]\nlet r : bf16[16] = map(fn(a) => cast(div(a, 7.0), bf16), x)\n"
      "let y = map(fn(a) => mul(cast(a, f32), 3.0), r)\noutput y\n");
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("realize that puts the name in the wrong operand is rejected") {
  Program p = parse("input x : f32[8]\ninput z : f32[8]\nlet y = map(sub, map(exp, x), z)\noutput y\n");
  require_verified(p, "realize:binding=y:index=0");
  Program t = parse(
      "input x : f32[8]\ninput z : f32[8]\nlet r0 = map(exp, x)\nlet y = map(sub, z, r0)\noutput y\n");
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("normalize with a fusion that drops f16 rounding is rejected") {
  Program p = parse("input x : f16[4, 4]\nlet y = map(fn(a) => sub(a, 0.1), permute(map(fn(a) => mul(a, 1.1), x), [1, 0]))\noutput y\n");
  require_verified(p, "normalize");
  Program t = parse(
      "input x : f16[4, 4]\nlet y = map(fn(a) => sub(mul(a, 1.1), 0.1), permute(x, [1, 0]))\noutput y\n");
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("normalize that hoists a let-in with the wrong name is rejected") {
  Program p = parse("input w : f32[16]\ninput v : f32[16]\nlet z = let t = map(relu, w) in map(add, t, v)\noutput z\n");
  require_verified(p, "normalize");
  Program t = parse("input w : f32[16]\ninput v : f32[16]\nlet t_0 = map(relu, w)\nlet z = map(add, w, v)\noutput z\n");
  require_rejected(p, t, SemClass::Exact);
}

TEST_CASE("tv checks the interface of programs from outside") {
  Program p = parse("input x : f32[8]\nlet y = map(exp, x)\noutput y\n");
  Program renamed = parse("input x : f32[8]\nlet z = map(exp, x)\noutput z\n");
  Program retyped = parse("input x : f64[8]\nlet y = map(exp, x)\noutput y\n");
  oracle::Verdict a = check(p, renamed, SemClass::Exact);
  CHECK(a.status == oracle::Status::Counterexample);
  CHECK_THAT(a.message, Catch::Contains("outputs differ"));
  oracle::Verdict b = check(p, retyped, SemClass::Exact);
  CHECK_THAT(b.message, Catch::Contains("input 'x' is f32[8] in the source but f64[8]"));
  CHECK(check(p, p, SemClass::Exact).status == oracle::Status::Verified);
  CHECK(check(p, p, SemClass::Real).status == oracle::Status::Verified);  // class real is checkable (docs/design.md §4)
}

TEST_CASE("a failing pipeline is bisected to its first bad rewrite") {
  // fuse-maps is exact; a correct pipeline has no failing rewrite to report.
  Program p = parse("input x : f32[8]\nlet a = map(exp, x)\nlet y = map(neg, a)\noutput y\n");
  auto steps = std::get<std::vector<xform::Step>>(xform::parse_pipeline("inline,fuse-maps"));
  oracle::Verdict v = oracle::check_transform(p, steps, {8, 1});
  CHECK(v.status == oracle::Status::Verified);
  CHECK_FALSE(v.rewrite.has_value());
}
