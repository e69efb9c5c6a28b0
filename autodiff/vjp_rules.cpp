// The VJP table (§5.2; the analogue of PyTorch's derivatives.yaml): one
// rule per differentiable operator of docs/graph-format.md, each emitting the
// backward nodes of `grad_input = grad · J` in the graph format's operators.
//
// Kinks follow PyTorch's convention: relu'(0) = 0 (threshold_backward reads
// the output, out > 0), abs'(0) = 0 (sgn(0) = 0), maximum/minimum split the
// gradient in half between tied operands (grad/2 each), amax/amin share it
// evenly among all tied elements (grad / count).
#include <cmath>

#include "autodiff/vjp.h"
#include "semantics/dtype.h"

namespace stax::autodiff {

using nlohmann::json;
using sem::TensorType;

namespace {

std::string dtype_str(sem::DType t) { return std::string(sem::dtype_name(t)); }

/// grad · f'(x) for a pointwise f whose derivative factor is `d`.
void times(VjpContext& c, size_t i, const std::string& d) { c.give(i, c.emit("mul.Tensor", {c.grad, d})); }

json alpha_of(const VjpContext& c) { return c.node.kwargs.is_object() ? c.node.kwargs.value("alpha", json(1)) : json(1); }
bool is_one(const json& a) { return a.is_number() && a.get<double>() == 1.0; }
json negate(const json& a) { return a.is_number_integer() ? json(-a.get<int64_t>()) : json(-a.get<double>()); }

/// `g` (the adjoint of a reduction over `dims` of a tensor of type `x`)
/// brought back to x's rank: keepdim form (size-1 dims) when `expand` is
/// false, else expanded to x's shape.
std::string unreduce(VjpContext& c, const std::string& g, const TensorType& x, std::vector<int64_t> dims, bool keepdim,
                     bool expand) {
  size_t r = x.shape.size();
  if (dims.empty())
    for (size_t d = 0; d < r; ++d) dims.push_back(int64_t(d));
  for (int64_t& d : dims) d = norm_dim(c.node, d, r);
  std::sort(dims.begin(), dims.end());
  std::string v = g;
  bool leading = true;
  for (size_t k = 0; k < dims.size(); ++k) leading &= dims[k] == int64_t(k);
  if (!keepdim && r > 0 && !(leading && expand))
    for (int64_t d : dims) v = c.emit("unsqueeze.default", {v, d});
  if (expand && c.type(v).shape != x.shape) v = c.emit("expand.default", {v, x.shape});
  return v;
}

}  // namespace

/// ∂ prod / ∂ x_i = the product of the other elements, zeros included
/// (PyTorch's prod_backward): with P the product of the nonzero elements and
/// z the number of zeros along the reduced dims, P / x_i when z = 0, P at
/// the single zero when z = 1, else 0.
std::string prod_derivative(const compiler::Node& n, Emitter& em) {
  std::string x = n.args[0].get<std::string>();
  TensorType tx = em.type(x);
  size_t r = tx.shape.size();
  std::string dt(sem::dtype_name(tx.dtype));
  std::string zero = em.emit("eq.Scalar", {x, 0});
  std::string nz = em.emit("where.self", {zero, 1.0, x});
  std::string p, z;
  if (n.op == "prod.default" && r > 1) {  // every dim: through the flattened tensor
    std::string pf = em.emit("prod.dim_int", {em.emit("reshape.default", {nz, {-1}}), 0, true});
    p = em.emit("reshape.default", {pf, sem::Shape(r, 1)});
    std::vector<int64_t> all;
    for (size_t d = 0; d < r; ++d) all.push_back(int64_t(d));
    z = em.emit("sum.dim_IntList", {zero, all, true}, {{"dtype", dt}});
  } else {
    int64_t d = n.op == "prod.default" ? 0 : norm_dim(n, int_arg(n, 1, 0), r);
    p = em.emit("prod.dim_int", {nz, d, true});
    z = em.emit("sum.dim_IntList", {zero, {d}, true}, {{"dtype", dt}});
  }
  std::string none = em.emit("div.Tensor", {p, nz});
  std::string one = em.emit("where.self", {zero, p, 0.0});
  std::string r1 = em.emit("where.self", {em.emit("eq.Scalar", {z, 1}), one, 0.0});
  return em.emit("where.self", {em.emit("eq.Scalar", {z, 0}), none, r1});
}

namespace {

void prod_rule(VjpContext& c) {
  TensorType x = c.type(c.arg(0));
  if (x.shape.empty()) return c.give(0, c.grad);
  bool whole = c.node.op == "prod.default";
  bool keep = !whole && c.node.args.size() > 2 && c.node.args[2].is_boolean() && c.node.args[2].get<bool>();
  std::vector<int64_t> dims;
  if (!whole) dims.push_back(int_arg(c.node, 1, 0));
  std::string f = prod_derivative(c.node, c.em);
  std::string g = unreduce(c, c.grad, x, dims, whole ? false : keep, false);
  c.give(0, c.emit("mul.Tensor", {g, f}));
}

void sum_rule(VjpContext& c) {
  TensorType x = c.type(c.arg(0));
  bool whole = c.node.op == "sum.default";
  c.give(0, unreduce(c, c.grad, x, whole ? std::vector<int64_t>{} : ints_arg(c.node, 1),
                     !whole && c.node.args.size() > 2 && c.node.args[2].is_boolean() && c.node.args[2].get<bool>(), true));
}

void mean_rule(VjpContext& c) {
  TensorType x = c.type(c.arg(0));
  bool whole = c.node.op == "mean.default";
  std::vector<int64_t> dims = whole ? std::vector<int64_t>{} : ints_arg(c.node, 1);
  int64_t cnt = 1;
  if (dims.empty())
    cnt = sem::num_elements(x.shape);
  else
    for (int64_t d : dims) cnt *= x.shape.empty() ? 1 : x.shape[size_t(norm_dim(c.node, d, x.shape.size()))];
  bool keep = !whole && c.node.args.size() > 2 && c.node.args[2].is_boolean() && c.node.args[2].get<bool>();
  std::string e = unreduce(c, c.grad, x, dims, keep, true);
  c.give(0, c.emit("div.Scalar", {e, cnt}));
}

/// amax/amin: the gradient shared evenly among the elements equal to the
/// result (PyTorch's amax/amin backward: grad * (x == out) / count).
void extremum_rule(VjpContext& c) {
  std::string xn = c.arg(0);
  TensorType x = c.type(xn);
  if (x.shape.empty()) return c.give(0, c.grad);
  std::vector<int64_t> dims = ints_arg(c.node, 1);
  bool keep = c.node.args.size() > 2 && c.node.args[2].is_boolean() && c.node.args[2].get<bool>();
  if (dims.empty())
    for (size_t d = 0; d < x.shape.size(); ++d) dims.push_back(int64_t(d));
  std::string gk = unreduce(c, c.grad, x, dims, keep, false);
  std::string ok = unreduce(c, c.out(), x, dims, keep, false);
  std::string eq = c.emit("eq.Tensor", {xn, ok});
  // The count as a float (dtype kwarg): an integer computed from x would
  // stop a second differentiation (HVP) at this node.
  std::string cnt = c.emit("sum.dim_IntList", {eq, dims, true}, {{"dtype", dtype_str(c.type(c.grad).dtype)}});
  std::string m = c.emit("mul.Tensor", {gk, eq});
  c.give(0, c.emit("div.Tensor", {m, cnt}));
}

void add_rule(VjpContext& c) {
  c.give(0, c.grad);
  if (!c.wants(1)) return;
  json a = alpha_of(c);
  c.give(1, is_one(a) ? c.grad : c.emit("mul.Scalar", {c.grad, a}));
}

void sub_rule(VjpContext& c) {
  c.give(0, c.grad);
  if (!c.wants(1)) return;
  json a = alpha_of(c);
  c.give(1, is_one(a) ? c.emit("neg.default", {c.grad}) : c.emit("mul.Scalar", {c.grad, negate(a)}));
}

void mul_rule(VjpContext& c) {
  for (size_t i : {0, 1}) {
    if (!c.wants(i)) continue;
    const json& other = c.node.args[1 - i];
    c.give(i, other.is_string() ? c.emit("mul.Tensor", {c.grad, other}) : c.emit("mul.Scalar", {c.grad, other}));
  }
}

/// Theorem 5.1's division: t = grad / b, then a += t, b -= t · out.
void div_rule(VjpContext& c) {
  json mode = c.node.kwargs.is_object() ? c.node.kwargs.value("rounding_mode", json()) : json();
  if (!mode.is_null()) throw AdError{c.node.name, "(" + c.node.op + ") with rounding_mode " + mode.dump() + " is not differentiable"};
  if (!c.wants(0) && !c.wants(1)) return;
  const json& b = c.node.args[1];
  std::string t = b.is_string() ? c.emit("div.Tensor", {c.grad, b}) : c.emit("div.Scalar", {c.grad, b});
  c.give(0, t);
  if (c.wants(1)) c.give(1, c.emit("neg.default", {c.emit("mul.Tensor", {t, c.out()})}));
}

void abs_rule(VjpContext& c) {  // sgn(x) · grad, sgn(0) = 0
  std::string x = c.arg(0);
  std::string neg = c.emit("where.self", {c.emit("lt.Scalar", {x, 0}), c.emit("neg.default", {c.grad}), 0.0});
  c.give(0, c.emit("where.self", {c.emit("gt.Scalar", {x, 0}), c.grad, neg}));
}

void pow_scalar_rule(VjpContext& c) {  // e · x^(e-1) · grad; e = 0 gives zeros
  const json& e = c.node.args[1];
  if (!e.is_number()) throw AdError{c.node.name, "(pow.Tensor_Scalar) the exponent must be a number"};
  std::string x = c.arg(0);
  double ev = e.get<double>();
  if (ev == 0.0) return c.give(0, c.em.zeros(c.type(x)));
  if (ev == 1.0) return c.give(0, c.grad);
  if (ev == 2.0) return times(c, 0, c.emit("mul.Scalar", {x, 2.0}));
  json em1 = e.is_number_integer() ? json(e.get<int64_t>() - 1) : json(ev - 1.0);
  times(c, 0, c.emit("mul.Scalar", {c.emit("pow.Tensor_Scalar", {x, em1}), e}));
}

/// pow(a, b) for two tensors, PyTorch's masks: b · a^(b-1) (0 where b = 0)
/// and out · log(a) (0 where a = 0 and b >= 0).
void pow_tensor_rule(VjpContext& c) {
  std::string a = c.arg(0), b = c.arg(1);
  if (c.wants(0)) {
    std::string p = c.emit("pow.Tensor_Tensor", {a, c.emit("sub.Scalar", {b, 1.0})});
    std::string d = c.emit("mul.Tensor", {c.grad, c.emit("mul.Tensor", {b, p})});
    c.give(0, c.emit("where.self", {c.emit("eq.Scalar", {b, 0}), 0.0, d}));
  }
  if (c.wants(1)) {
    std::string t = c.emit("mul.Tensor", {c.grad, c.emit("mul.Tensor", {c.out(), c.emit("log.default", {a})})});
    std::string in = c.emit("where.self", {c.emit("ge.Scalar", {b, 0}), 0.0, t});
    c.give(1, c.emit("where.self", {c.emit("eq.Scalar", {a, 0}), in, t}));
  }
}

/// maximum (is_max) / minimum: the winner gets grad, ties grad/2 each
/// (PyTorch: where(a == b, grad / 2, grad).masked_fill_(a < b, 0)).
VjpRule extremum2_rule(bool is_max) {
  return [is_max](VjpContext& c) {
    std::string a = c.arg(0), b = c.arg(1);
    std::string half = c.emit("mul.Scalar", {c.grad, 0.5});
    std::string eq = c.emit("eq.Tensor", {a, b});
    std::string tie = c.emit("where.self", {eq, half, c.grad});
    const char* lose = is_max ? "lt.Tensor" : "gt.Tensor";
    if (c.wants(0)) c.give(0, c.emit("where.self", {c.emit(lose, {a, b}), 0.0, tie}));
    if (c.wants(1)) c.give(1, c.emit("where.self", {c.emit(lose, {b, a}), 0.0, tie}));
  };
}

void where_rule(VjpContext& c) {
  if (c.wants(1)) c.give(1, c.emit("where.self", {c.arg(0), c.grad, 0.0}));
  if (c.wants(2)) c.give(2, c.emit("where.self", {c.arg(0), 0.0, c.grad}));
}

VjpRule matmul_rule(bool batched) {
  return [batched](VjpContext& c) {
    auto tr = [&](const std::string& v) {
      return batched ? c.emit("transpose.int", {v, 1, 2}) : c.emit("t.default", {v});
    };
    const char* op = batched ? "bmm.default" : "mm.default";
    if (c.wants(0)) c.give(0, c.emit(op, {c.grad, tr(c.arg(1))}));
    if (c.wants(1)) {
      std::string ta = tr(c.arg(0));
      c.give(1, c.emit(op, {ta, c.grad}));
    }
  };
}

/// matmul.default kept as one node (Listing 5.2's form), every rank pair of
/// its decomposition: the product with the other operand transposed; vectors
/// as outer products; batch broadcasting undone by sum_to.
void matmul_any_rule(VjpContext& c) {
  std::string a = c.arg(0), b = c.arg(1), g = c.grad;
  size_t ra = c.type(a).shape.size(), rb = c.type(b).shape.size();
  auto tr = [&](const std::string& v, size_t r) {
    return r == 2 ? c.emit("t.default", {v}) : c.emit("transpose.int", {v, -1, -2});
  };
  auto unsq = [&](const std::string& v, int64_t d) { return c.emit("unsqueeze.default", {v, d}); };
  if (ra == 1 && rb == 1) {
    if (c.wants(0)) c.give(0, c.emit("mul.Tensor", {b, g}));
    if (c.wants(1)) c.give(1, c.emit("mul.Tensor", {a, g}));
  } else if (ra == 1) {  // a[k] @ B[k, n]
    if (c.wants(0)) c.give(0, c.emit("matmul.default", {b, g}));
    if (c.wants(1)) c.give(1, c.emit("mm.default", {unsq(a, 1), unsq(g, 0)}));
  } else if (rb == 1) {  // A[m, k] @ b[k] (A of rank 2)
    if (c.wants(0)) c.give(0, c.emit("mm.default", {unsq(g, 1), unsq(b, 0)}));
    if (c.wants(1)) c.give(1, c.emit("matmul.default", {tr(a, ra), g}));
  } else {
    if (c.wants(0)) c.give(0, c.emit("matmul.default", {g, tr(b, rb)}));
    if (c.wants(1)) c.give(1, c.emit("matmul.default", {tr(a, ra), g}));
  }
}

void permute_rule(VjpContext& c) {
  std::vector<int64_t> p = ints_arg(c.node, 1), inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[size_t(norm_dim(c.node, p[i], p.size()))] = int64_t(i);
  c.give(0, c.emit("permute.default", {c.grad, inv}));
}

void reshape_rule(VjpContext& c) { c.give(0, c.emit("reshape.default", {c.grad, c.type(c.arg(0)).shape})); }

/// The adjoint of a slice [start, start + k·step) along dim d of a tensor of
/// type x: grad scattered back, zeros elsewhere. Step 1: cat with zero
/// blocks; larger steps: a gather from grad padded with one zero slice.
std::string unslice(VjpContext& c, const std::string& g, const TensorType& x, int64_t d, int64_t start, int64_t step) {
  TensorType tg = c.type(g);
  int64_t n = x.shape[size_t(d)], k = tg.shape[size_t(d)];
  auto zeros = [&](int64_t len) {
    TensorType z = tg;
    z.shape[size_t(d)] = len;
    return c.em.zeros(z);
  };
  if (step == 1 || k <= 1) {
    json parts = json::array();
    if (start > 0) parts.push_back(zeros(start));
    parts.push_back(g);
    if (n - start - k > 0) parts.push_back(zeros(n - start - k));
    return parts.size() == 1 ? g : c.emit("cat.default", {parts, d});
  }
  std::string gp = c.emit("cat.default", {json::array({g, zeros(1)}), d});
  std::string i = c.emit("arange.default", {n});
  std::string rel = c.emit("sub.Scalar", {i, start});
  std::string q = c.emit("floor_divide.default", {rel, step});
  std::string rem = c.emit("remainder.Scalar", {rel, step});
  std::string in3 = c.emit("where.self", {c.emit("eq.Scalar", {rem, 0}), q, k});
  std::string in2 = c.emit("where.self", {c.emit("lt.Scalar", {rel, k * step}), in3, k});
  std::string idx = c.emit("where.self", {c.emit("ge.Scalar", {rel, 0}), in2, k});
  json list = json::array();
  for (int64_t e = 0; e < d; ++e) list.push_back(nullptr);
  list.push_back(idx);
  return c.emit("index.Tensor", {gp, list});
}

void slice_rule(VjpContext& c) {
  TensorType x = c.type(c.arg(0));
  int64_t d = norm_dim(c.node, int_arg(c.node, 1, 0), x.shape.size());
  int64_t n = x.shape[size_t(d)];
  int64_t start = int_arg(c.node, 2, 0), stop = int_arg(c.node, 3, INT64_MAX), step = int_arg(c.node, 4, 1);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  start = std::clamp<int64_t>(start, 0, n);
  c.give(0, unslice(c, c.grad, x, d, start, step));
}

void select_rule(VjpContext& c) {
  TensorType x = c.type(c.arg(0));
  int64_t d = norm_dim(c.node, int_arg(c.node, 1, 0), x.shape.size());
  int64_t i = int_arg(c.node, 2, 0);
  if (i < 0) i += x.shape[size_t(d)];
  c.give(0, unslice(c, c.emit("unsqueeze.default", {c.grad, d}), x, d, i, 1));
}

void cat_rule(VjpContext& c) {
  const json& list = c.node.args[0];
  size_t rank = c.out_type().shape.size();
  int64_t d = norm_dim(c.node, int_arg(c.node, 1, 0), rank);
  int64_t off = 0;
  for (const json& e : list) {
    std::string name = e.get<std::string>();
    int64_t len = c.type(name).shape[size_t(d)];
    if (c.wants_name(name)) c.give_name(name, c.emit("slice.Tensor", {c.grad, d, off, off + len, 1}));
    off += len;
  }
}

/// index.Tensor (a gather along dim d): the adjoint is a scatter-add,
/// written as a contraction with the one-hot matrix (j == idx[i] mod n).
void index_rule(VjpContext& c) {
  std::string xn = c.arg(0);
  TensorType x = c.type(xn);
  const json& list = c.node.args[1];
  int64_t d = 0;
  std::string idx;
  for (size_t k = 0; k < list.size(); ++k)
    if (list[k].is_string()) d = int64_t(k), idx = list[k].get<std::string>();
  int64_t n = x.shape[size_t(d)];
  sem::DType gt = c.type(c.grad).dtype;
  std::string ar = c.emit("unsqueeze.default", {c.emit("arange.default", {n}), 1});
  std::string iw = c.emit("unsqueeze.default", {c.emit("remainder.Scalar", {idx, n}), 0});
  std::string oh = c.emit("_to_copy.default", {c.emit("eq.Tensor", {ar, iw})}, {{"dtype", dtype_str(gt)}});
  TensorType toh = c.type(oh);
  sem::Shape s = toh.shape;
  for (size_t k = size_t(d) + 1; k < x.shape.size(); ++k) s.push_back(1);
  if (s != toh.shape) oh = c.emit("reshape.default", {oh, s});
  std::string gu = c.emit("unsqueeze.default", {c.grad, d});
  std::string p = c.emit("mul.Tensor", {gu, oh});
  c.give(0, c.emit("sum.dim_IntList", {p, {d + 1}, false}));
}

void softmax_rule(VjpContext& c) {  // (grad - sum(grad * y)) * y
  int64_t d = int_arg(c.node, 1, -1);
  std::string y = c.out();
  std::string s = c.emit("sum.dim_IntList", {c.emit("mul.Tensor", {c.grad, y}), {d}, true});
  c.give(0, c.emit("mul.Tensor", {c.emit("sub.Tensor", {c.grad, s}), y}));
}

void log_softmax_rule(VjpContext& c) {  // grad - exp(y) * sum(grad)
  int64_t d = int_arg(c.node, 1, -1);
  std::string s = c.emit("sum.dim_IntList", {c.grad, {d}, true});
  std::string p = c.emit("mul.Tensor", {c.emit("exp.default", {c.out()}), s});
  c.give(0, c.emit("sub.Tensor", {c.grad, p}));
}

void gelu_rule(VjpContext& c) {  // Listing 5.2: gelu_backward reads gelu's input
  json kw = json::object();
  if (c.node.kwargs.is_object() && c.node.kwargs.contains("approximate") && c.node.kwargs["approximate"] != "none")
    kw["approximate"] = c.node.kwargs["approximate"];
  c.give(0, c.emit("gelu_backward.default", {c.grad, c.arg(0)}, kw));
}

void identity_rule(VjpContext& c) { c.give(0, c.grad); }

}  // namespace

const VjpRules& default_vjp_rules() {
  static const VjpRules table = [] {
    VjpRules r;
    auto unary = [&](const char* op, std::function<void(VjpContext&)> f) { r[op] = std::move(f); };
    r["add.Tensor"] = r["add.Scalar"] = add_rule;
    r["sub.Tensor"] = r["sub.Scalar"] = sub_rule;
    r["mul.Tensor"] = r["mul.Scalar"] = mul_rule;
    r["div.Tensor"] = r["div.Scalar"] = div_rule;
    unary("neg.default", [](VjpContext& c) { c.give(0, c.emit("neg.default", {c.grad})); });
    unary("abs.default", abs_rule);
    // relu'(0) = 0: threshold_backward(grad, out, 0) passes grad where out > 0.
    unary("relu.default", [](VjpContext& c) {
      c.give(0, c.emit("where.self", {c.emit("gt.Scalar", {c.out(), 0}), c.grad, 0.0}));
    });
    // The derivatives of Theorem 5.1, from the saved output where it helps.
    unary("sigmoid.default", [](VjpContext& c) {
      times(c, 0, c.emit("mul.Tensor", {c.out(), c.emit("sub.Tensor", {1.0, c.out()})}));
    });
    unary("tanh.default", [](VjpContext& c) {
      times(c, 0, c.emit("sub.Tensor", {1.0, c.emit("mul.Tensor", {c.out(), c.out()})}));
    });
    unary("exp.default", [](VjpContext& c) { times(c, 0, c.out()); });
    unary("log.default", [](VjpContext& c) { c.give(0, c.emit("div.Tensor", {c.grad, c.arg(0)})); });
    unary("sqrt.default", [](VjpContext& c) {
      c.give(0, c.emit("div.Tensor", {c.grad, c.emit("mul.Scalar", {c.out(), 2.0})}));
    });
    unary("rsqrt.default", [](VjpContext& c) {  // -0.5 * out^3
      std::string o3 = c.emit("mul.Tensor", {c.emit("mul.Tensor", {c.out(), c.out()}), c.out()});
      times(c, 0, c.emit("mul.Scalar", {o3, -0.5}));
    });
    unary("erf.default", [](VjpContext& c) {  // 2/sqrt(pi) * exp(-x^2)
      std::string x = c.arg(0);
      std::string e = c.emit("exp.default", {c.emit("neg.default", {c.emit("mul.Tensor", {x, x})})});
      times(c, 0, c.emit("mul.Scalar", {e, 1.1283791670955126}));
    });
    unary("log1p.default", [](VjpContext& c) {
      c.give(0, c.emit("div.Tensor", {c.grad, c.emit("add.Scalar", {c.arg(0), 1.0})}));
    });
    unary("log2.default", [](VjpContext& c) {  // 1 / (x ln 2)
      c.give(0, c.emit("div.Tensor", {c.grad, c.emit("mul.Scalar", {c.arg(0), 0.6931471805599453})}));
    });
    unary("log10.default", [](VjpContext& c) {  // 1 / (x ln 10)
      c.give(0, c.emit("div.Tensor", {c.grad, c.emit("mul.Scalar", {c.arg(0), 2.302585092994046})}));
    });
    unary("expm1.default", [](VjpContext& c) { times(c, 0, c.emit("add.Scalar", {c.out(), 1.0})); });
    unary("sin.default", [](VjpContext& c) { times(c, 0, c.emit("cos.default", {c.arg(0)})); });
    unary("cos.default", [](VjpContext& c) {
      c.give(0, c.emit("neg.default", {c.emit("mul.Tensor", {c.grad, c.emit("sin.default", {c.arg(0)})})}));
    });
    r["pow.Tensor_Scalar"] = pow_scalar_rule;
    r["pow.Tensor_Tensor"] = pow_tensor_rule;
    r["maximum.default"] = extremum2_rule(true);
    r["minimum.default"] = extremum2_rule(false);
    r["where.self"] = where_rule;
    r["sum.dim_IntList"] = r["sum.default"] = sum_rule;
    r["prod.dim_int"] = r["prod.default"] = prod_rule;
    r["mean.dim"] = r["mean.default"] = mean_rule;
    r["amax.default"] = r["amin.default"] = extremum_rule;
    r["mm.default"] = matmul_rule(false);
    r["bmm.default"] = matmul_rule(true);
    r["matmul.default"] = matmul_any_rule;
    r["t.default"] = [](VjpContext& c) { c.give(0, c.emit("t.default", {c.grad})); };
    r["transpose.int"] = [](VjpContext& c) {
      c.give(0, c.emit("transpose.int", {c.grad, c.node.args[1], c.node.args[2]}));
    };
    r["permute.default"] = permute_rule;
    for (const char* op : {"view.default", "reshape.default", "_unsafe_view.default", "squeeze.dim", "squeeze.dims",
                           "squeeze.default", "unsqueeze.default"})
      r[op] = reshape_rule;
    r["expand.default"] = identity_rule;  // sum_to undoes the broadcast
    r["slice.Tensor"] = slice_rule;
    r["select.int"] = select_rule;
    r["cat.default"] = cat_rule;
    r["index.Tensor"] = index_rule;
    r["softmax.int"] = r["_softmax.default"] = softmax_rule;
    r["log_softmax.int"] = r["_log_softmax.default"] = log_softmax_rule;
    r["gelu.default"] = gelu_rule;
    for (const char* op : {"clone.default", "alias.default", "contiguous.default", "_to_copy.default", "to.dtype"})
      r[op] = identity_rule;  // sum_to converts back to the operand's dtype
    return r;
  }();
  return table;
}

}  // namespace stax::autodiff
