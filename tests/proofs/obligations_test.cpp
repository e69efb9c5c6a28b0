// Index proof obligations (docs/design.md §5): every kind has a provable and a
// refutable case, and Example 6.3's two gathers get the verdicts the text
// gives them (g1 keeps its check, g2 is proved in range).
#include <catch2/catch.hpp>

#include <malloc.h>

#include <algorithm>

#include "proofs/obligation.h"
#include "semantics/expr_util.h"
#include "semantics/parser.h"
#include "semantics/program_obligations.h"
#include "semantics/value_range.h"
#include "semantics/views.h"
#include "transforms/index_simplify.h"
#include "transforms/passes.h"

#if defined(__SANITIZE_ADDRESS__)
#define STAX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STAX_ASAN 1
#endif
#endif
#ifdef STAX_ASAN
#include <sanitizer/allocator_interface.h>
#endif

using namespace stax;
using namespace stax::proofs;
using namespace stax::sem;
using K = ObligationKind;

namespace {

sem::Program parse(const std::string& text) {
  auto r = sem::parse_program(text);
  if (auto* d = std::get_if<sem::Diag>(&r)) FAIL(d->str());
  return std::get<sem::Program>(std::move(r));
}

struct Outcome {
  Obligation ob;
  ProofVerdict v;
};

std::vector<Outcome> prove_all(const sem::Program& p) {
  std::vector<Outcome> out;
  for (Obligation& ob : program_obligations(p)) {
    ProofVerdict v = discharge(ob);
    out.push_back({std::move(ob), std::move(v)});
  }
  return out;
}

std::vector<Outcome> of_kind(const std::vector<Outcome>& all, K k) {
  std::vector<Outcome> r;
  for (const Outcome& o : all)
    if (o.ob.kind == k) r.push_back(o);
  return r;
}

/// Bytes the heap has handed out and not had back (ASan's count under ASan).
size_t heap_in_use() {
#ifdef STAX_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

sem::IndexMap imap(std::vector<sem::IExpr> exprs, size_t nvars) {
  sem::IndexMap m;
  for (size_t v = 0; v < nvars; ++v) m.vars.push_back("i" + std::to_string(v));
  m.exprs = std::move(exprs);
  return m;
}

}  // namespace

TEST_CASE("in-bounds: a shifted view is proved, an off-by-one slice written as a raw view is refuted") {
  auto ok = prove_all(parse("input x : f32[5]\nlet y = view(x, [4], (i) -> (i + 1))\noutput y\n"));
  auto ib = of_kind(ok, K::InBounds);
  REQUIRE(ib.size() == 1);
  CHECK(ib[0].v.kind == ProofVerdict::Proved);

  auto bad = prove_all(parse("input x : f32[5]\nlet y = view(x, [5], (i) -> (i + 1))\noutput y\n"));
  ib = of_kind(bad, K::InBounds);
  REQUIRE(ib.size() == 1);
  INFO(ib[0].ob.formula << " / " << ib[0].v.counterexample);
  CHECK(ib[0].v.kind == ProofVerdict::Refuted);
  CHECK(contains(ib[0].v.counterexample, "i = 4"));
  CHECK(contains(ib[0].v.counterexample, "index = 5"));
  CHECK(ib[0].ob.if_not_proved == Consequence::Fails);
  // A stepped slice whose last element lands past the end.
  auto step = of_kind(prove_all(parse("input x : f32[10]\nlet y = view(x, [4], (i) -> (3*i + 1))\noutput y\n")),
                      K::InBounds);
  REQUIRE(step.size() == 1);
  CHECK(step[0].v.kind == ProofVerdict::Refuted);
  CHECK(contains(step[0].v.counterexample, "i = 3"));
}

TEST_CASE("the thread's solver, once released, is made afresh: verdicts are the same before and after") {
  const sem::Program ok = parse("input x : f32[5]\nlet y = view(x, [4], (i) -> (i + 1))\noutput y\n");
  const sem::Program bad = parse("input x : f32[5]\nlet y = view(x, [5], (i) -> (i + 1))\noutput y\n");
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    auto a = of_kind(prove_all(ok), K::InBounds);
    auto b = of_kind(prove_all(bad), K::InBounds);
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0].v.kind == ProofVerdict::Proved);
    CHECK(b[0].v.kind == ProofVerdict::Refuted);  // the wrong case
    CHECK(contains(b[0].v.counterexample, "index = 5"));
    release_thread_solver();
    release_thread_solver();  // twice: nothing left to free is no error
  }
}

