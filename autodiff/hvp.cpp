#include "autodiff/hvp.h"

#include <sstream>

#include "compiler/lower.h"
#include "semantics/dtype.h"

namespace stax::autodiff {

using compiler::Graph;
using compiler::GraphError;
using compiler::Node;
using nlohmann::json;

std::variant<HvpGraph, GraphError> build_hvp_graph(const Graph& g, const HvpOptions& opt) {
  if (auto e = refuse_compiled(g, "a Hessian-vector product")) return *e;
  GradOptions go;
  go.wrt = opt.wrt;
  go.rules = opt.vjp;
  auto jr = build_joint_graph(g, go);
  if (auto* e = std::get_if<GraphError>(&jr)) return *e;
  const JointGraph& J = std::get<JointGraph>(jr);
  auto wr = resolve_wrt(g, opt.wrt);
  if (auto* e = std::get_if<GraphError>(&wr)) return *e;
  HvpGraph h;
  h.wrt = std::get<std::vector<std::string>>(wr);
  h.upstream = J.tangents;

  if (opt.mode == HvpMode::ForwardOverReverse) {
    JvpOptions jo;
    jo.wrt = h.wrt;
    jo.rules = opt.jvp;
    auto jv = build_jvp_graph(J.graph, jo);
    if (auto* e = std::get_if<GraphError>(&jv)) return *e;
    JvpGraph& F = std::get<JvpGraph>(jv);
    h.graph = std::move(F.graph);
    h.phase = std::move(F.phase);
    h.directions = F.tangents;
    for (const std::string& w : h.wrt) {
      auto it = J.grads.find(w);
      std::string out;
      if (it != J.grads.end())
        for (size_t k = 0; k < F.forward_outputs.size(); ++k)
          if (k >= J.forward_outputs.size() && F.forward_outputs[k] == it->second) out = F.tangent_outputs[k];
      h.hvp.push_back(out);
    }
    return h;
  }

  // Reverse over reverse: s = Σ_k sum(grad_k * v_k), differentiated again.
  Graph g2 = J.graph;
  std::set<std::string> used;
  for (const auto& in : g2.inputs) used.insert(in.name);
  for (const auto& n : g2.nodes) used.insert(n.name);
  auto fresh = [&](const std::string& stem) {
    std::string s = stem;
    for (int k = 0; used.count(s); ++k) s = stem + "_" + std::to_string(k);
    used.insert(s);
    return s;
  };
  std::string acc;
  std::map<std::string, sem::TensorType> types;
  for (const auto& in : g.inputs) types[in.name] = in.type;
  for (const std::string& w : h.wrt) {
    std::string v = fresh(w + "_direction");
    g2.inputs.push_back({v, types.at(w)});
    h.directions.push_back(v);
    auto it = J.grads.find(w);
    if (it == J.grads.end()) continue;
    std::string p = fresh("hvp_mul"), s = fresh("hvp_sum");
    g2.nodes.push_back({p, "mul.Tensor", json::array({it->second, v}), json::object()});
    g2.nodes.push_back({s, "sum.default", json::array({p}), json::object()});
    if (acc.empty()) {
      acc = s;
    } else {
      std::string a = fresh("hvp_add");
      g2.nodes.push_back({a, "add.Tensor", json::array({acc, s}), json::object()});
      acc = a;
    }
  }
  if (acc.empty()) {  // no gradient at all: H = 0
    h.graph = J.graph;
    h.hvp.assign(h.wrt.size(), "");
    return h;
  }
  g2.outputs = {acc};
  GradOptions go2;
  go2.wrt = h.wrt;
  go2.rules = opt.vjp;
  auto j2 = build_joint_graph(g2, go2);
  if (auto* e = std::get_if<GraphError>(&j2)) return *e;
  JointGraph& R = std::get<JointGraph>(j2);
  h.graph = std::move(R.graph);
  h.phase = std::move(R.phase);
  h.extra_upstream = R.tangents;
  for (const std::string& w : h.wrt) {
    auto it = R.grads.find(w);
    h.hvp.push_back(it == R.grads.end() ? "" : it->second);
  }
  return h;
}

namespace {

void set_one(sem::Tensor& t, int64_t i, double v) {
  switch (t.dtype) {
    case sem::DType::F32: t.as<float>()[i] = float(v); break;
    case sem::DType::F64: t.as<double>()[i] = v; break;
    case sem::DType::F16: t.as<uint16_t>()[i] = sem::f32_to_f16_bits(float(v)); break;
    case sem::DType::BF16: t.as<uint16_t>()[i] = sem::f32_to_bf16_bits(float(v)); break;
    default: break;
  }
}

sem::Tensor filled(const sem::TensorType& t, double v) {
  sem::Tensor x(t.dtype, t.shape);
  if (sem::is_float(t.dtype))
    for (int64_t i = 0; i < x.size(); ++i) set_one(x, i, v);
  return x;
}

}  // namespace

std::variant<HessianReport, GraphError> hessians(const Graph& g, const sem::Inputs& primals, const HvpOptions& opt,
                                                 long P, int64_t max_n) {
  HessianReport rep;
  std::vector<std::vector<sem::RVal>> H[2];
  for (int mode = 0; mode < 2; ++mode) {
    HvpOptions o = opt;
    o.mode = mode == 0 ? HvpMode::ForwardOverReverse : HvpMode::ReverseOverReverse;
    auto hr = build_hvp_graph(g, o);
    if (auto* e = std::get_if<GraphError>(&hr)) return *e;
    const HvpGraph& hg = std::get<HvpGraph>(hr);
    auto l = compiler::lower_graph(hg.graph, {compiler::Device{}, true});
    if (auto* e = std::get_if<GraphError>(&l)) return *e;
    const sem::Program& p = std::get<compiler::Lowered>(l).program;
    sem::Inputs in = primals;
    for (const std::string& u : hg.upstream) in[u] = filled(*p.type_of(u), 1.0);
    for (const std::string& u : hg.extra_upstream) in[u] = filled(*p.type_of(u), 1.0);
    std::vector<int64_t> off;
    int64_t n = 0;
    for (size_t k = 0; k < hg.wrt.size(); ++k) {
      off.push_back(n);
      n += sem::num_elements(p.type_of(hg.directions[k])->shape);
      in[hg.directions[k]] = filled(*p.type_of(hg.directions[k]), 0.0);
    }
    if (n > max_n) return GraphError{g.file, "", "the Hessian needs " + std::to_string(n) + " HVPs per mode, more than the limit of " + std::to_string(max_n)};
    rep.n = n;
    H[mode].assign(size_t(n), {});
    for (auto& col : H[mode])
      for (int64_t i = 0; i < n; ++i) col.emplace_back(P);
    for (size_t k = 0; k < hg.wrt.size(); ++k) {
      sem::Tensor& d = in[hg.directions[k]];
      for (int64_t e = 0; e < d.size(); ++e) {
        set_one(d, e, 1.0);
        sem::RealOutcome r = sem::eval_real(p, in, P);
        set_one(d, e, 0.0);
        if (r.failure) return GraphError{g.file, r.failure->binding, "evaluation failed (⊥): " + r.failure->str()};
        auto& col = H[mode][size_t(off[k] + e)];
        for (size_t q = 0; q < hg.wrt.size(); ++q) {
          if (hg.hvp[q].empty()) continue;
          const sem::RealTensor& t = *r.outputs.at(hg.hvp[q]);
          for (int64_t i = 0; i < t.size(); ++i) mpfr_set(col[size_t(off[q] + i)].f, t.data[size_t(i)].f, MPFR_RNDN);
        }
      }
    }
  }
  int64_t n = rep.n;
  rep.forward_over_reverse.resize(n, n);
  rep.reverse_over_reverse.resize(n, n);
  sem::RVal d(P), asym(P), dis(P), scale(P), t(P);
  mpfr_set_ui(scale.f, 1, MPFR_RNDN);
  auto upd = [&](sem::RVal& m, const mpfr_t a, const mpfr_t b) {
    mpfr_sub(d.f, a, b, MPFR_RNDN);
    mpfr_abs(d.f, d.f, MPFR_RNDN);
    if (mpfr_nan_p(d.f) || mpfr_greater_p(d.f, m.f)) mpfr_set(m.f, d.f, MPFR_RNDN);
  };
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < n; ++r) {
      const mpfr_t& a = H[0][size_t(c)][size_t(r)].f;
      rep.forward_over_reverse(r, c) = mpfr_get_d(a, MPFR_RNDN);
      rep.reverse_over_reverse(r, c) = mpfr_get_d(H[1][size_t(c)][size_t(r)].f, MPFR_RNDN);
      upd(asym, a, H[0][size_t(r)][size_t(c)].f);
      upd(dis, a, H[1][size_t(c)][size_t(r)].f);
      mpfr_abs(t.f, a, MPFR_RNDN);
      mpfr_add(scale.f, scale.f, t.f, MPFR_RNDN);
    }
  mpfr_mul_2si(t.f, scale.f, -(P - 64), MPFR_RNDN);
  rep.symmetric = !mpfr_nan_p(asym.f) && mpfr_lessequal_p(asym.f, t.f);
  rep.agree = !mpfr_nan_p(dis.f) && mpfr_lessequal_p(dis.f, t.f);
  rep.asymmetry = mpfr_get_d(asym.f, MPFR_RNDN);
  rep.disagreement = mpfr_get_d(dis.f, MPFR_RNDN);
  rep.threshold = mpfr_get_d(t.f, MPFR_RNDN);
  return rep;
}

