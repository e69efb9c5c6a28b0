// The JVP table (§5.7): one rule per differentiable operator, computing
// the output's tangent `J · dx` from the tangents of the arguments.
// - Pointwise unary operators have a diagonal Jacobian, J = Jᵀ: their JVP is
//   their VJP rule (vjp_rules.cpp) applied to the tangent, so the derivative
//   of each is stated once.
// - Operators linear in their tensor argument (views, sums, cat, gather) apply
//   themselves to the tangent.
// - The rest (products, quotients, extrema, matmul, softmax) are written out.
// Kinks as in reverse mode: relu'(0) = abs'(0) = 0, maximum/minimum ties take
// the mean of the two tangents, amax/amin the mean over the tied elements.
#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "semantics/dtype.h"

namespace stax::autodiff {

using nlohmann::json;
using sem::TensorType;

namespace {

/// J = Jᵀ: the default VJP rule of `op` with the tangent as the adjoint.
JvpRule diagonal(const std::string& op) {
  return [op](JvpContext& c) -> std::string {
    std::string t = c.tangent(0);
    if (t.empty()) return "";
    std::string arg = c.arg(0), result;
    VjpContext v(
        c.node, t, c.em, [&](const std::string& n) { return n == arg; },
        [&](const std::string&, const std::string& g) { result = c.em.add(result, g); });
    default_vjp_rules().at(op)(v);
    return result;
  };
}

/// The node itself applied to the tangent of its tensor argument 0.
std::string linear(JvpContext& c) {
  std::string t = c.tangent(0);
  if (t.empty()) return "";
  json args = c.node.args;
  args[0] = t;
  return c.emit(c.node.op, args, c.node.kwargs.is_object() ? c.node.kwargs : json::object());
}

json alpha_of(const JvpContext& c) { return c.node.kwargs.is_object() ? c.node.kwargs.value("alpha", json(1)) : json(1); }
bool is_one(const json& a) { return a.is_number() && a.get<double>() == 1.0; }

JvpRule add_sub(bool sub) {
  return [sub](JvpContext& c) -> std::string {
    std::string ta = c.tangent(0), tb = c.tangent(1);
    if (!tb.empty()) {
      json a = alpha_of(c);
      if (!is_one(a)) tb = c.emit("mul.Scalar", {tb, a});
      if (ta.empty()) return sub ? c.emit("neg.default", {tb}) : tb;
      return c.emit(sub ? "sub.Tensor" : "add.Tensor", {ta, tb});
    }
    return ta;
  };
}

std::string mul_rule(JvpContext& c) {
  std::string r;
  for (size_t i : {0, 1}) {
    std::string t = c.tangent(i);
    if (t.empty()) continue;
    const json& other = c.node.args[1 - i];
    r = c.em.add(r, other.is_string() ? c.emit("mul.Tensor", {t, other}) : c.emit("mul.Scalar", {t, other}));
  }
  return r;
}

std::string div_rule(JvpContext& c) {  // (da - out * db) / b
  json mode = c.node.kwargs.is_object() ? c.node.kwargs.value("rounding_mode", json()) : json();
  if (!mode.is_null()) throw AdError{c.node.name, "(" + c.node.op + ") with rounding_mode " + mode.dump() + " is not differentiable"};
  std::string ta = c.tangent(0), tb = c.tangent(1);
  std::string u = ta;
  if (!tb.empty()) {
    std::string p = c.emit("mul.Tensor", {c.out(), tb});
    u = ta.empty() ? c.emit("neg.default", {p}) : c.emit("sub.Tensor", {ta, p});
  }
  if (u.empty()) return "";
  const json& b = c.node.args[1];
  return b.is_string() ? c.emit("div.Tensor", {u, b}) : c.emit("div.Scalar", {u, b});
}

/// pow(a, b): da · b · a^(b-1) + db · out · log(a), with PyTorch's masks
/// (vjp_rules.cpp: a VJP rule applied to each tangent; the Jacobian is
/// diagonal in each operand).
std::string pow_tensor_rule(JvpContext& c) {
  std::string r;
  for (size_t i : {0, 1}) {
    std::string t = c.tangent(i);
    if (t.empty()) continue;
    std::string arg = c.arg(i), part;
    VjpContext v(
        c.node, t, c.em, [&](const std::string& n) { return n == arg; },
        [&](const std::string&, const std::string& g) { part = c.em.add(part, g); });
    // Only operand i "wants" a gradient, so the rule emits that operand's part.
    default_vjp_rules().at("pow.Tensor_Tensor")(v);
    r = c.em.add(r, part);
  }
  return r;
}

/// maximum/minimum: the winner's tangent, the mean of both at a tie.
JvpRule extremum2(bool is_max) {
  return [is_max](JvpContext& c) -> std::string {
    std::string a = c.arg(0), b = c.arg(1);
    std::string ta = c.tangent_or_zeros(0), tb = c.tangent_or_zeros(1);
    std::string tie = c.emit("mul.Scalar", {c.emit("add.Tensor", {ta, tb}), 0.5});
    std::string eq = c.emit("eq.Tensor", {a, b});
    std::string inner = c.emit("where.self", {eq, tie, ta});
    return c.emit("where.self", {c.emit(is_max ? "lt.Tensor" : "gt.Tensor", {a, b}), tb, inner});
  };
}

std::string where_rule(JvpContext& c) {
  std::string ta = c.tangent(1), tb = c.tangent(2);
  if (ta.empty() && tb.empty()) return "";
  json x = ta.empty() ? json(0.0) : json(ta), y = tb.empty() ? json(0.0) : json(tb);
  return c.emit("where.self", {c.arg(0), x, y});
}

/// amax/amin: the mean of the tangents of the tied extremal elements.
std::string extremum_rule(JvpContext& c) {
  std::string t = c.tangent(0);
  if (t.empty()) return "";
  std::string xn = c.arg(0);
  TensorType x = c.type(xn);
  if (x.shape.empty()) return t;
  std::vector<int64_t> dims = ints_arg(c.node, 1);
  if (dims.empty())
    for (size_t d = 0; d < x.shape.size(); ++d) dims.push_back(int64_t(d));
  for (int64_t& d : dims) d = norm_dim(c.node, d, x.shape.size());
  bool keep = c.node.args.size() > 2 && c.node.args[2].is_boolean() && c.node.args[2].get<bool>();
  sem::Shape ks = x.shape;
  for (int64_t d : dims) ks[size_t(d)] = 1;
  std::string ok = keep ? c.out() : c.emit("reshape.default", {c.out(), ks});
  std::string eq = c.emit("eq.Tensor", {xn, ok});
  std::string cnt = c.emit("sum.dim_IntList", {eq, dims, keep}, {{"dtype", std::string(sem::dtype_name(c.type(t).dtype))}});
  std::string num = c.emit("sum.dim_IntList", {c.emit("mul.Tensor", {t, eq}), dims, keep});
  return c.emit("div.Tensor", {num, cnt});
}

JvpRule matmul_rule(const char* op) {
  return [op](JvpContext& c) -> std::string {
    std::string r;
    if (!c.tangent(0).empty()) r = c.emit(op, {c.tangent(0), c.arg(1)});
    if (!c.tangent(1).empty()) r = c.em.add(r, c.emit(op, {c.arg(0), c.tangent(1)}));
    return r;
  };
}

std::string cat_rule(JvpContext& c) {
  json list = json::array();
  bool any = false;
  for (const json& e : c.node.args[0]) {
    std::string name = e.get<std::string>(), t = c.tangent_of(name);
    any |= !t.empty();
    list.push_back(t.empty() ? c.em.zeros(c.type(name)) : t);
  }
  if (!any) return "";
  json args = c.node.args;
  args[0] = list;
  return c.emit("cat.default", args);
}

std::string softmax_rule(JvpContext& c) {  // y * (t - sum(t * y))
  std::string t = c.tangent(0);
  if (t.empty()) return "";
  int64_t d = int_arg(c.node, 1, -1);
  std::string y = c.out();
  std::string s = c.emit("sum.dim_IntList", {c.emit("mul.Tensor", {t, y}), {d}, true});
  return c.emit("mul.Tensor", {c.emit("sub.Tensor", {t, s}), y});
}

std::string log_softmax_rule(JvpContext& c) {  // t - sum(exp(y) * t)
  std::string t = c.tangent(0);
  if (t.empty()) return "";
  int64_t d = int_arg(c.node, 1, -1);
  std::string p = c.emit("mul.Tensor", {c.emit("exp.default", {c.out()}), t});
  return c.emit("sub.Tensor", {t, c.emit("sum.dim_IntList", {p, {d}, true})});
}

std::string prod_rule(JvpContext& c) {  // Σ over the reduced dims of dx · ∂prod/∂x
  std::string t = c.tangent(0);
  if (t.empty()) return "";
  size_t r = c.type(c.arg(0)).shape.size();
  if (r == 0) return t;
  std::string p = c.emit("mul.Tensor", {t, prod_derivative(c.node, c.em)});
  if (c.node.op == "prod.default") return c.emit("sum.default", {p});
  bool keep = c.node.args.size() > 2 && c.node.args[2].is_boolean() && c.node.args[2].get<bool>();
  return c.emit("sum.dim_IntList", {p, {norm_dim(c.node, int_arg(c.node, 1, 0), r)}, keep});
}

std::string pass(JvpContext& c) { return c.tangent(0); }  // expand_to converts the dtype

}  // namespace

const JvpRules& default_jvp_rules() {
  static const JvpRules table = [] {
    JvpRules r;
    for (const char* op : {"neg.default", "abs.default", "relu.default", "sigmoid.default", "tanh.default", "exp.default",
                           "log.default", "sqrt.default", "rsqrt.default", "erf.default", "log1p.default", "log2.default",
                           "log10.default", "expm1.default", "sin.default", "cos.default", "pow.Tensor_Scalar",
                           "gelu.default", "add.Scalar", "sub.Scalar", "mul.Scalar", "div.Scalar"})
      r[op] = diagonal(op);
    r["add.Tensor"] = add_sub(false);
    r["sub.Tensor"] = add_sub(true);
    r["mul.Tensor"] = mul_rule;
    r["prod.dim_int"] = r["prod.default"] = prod_rule;
    r["pow.Tensor_Tensor"] = pow_tensor_rule;
    r["div.Tensor"] = div_rule;
    r["maximum.default"] = extremum2(true);
    r["minimum.default"] = extremum2(false);
    r["where.self"] = where_rule;
    for (const char* op : {"sum.dim_IntList", "sum.default", "mean.dim", "mean.default", "t.default", "transpose.int",
                           "permute.default", "view.default", "reshape.default", "_unsafe_view.default", "squeeze.dim",
                           "squeeze.dims", "squeeze.default", "unsqueeze.default", "expand.default", "slice.Tensor",
                           "select.int", "index.Tensor"})
      r[op] = linear;
    r["amax.default"] = r["amin.default"] = extremum_rule;
    r["mm.default"] = matmul_rule("mm.default");
    r["bmm.default"] = matmul_rule("bmm.default");
    r["matmul.default"] = matmul_rule("matmul.default");  // bilinear, every rank pair
    r["cat.default"] = cat_rule;
    r["softmax.int"] = r["_softmax.default"] = softmax_rule;
    r["log_softmax.int"] = r["_log_softmax.default"] = log_softmax_rule;
    for (const char* op : {"clone.default", "alias.default", "contiguous.default", "_to_copy.default", "to.dtype"}) r[op] = pass;
    return r;
  }();
  return table;
}

}  // namespace stax::autodiff
