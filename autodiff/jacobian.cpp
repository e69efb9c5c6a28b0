#include "autodiff/jacobian.h"

#include <cmath>
#include <map>
#include <sstream>

#include "compiler/lower.h"
#include "semantics/count_domain.h"
#include "semantics/dtype.h"
#include "semantics/random_inputs.h"

namespace stax::autodiff {

using compiler::Graph;
using compiler::GraphError;
using sem::Expr;

namespace {

int64_t expr_ops(const Expr& e) {
  return std::visit(
      [&](const auto& p) -> int64_t {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, sem::MapE>) {
          int64_t k = sem::count_ops(p.fn).ops * sem::num_elements(e->type.shape);
          for (const Expr& a : p.args) k += expr_ops(a);
          return k;
        } else if constexpr (std::is_same_v<T, sem::ViewE>) {
          return expr_ops(p.src);
        } else if constexpr (std::is_same_v<T, sem::RedE>) {
          return sem::num_elements(p.src->type.shape) + expr_ops(p.src);
        } else if constexpr (std::is_same_v<T, sem::LetE>) {
          return expr_ops(p.value) + expr_ops(p.body);
        } else {
          return 0;
        }
      },
      e->p);
}

std::variant<sem::Program, GraphError> eager(const Graph& g) {
  auto l = compiler::lower_graph(g, {compiler::Device{}, true});
  if (auto* e = std::get_if<GraphError>(&l)) return *e;
  return std::get<compiler::Lowered>(l).program;
}

/// What our rules spend on ψ'(a) given a and ψ(a) (Theorem 5.1's c_ψ); the
/// binary maximum/minimum are charged as c = 5 (their tie-splitting backward
/// takes 7 ops for both operands).
int64_t c_psi(sem::ScalarOp op) {
  using sem::ScalarOp;
  switch (op) {
    case ScalarOp::Exp: case ScalarOp::Neg: case ScalarOp::Relu: return 0;
    case ScalarOp::Log: case ScalarOp::Expm1: case ScalarOp::Sin: return 1;
    case ScalarOp::Tanh: case ScalarOp::Sigmoid: case ScalarOp::Sqrt: case ScalarOp::Log1p:
    case ScalarOp::Log2: case ScalarOp::Log10: case ScalarOp::Cos: case ScalarOp::Pow: return 2;
    case ScalarOp::Rsqrt: case ScalarOp::Abs: return 3;
    case ScalarOp::Erf: return 4;
    case ScalarOp::Maximum: case ScalarOp::Minimum: return 5;
    default: return 0;
  }
}

void one_hot(sem::Tensor& t, int64_t i) {
  switch (t.dtype) {
    case sem::DType::F32: t.as<float>()[i] = 1.0f; break;
    case sem::DType::F64: t.as<double>()[i] = 1.0; break;
    case sem::DType::F16: t.as<uint16_t>()[i] = sem::f32_to_f16_bits(1.0f); break;
    case sem::DType::BF16: t.as<uint16_t>()[i] = sem::f32_to_bf16_bits(1.0f); break;
    default: break;
  }
}

}  // namespace

std::variant<sem::Inputs, GraphError> random_primals(const Graph& g, uint64_t seed) {
  auto p = eager(g);
  if (auto* e = std::get_if<GraphError>(&p)) return *e;
  sem::RandomOptions ro;
  ro.special_fraction = 0.0;
  return sem::random_inputs(std::get<sem::Program>(p), seed, ro);
}

int64_t program_ops(const sem::Program& p) {
  int64_t k = 0;
  for (const sem::Binding& b : p.bindings) k += expr_ops(b.expr);
  return k;
}

std::variant<int64_t, GraphError> graph_ops(const Graph& g) {
  auto p = eager(g);
  if (auto* e = std::get_if<GraphError>(&p)) return *e;
  return program_ops(std::get<sem::Program>(p));
}

std::variant<CostReport, GraphError> gradient_cost(const Graph& g, const VjpRules* rules) {
  GradOptions go;
  go.rules = rules;
  auto j = build_joint_graph(g, go);
  if (auto* e = std::get_if<GraphError>(&j)) return *e;
  auto fp = eager(g);
  if (auto* e = std::get_if<GraphError>(&fp)) return *e;
  auto jp = eager(std::get<JointGraph>(j).graph);
  if (auto* e = std::get_if<GraphError>(&jp)) return *e;
  CostReport r;
  const sem::Program& f = std::get<sem::Program>(fp);
  r.forward = program_ops(f);
  r.joint = program_ops(std::get<sem::Program>(jp));
  std::set<sem::ScalarOp> used;
  for (const sem::Binding& b : f.bindings) {
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
      std::visit(
          [&](const auto& p) {
            using T = std::decay_t<decltype(p)>;
            if constexpr (std::is_same_v<T, sem::MapE>) {
              for (sem::ScalarOp op : sem::count_ops(p.fn).used) used.insert(op);
              for (const Expr& a : p.args) walk(a);
            } else if constexpr (std::is_same_v<T, sem::ViewE>) {
              walk(p.src);
            } else if constexpr (std::is_same_v<T, sem::RedE>) {
              walk(p.src);
            } else if constexpr (std::is_same_v<T, sem::LetE>) {
              walk(p.value), walk(p.body);
            }
          },
          e->p);
    };
    walk(b.expr);
  }
  for (sem::ScalarOp op : used) {
    int64_t c = c_psi(op);
    if (c > 0) r.omega_ops += std::string(r.omega_ops.empty() ? "" : " ") + std::string(sem::op_name(op)) + ":" + std::to_string(c);
    r.c_omega = std::max(r.c_omega, c);
  }
  r.ratio = r.forward ? double(r.joint) / double(r.forward) : 0.0;
  r.bound = 1.0 + double(std::max<int64_t>(4, r.c_omega + 2));
  return r;
}