TEST_CASE("release_thread_solver gives the heap back; the kept context holds on to it (what a fuzz target must not)") {
  const sem::Program p = parse("input x : f32[5]\nlet y = view(x, [4], (i) -> (i + 1))\noutput y\n");
  for (int i = 0; i < 2; ++i) {  // one-time state: statics, Z3's symbols for these names
    prove_all(p);
    release_thread_solver();
  }
  const size_t base = heap_in_use();
  prove_all(p);
  const size_t kept = heap_in_use();
  release_thread_solver();
  const size_t after = heap_in_use();
  INFO("base " << base << ", context kept " << kept << ", released " << after);
  CHECK(kept > base + (1u << 20));  // the wrong case: a context and solver left alive (~18 MB)
#ifdef STAX_ASAN
  CHECK(after == base);  // ASan counts exactly
#else
  // glibc's count includes the chunks its per-thread caches keep (a few KiB).
  CHECK(after <= base + (kept - base) / 100);
#endif
}

TEST_CASE("Example 6.3: g1 keeps its wrap and check, g2's (3*i) % 128 is proved in [0, 127]") {
  auto g2 = prove_all(parse(
      "input x : f32[128]\n"
      "let idx : i64[128] = map(fn(i) => mod(mul(i, 3), 128), iota(i64, [128], 0))\n"
      "let out : f32[128] = map(fn(a) => mul(a, 2.0), gather(x, 0, idx))\n"
      "output out\n"));
  auto ranges = value_ranges(parse("input x : f32[128]\n"
                                   "let idx : i64[128] = map(fn(i) => mod(mul(i, 3), 128), iota(i64, [128], 0))\n"
                                   "output idx\n"));
  CHECK(ranges["idx"].lo == 0);
  CHECK(ranges["idx"].hi == 127);
  CHECK_FALSE(ranges["idx"].from_memory);
  for (const Outcome& o : g2) {
    INFO(kind_name(o.ob.kind) << " " << o.ob.site << ": " << o.v.counterexample << o.v.reason);
    CHECK(o.v.kind == ProofVerdict::Proved);
  }
  auto gather = of_kind(g2, K::InBounds);
  REQUIRE(!gather.empty());
  CHECK(contains(gather[0].ob.facts.at(0), "[0, 127]"));

  auto g1 = prove_all(parse(
      "input x : f32[128]\ninput idx : i64[128]\n"
      "let out : f32[128] = map(fn(a) => mul(a, 2.0), gather(x, 0, idx))\noutput out\n"));
  bool found = false;
  for (const Outcome& o : of_kind(g1, K::InBounds)) {
    if (o.ob.site.rfind("view of x", 0) != 0) continue;  // not the load's own indices
    found = true;
    CHECK(o.v.kind == ProofVerdict::Refuted);  // the index comes from memory
    CHECK(o.ob.if_not_proved == Consequence::RuntimeCheck);
    CHECK(consequence_text(o.ob.if_not_proved) == "kept: runtime check");
    CHECK(contains(o.v.counterexample, "load(idx"));
  }
  CHECK(found);
}

