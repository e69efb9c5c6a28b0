// Helpers of the autodiff tests: loading graphs, random points and
// directions, evaluation of graphs in the Real domain (eager lowering +
// sem::eval_real), inner products in MPFR, the adjoint identity, and the
// central-difference graph.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
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

}  // namespace stax::adtest
