// The derivative rules against the true derivative: J·v from forward mode
// equals the central difference (f(x + h v) − f(x − h v)) / 2h computed in the
// Real domain at P = 1024 bits with h = 2^-300; the kinks follow PyTorch's
// convention; Theorem 5.1's op-count ratio holds on the lowered programs.
// Each check ships with a deliberately wrong rule that it must catch.
#include <functional>

#include "tests/autodiff/ad_util.h"

using namespace stax;
using namespace stax::autodiff;
using nlohmann::json;

namespace {

constexpr long kP = 1024;
constexpr int kHExp = -300;  // h = 2^-300

struct CdResult {
  bool ok = false;
  double max_diff = 0, scale = 0;
};

/// J·v (forward mode) against the central difference, both at P = 1024 bits:
/// the truncation error is h²/6·|f'''|·|v|³ ≈ 2^-600 and the rounding error
/// 2^-1024/h ≈ 2^-724 (times modest factors), so they agree to 2^-`bits`·scale
/// with bits = 500 — unless a rule uses an f64-rounded irrational constant
/// (erf' = 2/√π·exp(−x²), gelu's c/√π, 1/ln 2, 1/ln 10: relative error ≤
/// 2^-53), where the graph is checked at bits = 40, what those constants
/// allow. A wrong rule is off by O(1).
CdResult central_difference_check(const compiler::Graph& g, uint64_t seed, int bits, const JvpOptions& jo = {}) {
  auto jv = build_jvp_graph(g, jo);
  if (auto* e = std::get_if<compiler::GraphError>(&jv)) FAIL(e->str());
  const JvpGraph& J = std::get<JvpGraph>(jv);
  std::vector<std::string> outs;
  compiler::Graph cd = adtest::central_difference_graph(g, outs, kHExp);
  sem::Inputs x = adtest::primals(g, seed), xj = x, xc = x;
  sem::Rng rng(seed * 31 + 7);
  sem::Program fwd = adtest::eager(g);
  for (const auto& in : g.inputs) {
    if (!sem::is_float(in.type.dtype)) continue;
    sem::Tensor v = adtest::normal_tensor(in.type, rng);
    xc[in.name + "__v"] = v;
    for (size_t k = 0; k < J.wrt.size(); ++k)
      if (J.wrt[k] == in.name) xj[J.tangents[k]] = v;
  }
  sem::RealOutcome a = adtest::run_real(J.graph, xj, kP);
  sem::RealOutcome b = adtest::run_real(cd, xc, kP);
  sem::RVal diff(kP), maxd(kP), scale(kP), t(kP);
  mpfr_set_ui(scale.f, 1, MPFR_RNDN);
  for (const std::string& o : outs) {
    size_t j = 0;
    while (J.forward_outputs[j] != o) ++j;
    const sem::RealTensor& jvv = *a.outputs.at(J.tangent_outputs[j]);
    const sem::RealTensor& cdv = *b.outputs.at(o + "__cd");
    for (int64_t i = 0; i < jvv.size(); ++i) {
      mpfr_sub(diff.f, jvv.data[size_t(i)].f, cdv.data[size_t(i)].f, MPFR_RNDN);
      mpfr_abs(diff.f, diff.f, MPFR_RNDN);
      if (mpfr_nan_p(diff.f) || mpfr_greater_p(diff.f, maxd.f)) mpfr_set(maxd.f, diff.f, MPFR_RNDN);
      mpfr_abs(t.f, jvv.data[size_t(i)].f, MPFR_RNDN);
      mpfr_add(scale.f, scale.f, t.f, MPFR_RNDN);
    }
  }
  mpfr_mul_2si(t.f, scale.f, -bits, MPFR_RNDN);
  CdResult r;
  r.ok = !mpfr_nan_p(maxd.f) && mpfr_lessequal_p(maxd.f, t.f);
  r.max_diff = mpfr_get_d(maxd.f, MPFR_RNDN);
  r.scale = mpfr_get_d(scale.f, MPFR_RNDN);
  return r;
}

/// Evaluates the joint graph (Ieee semantics, bit-exact) with every upstream
/// gradient 1 and returns the gradient of `wrt` as doubles.
std::vector<double> gradient(const std::string& text, const std::string& wrt, const sem::Inputs& in,
                             const VjpRules* rules = nullptr) {
  compiler::Graph g = adtest::parse(text);
  GradOptions go;
  go.rules = rules;
  auto j = build_joint_graph(g, go);
  if (auto* e = std::get_if<compiler::GraphError>(&j)) FAIL(e->str());
  const JointGraph& jg = std::get<JointGraph>(j);
  sem::Program p = adtest::eager(jg.graph);
  sem::Inputs all = in;
  for (const auto& t : jg.tangents) {
    const sem::TensorType* ty = p.type_of(t);
    sem::Tensor one(ty->dtype, ty->shape);
    for (int64_t i = 0; i < one.size(); ++i) one.as<double>()[i] = 1.0;
    all[t] = one;
  }
  sem::IeeeOutcome o = sem::eval_ieee(p, all);
  if (o.failure) FAIL(o.failure->str());
  const sem::Tensor& gt = *o.outputs.at(jg.grads.at(wrt));
  std::vector<double> v;
  for (int64_t i = 0; i < gt.size(); ++i) v.push_back(gt.get_double(i));
  return v;
}

sem::Tensor f64(const std::vector<double>& v) {
  sem::Tensor t(sem::DType::F64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.as<double>()[i] = v[i];
  return t;
}

std::string unary_graph(const std::string& op) {
  return R"({"inputs": [{"name": "x", "dtype": "f64", "shape": [4]}],
    "nodes": [{"name": "y", "op": ")" + op + R"(", "args": ["x"]}], "outputs": ["y"]})";
}

