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

#include "autodiff/adjoint.h"
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

/// The adjoint identity (autodiff/adjoint.h); a graph that fails to
/// differentiate or evaluate fails the test.
using AdjointResult = autodiff::AdjointResult;

inline AdjointResult adjoint_check(const compiler::Graph& g, uint64_t seed, long P, const autodiff::GradOptions& go = {},
                                   const autodiff::JvpOptions& jo = {}) {
  auto r = autodiff::adjoint_check(g, seed, P, go, jo);
  if (auto* e = std::get_if<compiler::GraphError>(&r)) FAIL(e->str());
  return std::get<AdjointResult>(r);
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

/// The generator of random differentiable graphs (autodiff/adjoint.h).
inline std::string random_graph(uint64_t seed) { return autodiff::random_graph(seed); }

}  // namespace stax::adtest
