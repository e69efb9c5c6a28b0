#include "autodiff/emitter.h"

#include "semantics/dtype.h"

namespace stax::autodiff {

using nlohmann::json;
using sem::TensorType;

Emitter::Emitter(compiler::Graph& g, std::vector<Phase>* phases) : g_(g), phases_(phases), typer_(g.inputs) {
  for (const auto& in : g.inputs) used_.insert(in.name);
  for (const auto& n : g.nodes) used_.insert(n.name);
}

std::string Emitter::fresh(const std::string& stem) {
  std::string s = stem;
  for (int k = 0; used_.count(s); ++k) s = stem + "_" + std::to_string(k);
  used_.insert(s);
  return s;
}

void Emitter::add_input(const std::string& name, const TensorType& t) {
  used_.insert(name);
  g_.inputs.push_back({name, t});
  typer_.add_input(g_.inputs.back());
}

void Emitter::copy(const compiler::Node& n) {
  used_.insert(n.name);
  if (auto e = typer_.add(n)) throw AdError{n.name, e->message};
  g_.nodes.push_back(n);
  if (phases_) phases_->push_back(current);
}

std::string Emitter::emit(const std::string& op, json args, json kwargs) {
  compiler::Node n{fresh(op.substr(0, op.find('.'))), op, std::move(args), std::move(kwargs)};
  // A derivative rule that builds an ill-typed node is a bug in the rule.
  if (auto e = typer_.add(n)) throw std::logic_error("derivative rule emitted an ill-typed node '" + n.name + "': " + e->message);
  g_.nodes.push_back(n);
  if (phases_) phases_->push_back(current);
  return n.name;
}

TensorType Emitter::type(const std::string& name) const {
  auto t = typer_.type(name);
  if (!t) throw std::logic_error("autodiff: untyped value '" + name + "'");
  return *t;
}

std::string Emitter::sum_to(const std::string& g, const TensorType& target) {
  TensorType tg = type(g);
  std::string r = g;
  const sem::Shape& s = tg.shape;
  const sem::Shape& t = target.shape;
  if (s != t) {
    size_t lead = s.size() - t.size();
    std::vector<int64_t> dims;
    for (size_t d = 0; d < lead; ++d) dims.push_back(int64_t(d));
    if (!dims.empty()) r = emit("sum.dim_IntList", {r, dims, false});
    std::vector<int64_t> ones;
    for (size_t d = 0; d < t.size(); ++d)
      if (t[d] == 1 && s[d + lead] != 1) ones.push_back(int64_t(d));
    if (!ones.empty()) r = emit("sum.dim_IntList", {r, ones, true});
  }
  if (tg.dtype != target.dtype) r = emit("_to_copy.default", {r}, {{"dtype", std::string(sem::dtype_name(target.dtype))}});
  return r;
}

std::string Emitter::expand_to(const std::string& v, const TensorType& target) {
  TensorType tv = type(v);
  std::string r = v;
  if (tv.dtype != target.dtype) r = emit("_to_copy.default", {r}, {{"dtype", std::string(sem::dtype_name(target.dtype))}});
  if (tv.shape != target.shape) r = emit("expand.default", {r, target.shape});
  return r;
}

std::string Emitter::zeros(const TensorType& t) {
  return emit("zeros.default", {t.shape}, {{"dtype", std::string(sem::dtype_name(t.dtype))}});
}

std::string Emitter::add(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return emit("add.Tensor", {a, b});
}

void check_derivative_path(const compiler::Node& n, const std::map<std::string, const compiler::Node*>& producer,
                           const std::map<std::string, std::string>& varied,
                           const std::function<bool(const std::string&)>& has_rule, const Emitter& em) {
  std::set<std::string> seen;
  std::function<std::optional<std::string>(const std::string&)> root = [&](const std::string& v) -> std::optional<std::string> {
    auto it = producer.find(v);
    if (it == producer.end() || !seen.insert(v).second) return std::nullopt;
    const compiler::Node& p = *it->second;
    bool float_in = false;
    for (const std::string& r : compiler::node_refs(p)) {
      if (!varied.count(r)) continue;
      if (auto f = root(r)) return f;
      float_in |= sem::is_float(em.type(r).dtype);
    }
    if (!has_rule(p.op) || (float_in && !sem::is_float(em.type(p.name).dtype))) return p.name;
    return std::nullopt;
  };
  bool conversion = n.op == "_to_copy.default" || n.op == "to.dtype";
  for (const json& a : n.args) {
    if (!a.is_string()) continue;
    std::string v = a.get<std::string>();
    auto from = varied.find(v);
    sem::DType t = em.type(v).dtype;
    if (from == varied.end() || sem::is_float(t) || !(sem::is_int(t) || conversion)) continue;
    std::string b = root(v).value_or(v);
    auto pb = producer.find(b);
    throw AdError{b, "(" + (pb == producer.end() ? std::string("input") : pb->second->op) +
                         ") is not differentiable, but the derivative with respect to '" + from->second +
                         "' flows through it (into node '" + n.name + "')"};
  }
}

int64_t int_arg(const compiler::Node& n, size_t i, int64_t dflt) {
  if (i >= n.args.size() || n.args[i].is_null()) return dflt;
  if (!n.args[i].is_number_integer()) throw AdError{n.name, "(" + n.op + ") argument " + std::to_string(i) + " must be an integer"};
  return n.args[i].get<int64_t>();
}

std::vector<int64_t> ints_arg(const compiler::Node& n, size_t i) {
  std::vector<int64_t> v;
  if (i >= n.args.size() || n.args[i].is_null()) return v;
  if (n.args[i].is_number_integer()) return {n.args[i].get<int64_t>()};
  if (!n.args[i].is_array()) throw AdError{n.name, "(" + n.op + ") argument " + std::to_string(i) + " must be a list of integers"};
  for (const json& x : n.args[i]) {
    if (!x.is_number_integer()) throw AdError{n.name, "(" + n.op + ") argument " + std::to_string(i) + " must be a list of integers"};
    v.push_back(x.get<int64_t>());
  }
  return v;
}

int64_t norm_dim(const compiler::Node& n, int64_t d, size_t rank) {
  int64_t r = int64_t(std::max<size_t>(rank, 1));
  if (d < -r || d >= r) throw AdError{n.name, "(" + n.op + ") dim " + std::to_string(d) + " out of range"};
  return d < 0 ? d + r : d;
}

}  // namespace stax::autodiff
