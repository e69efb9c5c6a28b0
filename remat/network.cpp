// Definition 5.2's network from a joint graph: the per-value facts (b, d, β,
// c) and the rules for U of seed 5.4. See network.h for our readings of the
// text where it is silent.
#include "remat/network.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <set>

#include "compiler/lower.h"

namespace stax::remat {

using autodiff::JointGraph;
using autodiff::Phase;
using compiler::GraphError;

std::variant<TypeMap, GraphError> forward_types(const JointGraph& jg) {
  compiler::Graph fw;
  fw.file = jg.graph.file;
  std::set<std::string> primals(jg.primals.begin(), jg.primals.end());
  for (const auto& in : jg.graph.inputs)
    if (primals.count(in.name)) fw.inputs.push_back(in);
  std::set<std::string> known(primals);
  for (size_t i = 0; i < jg.graph.nodes.size(); ++i) {
    const compiler::Node& n = jg.graph.nodes[i];
    if (jg.phase[i] != Phase::Forward) continue;
    for (const std::string& r : compiler::node_refs(n))
      if (!known.count(r))
        return GraphError{jg.graph.file, n.name, "a forward node reads '" + r + "', which is not a forward value"};
    known.insert(n.name);
    fw.nodes.push_back(n);
    fw.outputs.push_back(n.name);
  }
  auto l = compiler::lower_graph(fw, {compiler::Device{}, true});
  if (auto* e = std::get_if<GraphError>(&l)) return *e;
  const sem::Program& p = std::get<compiler::Lowered>(l).program;
  TypeMap t;
  for (const auto& in : fw.inputs) t[in.name] = in.type;
  for (const auto& n : fw.nodes)
    if (const sem::TensorType* ty = p.type_of(n.name)) t[n.name] = *ty;
  return t;
}

namespace {

int64_t bytes_of(const sem::TensorType& t) { return sem::num_elements(t.shape) * int64_t(sem::dtype_bytes(t.dtype)); }

struct Builder {
  const JointGraph& jg;
  const TypeMap& types;
  Network net;
  // Every joint node by name: its class and its backward users.
  std::map<std::string, OpClass> cls_of;
  std::map<std::string, std::vector<std::string>> bw_users;  // joint value -> backward nodes reading it

  Builder(const JointGraph& j, const TypeMap& t) : jg(j), types(t) {}

  GraphError err(const std::string& node, const std::string& msg) const { return {jg.graph.file, node, msg}; }

