// The decomposition table (§4.8): operators outside the lowering basis
// expand into basis nodes before lowering, so the eager lowering (every node
// realized) realizes each step of the expansion, exactly like a framework
// that runs the decomposed graph. Shapes are needed (mean's divisor,
// layer_norm's dims, matmul's ranks), so each node is typed as it is seen.
#include <cmath>
#include <map>
#include <set>

#include "compiler/lower.h"
#include "compiler/ops.h"

namespace stax::compiler {

using nlohmann::json;
using namespace sem;

namespace {

struct Expander {
  Graph out;
  std::map<std::string, TensorType> types;
  std::set<std::string> names;
  detail::RuleEnv env;
  /// Non-basis operators kept as they are (typed through their expansion).
  std::function<bool(const std::string&)> keep;

  Expander() {
    env.ref = [this](const std::string& n) { return make_expr(types.at(n), NameE{n}); };
    env.in_memory = [](const std::string& n, const std::string&) { return n; };
    env.is_realized = [](const std::string&) { return true; };
  }

  std::string fresh(const std::string& stem) {
    std::string s = stem;
    for (int k = 1; names.count(s); ++k) s = stem + "_" + std::to_string(k);
    names.insert(s);
    return s;
  }

  /// Types a basis node and appends it.
  void emit_basis(const Node& n) {
    Expr e = detail::lower_node(n, env);
    types[n.name] = e->type;
    out.nodes.push_back(n);
  }

  const OpSignature* sig(const std::string& op) {
    for (const OpSignature& s : op_signatures())
      if (s.name == op) return &s;
    return nullptr;
  }

  /// Appends node `n` (named `name`), expanding it when it is not basis.
  void add(const Node& n) {
    const OpSignature* s = sig(n.op);
    if (!s) throw detail::NodeError{"unknown operator '" + n.op + "' (see docs/graph-format.md for the operator set)"};
    int na = int(n.args.size());
    if (na < s->min_args || na > s->max_args)
      throw detail::NodeError{n.op + " takes " +
                              (s->min_args == s->max_args ? std::to_string(s->min_args)
                                                          : std::to_string(s->min_args) + " to " + std::to_string(s->max_args)) +
                              " positional argument(s), got " + std::to_string(na)};
    if (s->basis) return emit_basis(n);
    if (keep && keep(n.op)) {
      size_t mark = out.nodes.size();
      expand(n);
      out.nodes.resize(mark);
      out.nodes.push_back(n);
      return;
    }
    expand(n);
  }

  TensorType type_of_arg(const Node& n, size_t i) {
    if (i >= n.args.size() || !n.args[i].is_string())
      throw detail::NodeError{"argument " + std::to_string(i) + " must be a tensor (a node or input name)"};
    return types.at(n.args[i].get<std::string>());
  }

  /// A sub-node of an expansion; `last` keeps the original name.
  std::string sub(const Node& parent, const std::string& suffix, const std::string& op, json args, json kwargs = json::object(),
                  bool last = false) {
    Node m{last ? parent.name : fresh(parent.name + "_" + suffix), op, std::move(args), std::move(kwargs)};
    add(m);
    return m.name;
  }

  std::vector<int64_t> dims_of(const Node& n, size_t i, size_t rank) {
    std::vector<int64_t> d;
    if (i < n.args.size() && n.args[i].is_number_integer()) d.push_back(n.args[i].get<int64_t>());
    else if (i < n.args.size() && n.args[i].is_array())
      for (const json& x : n.args[i]) d.push_back(x.get<int64_t>());
    if (d.empty())
      for (size_t k = 0; k < rank; ++k) d.push_back(int64_t(k));
    for (int64_t& x : d) {
      if (x < -int64_t(rank) || x >= int64_t(std::max<size_t>(rank, 1)))
        throw detail::NodeError{"dim " + std::to_string(x) + " is out of range for rank " + std::to_string(rank)};
      if (x < 0) x += int64_t(rank);
    }
    return d;
  }

  /// Expands a node whose operator is not basis by its entry in expansions().
  void expand(const Node& n) {
    auto it = expansions().find(std::string_view(n.op).substr(0, n.op.find('.')));
    if (it == expansions().end()) throw detail::NodeError{"no decomposition for '" + n.op + "'"};
    const json& a = n.args;
    (this->*it->second)(n, a.size() > 0 && a[0].is_string() ? a[0].get<std::string>() : "");
  }

