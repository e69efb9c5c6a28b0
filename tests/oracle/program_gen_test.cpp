#include "oracle/gen/program_gen.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <variant>

#include "semantics/evaluator.h"
#include "semantics/parser.h"
#include "semantics/printer.h"
#include "semantics/random_inputs.h"
#include "tests/test_util.h"

using namespace stax;
using stax::test::parse_ok;

namespace {

constexpr uint64_t kSeeds = 2000;

/// Counts sub-expression shapes the transforms rewrite.
struct Shapes {
  int map_of_map = 0, view_of_view = 0, let_in = 0, red_of_permute = 0;
  void walk(const sem::Expr& e) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, sem::MapE>) {
            for (const sem::Expr& a : x.args) {
              if (std::holds_alternative<sem::MapE>(a->p)) ++map_of_map;
              walk(a);
            }
          } else if constexpr (std::is_same_v<T, sem::ViewE>) {
            if (std::holds_alternative<sem::ViewE>(x.src->p)) ++view_of_view;
            walk(x.src);
          } else if constexpr (std::is_same_v<T, sem::RedE>) {
            if (std::holds_alternative<sem::ViewE>(x.src->p)) ++red_of_permute;
            walk(x.src);
          } else if constexpr (std::is_same_v<T, sem::LetE>) {
            ++let_in;
            walk(x.value);
            walk(x.body);
          }
        },
        e->p);
  }
};

/// Bindings that no output reaches.
int dead_bindings(const sem::Program& p) {
  std::set<std::string> live(p.outputs.begin(), p.outputs.end());
  int dead = 0;
  for (size_t i = p.bindings.size(); i-- > 0;) {
    const sem::Binding& b = p.bindings[i];
    if (!live.count(b.name)) {
      ++dead;
      continue;
    }
    std::vector<std::string> names;
    sem::collect_free_names(b.expr, names);
    live.insert(names.begin(), names.end());
  }
  return dead;
}

bool has_duplicate_binding(const sem::Program& p) {
  for (size_t i = 0; i < p.bindings.size(); ++i)
    for (size_t j = i + 1; j < p.bindings.size(); ++j)
      if (sem::expr_equal(p.bindings[i].expr, p.bindings[j].expr)) return true;
  return false;
}

