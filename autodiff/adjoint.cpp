#include "autodiff/adjoint.h"

#include <map>
#include <sstream>
#include <vector>

#include "autodiff/jacobian.h"
#include "compiler/lower.h"
#include "semantics/random_inputs.h"

namespace stax::autodiff {

namespace {

using compiler::GraphError;

/// An MPFR accumulator at precision P.
struct Acc {
  sem::RVal v, t;
  explicit Acc(long P) : v(P), t(P) {}
  void fma(const mpfr_t a, const mpfr_t b, bool abs) {
    mpfr_mul(t.f, a, b, MPFR_RNDN);
    if (abs) mpfr_abs(t.f, t.f, MPFR_RNDN);
    mpfr_add(v.f, v.f, t.f, MPFR_RNDN);
  }
};

/// acc += <r, x>, mag += Σ|r·x| for a Real tensor and an (exact) float tensor.
void dot(Acc& acc, Acc& mag, const sem::RealTensor& r, const sem::Tensor& x, long P) {
  sem::RVal xv(P);
  for (int64_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(xv.f, x.get_double(i), MPFR_RNDN);  // exact: every float format fits in a double
    acc.fma(r.data[size_t(i)].f, xv.f, false);
    mag.fma(r.data[size_t(i)].f, xv.f, true);
  }
}

sem::Tensor normal_tensor(const sem::TensorType& t, sem::Rng& rng) {
  sem::RandomOptions ro;
  ro.special_fraction = 0.0;
  return sem::random_tensor(t, rng, ro);
}

std::variant<sem::Program, GraphError> eager(const compiler::Graph& g) {
  auto l = compiler::lower_graph(g, {compiler::Device{}, true});
  if (auto* e = std::get_if<GraphError>(&l)) return *e;
  return std::get<compiler::Lowered>(l).program;
}

}  // namespace

std::string AdjointResult::str() const {
  std::ostringstream o;
  o.precision(17);
  o << "<u, J v> = " << lhs << ", <J^T u, v> = " << rhs << ", |difference| allowed up to " << bound;
  return o.str();
}

std::variant<AdjointResult, GraphError> adjoint_check(const compiler::Graph& g, uint64_t seed, long P, const GradOptions& go,
                                                      const JvpOptions& jo) {
  auto jv = build_jvp_graph(g, jo);
  if (auto* e = std::get_if<GraphError>(&jv)) return *e;
  auto jg = build_joint_graph(g, go);
  if (auto* e = std::get_if<GraphError>(&jg)) return *e;
  const JvpGraph& J = std::get<JvpGraph>(jv);
  const JointGraph& R = std::get<JointGraph>(jg);
  auto xr = random_primals(g, seed);
  if (auto* e = std::get_if<GraphError>(&xr)) return *e;
  const sem::Inputs& x = std::get<sem::Inputs>(xr);
  sem::Rng rng(seed * 7919 + 17);
  auto pf = eager(g), pj = eager(J.graph), pr = eager(R.graph);
  for (auto* p : {&pf, &pj, &pr})
    if (auto* e = std::get_if<GraphError>(p)) return *e;
  const sem::Program& fwd = std::get<sem::Program>(pf);
  sem::Inputs xv = x, xu = x;
  std::map<std::string, sem::Tensor> v;
  for (size_t k = 0; k < J.wrt.size(); ++k) {
    v[J.wrt[k]] = normal_tensor(*fwd.type_of(J.wrt[k]), rng);
    xv[J.tangents[k]] = v[J.wrt[k]];
  }
  std::vector<sem::Tensor> u;
  for (size_t j = 0; j < R.tangents.size(); ++j) {
    const sem::TensorType& t = *fwd.type_of(R.forward_outputs[j]);
    u.push_back(sem::is_float(t.dtype) ? normal_tensor(t, rng) : sem::Tensor(t.dtype, t.shape));
    xu[R.tangents[j]] = u.back();
  }
  sem::RealOutcome jvo = sem::eval_real(std::get<sem::Program>(pj), xv, P);
  if (jvo.failure) return GraphError{g.file, jvo.failure->binding, "the JVP graph fails (⊥): " + jvo.failure->str()};
  sem::RealOutcome vjo = sem::eval_real(std::get<sem::Program>(pr), xu, P);
  if (vjo.failure) return GraphError{g.file, vjo.failure->binding, "the joint graph fails (⊥): " + vjo.failure->str()};
  Acc lhs(P), rhs(P), mag(P);
  mpfr_set_ui(mag.v.f, 1, MPFR_RNDN);
  for (size_t j = 0; j < R.tangents.size(); ++j)
    if (sem::is_float(u[j].dtype)) dot(lhs, mag, *jvo.outputs.at(J.tangent_outputs[j]), u[j], P);
  for (const std::string& w : J.wrt) {
    auto it = R.grads.find(w);
    if (it != R.grads.end()) dot(rhs, mag, *vjo.outputs.at(it->second), v.at(w), P);
  }
  sem::RVal diff(P), allowed(P);
  mpfr_sub(diff.f, lhs.v.f, rhs.v.f, MPFR_RNDN);
  mpfr_abs(diff.f, diff.f, MPFR_RNDN);
  mpfr_mul_2si(allowed.f, mag.v.f, -(P - 64), MPFR_RNDN);
  AdjointResult r;
  r.ok = !mpfr_nan_p(diff.f) && mpfr_lessequal_p(diff.f, allowed.f);
  r.lhs = mpfr_get_d(lhs.v.f, MPFR_RNDN);
  r.rhs = mpfr_get_d(rhs.v.f, MPFR_RNDN);
  r.bound = mpfr_get_d(allowed.f, MPFR_RNDN);
  return r;
}

std::string random_graph(uint64_t seed) {
  sem::Rng rng(seed);
  struct V {
    std::string name;
    int kind;  // 0: [3,4], 1: [4], 2: [3,1]
  };
  std::vector<V> vals = {{"a", 0}, {"b", 0}, {"c", 1}, {"d", 2}};
  std::ostringstream nodes;
  int id = 0;
  auto pick = [&](bool full) -> V {
    for (;;) {
      V v = vals[size_t(rng.range(0, int64_t(vals.size())))];
      if (!full || v.kind == 0) return v;
    }
  };
  auto node = [&](const std::string& op, const std::string& args, int kind, const std::string& kw = "{}") {
    std::string n = "n" + std::to_string(id++);
    nodes << (id > 1 ? ",\n" : "") << R"(    {"name": ")" << n << R"(", "op": ")" << op << R"(", "args": [)" << args
          << R"(], "kwargs": )" << kw << "}";
    vals.push_back({n, kind});
    return n;
  };
  auto q = [](const std::string& s) { return "\"" + s + "\""; };
  int steps = 6 + int(rng.range(0, 8));
  for (int s = 0; s < steps; ++s) {
    switch (rng.range(0, 12)) {
      case 0: { V x = pick(false); node("tanh.default", q(x.name), x.kind); break; }
      case 1: { V x = pick(false); node("sigmoid.default", q(x.name), x.kind); break; }
      case 2: { V x = pick(false); node("sin.default", q(x.name), x.kind); break; }
      case 3: { V x = pick(true), y = pick(false); node("mul.Tensor", q(x.name) + ", " + q(y.name), 0); break; }
      case 4: { V x = pick(true), y = pick(false); node("add.Tensor", q(x.name) + ", " + q(y.name), 0, R"({"alpha": 0.5})"); break; }
      case 5: { V x = pick(true), y = pick(false); node("sub.Tensor", q(x.name) + ", " + q(y.name), 0); break; }
      case 6: {  // x / (1 + y^2)
        V x = pick(true), y = pick(false);
        std::string sq = node("mul.Tensor", q(y.name) + ", " + q(y.name), y.kind);
        std::string d = node("add.Scalar", q(sq) + ", 1.0", y.kind);
        node("div.Tensor", q(x.name) + ", " + q(d), 0);
        break;
      }
      case 7: { V x = pick(true); node("softmax.int", q(x.name) + ", 1", 0); break; }
      case 8: { V x = pick(true); node("sum.dim_IntList", q(x.name) + ", [1], true", 2); break; }
      case 9: { V x = pick(true); node("mean.dim", q(x.name) + ", [0]", 1); break; }
      case 10: {  // [3,4] @ [4,4]: x @ (xᵀ x)
        V x = pick(true);
        std::string t = node("t.default", q(x.name), -1);
        vals.pop_back();
        std::string g = node("mm.default", q(t) + ", " + q(x.name), -1);
        vals.pop_back();
        node("mm.default", q(x.name) + ", " + q(g), 0);
        break;
      }
      default: { V x = pick(false); node("exp.default", q(x.name), x.kind); break; }
    }
  }
  std::string last = vals.back().name;
  std::string y = node("sum.default", q(last), -1);
  std::ostringstream g;
  g << R"({"inputs": [{"name": "a", "dtype": "f64", "shape": [3, 4]}, {"name": "b", "dtype": "f64", "shape": [3, 4]},
                      {"name": "c", "dtype": "f64", "shape": [4]}, {"name": "d", "dtype": "f64", "shape": [3, 1]}],
  "nodes": [
)" << nodes.str()
    << "],\n  \"outputs\": [\"" << y << "\", \"" << vals[vals.size() - 2].name << "\"]}";
  return g.str();
}

}  // namespace stax::autodiff