  /// An expansion: adds the basis nodes (sub) that compute node `n`, the
  /// last one under its name; `x` is its first argument's name (empty when
  /// that argument is not a name).
  using Expansion = void (Expander::*)(const Node& n, const std::string& x);

  /// The decomposition table: an operator's name (its overload stripped) to
  /// its expansion.
  static const std::map<std::string, Expansion, std::less<>>& expansions() {
    static const std::map<std::string, Expansion, std::less<>> table = {
        {"mean", &Expander::mean},
        {"softmax", &Expander::softmax},
        {"_softmax", &Expander::softmax},
        {"log_softmax", &Expander::log_softmax},
        {"_log_softmax", &Expander::log_softmax},
        {"layer_norm", &Expander::layer_norm},
        {"gelu", &Expander::gelu},
        {"gelu_backward", &Expander::gelu_backward},
        {"matmul", &Expander::matmul},
        {"addmm", &Expander::addmm},
        {"gather", &Expander::gather},
        {"scalar_tensor", &Expander::scalar_tensor},
    };
    return table;
  }

  // ---- the expansions, one per operator

  /// mean(x, dims, keepdim): the sum over the dims divided by their element count.
  void mean(const Node& n, const std::string& x) {
    const json& a = n.args;
    TensorType t = type_of_arg(n, 0);
    if (!is_float(t.dtype)) throw detail::NodeError{"mean needs a float tensor, got " + type_str(t)};
    std::vector<int64_t> d = dims_of(n, 1, t.shape.size());
    int64_t cnt = 1;
    for (int64_t k : d) cnt *= t.shape.empty() ? 1 : t.shape[size_t(k)];
    bool keep = a.size() > 2 && a[2].is_boolean() && a[2].get<bool>();
    std::string s = sub(n, "sum", "sum.dim_IntList", {x, d, keep});
    sub(n, "", "div.Scalar", {s, cnt}, json::object(), true);
  }

  /// softmax and log_softmax over one dim, shifted by its maximum: exp(x - m) / sum,
  /// or (x - m) - log(sum) (`take_log`).
  void softmax_like(const Node& n, const std::string& x, bool take_log) {
    const json& a = n.args;
    TensorType t = type_of_arg(n, 0);
    if (!is_float(t.dtype)) throw detail::NodeError{n.op + " needs a float tensor, got " + type_str(t)};
    if (a.size() < 2 || !a[1].is_number_integer()) throw detail::NodeError{"argument 1 (dim) must be an integer"};
    int64_t dim = dims_of(n, 1, t.shape.size())[0];
    std::string m = sub(n, "amax", "amax.default", {x, {dim}, true});
    std::string sh = sub(n, "sub", "sub.Tensor", {x, m});
    std::string e = sub(n, "exp", "exp.default", {sh});
    std::string z = sub(n, "sum", "sum.dim_IntList", {e, {dim}, true});
    if (!take_log) {
      sub(n, "", "div.Tensor", {e, z}, json::object(), true);
    } else {
      std::string lz = sub(n, "log", "log.default", {z});
      sub(n, "", "sub.Tensor", {sh, lz}, json::object(), true);
    }
  }

  void softmax(const Node& n, const std::string& x) { softmax_like(n, x, false); }
  void log_softmax(const Node& n, const std::string& x) { softmax_like(n, x, true); }

  /// layer_norm(x, normalized_shape, weight, bias, eps): over the trailing dims,
  /// (x - mean) * rsqrt(var + eps), then scaled by the weight and shifted by the bias.
  void layer_norm(const Node& n, const std::string& x) {
    const json& a = n.args;
    TensorType t = type_of_arg(n, 0);
    if (!is_float(t.dtype)) throw detail::NodeError{"layer_norm needs a float tensor, got " + type_str(t)};
    if (a.size() < 2 || !a[1].is_array()) throw detail::NodeError{"argument 1 (normalized_shape) must be a list"};
    size_t k = a[1].size(), r = t.shape.size();
    if (k == 0 || k > r) throw detail::NodeError{"normalized_shape must have 1 to " + std::to_string(r) + " entries"};
    for (size_t q = 0; q < k; ++q)
      if (!a[1][q].is_number_integer() || a[1][q].get<int64_t>() != t.shape[r - k + q])
        throw detail::NodeError{"normalized_shape " + a[1].dump() + " does not match the trailing dims of " + type_str(t)};
    std::vector<int64_t> d;
    for (size_t q = r - k; q < r; ++q) d.push_back(int64_t(q));
    double eps = n.kwargs.value("eps", a.size() > 4 && a[4].is_number() ? a[4].get<double>() : 1e-5);
    std::string mu = sub(n, "mean", "mean.dim", {x, d, true});
    std::string xc = sub(n, "xc", "sub.Tensor", {x, mu});
    std::string sq = sub(n, "sq", "mul.Tensor", {xc, xc});
    std::string var = sub(n, "var", "mean.dim", {sq, d, true});
    std::string ve = sub(n, "veps", "add.Scalar", {var, eps});
    std::string rs = sub(n, "rstd", "rsqrt.default", {ve});
    bool w = a.size() > 2 && a[2].is_string(), b = a.size() > 3 && a[3].is_string();
    std::string y = sub(n, "norm", "mul.Tensor", {xc, rs}, json::object(), !w && !b);
    if (w) y = sub(n, "scaled", "mul.Tensor", {y, a[2]}, json::object(), !b);
    if (b) sub(n, "", "add.Tensor", {y, a[3]}, json::object(), true);
  }

