// §5.2, 5.7: reverse and forward mode are the same linear map read two
// ways. The adjoint identity <u, J v> = <Jᵀ u, v> in the Real domain (MPFR)
// on example graphs, on every operator, and on generated random graphs; the
// full Jacobian by n JVPs equals the one by m VJPs (Proposition 5.2). Each
// check ships with deliberately wrong rules planted in a copy of the rule
// table, which it must catch with a counterexample.
#include <sstream>

#include "tests/autodiff/ad_util.h"

using namespace stax;
using namespace stax::autodiff;


namespace {

constexpr long kP = 256;

const char* kTanhGraph = R"({
  "inputs": [{"name": "x", "dtype": "f64", "shape": [3, 4]}, {"name": "w", "dtype": "f64", "shape": [4]}],
  "nodes": [{"name": "t", "op": "tanh.default", "args": ["x"]},
            {"name": "p", "op": "mul.Tensor", "args": ["t", "w"]},
            {"name": "y", "op": "sum.default", "args": ["p"]}],
  "outputs": ["y"]})";

/// x used by two nodes: its adjoint is the sum of two contributions.
const char* kTwiceGraph = R"({
  "inputs": [{"name": "x", "dtype": "f64", "shape": [5]}],
  "nodes": [{"name": "a", "op": "exp.default", "args": ["x"]},
            {"name": "b", "op": "sin.default", "args": ["x"]},
            {"name": "p", "op": "mul.Tensor", "args": ["a", "b"]},
            {"name": "y", "op": "sum.default", "args": ["p"]}],
  "outputs": ["y"]})";

const char* kSquareMm = R"({
  "inputs": [{"name": "x", "dtype": "f64", "shape": [4, 4]}, {"name": "W", "dtype": "f64", "shape": [4, 4]}],
  "nodes": [{"name": "h", "op": "mm.default", "args": ["x", "W"]},
            {"name": "t", "op": "tanh.default", "args": ["h"]},
            {"name": "y", "op": "sum.dim_IntList", "args": ["t", [1], false]}],
  "outputs": ["y"]})";

}  // namespace

TEST_CASE("adjoint identity on the example graphs and every operator", "[autodiff]") {
  for (const char* f : {"examples/graphs/example_5_1_forward.json", "examples/graphs/example_1_1.json",
                        "tests/autodiff/graphs/ops_small.json", "tests/autodiff/graphs/smooth_mlp.json",
                        "tests/autodiff/graphs/erf_graph.json"}) {
    INFO(f);
    compiler::Graph g = adtest::load(f);
    for (uint64_t seed : {1, 2}) {
      adtest::AdjointResult r = adtest::adjoint_check(g, seed, kP);
      INFO(r.str());
      CHECK(r.ok);
    }
  }
  // Only some inputs differentiated: the others get no gradient nodes.
  compiler::Graph g = adtest::load("examples/graphs/example_5_1_forward.json");
  GradOptions go;
  go.wrt = {"W"};
  JvpOptions jo;
  jo.wrt = {"W"};
  CHECK(adtest::adjoint_check(g, 3, kP, go, jo).ok);
}

TEST_CASE("adjoint identity on generated random graphs", "[autodiff]") {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    std::string text = adtest::random_graph(seed);
    INFO(text);
    compiler::Graph g = adtest::parse(text);
    adtest::AdjointResult r = adtest::adjoint_check(g, seed, kP);
    INFO(r.str());
    CHECK(r.ok);
    ++checked;
  }
  CHECK(checked == 25);
}

