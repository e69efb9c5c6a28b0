// Definition 5.2's network from a joint graph: the per-value facts (b, d, β,
// c) and the rules for U of §5.4. See network.h for our readings of the
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
  // Every input and node of the joint graph by id (inputs first): its class,
  // its forward value (-1: none) and the backward nodes that read it.
  std::unordered_map<std::string, int> jid;
  std::vector<OpClass> cls;
  std::vector<int> value_of;
  std::vector<std::vector<int>> bw_users;
  std::vector<int> jid_of_value;

  Builder(const JointGraph& j, const TypeMap& t) : jg(j), types(t) {}

  GraphError err(const std::string& node, const std::string& msg) const { return {jg.graph.file, node, msg}; }

  std::optional<GraphError> collect() {
    const auto& g = jg.graph;
    const size_t ni = g.inputs.size(), nn = g.nodes.size();
    jid.reserve(ni + nn);
    for (size_t i = 0; i < ni; ++i) jid[g.inputs[i].name] = int(i);
    for (size_t i = 0; i < nn; ++i) jid[g.nodes[i].name] = int(ni + i);
    cls.assign(ni + nn, OpClass::Pointwise);
    value_of.assign(ni + nn, -1);
    bw_users.assign(ni + nn, {});
    std::vector<char> is_primal(ni, 0), is_tangent(ni, 0);
    for (const auto* list : {&jg.primals, &jg.tangents})
      for (const std::string& n : *list) {
        auto it = jid.find(n);
        if (it == jid.end() || size_t(it->second) >= ni) return err(n, "primals and tangents must be inputs of the graph");
        (list == &jg.primals ? is_primal : is_tangent)[size_t(it->second)] = 1;
      }
    for (size_t i = 0; i < ni; ++i)
      if (!is_primal[i] && !is_tangent[i])
        return err(g.inputs[i].name, "an input of a joint graph must be listed in \"primals\" or \"tangents\"");
    auto add_value = [&](int j, const std::string& name, const std::string& op, OpClass c, bool primal) -> std::optional<GraphError> {
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
      value_of[size_t(j)] = int(net.values.size());
      jid_of_value.push_back(j);
      net.values.push_back(std::move(v));
      return std::nullopt;
    };
    net.index.reserve(ni + nn);
    for (size_t i = 0; i < ni; ++i)
      if (is_primal[i])
        if (auto e = add_value(int(i), g.inputs[i].name, "", OpClass::Pointwise, true)) return e;
    std::vector<int> refs;
    for (size_t i = 0; i < nn; ++i) {
      const compiler::Node& n = g.nodes[i];
      const int self = int(ni + i);
      auto c = op_class(n.op);
      if (!c) return err(n.name, "(" + n.op + ") unknown operator: the partition has no class for it (remat/op_class.cpp)");
      cls[size_t(self)] = *c;
      refs.clear();
      for (const std::string& r : compiler::node_refs(n)) {
        auto it = jid.find(r);
        if (it == jid.end()) return err(n.name, "(" + n.op + ") reads '" + r + "', which is no input or node");
        int k = it->second;
        if (std::find(refs.begin(), refs.end(), k) == refs.end()) refs.push_back(k);
      }
      if (jg.phase[i] == Phase::Backward) {
        for (int k : refs) bw_users[size_t(k)].push_back(self);
        continue;
      }
      std::vector<int> preds;
      for (int k : refs) {
        if (value_of[size_t(k)] < 0)
          return err(n.name, "(" + n.op + ") a forward node reads '" + (size_t(k) < ni ? g.inputs[size_t(k)].name : g.nodes[size_t(k) - ni].name) +
                                 "', which is " + (size_t(k) < ni ? "a tangent" : "a backward value"));
        preds.push_back(value_of[size_t(k)]);
      }
      if (auto e = add_value(self, n.name, n.op, *c, false)) return e;
      Value& v = net.values.back();
      v.preds = preds;
      for (int p : preds) {
        v.input_bytes += net.values[size_t(p)].bytes;
        net.values[size_t(p)].fw_users.push_back(v.fw_order);
      }
    }
    size_t nf = jg.forward_outputs.size();
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      auto it = net.index.find(g.outputs[k]);
      if (it == net.index.end()) continue;
      if (k < nf) net.values[size_t(it->second)].forward_output = true;
      else net.values[size_t(it->second)].in_b = true;  // a gradient that is a forward value
    }
    for (const std::string& o : jg.forward_outputs)
      if (auto it = net.index.find(o); it != net.index.end()) net.values[size_t(it->second)].forward_output = true;
    return std::nullopt;
  }

  bool read_by_backward(const Value& v) const { return !bw_users[size_t(jid_of_value[size_t(v.fw_order)])].empty(); }

  /// Rule 2: a backward user, seen through backward views, cannot fuse with v.
  bool materialized_backward(const Value& v) const {
    if (v.cls == OpClass::View) return false;
    std::vector<int> work = {jid_of_value[size_t(v.fw_order)]};
    std::vector<int> seen;
    while (!work.empty()) {
      int cur = work.back();
      work.pop_back();
      for (int u : bw_users[size_t(cur)]) {
        if (!fusible(cls[size_t(cur)], cls[size_t(u)])) return true;
        if (cls[size_t(u)] == OpClass::View && std::find(seen.begin(), seen.end(), u) == seen.end()) {
          seen.push_back(u);
          work.push_back(u);
        }
      }
    }
    return false;
  }

  void distances() {
    const int kInf = INT32_MAX;
    std::vector<int> d(net.values.size(), kInf);
    for (size_t i = net.values.size(); i-- > 0;) {
      Value& v = net.values[i];
      if (v.in_b || read_by_backward(v)) d[i] = 1;
      for (int u : v.fw_users)
        if (d[size_t(u)] != kInf) d[i] = std::min(d[i], d[size_t(u)] + 1);
      if (read_by_backward(v)) v.in_b = true;
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