  /// gelu(x), exact (erf) or with the tanh approximation.
  void gelu(const Node& n, const std::string& x) {
    json appr = n.kwargs.value("approximate", json("none"));
    if (appr == "none") {
      // docs/design.md §2: mul(mul(a, 0.5), add(1.0, erf(mul(a, 0.7071067811865476))))
      std::string h = sub(n, "half", "mul.Scalar", {x, 0.5});
      std::string s = sub(n, "scaled", "mul.Scalar", {x, 0.7071067811865476});
      std::string e = sub(n, "erf", "erf.default", {s});
      std::string p = sub(n, "onep", "add.Scalar", {e, 1.0});
      sub(n, "", "mul.Tensor", {h, p}, json::object(), true);
    } else if (appr == "tanh") {
      std::string x2 = sub(n, "sq", "mul.Tensor", {x, x});
      std::string x3 = sub(n, "cube", "mul.Tensor", {x2, x});
      std::string c = sub(n, "cubec", "mul.Scalar", {x3, 0.044715});
      std::string in = sub(n, "inner", "add.Tensor", {x, c});
      std::string k = sub(n, "scaled", "mul.Scalar", {in, 0.7978845608028654});
      std::string th = sub(n, "tanh", "tanh.default", {k});
      std::string p = sub(n, "onep", "add.Scalar", {th, 1.0});
      std::string h = sub(n, "half", "mul.Scalar", {x, 0.5});
      sub(n, "", "mul.Tensor", {h, p}, json::object(), true);
    } else {
      throw detail::NodeError{"gelu: approximate must be \"none\" or \"tanh\", got " + appr.dump()};
    }
  }