TEST_CASE("int32: ordinary views are proved; a 2^31-element loop nest and a far address are refuted") {
  auto small = of_kind(prove_all(parse("input x : f32[64, 128]\nlet y = map(neg, permute(x, [1, 0]))\noutput y\n")),
                       K::Int32);
  REQUIRE(small.size() == 2);
  for (const Outcome& o : small) CHECK(o.v.kind == ProofVerdict::Proved);

  // 2^31 elements: the last address, 2^31 - 1, still fits; the iteration count does not.
  auto big = of_kind(
      prove_all(parse("input x : f32[2147483648]\nlet y = map(neg, view(x, [2147483648], (i) -> (i)))\noutput y\n")),
      K::Int32);
  REQUIRE(big.size() == 2);
  const Outcome* nest = nullptr;
  const Outcome* view = nullptr;
  for (const Outcome& o : big) (contains(o.ob.site, "loop nest") ? nest : view) = &o;
  REQUIRE(nest);
  REQUIRE(view);
  CHECK(nest->v.kind == ProofVerdict::Refuted);
  CHECK(contains(nest->v.counterexample, "2147483647"));
  CHECK(nest->ob.if_not_proved == Consequence::WideIndex);
  CHECK(view->v.kind == ProofVerdict::Proved);

  // Row 2 of a [3, 2^30] tensor starts at address 2^31.
  auto far = of_kind(prove_all(parse("input x : f32[3, 1073741824]\n"
                                     "let y = map(neg, view(x, [4], (i) -> (2, i)))\noutput y\n")),
                     K::Int32);
  const Outcome* addr = nullptr;
  for (const Outcome& o : far)
    if (contains(o.ob.site, "address")) addr = &o;
  REQUIRE(addr);
  CHECK(addr->v.kind == ProofVerdict::Refuted);
  CHECK(contains(addr->v.counterexample, "address = 21474836"));
}

TEST_CASE("affinity: a reshape of a contiguous tensor is affine, a reshape of its transpose is not") {
  auto ok = of_kind(prove_all(parse("input x : f32[4, 6]\nlet y = map(neg, reshape(x, [24]))\noutput y\n")),
                    K::Affinity);
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].v.kind == ProofVerdict::Proved);

  auto bad = of_kind(
      prove_all(parse("input x : f32[4, 6]\nlet y = map(neg, reshape(permute(x, [1, 0]), [24]))\noutput y\n")),
      K::Affinity);
  REQUIRE(bad.size() == 1);
  INFO(bad[0].ob.formula);
  CHECK(bad[0].v.kind == ProofVerdict::Refuted);
  CHECK(bad[0].ob.if_not_proved == Consequence::NotAffine);
  CHECK(contains(bad[0].v.counterexample, "address"));
}

TEST_CASE("affinity: the merge rule t_j = s_{j+1}·t_{j+1} for symbolic and concrete extents") {
  ProofVerdict sym = discharge(merge_rule_obligation({}), {10000, true});
  INFO(sym.reason);
  CHECK(sym.kind == ProofVerdict::Proved);
  MergeRuleGoal concrete;
  concrete.s_j = 3;
  concrete.s_j1 = 4;
  concrete.t_j1 = 5;
  CHECK(discharge(merge_rule_obligation(concrete)).kind == ProofVerdict::Proved);
  // A transposed pair: t_j = t_{j+1} + 1 breaks the relation.
  MergeRuleGoal off;
  off.offset = 1;
  ProofVerdict r = discharge(merge_rule_obligation(off), {10000, true});
  CHECK(r.kind == ProofVerdict::Refuted);
  CHECK(contains(r.counterexample, "s_j1"));
  MergeRuleGoal off_concrete = concrete;
  off_concrete.scale = 0;  // t_j = 0: the rows collapse
  CHECK(discharge(merge_rule_obligation(off_concrete)).kind == ProofVerdict::Refuted);
  // Every value concrete, as the lowering's policy asks (the linear case,
  // on the thread's shared solver), then a stride one off (t_j = 21 with
  // the premise t_j = s_j1·t_j1 + 1: inconsistent values would prove it
  // vacuously).
  MergeRuleGoal all = concrete;
  all.t_j = 20;
  CHECK(discharge(merge_rule_obligation(all)).kind == ProofVerdict::Proved);
  all.t_j = 21;
  all.offset = 1;
  ProofVerdict a = discharge(merge_rule_obligation(all));
  CHECK(a.kind == ProofVerdict::Refuted);
  CHECK(!a.counterexample.empty());
}