size_t count(const std::string& s, const std::string& w) {
  size_t n = 0;
  for (size_t pos = s.find(w); pos != std::string::npos; pos = s.find(w, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("program_gen: the same seed gives the same text, different seeds differ") {
  for (uint64_t seed : {0ull, 1ull, 42ull, 123456789ull, ~0ull}) {
    std::string a = oracle::generate_program_text(seed);
    CHECK(a == oracle::generate_program_text(seed));
    CHECK(sem::print_program(oracle::generate_program(seed)) == sem::print_program(parse_ok(a)));
  }
  std::set<std::string> texts;
  for (uint64_t seed = 0; seed < 200; ++seed) texts.insert(oracle::generate_program_text(seed));
  CHECK(texts.size() == 200);
  // The options change the programs.
  oracle::GenOptions small;
  small.max_bindings = 2;
  CHECK(oracle::generate_program_text(7, small) != oracle::generate_program_text(7));
}

TEST_CASE("program_gen: 2000 programs parse, print to a fixed point, evaluate; coverage") {
  auto t0 = std::chrono::steady_clock::now();
  std::string all;  // every printed program
  int bottom = 0, dead = 0, dup = 0, several_outputs = 0;
  Shapes shapes;
  int64_t max_elements = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::string text = oracle::generate_program_text(seed);
    sem::Program p = parse_ok(text);
    std::string printed = sem::print_program(p);
    sem::Program q = parse_ok(printed);
    REQUIRE(sem::print_program(q) == printed);
    all += printed;

    sem::Inputs in = sem::random_inputs(p, seed);
    REQUIRE(!sem::check_inputs(p, in));
    sem::IeeeOutcome out = sem::eval_ieee(p, in);
    if (out.failure) {
      ++bottom;
    } else {
      REQUIRE(out.outputs.size() == p.outputs.size());
      for (const std::string& o : p.outputs) {
        const sem::TensorType* ty = p.type_of(o);
        REQUIRE(ty);
        CHECK(out.outputs.at(o)->dtype == ty->dtype);
        CHECK(out.outputs.at(o)->shape == ty->shape);
      }
    }
    for (const sem::Input& i : p.inputs) max_elements = std::max(max_elements, sem::num_elements(i.type.shape));
    for (const sem::Binding& b : p.bindings) {
      max_elements = std::max(max_elements, sem::num_elements(b.expr->type.shape));
      shapes.walk(b.expr);
    }
    dead += dead_bindings(p) > 0;
    dup += has_duplicate_binding(p);
    several_outputs += p.outputs.size() > 1;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double frac = double(bottom) / double(kSeeds);
  std::printf(
      "program_gen: %llu programs in %.2f s; bottom %d (%.1f%%); with dead bindings %d, duplicate bindings %d, "
      "several outputs %d; map-of-map %d, view-of-view %d, let-in %d, red-of-view %d; max elements %lld\n",
      (unsigned long long)kSeeds, secs, bottom, 100 * frac, dead, dup, several_outputs, shapes.map_of_map,
      shapes.view_of_view, shapes.let_in, shapes.red_of_permute, (long long)max_elements);

  // Both outcomes occur, ⊥ in a minority.
  CHECK(frac >= 0.01);
  CHECK(frac <= 0.40);
  // The shapes the exact transforms rewrite occur often.
  CHECK(dead >= int(kSeeds / 10));
  CHECK(dup >= int(kSeeds / 20));
  CHECK(several_outputs >= int(kSeeds / 10));
  CHECK(shapes.map_of_map >= int(kSeeds / 10));
  CHECK(shapes.view_of_view >= int(kSeeds / 10));
  CHECK(shapes.let_in >= int(kSeeds / 10));
  CHECK(shapes.red_of_permute >= int(kSeeds / 20));
  CHECK(max_elements <= 300);

  // Coverage, by substring of the printed texts.
  for (int i = 0; i <= int(sem::ScalarOp::Fma); ++i) {
    std::string name(sem::op_name(sem::ScalarOp(i)));
    INFO("scalar op " << name);
    CHECK(count(all, name + "(") + count(all, "map(" + name + ",") > 0);
  }
  for (const char* r : {"sum", "prod", "max", "min", "argmax", "argmin"}) {
    INFO("red op " << r);
    CHECK(count(all, std::string("red(") + r + ",") > 0);
  }
  for (const char* t : {"f32", "f64", "f16", "bf16", "i32", "i64", "bool"}) {
    INFO("dtype " << t);
    CHECK(count(all, std::string(": ") + t + "[") > 0);
  }
  for (const char* v : {"permute", "slice", "expand", "reshape", "unsqueeze", "gather", "view", "iota", "full"}) {
    INFO("view keyword " << v);
    CHECK(count(all, std::string(v) + "(") > 0);
  }
  CHECK(count(all, "squeeze(") > count(all, "unsqueeze("));  // plain squeeze too
  CHECK(count(all, "load(") > 0);                           // indirect loads outside gather sugar
  CHECK(count(all, " // ") > 0);                            // floor/mod index maps
  CHECK(count(all, " % ") > 0);
  CHECK(count(all, "cast(") > 0);
  for (const char* c : {"-0.0", "-inf", ", inf", "0.5", "2.0", "0.001", "1e+30"}) {
    INFO("constant " << c);
    CHECK(count(all, c) > 0);
  }
}

TEST_CASE("program_gen: the options restrict what is generated") {
  oracle::GenOptions o;
  o.allow_half = false;
  o.allow_int = false;
  o.allow_gather = false;
  o.allow_reduce = false;
  o.allow_let_in = false;
  o.max_rank = 2;
  o.max_extent = 4;
  int bottom = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    std::string text = oracle::generate_program_text(seed, o);
    INFO(text);
    sem::Program p = oracle::generate_program(seed, o);
    for (const char* w : {"f16", "i32", "i64", "red(", "gather(", "load(", " in "}) CHECK(text.find(w) == std::string::npos);
    for (const sem::Input& i : p.inputs) {
      CHECK(i.type.shape.size() <= 2);
      for (int64_t d : i.type.shape) CHECK(d <= 4);
    }
    bottom += sem::eval_ieee(p, sem::random_inputs(p, seed)).failure.has_value();
  }
  CHECK(bottom == 0);  // nothing may fail without int division or indirect loads

  oracle::GenOptions big;
  big.max_bindings = 12;
  big.max_rank = 4;
  big.max_lambda_depth = 5;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    sem::Program p = oracle::generate_program(seed, big);
    CHECK(p.bindings.size() <= 12 + 1);  // a risky gather binds its index too
    (void)sem::eval_ieee(p, sem::random_inputs(p, seed));
  }
}
