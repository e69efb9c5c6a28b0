// Helpers of the autodiff tests: loading graphs, random points and
// directions, evaluation of graphs in the Real domain (eager lowering +
// sem::eval_real), inner products in MPFR, the adjoint identity, and the
// central-difference graph.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <vector>
#include <string>

#include "autodiff/jacobian.h"
#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "compiler/lower.h"
#include "semantics/random_inputs.h"

namespace stax::adtest {

inline std::string src(const std::string& rel) { return std::string(STAX_SOURCE_DIR) + "/" + rel; }

inline compiler::Graph load(const std::string& rel) {
  auto g = compiler::read_graph(src(rel));
  if (auto* e = std::get_if<compiler::GraphError>(&g)) FAIL(e->str());
  return std::get<compiler::Graph>(g);
}

inline compiler::Graph parse(const std::string& text) {
  auto g = compiler::parse_graph(text, "<test>");
  if (auto* e = std::get_if<compiler::GraphError>(&g)) FAIL(e->str());
  return std::get<compiler::Graph>(g);
}

/// The graph with every f32 input made f64 (the Real semantics does not
/// care, but literals such as h = 2^-300 must be representable).
inline compiler::Graph as_f64(compiler::Graph g) {
  for (auto& in : g.inputs)
    if (in.type.dtype == sem::DType::F32) in.type.dtype = sem::DType::F64;
  return g;
}

inline sem::Program eager(const compiler::Graph& g) {
  auto l = compiler::lower_graph(g, {compiler::Device{}, true});
  if (auto* e = std::get_if<compiler::GraphError>(&l)) FAIL(e->str());
  return std::get<compiler::Lowered>(l).program;
}

inline sem::RealOutcome run_real(const compiler::Graph& g, const sem::Inputs& in, long P) {
  sem::RealOutcome o = sem::eval_real(eager(g), in, P);
  if (o.failure) FAIL(o.failure->str());
  return o;
}

/// A tensor of normal values (no special values) of type t.
inline sem::Tensor normal_tensor(const sem::TensorType& t, sem::Rng& rng) {
  sem::RandomOptions ro;
  ro.special_fraction = 0.0;
  return sem::random_tensor(t, rng, ro);
}

inline sem::Inputs primals(const compiler::Graph& g, uint64_t seed) {
  auto p = autodiff::random_primals(g, seed);
  if (auto* e = std::get_if<compiler::GraphError>(&p)) FAIL(e->str());
  return std::get<sem::Inputs>(p);
}

/// An MPFR accumulator at precision P.
struct Acc {
  sem::RVal v, t;
  explicit Acc(long P) : v(P), t(P) {}
  /// v += a · b
  void fma(const mpfr_t a, const mpfr_t b) {
    mpfr_mul(t.f, a, b, MPFR_RNDN);
    mpfr_add(v.f, v.f, t.f, MPFR_RNDN);
  }
  /// v += |a · b|
  void fma_abs(const mpfr_t a, const mpfr_t b) {
    mpfr_mul(t.f, a, b, MPFR_RNDN);
    mpfr_abs(t.f, t.f, MPFR_RNDN);
    mpfr_add(v.f, v.f, t.f, MPFR_RNDN);
  }
  double d() const { return mpfr_get_d(v.f, MPFR_RNDN); }
};

/// <r, x> and Σ|r·x| for a Real tensor and an (exact) float tensor.
inline void dot(Acc& acc, Acc& mag, const sem::RealTensor& r, const sem::Tensor& x, long P) {
  sem::RVal xv(P);
  for (int64_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(xv.f, x.get_double(i), MPFR_RNDN);  // exact: every float format fits in a double
    acc.fma(r.data[size_t(i)].f, xv.f);
    mag.fma_abs(r.data[size_t(i)].f, xv.f);
  }
}

/// The adjoint identity <u, J v> = <Jᵀ u, v> (seed 5.7: the JVP and the VJP
/// are the same linear map read two ways), evaluated in the Real domain at
/// P bits: the JVP graph on (x, v) and the joint graph on (x, u) for random
/// x, u, v. Equal up to MPFR's own rounding at P bits: |lhs − rhs| ≤
/// 2^-(P-64) · (1 + Σ|u·Jv| + Σ|Jᵀu·v|) — the 2^64 headroom covers the
/// roundings along the two programs; it is not a float tolerance.
struct AdjointResult {
  bool ok = false;
  double lhs = 0, rhs = 0, bound = 0;
  std::string str() const {
    std::ostringstream o;
    o.precision(17);
    o << "<u, J v> = " << lhs << ", <J^T u, v> = " << rhs << ", |difference| allowed up to " << bound;
    return o.str();
  }
};

inline AdjointResult adjoint_check(const compiler::Graph& g, uint64_t seed, long P, const autodiff::GradOptions& go = {},
                                   const autodiff::JvpOptions& jo = {}) {
  auto jv = autodiff::build_jvp_graph(g, jo);
  if (auto* e = std::get_if<compiler::GraphError>(&jv)) FAIL(e->str());
  auto jg = autodiff::build_joint_graph(g, go);
  if (auto* e = std::get_if<compiler::GraphError>(&jg)) FAIL(e->str());
  const autodiff::JvpGraph& J = std::get<autodiff::JvpGraph>(jv);
  const autodiff::JointGraph& R = std::get<autodiff::JointGraph>(jg);
  sem::Inputs x = primals(g, seed);
  sem::Rng rng(seed * 7919 + 17);
  sem::Program fwd = eager(g);
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
  sem::RealOutcome jvo = run_real(J.graph, xv, P);
  sem::RealOutcome vjo = run_real(R.graph, xu, P);
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
  r.lhs = lhs.d();
  r.rhs = rhs.d();
  r.bound = mpfr_get_d(allowed.f, MPFR_RNDN);
  return r;
}

inline nlohmann::json rename_refs(const nlohmann::json& a, const std::function<std::string(const std::string&)>& f) {
  if (a.is_string()) return f(a.get<std::string>());
  if (a.is_array()) {
    nlohmann::json o = nlohmann::json::array();
    for (const nlohmann::json& x : a) o.push_back(rename_refs(x, f));
    return o;
  }
  return a;
}

/// The graph computing (f(x + h v) − f(x − h v)) / 2h for every float output,
/// with a direction input `<w>__v` per input w; two renamed copies of the
/// nodes, suffixed __p and __m.
inline compiler::Graph central_difference_graph(const compiler::Graph& g, std::vector<std::string>& outs, int h_exp) {
  compiler::Graph c;
  c.inputs = g.inputs;
  c.file = g.file;
  std::set<std::string> nodes, floats;
  for (const auto& n : g.nodes) nodes.insert(n.name);
  for (const auto& in : g.inputs)
    if (sem::is_float(in.type.dtype)) {
      floats.insert(in.name);
      c.inputs.push_back({in.name + "__v", in.type});
    }
  double h = std::ldexp(1.0, h_exp);
  for (std::string s : {"p", "m"})
    for (const std::string& w : floats)
      c.nodes.push_back({w + "__" + s, s == "p" ? "add.Tensor" : "sub.Tensor", nlohmann::json::array({w, w + "__v"}), {{"alpha", h}}});
  for (std::string s : {"p", "m"})
    for (const auto& n : g.nodes) {
      auto f = [&](const std::string& r) { return nodes.count(r) || floats.count(r) ? r + "__" + s : r; };
      c.nodes.push_back({n.name + "__" + s, n.op, rename_refs(n.args, f), n.kwargs});
    }
  sem::Program fwd = eager(g);
  for (const std::string& o : g.outputs) {
    if (!sem::is_float(fwd.type_of(o)->dtype)) continue;
    std::string d = o + "__d", q = o + "__cd";
    c.nodes.push_back({d, "sub.Tensor", nlohmann::json::array({o + "__p", o + "__m"}), nlohmann::json::object()});
    c.nodes.push_back({q, "mul.Scalar", nlohmann::json::array({d, std::ldexp(1.0, -h_exp - 1)}), nlohmann::json::object()});  // / 2h
    c.outputs.push_back(q);
    outs.push_back(o);
  }
  return c;
}

/// A generator of random differentiable graphs over f64 tensors of shape
/// [3, 4] (with [4] and [3, 1] operands to exercise broadcasting), built
/// from smooth operators whose domains are safe for normal inputs.
inline std::string random_graph(uint64_t seed) {
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

}  // namespace stax::adtest