std::string binary_graph(const std::string& op, const std::string& extra = "") {
  return R"({"inputs": [{"name": "a", "dtype": "f64", "shape": [3]}, {"name": "b", "dtype": "f64", "shape": [3]}],
    "nodes": [{"name": "y", "op": ")" + op + R"(", "args": ["a", "b")" + extra + R"(]}], "outputs": ["y"]})";
}

}  // namespace

TEST_CASE("J v equals the central difference at P = 1024 bits, h = 2^-300", "[autodiff]") {
  struct Case {
    const char* file;
    int bits;
  };
  for (Case c : {Case{"tests/autodiff/graphs/smooth_mlp.json", 500}, Case{"examples/graphs/example_5_1_forward.json", 40},
                 Case{"tests/autodiff/graphs/erf_graph.json", 40}}) {
    INFO(c.file);
    compiler::Graph g = adtest::as_f64(adtest::load(c.file));
    for (uint64_t seed : {1, 2}) {
      CdResult r = central_difference_check(g, seed, c.bits);
      INFO("max |Jv - cd| = " << r.max_diff << ", scale " << r.scale << ", allowed 2^-" << c.bits << " * scale");
      CHECK(r.ok);
    }
  }
  // The same constants in the reverse rules: the gradient of Example 5.1 is
  // J^T u; its inner product with v is <u, J v>, checked by adjoint_test.

  SECTION("a wrong JVP rule (tanh' sign flipped) is caught") {
    JvpRules rules = default_jvp_rules();
    rules["tanh.default"] = [](JvpContext& c) -> std::string {
      std::string sq = c.emit("mul.Tensor", {c.out(), c.out()});
      return c.emit("mul.Tensor", {c.tangent(0), c.emit("sub.Tensor", {sq, 1.0})});
    };
    JvpOptions jo;
    jo.rules = &rules;
    CdResult r = central_difference_check(adtest::load("tests/autodiff/graphs/smooth_mlp.json"), 1, 500, jo);
    INFO("max |Jv - cd| = " << r.max_diff);
    CHECK_FALSE(r.ok);
  }
  SECTION("gelu_backward without h*phi(h) is caught (through gelu's JVP)") {
    JvpRules rules = default_jvp_rules();
    rules["gelu.default"] = [](JvpContext& c) -> std::string {
      std::string s = c.emit("mul.Scalar", {c.arg(0), 0.7071067811865476});
      std::string p = c.emit("add.Scalar", {c.emit("erf.default", {s}), 1.0});
      return c.emit("mul.Tensor", {c.tangent(0), c.emit("mul.Scalar", {p, 0.5})});
    };
    JvpOptions jo;
    jo.rules = &rules;
    CHECK_FALSE(central_difference_check(adtest::as_f64(adtest::load("examples/graphs/example_5_1_forward.json")), 1, 40, jo).ok);
  }
}

TEST_CASE("generated random graphs against the central difference", "[autodiff]") {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::string text = adtest::random_graph(seed);
    INFO(text);
    CdResult r = central_difference_check(adtest::parse(text), seed, 500);
    INFO("max |Jv - cd| = " << r.max_diff << ", scale " << r.scale);
    CHECK(r.ok);
  }
}