  /// d/dx of gelu's own decomposition above, times the incoming gradient
  /// (arg 0); arg 1 is gelu's INPUT h (§5.3: it reads h, not gelu(h)).
  void gelu_backward(const Node& n, const std::string&) {
    const json& a = n.args;
    TensorType tg = type_of_arg(n, 0), th = type_of_arg(n, 1);
    if (!is_float(tg.dtype) || !is_float(th.dtype))
      throw detail::NodeError{"gelu_backward needs float tensors, got " + type_str(tg) + " and " + type_str(th)};
    std::string g = a[0].get<std::string>(), h = a[1].get<std::string>();
    json appr = n.kwargs.value("approximate", json("none"));
    if (appr == "none") {
      // GELU'(h) = Phi(h) + h*phi(h) with the constants of the forward:
      // 0.5*(1 + erf(c*h)) + h * (c/sqrt(pi)) * exp(-(c*h)^2), c = 0.7071067811865476.
      std::string s = sub(n, "scaled", "mul.Scalar", {h, 0.7071067811865476});
      std::string e = sub(n, "erf", "erf.default", {s});
      std::string p = sub(n, "onep", "add.Scalar", {e, 1.0});
      std::string cdf = sub(n, "cdf", "mul.Scalar", {p, 0.5});
      std::string s2 = sub(n, "sq", "mul.Tensor", {s, s});
      std::string ns = sub(n, "negsq", "neg.default", {s2});
      std::string ex = sub(n, "exp", "exp.default", {ns});
      std::string pdf = sub(n, "pdf", "mul.Scalar", {ex, 0.3989422804014327});
      std::string hp = sub(n, "hpdf", "mul.Tensor", {h, pdf});
      std::string d = sub(n, "deriv", "add.Tensor", {cdf, hp});
      sub(n, "", "mul.Tensor", {g, d}, json::object(), true);
    } else if (appr == "tanh") {
      // d/dh of 0.5*h*(1 + tanh(k*(h + a*h^3))): 0.5*(1+t) + 0.5*h*(1-t^2)*k*(1 + 3*a*h^2).
      std::string x2 = sub(n, "sq", "mul.Tensor", {h, h});
      std::string x3 = sub(n, "cube", "mul.Tensor", {x2, h});
      std::string c = sub(n, "cubec", "mul.Scalar", {x3, 0.044715});
      std::string in = sub(n, "inner", "add.Tensor", {h, c});
      std::string k = sub(n, "scaled", "mul.Scalar", {in, 0.7978845608028654});
      std::string t = sub(n, "tanh", "tanh.default", {k});
      std::string p = sub(n, "onep", "add.Scalar", {t, 1.0});
      std::string ld = sub(n, "left", "mul.Scalar", {p, 0.5});
      std::string t2 = sub(n, "tsq", "mul.Tensor", {t, t});
      std::string om = sub(n, "sech2", "sub.Tensor", {1.0, t2});
      std::string q = sub(n, "sqc", "mul.Scalar", {x2, 0.044715});
      std::string q3 = sub(n, "sqc3", "mul.Scalar", {q, 3.0});
      std::string q1 = sub(n, "dinner", "add.Scalar", {q3, 1.0});
      std::string dk = sub(n, "dscaled", "mul.Scalar", {q1, 0.7978845608028654});
      std::string hh = sub(n, "half", "mul.Scalar", {h, 0.5});
      std::string r1 = sub(n, "right1", "mul.Tensor", {hh, om});
      std::string r = sub(n, "right", "mul.Tensor", {r1, dk});
      std::string d = sub(n, "deriv", "add.Tensor", {ld, r});
      sub(n, "", "mul.Tensor", {g, d}, json::object(), true);
    } else {
      throw detail::NodeError{"gelu_backward: approximate must be \"none\" or \"tanh\", got " + appr.dump()};
    }
  }

  /// matmul by the ranks of its operands: mm, bmm, or a vector unsqueezed into a matrix.
  void matmul(const Node& n, const std::string& x) {
    const json& a = n.args;
    TensorType ta = type_of_arg(n, 0), tb = type_of_arg(n, 1);
    size_t ra = ta.shape.size(), rb = tb.shape.size();
    json b = a[1];
    if (ra == 2 && rb == 2) {
      sub(n, "", "mm.default", {x, b}, json::object(), true);
    } else if (ra == 3 && rb == 3) {
      sub(n, "", "bmm.default", {x, b}, json::object(), true);
    } else if (ra == 3 && rb == 2) {
      std::string u = sub(n, "unsq", "unsqueeze.default", {b, 0});
      std::string e = sub(n, "exp", "expand.default", {u, {ta.shape[0], tb.shape[0], tb.shape[1]}});
      sub(n, "", "bmm.default", {x, e}, json::object(), true);
    } else if (ra == 2 && rb == 1) {
      std::string u = sub(n, "unsq", "unsqueeze.default", {b, 1});
      std::string m = sub(n, "mm", "mm.default", {x, u});
      sub(n, "", "squeeze.dim", {m, 1}, json::object(), true);
    } else if (ra == 1 && rb == 2) {
      std::string u = sub(n, "unsq", "unsqueeze.default", {x, 0});
      std::string m = sub(n, "mm", "mm.default", {u, b});
      sub(n, "", "squeeze.dim", {m, 0}, json::object(), true);
    } else if (ra == 1 && rb == 1) {
      if (ta.shape != tb.shape) throw detail::NodeError{"matmul: vector lengths differ: " + type_str(ta) + " and " + type_str(tb)};
      std::string p = sub(n, "prod", "mul.Tensor", {x, b});
      sub(n, "", "sum.dim_IntList", {p, {0}, false}, json::object(), true);
    } else {
      throw detail::NodeError{"matmul of ranks " + std::to_string(ra) + " and " + std::to_string(rb) + " is not supported"};
    }
  }