std::variant<JacobianReport, GraphError> jacobians(const Graph& g, const sem::Inputs& primals, const JacobianOptions& opt) {
  JvpOptions jo{opt.wrt, opt.jvp};
  auto jv = build_jvp_graph(g, jo);
  if (auto* e = std::get_if<GraphError>(&jv)) return *e;
  GradOptions go;
  go.wrt = opt.wrt;
  go.rules = opt.vjp;
  auto jg = build_joint_graph(g, go);
  if (auto* e = std::get_if<GraphError>(&jg)) return *e;
  const JvpGraph& J = std::get<JvpGraph>(jv);
  const JointGraph& R = std::get<JointGraph>(jg);
  auto pf = eager(g);
  auto pj = eager(J.graph);
  auto pr = eager(R.graph);
  for (auto* p : {&pf, &pj, &pr})
    if (auto* e = std::get_if<GraphError>(p)) return *e;
  const sem::Program& fwd = std::get<sem::Program>(pf);
  const sem::Program& jvp = std::get<sem::Program>(pj);
  const sem::Program& vjp = std::get<sem::Program>(pr);

  JacobianReport rep;
  rep.w_forward = program_ops(fwd);
  rep.w_jvp = program_ops(jvp);
  rep.w_vjp = program_ops(vjp);
  // Rows: elements of the float outputs; columns: elements of the wrt inputs.
  std::vector<int64_t> row_off, col_off;
  std::vector<bool> out_float;
  for (const std::string& o : J.forward_outputs) {
    const sem::TensorType* t = fwd.type_of(o);
    out_float.push_back(sem::is_float(t->dtype));
    row_off.push_back(rep.m);
    if (out_float.back()) rep.m += sem::num_elements(t->shape);
  }
  for (const std::string& w : J.wrt) {
    col_off.push_back(rep.n);
    rep.n += sem::num_elements(fwd.type_of(w)->shape);
  }
  if (rep.n + rep.m > opt.max_evaluations)
    return GraphError{g.file, "", "the Jacobian needs " + std::to_string(rep.n) + " JVPs and " + std::to_string(rep.m) +
                                      " VJPs, more than the limit of " + std::to_string(opt.max_evaluations) + " evaluations"};
  long P = opt.precision;
  std::vector<sem::RVal> A, B;  // m × n row-major, by JVP and by VJP
  A.reserve(size_t(rep.m * rep.n));
  B.reserve(size_t(rep.m * rep.n));
  for (int64_t k = 0; k < rep.m * rep.n; ++k) A.emplace_back(P), B.emplace_back(P);
  auto fail = [&](const sem::RealOutcome& o) -> std::optional<GraphError> {
    if (o.failure) return GraphError{g.file, o.failure->binding, "evaluation failed (⊥): " + o.failure->str()};
    return std::nullopt;
  };

  sem::Inputs in = primals;
  for (size_t k = 0; k < J.wrt.size(); ++k) in[J.tangents[k]] = sem::Tensor(fwd.type_of(J.wrt[k])->dtype, fwd.type_of(J.wrt[k])->shape);
  for (size_t k = 0; k < J.wrt.size(); ++k) {
    int64_t len = sem::num_elements(fwd.type_of(J.wrt[k])->shape);
    for (int64_t e = 0; e < len; ++e) {
      sem::Tensor& t = in[J.tangents[k]];
      std::fill(t.data.begin(), t.data.end(), 0);
      one_hot(t, e);
      sem::RealOutcome o = sem::eval_real(jvp, in, P);
      if (auto err = fail(o)) return *err;
      int64_t col = col_off[k] + e;
      for (size_t j = 0; j < J.tangent_outputs.size(); ++j) {
        if (!out_float[j]) continue;
        const sem::RealTensor& y = *o.outputs.at(J.tangent_outputs[j]);
        for (int64_t i = 0; i < y.size(); ++i) mpfr_set(A[size_t((row_off[j] + i) * rep.n + col)].f, y.data[size_t(i)].f, MPFR_RNDN);
      }
      std::fill(t.data.begin(), t.data.end(), 0);
    }
  }

  in = primals;
  for (size_t j = 0; j < R.tangents.size(); ++j) {
    const sem::TensorType* t = fwd.type_of(R.forward_outputs[j]);
    in[R.tangents[j]] = sem::Tensor(t->dtype, t->shape);
  }
  for (size_t j = 0; j < R.tangents.size(); ++j) {
    if (!out_float[j]) continue;
    sem::Tensor& t = in[R.tangents[j]];
    for (int64_t e = 0; e < t.size(); ++e) {
      std::fill(t.data.begin(), t.data.end(), 0);
      one_hot(t, e);
      sem::RealOutcome o = sem::eval_real(vjp, in, P);
      if (auto err = fail(o)) return *err;
      int64_t row = row_off[j] + e;
      for (size_t k = 0; k < J.wrt.size(); ++k) {
        auto it = R.grads.find(J.wrt[k]);
        if (it == R.grads.end()) continue;  // not on any path: a zero block
        const sem::RealTensor& gk = *o.outputs.at(it->second);
        for (int64_t i = 0; i < gk.size(); ++i) mpfr_set(B[size_t(row * rep.n + col_off[k] + i)].f, gk.data[size_t(i)].f, MPFR_RNDN);
      }
    }
    std::fill(t.data.begin(), t.data.end(), 0);
  }

  rep.by_jvp.resize(rep.m, rep.n);
  rep.by_vjp.resize(rep.m, rep.n);
  sem::RVal diff(P), maxd(P), scale(P), tmp(P);
  mpfr_set_ui(scale.f, 1, MPFR_RNDN);
  for (int64_t r = 0; r < rep.m; ++r)
    for (int64_t c = 0; c < rep.n; ++c) {
      size_t k = size_t(r * rep.n + c);
      rep.by_jvp(r, c) = mpfr_get_d(A[k].f, MPFR_RNDN);
      rep.by_vjp(r, c) = mpfr_get_d(B[k].f, MPFR_RNDN);
      mpfr_sub(diff.f, A[k].f, B[k].f, MPFR_RNDN);
      mpfr_abs(diff.f, diff.f, MPFR_RNDN);
      if (mpfr_nan_p(diff.f) || mpfr_greater_p(diff.f, maxd.f)) mpfr_set(maxd.f, diff.f, MPFR_RNDN);
      mpfr_abs(tmp.f, A[k].f, MPFR_RNDN);
      mpfr_add(scale.f, scale.f, tmp.f, MPFR_RNDN);
      mpfr_abs(tmp.f, B[k].f, MPFR_RNDN);
      mpfr_add(scale.f, scale.f, tmp.f, MPFR_RNDN);
    }
  mpfr_mul_2si(tmp.f, scale.f, -(P - 64), MPFR_RNDN);
  rep.equal = !mpfr_nan_p(maxd.f) && mpfr_lessequal_p(maxd.f, tmp.f);
  rep.max_diff = mpfr_get_d(maxd.f, MPFR_RNDN);
  rep.scale = mpfr_get_d(scale.f, MPFR_RNDN);
  rep.threshold = mpfr_get_d(tmp.f, MPFR_RNDN);
  return rep;
}