TEST_CASE("composition: compose_maps is proved equal to the maps in turn; a wrong offset is refuted") {
  // inner: slice(x, 0, 1, 9, 2) of x[16, 4]; outer: permute [1, 0] of the [4, 4] slice.
  sem::Shape base{16, 4}, middle{4, 4}, out{4, 4};
  sem::IndexMap inner = imap({sem::iadd(sem::imul(2, sem::ivar(0)), sem::iconst(1)), sem::ivar(1)}, 2);
  sem::IndexMap outer = imap({sem::ivar(1), sem::ivar(0)}, 2);
  sem::IndexMap composed = xform::simplify_map(sem::compose_maps(inner, outer), out);
  ProofVerdict v = discharge(composition_obligation("y", inner, base, outer, middle, out, composed));
  CHECK(v.kind == ProofVerdict::Proved);
  CHECK(discharge(composition_obligation("y", inner, base, outer, middle, out, composed, true)).kind ==
        ProofVerdict::Proved);

  sem::IndexMap wrong = composed;
  wrong.exprs[0] = sem::iadd(sem::imul(2, sem::ivar(1)), sem::iconst(2));  // offset 2 instead of 1
  ProofVerdict w = discharge(composition_obligation("y", inner, base, outer, middle, out, wrong));
  CHECK(w.kind == ProofVerdict::Refuted);
  CHECK(contains(w.counterexample, "composed(i)_0"));

  // A reshape's floor/mod simplified with the box: exact for the box,
  // refuted once the extents are symbolic.
  sem::IndexMap rs = std::get<sem::ViewShape>(sem::expand_reshape({4, 6}, {24})).map;
  sem::IndexMap back = std::get<sem::ViewShape>(sem::expand_reshape({24}, {4, 6})).map;
  sem::IndexMap both = xform::simplify_map(sem::compose_maps(rs, back), {4, 6});
  CHECK(discharge(composition_obligation("y", rs, {4, 6}, back, {24}, {4, 6}, both)).kind == ProofVerdict::Proved);
  CHECK(discharge(composition_obligation("y", rs, {4, 6}, back, {24}, {4, 6}, both, true)).kind ==
        ProofVerdict::Refuted);
}

TEST_CASE("loop merging (Prop. 6.3): addresses agree after a valid merge, not after a transposed one") {
  // y[i0, i1] = x[i0, i1], x : [4, 8]; merged m = 8·i0 + i1 reads x[m // 8, m % 8].
  sem::IndexMap before = imap({sem::ivar(0), sem::ivar(1)}, 2);
  sem::IndexMap after = imap({sem::ifloordiv(sem::ivar(0), 8), sem::imod(sem::ivar(0), 8)}, 1);
  CHECK(discharge(loop_merge_obligation("y", "access of x", before, after, {4, 8}, {4, 8}, 0)).kind ==
        ProofVerdict::Proved);
  // y[i0, i1] = x[i1, i0], x : [8, 4]: a_0 = 1 ≠ 8·a_1 = 32; the same merged form is wrong.
  sem::IndexMap transposed = imap({sem::ivar(1), sem::ivar(0)}, 2);
  sem::IndexMap after_t = imap({sem::ifloordiv(sem::ivar(0), 4), sem::imod(sem::ivar(0), 4)}, 1);
  ProofVerdict v = discharge(loop_merge_obligation("y", "access of x", transposed, after_t, {8, 4}, {4, 8}, 0));
  CHECK(v.kind == ProofVerdict::Refuted);
  CHECK(contains(v.counterexample, "address before"));
}