  /// addmm(self, mat1, mat2, *, beta=1, alpha=1) = beta*self + alpha*(mat1 @ mat2):
  /// torch.export's core-aten form of nn.Linear (bias, input, weight^T).
  void addmm(const Node& n, const std::string& x) {
    const json& a = n.args;
    for (size_t i = 0; i < 3; ++i) type_of_arg(n, i);
    json beta = n.kwargs.value("beta", json(1)), alpha = n.kwargs.value("alpha", json(1));
    if (!beta.is_number() || !alpha.is_number()) throw detail::NodeError{"addmm: beta and alpha must be numbers"};
    std::string m = sub(n, "mm", "mm.default", {a[1], a[2]});
    if (alpha != json(1)) m = sub(n, "alpha", "mul.Scalar", {m, alpha});
    json bias = x;
    if (beta != json(1)) bias = sub(n, "beta", "mul.Scalar", {x, beta});
    sub(n, "", "add.Tensor", {m, bias}, json::object(), true);
  }

  /// gather(self, dim, index): out[i] = self[i with i_dim := index[i]] (index of
  /// self's rank, 0 <= index < size as torch requires), as one index.Tensor on
  /// the flattened self: offset = index*stride[dim] + sum_{d != dim} i_d*stride[d].
  /// torch.export's core-aten form of nll_loss (cross entropy).
  void gather(const Node& n, const std::string& x) {
    const json& a = n.args;
    TensorType t = type_of_arg(n, 0), ti = type_of_arg(n, 2);
    size_t r = t.shape.size();
    if (!is_int(ti.dtype)) throw detail::NodeError{"gather: index must be i32 or i64, got " + type_str(ti)};
    if (r == 0 || ti.shape.size() != r)
      throw detail::NodeError{"gather: index " + type_str(ti) + " must have the rank of " + type_str(t) + " (rank >= 1)"};
    int64_t dim = dims_of(n, 1, r)[0];
    std::vector<int64_t> stride(r, 1);
    for (size_t d = r - 1; d > 0; --d) stride[d - 1] = stride[d] * t.shape[d];
    int64_t numel = 1, numel_x = 1;
    for (size_t d = 0; d < r; ++d) {
      if (int64_t(d) != dim && ti.shape[d] > t.shape[d])
        throw detail::NodeError{"gather: index " + type_str(ti) + " is larger than " + type_str(t) + " in dim " + std::to_string(d)};
      numel *= ti.shape[d];
      numel_x *= t.shape[d];
    }
    std::string off = sub(n, "off", "mul.Scalar", {a[2], stride[size_t(dim)]});
    for (size_t d = 0; d < r; ++d) {
      if (int64_t(d) == dim || ti.shape[d] == 1) continue;
      std::vector<int64_t> v(r, 1);
      v[d] = ti.shape[d];
      std::string ar = sub(n, "ar", "arange.default", {ti.shape[d]});
      std::string vw = sub(n, "arv", "view.default", {ar, v});
      std::string sc = sub(n, "ars", "mul.Scalar", {vw, stride[d]});
      off = sub(n, "off", "add.Tensor", {off, sc});
    }
    std::string fo = sub(n, "flatoff", "reshape.default", {off, {numel}});
    std::string fx = sub(n, "flat", "reshape.default", {x, {numel_x}});
    std::string g = sub(n, "idx", "index.Tensor", {fx, json::array({fo})});
    sub(n, "", "view.default", {g, ti.shape}, json::object(), true);
  }