std::string HessianReport::text() const {
  std::ostringstream o;
  o << "Hessian " << n << " x " << n << " by " << n << " HVPs forward-over-reverse and " << n
    << " reverse-over-reverse (Real domain)\n";
  o << "  max |H - H^T| = " << asymmetry << ": " << (symmetric ? "symmetric" : "NOT SYMMETRIC") << "\n";
  o << "  max |H_fr - H_rr| = " << disagreement << ": " << (agree ? "agree" : "DISAGREE") << " (threshold " << threshold
    << ")\n";
  if (n <= 8) {
    Eigen::IOFormat f(6, 0, ", ", "\n", "    [", "]");
    o << "  H:\n" << forward_over_reverse.format(f) << "\n";
  }
  return o.str();
}

nlohmann::json HessianReport::json() const {
  nlohmann::json j;
  j["n"] = n;
  j["symmetric"] = symmetric;
  j["agree"] = agree;
  j["asymmetry"] = asymmetry;
  j["disagreement"] = disagreement;
  j["threshold"] = threshold;
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t r = 0; r < n; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (int64_t c = 0; c < n; ++c) row.push_back(forward_over_reverse(r, c));
    rows.push_back(row);
  }
  j["hessian"] = rows;
  return j;
}

}  // namespace stax::autodiff