TEST_CASE("every unary rule against the central difference", "[autodiff]") {
  for (const char* op : {"neg.default", "sigmoid.default", "tanh.default", "exp.default", "sin.default", "cos.default",
                         "expm1.default", "abs.default", "relu.default", "prod.default"}) {
    INFO(op);
    CHECK(central_difference_check(adtest::parse(unary_graph(op)), 3, 500).ok);
  }
  for (const char* op : {"erf.default", "log2.default", "log10.default", "gelu.default"}) {  // f64 constants: 2^-40
    INFO(op);
    std::string text = unary_graph(op);
    if (std::string(op) != "erf.default" && std::string(op) != "gelu.default") {  // positive domain: log2(exp(x))
      text = R"({"inputs": [{"name": "x", "dtype": "f64", "shape": [4]}],
        "nodes": [{"name": "e", "op": "exp.default", "args": ["x"]}, {"name": "y", "op": ")" + std::string(op) +
             R"(", "args": ["e"]}], "outputs": ["y"]})";
    }
    CHECK(central_difference_check(adtest::parse(text), 3, 40).ok);
  }
  for (const char* op : {"log.default", "sqrt.default", "rsqrt.default", "log1p.default"}) {
    INFO(op);
    std::string text = R"({"inputs": [{"name": "x", "dtype": "f64", "shape": [4]}],
      "nodes": [{"name": "e", "op": "exp.default", "args": ["x"]}, {"name": "y", "op": ")" + std::string(op) +
                       R"(", "args": ["e"]}], "outputs": ["y"]})";
    CHECK(central_difference_check(adtest::parse(text), 3, 500).ok);
  }
}

TEST_CASE("kinks follow PyTorch's convention", "[autodiff]") {
  sem::Inputs x{{"x", f64({-1.0, 0.0, -0.0, 2.0})}};
  // relu'(0) = 0 (threshold_backward: grad where out > 0).
  CHECK(gradient(unary_graph("relu.default"), "x", x) == std::vector<double>{0, 0, 0, 1});
  // abs'(0) = sgn(0) = 0.
  CHECK(gradient(unary_graph("abs.default"), "x", x) == std::vector<double>{-1, 0, 0, 1});
  // maximum/minimum ties: grad / 2 to each operand.
  sem::Inputs ab{{"a", f64({1.0, 2.0, 3.0})}, {"b", f64({1.0, 5.0, 0.0})}};
  CHECK(gradient(binary_graph("maximum.default"), "a", ab) == std::vector<double>{0.5, 0, 1});
  CHECK(gradient(binary_graph("maximum.default"), "b", ab) == std::vector<double>{0.5, 1, 0});
  CHECK(gradient(binary_graph("minimum.default"), "a", ab) == std::vector<double>{0.5, 1, 0});
  CHECK(gradient(binary_graph("minimum.default"), "b", ab) == std::vector<double>{0.5, 0, 1});
  // maximum(-0, +0): -0 == +0, a tie.
  sem::Inputs zz{{"a", f64({-0.0, 0.0, 1.0})}, {"b", f64({0.0, -0.0, 1.0})}};
  CHECK(gradient(binary_graph("maximum.default"), "a", zz) == std::vector<double>{0.5, 0.5, 0.5});
  // amax ties share the gradient evenly (PyTorch's amax backward).
  std::string amax = R"({"inputs": [{"name": "x", "dtype": "f64", "shape": [4]}],
    "nodes": [{"name": "y", "op": "amax.default", "args": ["x", [0]]}], "outputs": ["y"]})";
  CHECK(gradient(amax, "x", {{"x", f64({3.0, 1.0, 3.0, 3.0})}}) ==
        std::vector<double>{1.0 / 3.0, 0, 1.0 / 3.0, 1.0 / 3.0});

  // prod: the product of the other elements, zeros included (PyTorch's prod_backward).
  std::string prod = unary_graph("prod.default");
  CHECK(gradient(prod, "x", {{"x", f64({2.0, 4.0, 3.0, 1.0})}}) == std::vector<double>{12, 6, 8, 24});
  CHECK(gradient(prod, "x", {{"x", f64({2.0, 0.0, 3.0, 1.0})}}) == std::vector<double>{0, 6, 0, 0});
  CHECK(gradient(prod, "x", {{"x", f64({0.0, 0.0, 3.0, 1.0})}}) == std::vector<double>{0, 0, 0, 0});

  SECTION("wrong kink conventions are caught") {
    VjpRules rules = default_vjp_rules();
    rules["relu.default"] = [](VjpContext& c) {  // relu'(0) = 1
      c.give(0, c.emit("where.self", {c.emit("ge.Scalar", {c.arg(0), 0}), c.grad, 0.0}));
    };
    rules["maximum.default"] = [](VjpContext& c) {  // ties give the whole gradient to both
      c.give(0, c.emit("where.self", {c.emit("ge.Tensor", {c.arg(0), c.arg(1)}), c.grad, 0.0}));
      c.give(1, c.emit("where.self", {c.emit("ge.Tensor", {c.arg(1), c.arg(0)}), c.grad, 0.0}));
    };
    rules["prod.default"] = [](VjpContext& c) {  // the naive out / x, wrong at zeros
      std::string q = c.emit("div.Tensor", {c.out(), c.arg(0)});
      c.give(0, c.emit("mul.Tensor", {c.emit("expand.default", {c.grad, c.type(c.arg(0)).shape}), q}));
    };
    std::vector<double> naive = gradient(unary_graph("prod.default"), "x", {{"x", f64({2.0, 0.0, 3.0, 1.0})}}, &rules);
    CHECK(naive[1] != 6.0);  // 0 / 0
    CHECK(gradient(unary_graph("relu.default"), "x", x, &rules) != std::vector<double>{0, 0, 0, 1});
    CHECK(gradient(binary_graph("maximum.default"), "a", ab, &rules) != std::vector<double>{0.5, 0, 1});
  }
}

