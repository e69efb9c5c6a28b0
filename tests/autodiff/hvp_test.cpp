// Seed 5.7: Hessian-vector products forward over reverse (the JVP of the
// joint graph) and reverse over reverse (the joint graph of the joint
// graph): the Hessian built from n HVPs is symmetric and the two modes agree,
// in the Real domain up to MPFR's rounding (2^-(P-64)·scale). Planted wrong
// rules break one or the other.
#include "autodiff/hvp.h"
#include "tests/autodiff/ad_util.h"

using namespace stax;
using namespace stax::autodiff;

namespace {

HessianReport hessian(const compiler::Graph& g, const HvpOptions& o = {}) {
  auto r = hessians(g, adtest::primals(g, 11), o);
  if (auto* e = std::get_if<compiler::GraphError>(&r)) FAIL(e->str());
  return std::get<HessianReport>(r);
}

const char* kTanhMm = R"({
  "inputs": [{"name": "x", "dtype": "f64", "shape": [2, 3]}, {"name": "W", "dtype": "f64", "shape": [3, 3]}],
  "nodes": [{"name": "h", "op": "mm.default", "args": ["x", "W"]},
            {"name": "t", "op": "tanh.default", "args": ["h"]},
            {"name": "s", "op": "sigmoid.default", "args": ["t"]},
            {"name": "y", "op": "sum.default", "args": ["s"]}],
  "outputs": ["y"]})";

}  // namespace

TEST_CASE("Hessians by HVPs are symmetric and both modes agree", "[autodiff]") {
  for (const char* f : {"tests/autodiff/graphs/smooth_mlp.json", "tests/autodiff/graphs/erf_graph.json",
                        "tests/autodiff/graphs/ops_small.json"}) {
    INFO(f);
    HessianReport r = hessian(adtest::load(f));
    INFO(r.text());
    CHECK(r.symmetric);
    CHECK(r.agree);
    CHECK(r.forward_over_reverse.rows() == r.n);
    CHECK(r.forward_over_reverse.cwiseAbs().maxCoeff() > 0);  // not trivially zero
  }
  // A quadratic form: H of sum(x * (A x)) is A + A^T, exactly.
  compiler::Graph q = adtest::parse(R"({"inputs": [{"name": "x", "dtype": "f64", "shape": [3, 1]},
      {"name": "A", "dtype": "f64", "shape": [3, 3]}],
    "nodes": [{"name": "ax", "op": "mm.default", "args": ["A", "x"]}, {"name": "p", "op": "mul.Tensor", "args": ["x", "ax"]},
              {"name": "y", "op": "sum.default", "args": ["p"]}], "outputs": ["y"]})");
  HvpOptions o;
  o.wrt = {"x"};
  sem::Inputs in = adtest::primals(q, 3);
  auto r = hessians(q, in, o);
  REQUIRE(std::holds_alternative<HessianReport>(r));
  const HessianReport& h = std::get<HessianReport>(r);
  const sem::Tensor& A = in.at("A");
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      CHECK(h.forward_over_reverse(i, j) == A.as<double>()[i * 3 + j] + A.as<double>()[j * 3 + i]);
      CHECK(h.reverse_over_reverse(i, j) == A.as<double>()[i * 3 + j] + A.as<double>()[j * 3 + i]);
    }
}

TEST_CASE("wrong rules break Hessian symmetry or the agreement of the modes", "[autodiff]") {
  compiler::Graph g = adtest::parse(kTanhMm);
  HessianReport good = hessian(g);
  CHECK((good.symmetric && good.agree));
  SECTION("a wrong JVP rule (tanh' sign) in forward over reverse") {
    JvpRules rules = default_jvp_rules();
    rules["tanh.default"] = [](JvpContext& c) -> std::string {
      std::string sq = c.emit("mul.Tensor", {c.out(), c.out()});
      return c.emit("mul.Tensor", {c.tangent(0), c.emit("sub.Tensor", {sq, 1.0})});
    };
    HvpOptions o;
    o.jvp = &rules;
    HessianReport r = hessian(g, o);
    INFO(r.text());
    CHECK_FALSE((r.symmetric && r.agree));
  }
  SECTION("a wrong VJP rule (transposed matmul gradient): not a gradient field, H not symmetric") {
    VjpRules rules = default_vjp_rules();
    rules["mm.default"] = [](VjpContext& c) {
      if (c.wants(0)) c.give(0, c.emit("mm.default", {c.grad, c.arg(1)}));
      if (c.wants(1)) c.give(1, c.emit("t.default", {c.emit("mm.default", {c.emit("t.default", {c.arg(0)}), c.grad})}));
    };
    HvpOptions o;
    o.vjp = &rules;
    std::string square = kTanhMm;
    square.replace(square.find("[2, 3]"), 6, "[3, 3]");  // the planted rule is only well-shaped for squares
    HessianReport r = hessian(adtest::parse(square), o);
    INFO(r.text());
    CHECK_FALSE(r.symmetric);
  }
}