  std::optional<GraphError> collect() {
    std::set<std::string> primals(jg.primals.begin(), jg.primals.end());
    std::set<std::string> tangents(jg.tangents.begin(), jg.tangents.end());
    for (const auto& in : jg.graph.inputs)
      if (!primals.count(in.name) && !tangents.count(in.name))
        return err(in.name, "an input of a joint graph must be listed in \"primals\" or \"tangents\"");
    auto add_value = [&](const std::string& name, const std::string& op, OpClass c, bool primal) -> std::optional<GraphError> {
      auto t = types.find(name);
      if (t == types.end()) return err(name, "the forward value has no type (its shape was not inferred)");
      Value v;
      v.name = name;
      v.op = op;
      v.cls = c;
      v.primal = primal;
      v.fw_order = int(net.values.size());
      v.type = t->second;
      v.bytes = bytes_of(t->second);
      net.index[name] = int(net.values.size());
      net.values.push_back(std::move(v));
      return std::nullopt;
    };
    for (const auto& in : jg.graph.inputs)
      if (primals.count(in.name))
        if (auto e = add_value(in.name, "", OpClass::Pointwise, true)) return e;
    for (size_t i = 0; i < jg.graph.nodes.size(); ++i) {
      const compiler::Node& n = jg.graph.nodes[i];
      auto c = op_class(n.op);
      if (!c) return err(n.name, "(" + n.op + ") unknown operator: the partition has no class for it (remat/op_class.cpp)");
      cls_of[n.name] = *c;
      if (jg.phase[i] == Phase::Backward) {
        std::set<std::string> seen;
        for (const std::string& r : compiler::node_refs(n))
          if (seen.insert(r).second) bw_users[r].push_back(n.name);
        continue;
      }
      std::vector<int> preds;
      for (const std::string& r : compiler::node_refs(n)) {
        auto it = net.index.find(r);
        if (it == net.index.end())
          return err(n.name, "(" + n.op + ") a forward node reads '" + r + "', which is " +
                                 (tangents.count(r) ? "a tangent" : "a backward value"));
        if (std::find(preds.begin(), preds.end(), it->second) == preds.end()) preds.push_back(it->second);
      }
      if (auto e = add_value(n.name, n.op, *c, false)) return e;
      Value& v = net.values.back();
      v.preds = preds;
      for (int p : preds) {
        v.input_bytes += net.values[size_t(p)].bytes;
        net.values[size_t(p)].fw_users.push_back(v.fw_order);
      }
    }
    size_t nf = jg.forward_outputs.size();
    for (size_t k = 0; k < jg.graph.outputs.size(); ++k) {
      auto it = net.index.find(jg.graph.outputs[k]);
      if (it == net.index.end()) continue;
      if (k < nf) net.values[size_t(it->second)].forward_output = true;
      else net.values[size_t(it->second)].in_b = true;  // a gradient that is a forward value
    }
    for (const std::string& o : jg.forward_outputs)
      if (net.index.count(o)) net.values[size_t(net.index[o])].forward_output = true;
    return std::nullopt;
  }

  /// Rule 2: a backward user, seen through backward views, cannot fuse with v.
  bool materialized_backward(const Value& v) const {
    if (v.cls == OpClass::View) return false;
    std::vector<std::pair<std::string, OpClass>> work = {{v.name, v.cls}};
    std::set<std::string> seen;
    while (!work.empty()) {
      auto [cur, c] = work.back();
      work.pop_back();
      auto it = bw_users.find(cur);
      if (it == bw_users.end()) continue;
      for (const std::string& u : it->second) {
        OpClass uc = cls_of.at(u);
        if (!fusible(c, uc)) return true;
        if (uc == OpClass::View && seen.insert(u).second) work.push_back({u, uc});
      }
    }
    return false;
  }

  void distances() {
    const int kInf = INT32_MAX;
    std::vector<int> d(net.values.size(), kInf);
    for (size_t i = net.values.size(); i-- > 0;) {
      Value& v = net.values[i];
      if (v.in_b || bw_users.count(v.name)) d[i] = 1;
      for (int u : v.fw_users)
        if (d[size_t(u)] != kInf) d[i] = std::min(d[i], d[size_t(u)] + 1);
      if (bw_users.count(v.name)) v.in_b = true;
      v.distance = d[i] == kInf ? kMaxDistance : std::clamp(d[i], 1, kMaxDistance);
    }
  }

  bool fusible_edge(int p, int u) const { return fusible(net.values[size_t(p)].cls, net.values[size_t(u)].cls); }

  void rules() {
    for (Value& v : net.values) {
      if (v.primal) {
        v.u_reasons.push_back("primal: an input of both graphs");
        continue;
      }
      if (v.cls == OpClass::Expensive)
        v.u_reasons.push_back("rule 1: " + v.op + " is not cheap to recompute");
      if (v.cls == OpClass::Random)
        v.u_reasons.push_back("rule 1: " + v.op + " is random (a recomputation draws other numbers)");
      if (materialized_backward(v))
        v.u_reasons.push_back("rule 2: a backward user cannot fuse with it (written to memory in the backward anyway)");
      if (v.cls == OpClass::Reduction && 4 * v.bytes < v.input_bytes)
        v.u_reasons.push_back("rule 3: a reduction with 4*" + std::to_string(v.bytes) + " < " +
                              std::to_string(v.input_bytes) + " bytes read");
    }
    near_and_far();
    long_chains();
  }

