#include "peers/graph_gen.h"

#include <cmath>
#include <limits>
#include <random>

#include "compiler/lower.h"

namespace stax::peers {

namespace {

using nlohmann::json;
using sem::DType;
using sem::TensorType;

const char* const kUnary[] = {"neg.default",  "abs.default",   "relu.default",  "sqrt.default", "exp.default",
                              "log.default",  "tanh.default",  "sigmoid.default", "erf.default", "sin.default",
                              "cos.default",  "expm1.default", "log1p.default", "floor.default", "rsqrt.default",
                              "log2.default", "log10.default"};
const char* const kBinary[] = {"add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "maximum.default",
                               "minimum.default"};
const char* const kScalarOps[] = {"add.Scalar", "sub.Scalar", "mul.Scalar", "div.Scalar", "pow.Tensor_Scalar"};
const double kScalars[] = {0.5, -2.0, 3.0, 1e-3, 0.1, 1e10, -0.0, 2.0, 0.7071067811865476};
const double kExponents[] = {2, 0.5, 3, -1, 1.5};
const int64_t kDims[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 33, 64};

class Drawer {
 public:
  Drawer(std::mt19937_64& rng, const GraphGenOptions& opt) : rng_(rng), opt_(opt) {}

  GeneratedGraph draw() {
    GeneratedGraph out;
    compiler::Graph& g = out.graph;
    g.file = "generated.json";
    dtype_ = uniform() < opt_.f64_rate ? DType::F64 : DType::F32;
    sem::Shape shape;
    int rank = 1 + int(pick(3));
    int64_t total = 1;
    for (int i = 0; i < rank; ++i) {
      int64_t d = kDims[pick(std::size(kDims))];
      if (total * d > 4096) d = 1;
      shape.push_back(d);
      total *= d;
    }
    int inputs = 1 + int(pick(3));
    for (int i = 0; i < inputs; ++i) {
      sem::Shape s = shape;
      if (i > 0 && rank > 1 && uniform() < 0.25) s.erase(s.begin());  // broadcasts against the others
      g.inputs.push_back({"x" + std::to_string(i), {dtype_, s}});
    }
    typer_ = std::make_unique<compiler::NodeTyper>(g.inputs);
    for (const auto& in : g.inputs) pool_.push_back(in.name);
    int nodes = 1 + int(pick(size_t(opt_.max_nodes)));
    for (int tries = 0; int(g.nodes.size()) < nodes && tries < 8 * nodes; ++tries) add_node(g);
    if (g.nodes.empty()) add(g, "add.Tensor", {pool_[0], pool_[0]});
    g.outputs = {g.nodes.back().name};
    if (g.nodes.size() > 1 && uniform() < 0.3) {
      const std::string& other = g.nodes[pick(g.nodes.size() - 1)].name;
      g.outputs.push_back(other);
    }
    for (const auto& in : g.inputs) out.inputs[in.name] = tensor(in.type);
    return out;
  }

 private:
  uint64_t pick(size_t n) { return n == 0 ? 0 : rng_() % n; }
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

  /// Adds the node if our typing accepts it; its name joins the pool.
  bool add(compiler::Graph& g, const std::string& op, json args) {
    compiler::Node n;
    n.name = "n" + std::to_string(g.nodes.size());
    n.op = op;
    n.args = std::move(args);
    n.kwargs = json::object();
    if (typer_->add(n)) return false;
    g.nodes.push_back(n);
    pool_.push_back(n.name);
    return true;
  }

  std::optional<TensorType> type(const std::string& name) const { return typer_->type(name); }

  /// A float tensor of the pool (the latest ones more often).
  std::string operand() {
    size_t n = pool_.size();
    size_t i = uniform() < 0.6 ? n - 1 - pick(std::min<size_t>(n, 2)) : pick(n);
    return pool_[i];
  }

  /// Another pool tensor of the same type as `a` or broadcasting with it, else `a`.
  std::string partner(const std::string& a) {
    std::vector<std::string> ok;
    TensorType ta = *type(a);
    for (const std::string& b : pool_) {
      TensorType tb = *type(b);
      if (tb.dtype != ta.dtype || !sem::is_float(tb.dtype)) continue;
      bool suffix = tb.shape.size() <= ta.shape.size() &&
                    std::equal(tb.shape.rbegin(), tb.shape.rend(), ta.shape.rbegin());
      if (tb.shape == ta.shape || suffix) ok.push_back(b);
    }
    return ok.empty() ? a : ok[pick(ok.size())];
  }