TEST_CASE("interval: iexpr_range is sound; tightness is reported; a wrong claim is refuted") {
  auto all = prove_all(parse("input x : f32[128]\nlet y = map(neg, view(x, [128], (i) -> ((3*i) % 128)))\noutput y\n"));
  auto iv = of_kind(all, K::Interval);
  REQUIRE(iv.size() == 1);
  CHECK(iv[0].v.kind == ProofVerdict::Proved);
  CHECK(contains(iv[0].v.reason, "exact min 0"));
  CHECK(contains(iv[0].v.reason, "exact max 127"));
  // i - i has the exact range [0, 0]; the interval is [-7, 7].
  Obligation loose;
  loose.kind = K::Interval;
  loose.domain = {{"i", 8}};
  sem::IExpr e = sem::isub(sem::ivar(0), sem::ivar(0));
  sem::Interval r = sem::iexpr_range(e, {8});
  loose.goal = IntervalGoal{e, int64_t(r.lo), int64_t(r.hi)};
  ProofVerdict lv = discharge(loose);
  CHECK(lv.kind == ProofVerdict::Proved);
  CHECK(contains(lv.reason, "loose by 7"));
  Obligation wrong = loose;
  wrong.goal = IntervalGoal{sem::imod(sem::imul(3, sem::ivar(0)), 16), 0, 14};
  ProofVerdict wv = discharge(wrong);
  CHECK(wv.kind == ProofVerdict::Refuted);
  CHECK(contains(wv.counterexample, "value = 15"));
}

TEST_CASE("floor division and modulo follow Python for negative operands") {
  // (i - 4) // 3 and (i - 4) % 3 over i in [0, 8): floor semantics give
  // [-2, 1] and [0, 2]; truncation would give a remainder of -1.
  Obligation ob;
  ob.kind = K::Interval;
  ob.domain = {{"i", 8}};
  sem::IExpr m = sem::imod(sem::isub(sem::ivar(0), sem::iconst(4)), 3);
  ob.goal = IntervalGoal{m, 0, 2};
  ProofVerdict v = discharge(ob);
  CHECK(v.kind == ProofVerdict::Proved);
  CHECK(contains(v.reason, "exact min 0"));
  sem::IExpr q = sem::ifloordiv(sem::isub(sem::ivar(0), sem::iconst(4)), 3);
  ob.goal = IntervalGoal{q, -2, 1};
  v = discharge(ob);
  CHECK(v.kind == ProofVerdict::Proved);
  CHECK(contains(v.reason, "exact min -2"));
}

TEST_CASE("a timeout is unknown with its time, never a verdict") {
  MergeRuleGoal g;
  g.offset = 0;
  ProofVerdict v = discharge(merge_rule_obligation(g), {1, true});  // 1 ms
  if (v.kind == ProofVerdict::Unknown) CHECK(contains(v.reason, "timeout"));
  CHECK(v.ms >= 0);
}

TEST_CASE("merge-loops and compose-views discharge their side conditions through the prover") {
  sem::Program p = parse(
      "input x : f32[4, 6]\ninput w : f32[6, 4]\n"
      "let a = map(neg, reshape(reshape(x, [24]), [6, 4]))\n"
      "let z = map(add, x, permute(w, [1, 0]))\n"
      "let m = map(neg, x)\n"
      "output a, z, m\n");
  ProofLog log;
  xform::Context ctx;
  xform::Result c = xform::compose_views(p, ctx);
  xform::Result m = xform::merge_loops(c.program, {}, ctx);
  int compositions = 0, merges = 0;
  for (const ProofRecord& r : log.records) {
    INFO(kind_name(r.obligation.kind) << " " << r.obligation.formula << " " << r.verdict.counterexample);
    CHECK(r.verdict.kind == ProofVerdict::Proved);
    compositions += r.obligation.kind == K::Composition;
    merges += r.obligation.kind == K::LoopMerge;
  }
  CHECK(compositions == 1);  // reshape ∘ reshape has floor/mod; permute alone is not composed
  CHECK(merges >= 1);  // m's access of x (a's reshape view is not structurally affine: refused earlier)
  // z's transposed access fails the stride condition before any proof is asked.
  bool refused_z = false;
  for (const std::string& l : ctx.log) refused_z = refused_z || l.find("refused z dims 0, 1: stride condition") != std::string::npos;
  CHECK(refused_z);
}