TEST_CASE("kinks in forward mode match reverse mode", "[autodiff]") {
  // The JVP of maximum at a tie is the mean of the two tangents; relu's at 0 is 0.
  compiler::Graph g = adtest::parse(binary_graph("maximum.default"));
  auto j = build_jvp_graph(g);
  REQUIRE(std::holds_alternative<JvpGraph>(j));
  const JvpGraph& J = std::get<JvpGraph>(j);
  sem::Inputs in{{"a", f64({1.0, 2.0, 3.0})}, {"b", f64({1.0, 5.0, 0.0})}};
  in[J.tangents[0]] = f64({1.0, 1.0, 1.0});
  in[J.tangents[1]] = f64({3.0, 3.0, 3.0});
  sem::IeeeOutcome o = sem::eval_ieee(adtest::eager(J.graph), in);
  REQUIRE(!o.failure);
  const sem::Tensor& t = *o.outputs.at(J.tangent_outputs[0]);
  CHECK(t.as<double>()[0] == 2.0);
  CHECK(t.as<double>()[1] == 3.0);
  CHECK(t.as<double>()[2] == 1.0);
}

TEST_CASE("Theorem 5.1: backward/forward op-count ratio within 1 + max(4, c_Omega + 2)", "[autodiff]") {
  for (const char* f : {"examples/graphs/example_5_1_forward.json", "examples/graphs/example_1_1.json",
                        "tests/autodiff/graphs/smooth_mlp.json", "tests/autodiff/graphs/erf_graph.json"}) {
    auto r = gradient_cost(adtest::load(f));
    REQUIRE(std::holds_alternative<CostReport>(r));
    const CostReport& c = std::get<CostReport>(r);
    WARN(f << ": W = " << c.forward << ", forward+backward = " << c.joint << ", ratio " << c.ratio << " <= bound "
           << c.bound << " (c_Omega = " << c.c_omega << ": " << c.omega_ops << ")");
    CHECK(c.ratio <= c.bound);
  }
  SECTION("a wasteful rule breaks the bound") {
    VjpRules rules = default_vjp_rules();
    rules["mm.default"] = [](VjpContext& c) {  // each product computed four times and averaged
      for (size_t i : {0, 1}) {
        if (!c.wants(i)) continue;
        std::string acc;
        for (int k = 0; k < 4; ++k) {
          std::string p = i == 0 ? c.emit("mm.default", {c.grad, c.emit("t.default", {c.arg(1)})})
                                 : c.emit("mm.default", {c.emit("t.default", {c.arg(0)}), c.grad});
          acc = c.em.add(acc, p);
        }
        c.give(i, c.emit("mul.Scalar", {acc, 0.25}));
      }
    };
    auto r = gradient_cost(adtest::load("examples/graphs/example_5_1_forward.json"), &rules);
    REQUIRE(std::holds_alternative<CostReport>(r));
    INFO("ratio " << std::get<CostReport>(r).ratio << ", bound " << std::get<CostReport>(r).bound);
    CHECK(std::get<CostReport>(r).ratio > std::get<CostReport>(r).bound);
  }
}