  void add_node(compiler::Graph& g) {
    std::string a = operand();
    TensorType t = *type(a);
    if (!sem::is_float(t.dtype)) return;
    int64_t rank = int64_t(t.shape.size());
    auto dim = [&] { return rank == 0 ? int64_t(0) : int64_t(pick(size_t(2 * rank))) - rank; };
    double r = uniform();
    if (r < 0.28) {
      add(g, kUnary[pick(std::size(kUnary))], {a});
    } else if (r < 0.52) {
      add(g, kBinary[pick(std::size(kBinary))], {a, partner(a)});
    } else if (r < 0.66) {
      std::string op = kScalarOps[pick(std::size(kScalarOps))];
      double s = op == "pow.Tensor_Scalar" ? kExponents[pick(std::size(kExponents))] : kScalars[pick(std::size(kScalars))];
      add(g, op, {a, s});
    } else if (r < 0.72) {
      std::string c = "n" + std::to_string(g.nodes.size());
      const char* cmp[] = {"gt.Scalar", "lt.Scalar", "ge.Scalar", "eq.Scalar", "ne.Scalar"};
      if (add(g, cmp[pick(std::size(cmp))], {a, kScalars[pick(std::size(kScalars))]})) {
        std::string b = partner(a);
        add(g, "where.self", {c, uniform() < 0.5 ? a : b, uniform() < 0.5 ? b : a});
      }
    } else if (r < 0.84 && rank > 0) {
      const char* red[] = {"sum.dim_IntList", "mean.dim", "amax.default", "amin.default", "prod.dim_int"};
      std::string op = red[pick(std::size(red))];
      if (op == "prod.dim_int") add(g, op, {a, dim(), uniform() < 0.3});
      else add(g, op, {a, json::array({dim()}), uniform() < 0.3});
    } else if (r < 0.88) {
      add(g, "sum.default", {a});
    } else if (r < 0.93 && rank > 0) {
      add(g, uniform() < 0.7 ? "_softmax.default" : "_log_softmax.default", {a, dim(), false});
    } else if (r < 0.97 && rank == 2) {
      std::string p = "n" + std::to_string(g.nodes.size());
      std::string b = partner(a);
      if (*type(b) != t) b = a;
      if (add(g, "permute.default", {b, json::array({1, 0})})) add(g, "mm.default", {a, p});
    } else if (rank >= 2) {
      json perm = json::array();
      for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
      add(g, "permute.default", {a, perm});
    } else {
      add(g, "unsqueeze.default", {a, int64_t(pick(size_t(rank + 1)))});
    }
  }

  double special() {
    const double big = dtype_ == DType::F64 ? 1e300 : 3e38;
    const double sub = dtype_ == DType::F64 ? 4.9e-324 : 1.4e-45;
    const double vals[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, 0.0, -0.0, sub, -sub * 7,
                           big, -big, 88.7, -103.0, 1.0, -1.0, 1e-30};
    return vals[pick(std::size(vals))];
  }

  sem::Tensor tensor(const TensorType& tt) {
    sem::Tensor t = sem::Tensor::uninitialized(tt.dtype, tt.shape);
    for (int64_t i = 0; i < t.size(); ++i) {
      double v;
      if (uniform() < opt_.special_rate) v = special();
      else if (uniform() < 0.7) v = std::uniform_real_distribution<double>(-4, 4)(rng_);
      else v = (uniform() < 0.5 ? -1 : 1) * std::ldexp(1.0 + uniform(), int(pick(61)) - 30);
      if (tt.dtype == DType::F32) t.as<float>()[i] = float(v);
      else t.as<double>()[i] = v;
    }
    return t;
  }

  std::mt19937_64& rng_;
  const GraphGenOptions& opt_;
  DType dtype_ = DType::F32;
  std::unique_ptr<compiler::NodeTyper> typer_;
  std::vector<std::string> pool_;
};

bool lowers(const compiler::Graph& g) {
  compiler::LowerOptions lo;
  lo.eager = true;
  return std::holds_alternative<compiler::Lowered>(compiler::lower_graph(g, lo));
}

}  // namespace

GeneratedGraph generate_graph(uint64_t seed, const GraphGenOptions& opt) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x5354ull);
  GeneratedGraph g;
  for (int attempt = 0; attempt < 64; ++attempt) {
    Drawer d(rng, opt);
    g = d.draw();
    if (lowers(g.graph)) break;
  }
  g.seed = seed;
  return g;
}

}  // namespace stax::peers