  void ban(int i, std::string why) {
    Value& v = net.values[size_t(i)];
    if (!v.in_u()) v.u_reasons.push_back(std::move(why));
  }

  /// Extra rule: v is read by a fusible forward user placed after the first
  /// unfusible op downstream of v's users (near and far): that user is saved.
  void near_and_far() {
    for (const Value& v : net.values) {
      if (v.fw_users.size() < 2) continue;
      int max_range = *std::max_element(v.fw_users.begin(), v.fw_users.end());
      int first_unfusible = max_range;
      using Item = std::tuple<int, int, bool>;  // order, value, reached through a fusible edge
      std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
      std::set<int> seen;
      for (int u : v.fw_users) q.push({u, u, true});
      while (!q.empty()) {
        auto [o, cur, ok] = q.top();
        q.pop();
        if (!ok) {
          first_unfusible = o;
          break;
        }
        if (!seen.insert(cur).second) continue;
        for (int u : net.values[size_t(cur)].fw_users)
          if (u <= max_range) q.push({u, u, fusible_edge(cur, u)});
      }
      for (int u : v.fw_users)
        if (u > first_unfusible && fusible_edge(v.fw_order, u))
          ban(u, "extra rule: read near and far (" + v.name + " is also read before the unfusible " +
                     net.values[size_t(first_unfusible)].name + ")");
    }
  }

  /// Extra rule: the end of a fusible chain longer than kLongFusibleChain
  /// forward steps is saved, so that recomputation never drags the chain
  /// into the backward.
  void long_chains() {
    std::vector<char> visited(net.values.size(), 0);
    for (const Value& start : net.values) {
      if (start.primal) continue;
      std::priority_queue<int, std::vector<int>, std::greater<>> q;
      q.push(start.fw_order);
      while (!q.empty()) {
        int cur = q.top();
        q.pop();
        if (visited[size_t(cur)]) continue;
        visited[size_t(cur)] = 1;
        if (cur > start.fw_order + kLongFusibleChain && q.empty()) {
          ban(cur, "extra rule: end of a fusible chain of more than " + std::to_string(kLongFusibleChain) +
                       " steps from " + start.name);
          break;
        }
        for (int u : net.values[size_t(cur)].fw_users)
          if (fusible_edge(cur, u) && !net.values[size_t(u)].in_u()) q.push(u);
      }
    }
  }

  std::optional<GraphError> capacities(const NetworkOptions& opt) {
    std::set<std::string> unsaveable(opt.unsaveable.begin(), opt.unsaveable.end());
    for (const std::string& n : opt.unsaveable)
      if (!net.index.count(n)) return err(n, "--unsaveable names no forward value");
    for (Value& v : net.values) {
      bool materialized = v.forward_output || !(v.cls == OpClass::Pointwise || v.cls == OpClass::View ||
                                                v.cls == OpClass::Reduction);
      for (int u : v.fw_users)
        if (!fusible_edge(v.fw_order, u)) materialized = true;
      v.beta = materialized ? 1 : 2;
      double scaled = std::floor(double(v.bytes) * std::pow(1.1, v.distance));
      if (!(scaled < 0x1p52)) return err(v.name, "the tensor is too large for the network's integer capacities");
      v.capacity = v.primal ? 0 : int64_t(v.beta) * int64_t(scaled);
      if (unsaveable.count(v.name)) v.capacity = kInfinite;
    }
    return std::nullopt;
  }
};

}  // namespace

std::variant<Network, GraphError> build_network(const JointGraph& jg, const TypeMap& types, const NetworkOptions& opt) {
  Builder b(jg, types);
  if (auto e = b.collect()) return *e;
  b.distances();
  b.rules();
  if (auto e = b.capacities(opt)) return *e;
  return std::move(b.net);
}

}  // namespace stax::remat