TEST_CASE("wrong VJP rules are caught by the adjoint identity", "[autodiff]") {
  auto caught = [](const char* what, const compiler::Graph& g, const GradOptions& go) {
    INFO(what);
    adtest::AdjointResult good = adtest::adjoint_check(g, 5, kP);
    INFO("correct rules: " << good.str());
    CHECK(good.ok);
    adtest::AdjointResult bad = adtest::adjoint_check(g, 5, kP, go);
    INFO("wrong rule, counterexample at seed 5: " << bad.str());
    CHECK_FALSE(bad.ok);
    WARN(what << " -> counterexample: " << bad.str());
  };
  VjpRules rules = default_vjp_rules();
  GradOptions go;
  go.rules = &rules;

  SECTION("tanh' with its sign flipped") {
    rules["tanh.default"] = [](VjpContext& c) {
      std::string sq = c.emit("mul.Tensor", {c.out(), c.out()});
      c.give(0, c.emit("mul.Tensor", {c.grad, c.emit("sub.Tensor", {sq, 1.0})}));
    };
    caught("tanh sign flip", adtest::parse(kTanhGraph), go);
  }
  SECTION("a value used twice keeps only one contribution") {
    go.accumulate = [](Emitter&, const std::vector<std::string>& cs) { return cs.back(); };
    caught("missing accumulation", adtest::parse(kTwiceGraph), go);
  }
  SECTION("the matmul gradients transposed") {
    rules["mm.default"] = [](VjpContext& c) {
      if (c.wants(0)) c.give(0, c.emit("mm.default", {c.arg(1), c.emit("t.default", {c.grad})}));
      if (c.wants(1)) c.give(1, c.emit("mm.default", {c.emit("t.default", {c.grad}), c.arg(0)}));
    };
    caught("transposed matmul gradient", adtest::parse(kSquareMm), go);
  }
  SECTION("gelu_backward with Phi(h) but without h*phi(h)") {
    rules["gelu.default"] = [](VjpContext& c) {
      std::string s = c.emit("mul.Scalar", {c.arg(0), 0.7071067811865476});
      std::string p = c.emit("add.Scalar", {c.emit("erf.default", {s}), 1.0});
      c.give(0, c.emit("mul.Tensor", {c.grad, c.emit("mul.Scalar", {p, 0.5})}));
    };
    caught("gelu without h*phi", adtest::load("examples/graphs/example_5_1_forward.json"), go);
  }
}

TEST_CASE("a wrong JVP rule is caught by the adjoint identity", "[autodiff]") {
  JvpRules rules = default_jvp_rules();
  rules["mm.default"] = [](JvpContext& c) -> std::string {  // drops the d(W) term
    return c.tangent(0).empty() ? "" : c.emit("mm.default", {c.tangent(0), c.arg(1)});
  };
  JvpOptions jo;
  jo.rules = &rules;
  compiler::Graph g = adtest::parse(kSquareMm);
  CHECK(adtest::adjoint_check(g, 9, kP).ok);
  CHECK_FALSE(adtest::adjoint_check(g, 9, kP, {}, jo).ok);
}

TEST_CASE("Proposition 5.2: the Jacobian by n JVPs equals the one by m VJPs", "[autodiff]") {
  compiler::Graph g = adtest::load("tests/autodiff/graphs/smooth_mlp.json");
  JacobianOptions jo;
  auto r = jacobians(g, adtest::primals(g, 4), jo);
  REQUIRE(std::holds_alternative<JacobianReport>(r));
  const JacobianReport& rep = std::get<JacobianReport>(r);
  WARN(rep.text());
  CHECK(rep.equal);
  CHECK(rep.n == 52);
  CHECK(rep.m == 35);
  CHECK(rep.by_jvp.rows() == 35);
  CHECK(rep.by_jvp.cols() == 52);
  // Forward mode costs n·W, reverse mode m·W: here n > m, so reverse is cheaper.
  CHECK(rep.n * rep.w_jvp > rep.m * rep.w_vjp);

  // The wrong matmul rule makes the two Jacobians differ.
  VjpRules rules = default_vjp_rules();
  rules["mm.default"] = [](VjpContext& c) {
    if (c.wants(0)) c.give(0, c.emit("mm.default", {c.grad, c.emit("t.default", {c.arg(1)})}));
    // the gradient for the right operand is dropped
  };
  jo.vjp = &rules;
  auto bad = jacobians(g, adtest::primals(g, 4), jo);
  REQUIRE(std::holds_alternative<JacobianReport>(bad));
  CHECK_FALSE(std::get<JacobianReport>(bad).equal);
}