  /// scalar_tensor(s, *, dtype=f32): a rank-0 constant.
  void scalar_tensor(const Node& n, const std::string&) {
    const json& a = n.args;
    if (!a[0].is_number() && !a[0].is_boolean()) throw detail::NodeError{"scalar_tensor: argument 0 must be a number"};
    sub(n, "", "full.default", {json::array(), a[0]}, {{"dtype", n.kwargs.value("dtype", json("f32"))}}, true);
  }
};

}  // namespace

const std::vector<OpSignature>& op_signatures() {
  static const std::vector<OpSignature> v = [] {
    std::vector<OpSignature> s;
    auto add = [&](std::initializer_list<const char*> names, int lo, int hi, bool basis = true) {
      for (const char* n : names) s.push_back({n, lo, hi, basis});
    };
    add({"add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "mul.Tensor", "mul.Scalar", "div.Tensor", "div.Scalar",
         "pow.Tensor_Scalar", "pow.Tensor_Tensor", "remainder.Tensor", "remainder.Scalar", "floor_divide.default", "maximum.default", "minimum.default", "eq.Tensor", "eq.Scalar",
         "ne.Tensor", "ne.Scalar", "lt.Tensor", "lt.Scalar", "le.Tensor", "le.Scalar", "gt.Tensor", "gt.Scalar",
         "ge.Tensor", "ge.Scalar", "mm.default", "bmm.default"},
        2, 2);
    add({"neg.default", "abs.default", "relu.default", "sigmoid.default", "tanh.default", "exp.default", "log.default",
         "sqrt.default", "rsqrt.default", "erf.default", "log1p.default", "log2.default", "log10.default",
         "expm1.default", "sin.default", "cos.default", "floor.default", "clone.default", "alias.default",
         "contiguous.default", "_to_copy.default", "to.dtype", "t.default", "sum.default", "prod.default"},
        1, 1);
    add({"where.self"}, 3, 3);
    add({"sum.dim_IntList", "amax.default", "amin.default"}, 1, 3);
    add({"prod.dim_int"}, 2, 3);
    add({"argmax.default", "argmin.default"}, 1, 3);
    add({"transpose.int"}, 3, 3);
    add({"permute.default", "expand.default", "view.default", "reshape.default", "_unsafe_view.default",
         "unsqueeze.default", "squeeze.dim", "squeeze.dims", "index.Tensor", "full.default"},
        2, 2);
    add({"squeeze.default"}, 1, 1);
    add({"slice.Tensor"}, 1, 5);
    add({"select.int"}, 3, 3);
    add({"cat.default"}, 1, 2);
    add({"arange.default"}, 1, 1);
    add({"arange.start"}, 2, 2);
    add({"arange.start_step"}, 2, 3);
    add({"zeros.default", "ones.default"}, 1, 1);
    add({"mean.dim"}, 2, 3, false);
    add({"mean.default"}, 1, 1, false);
    add({"softmax.int", "log_softmax.int"}, 2, 2, false);
    add({"_softmax.default", "_log_softmax.default"}, 2, 3, false);
    add({"layer_norm.default"}, 2, 5, false);
    add({"gelu.default"}, 1, 1, false);
    add({"gelu_backward.default"}, 2, 2, false);
    add({"matmul.default"}, 2, 2, false);
    add({"addmm.default"}, 3, 3, false);
    add({"scalar_tensor.default"}, 1, 1, false);
    add({"gather.default"}, 3, 3, false);
    return s;
  }();
  return v;
}

std::variant<Graph, GraphError> decompose(const Graph& g) { return decompose(g, nullptr); }

struct NodeTyper::Impl {
  Expander ex;
};

NodeTyper::NodeTyper(const std::vector<GraphInput>& inputs) : impl_(std::make_unique<Impl>()) {
  for (const GraphInput& in : inputs) {
    impl_->ex.types[in.name] = in.type;
    impl_->ex.names.insert(in.name);
  }
}
NodeTyper::~NodeTyper() = default;

void NodeTyper::add_input(const GraphInput& in) {
  impl_->ex.types[in.name] = in.type;
  impl_->ex.names.insert(in.name);
}

std::optional<GraphError> NodeTyper::add(const Node& n) {
  Expander& ex = impl_->ex;
  for (const std::string& r : node_refs(n))
    if (!ex.types.count(r)) return GraphError{"", n.name, "(" + n.op + ") unknown reference '" + r + "'"};
  ex.names.insert(n.name);
  try {
    ex.add(n);
  } catch (const detail::NodeError& e) {
    return GraphError{"", n.name, "(" + n.op + ") " + e.message};
  }
  ex.out.nodes.clear();
  return std::nullopt;
}

std::optional<TensorType> NodeTyper::type(const std::string& name) const {
  auto it = impl_->ex.types.find(name);
  if (it == impl_->ex.types.end()) return std::nullopt;
  return it->second;
}

std::variant<Graph, GraphError> decompose(const Graph& g, const std::function<bool(const std::string&)>& keep) {
  Expander ex;
  ex.keep = keep;
  ex.out.inputs = g.inputs;
  ex.out.outputs = g.outputs;
  ex.out.file = g.file;
  for (const GraphInput& in : g.inputs) {
    ex.types[in.name] = in.type;
    ex.names.insert(in.name);
  }
  for (const Node& n : g.nodes) ex.names.insert(n.name);
  for (const Node& n : g.nodes) {
    try {
      ex.add(n);
    } catch (const detail::NodeError& e) {
      return GraphError{g.file, n.name, "(" + n.op + ") " + e.message};
    }
  }
  return ex.out;
}

}  // namespace stax::compiler