std::string JacobianReport::text() const {
  std::ostringstream o;
  o << "Jacobian " << m << " x " << n << ": " << n << " JVPs (forward mode) and " << m << " VJPs (reverse mode) in the Real domain\n";
  o << "  max |J_jvp - J_vjp| = " << max_diff << " (threshold 2^-(P-64) * " << scale << " = " << threshold << "): "
    << (equal ? "equal" : "DIFFERENT") << "\n";
  o << "  op counts (Proposition 5.2): W = " << w_forward << "; one JVP " << w_jvp << ", one VJP " << w_vjp << "; n*W_jvp = "
    << n * w_jvp << ", m*W_vjp = " << m * w_vjp << "\n";
  if (m * n <= 64) {
    Eigen::IOFormat f(6, 0, ", ", "\n", "    [", "]");
    o << "  J (by JVP):\n" << by_jvp.format(f) << "\n";
  }
  return o.str();
}

nlohmann::json JacobianReport::json() const {
  nlohmann::json j;
  j["n"] = n;
  j["m"] = m;
  j["equal"] = equal;
  j["max_diff"] = max_diff;
  j["scale"] = scale;
  j["threshold"] = threshold;
  j["ops"] = {{"forward", w_forward}, {"jvp", w_jvp}, {"vjp", w_vjp}, {"n_jvp", n * w_jvp}, {"m_vjp", m * w_vjp}};
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t r = 0; r < m; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (int64_t c = 0; c < n; ++c) row.push_back(by_jvp(r, c));
    rows.push_back(row);
  }
  j["jacobian"] = rows;
  return j;
}

}  // namespace stax::autodiff
