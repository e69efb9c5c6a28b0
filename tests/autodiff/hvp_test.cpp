// §5.7: Hessian-vector products forward over reverse (the JVP of the
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

namespace {

/// H v (forward over reverse) against (∇f(x + h v) − ∇f(x − h v)) / 2h: the
/// joint graph's gradients differenced at P = 1024 bits, h = 2^-300 (bound
/// 2^-500 · scale, as for first derivatives in derivative_test).
bool hvp_matches_central_difference(const compiler::Graph& g, const HvpOptions& o, uint64_t seed) {
  constexpr long P = 1024;
  auto jr = build_joint_graph(g);
  if (auto* e = std::get_if<compiler::GraphError>(&jr)) FAIL(e->str());
  const JointGraph& J = std::get<JointGraph>(jr);
  auto hr = build_hvp_graph(g, o);
  if (auto* e = std::get_if<compiler::GraphError>(&hr)) FAIL(e->str());
  const HvpGraph& H = std::get<HvpGraph>(hr);
  std::vector<std::string> outs;
  compiler::Graph cd = adtest::central_difference_graph(J.graph, outs, -300);
  sem::Inputs x = adtest::primals(g, seed);
  sem::Rng rng(seed + 99);
  sem::Inputs xc = x, xh = x;
  sem::Program jp = adtest::eager(J.graph);
  for (const auto& t : J.tangents) {  // upstream gradients 1, not perturbed
    const sem::TensorType& ty = *jp.type_of(t);
    sem::Tensor one(ty.dtype, ty.shape);
    for (int64_t i = 0; i < one.size(); ++i) one.as<double>()[i] = 1.0;
    xc[t] = xh[t] = one;
    xc[t + "__v"] = sem::Tensor(ty.dtype, ty.shape);
  }
  for (const auto& t : H.extra_upstream) {  // reverse over reverse: d s / d s = 1
    sem::Tensor one(sem::DType::F64, {});
    one.as<double>()[0] = 1.0;
    xh[t] = one;
  }
  for (size_t k = 0; k < H.wrt.size(); ++k) {
    sem::Tensor v = adtest::normal_tensor(*jp.type_of(H.wrt[k]), rng);
    xc[H.wrt[k] + "__v"] = v;
    xh[H.directions[k]] = v;
  }
  sem::RealOutcome a = adtest::run_real(H.graph, xh, P);
  sem::RealOutcome b = adtest::run_real(cd, xc, P);
  sem::RVal d(P), maxd(P), scale(P), t(P);
  mpfr_set_ui(scale.f, 1, MPFR_RNDN);
  for (size_t k = 0; k < H.wrt.size(); ++k) {
    auto it = J.grads.find(H.wrt[k]);
    if (it == J.grads.end() || H.hvp[k].empty()) continue;
    const sem::RealTensor& hv = *a.outputs.at(H.hvp[k]);
    const sem::RealTensor& c = *b.outputs.at(it->second + "__cd");
    for (int64_t i = 0; i < hv.size(); ++i) {
      mpfr_sub(d.f, hv.data[size_t(i)].f, c.data[size_t(i)].f, MPFR_RNDN);
      mpfr_abs(d.f, d.f, MPFR_RNDN);
      if (mpfr_nan_p(d.f) || mpfr_greater_p(d.f, maxd.f)) mpfr_set(maxd.f, d.f, MPFR_RNDN);
      mpfr_abs(t.f, hv.data[size_t(i)].f, MPFR_RNDN);
      mpfr_add(scale.f, scale.f, t.f, MPFR_RNDN);
    }
  }
  mpfr_mul_2si(t.f, scale.f, -500, MPFR_RNDN);
  INFO("max |Hv - cd| = " << mpfr_get_d(maxd.f, MPFR_RNDN) << ", scale " << mpfr_get_d(scale.f, MPFR_RNDN));
  return !mpfr_nan_p(maxd.f) && mpfr_lessequal_p(maxd.f, t.f);
}

}  // namespace

TEST_CASE("H v equals the central difference of the gradient at P = 1024 bits, h = 2^-300", "[autodiff]") {
  for (const char* f : {"tests/autodiff/graphs/smooth_mlp.json"}) {
    INFO(f);
    CHECK(hvp_matches_central_difference(adtest::load(f), {}, 1));
    HvpOptions rr;
    rr.mode = HvpMode::ReverseOverReverse;
    CHECK(hvp_matches_central_difference(adtest::load(f), rr, 1));
  }
  CHECK(hvp_matches_central_difference(adtest::parse(kTanhMm), {}, 2));
  // A wrong JVP rule (tanh' sign) in forward over reverse is caught.
  JvpRules rules = default_jvp_rules();
  rules["tanh.default"] = [](JvpContext& c) -> std::string {
    std::string sq = c.emit("mul.Tensor", {c.out(), c.out()});
    return c.emit("mul.Tensor", {c.tangent(0), c.emit("sub.Tensor", {sq, 1.0})});
  };
  HvpOptions o;
  o.jvp = &rules;
  CHECK_FALSE(hvp_matches_central_difference(adtest::parse(kTanhMm), o, 2));
}
