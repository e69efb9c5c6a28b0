// Splitting a joint graph at a saved set (seed 5.4, 5.6).
#include "remat/partition.h"

#include <algorithm>
#include <set>

namespace stax::remat {

using autodiff::JointGraph;
using autodiff::Phase;
using compiler::GraphError;

std::string_view strategy_name(Strategy s) {
  switch (s) {
    case Strategy::MinCut: return "min-cut";
    case Strategy::SaveAll: return "save-all";
    case Strategy::RecomputeAll: return "recompute-all";
  }
  return "?";
}

std::optional<Strategy> parse_strategy(std::string_view s) {
  for (Strategy k : {Strategy::MinCut, Strategy::SaveAll, Strategy::RecomputeAll})
    if (strategy_name(k) == s) return k;
  return std::nullopt;
}

std::vector<std::string> saved_set(const Network& net, Strategy s, MinCut* cut) {
  std::vector<std::string> out;
  auto save_all = [&] {
    for (const Value& v : net.values)
      if (v.in_b && !v.primal) out.push_back(v.name);
  };
  switch (s) {
    case Strategy::SaveAll: save_all(); break;
    case Strategy::RecomputeAll: break;
    case Strategy::MinCut: {
      MinCut c = min_cut(net);
      if (!c.finite) save_all();
      else
        for (int i : c.saved)
          if (!net.values[size_t(i)].primal) out.push_back(net.values[size_t(i)].name);
      if (cut) *cut = std::move(c);
      break;
    }
  }
  return out;
}

std::variant<Partition, GraphError> split(const JointGraph& jg, const Network& net, const std::vector<std::string>& saved,
                                          Strategy s) {
  const compiler::Graph& g = jg.graph;
  Partition p;
  p.strategy = s;
  std::set<std::string> saved_set;
  for (const std::string& n : saved) {
    auto it = net.index.find(n);
    if (it == net.index.end()) return GraphError{g.file, n, "a saved value must be a forward value"};
    if (net.values[size_t(it->second)].primal) continue;
    if (saved_set.insert(n).second) {
      p.saved.push_back(n);
      p.saved_bytes += net.values[size_t(it->second)].bytes;
    }
  }
  std::map<std::string, const compiler::Node*> node_of;
  std::map<std::string, Phase> phase_of;
  for (size_t i = 0; i < g.nodes.size(); ++i) node_of[g.nodes[i].name] = &g.nodes[i], phase_of[g.nodes[i].name] = jg.phase[i];
  std::set<std::string> primals(jg.primals.begin(), jg.primals.end());
  std::set<std::string> tangents(jg.tangents.begin(), jg.tangents.end());
  size_t nf = jg.forward_outputs.size();
  if (g.outputs.size() < nf || !std::equal(jg.forward_outputs.begin(), jg.forward_outputs.end(), g.outputs.begin()))
    return GraphError{g.file, "", "the joint graph's outputs must start with its forward outputs"};

  // Forward graph: everything the forward outputs and the saved values need.
  std::set<std::string> fw_needed;
  std::vector<std::string> work(jg.forward_outputs.begin(), jg.forward_outputs.end());
  work.insert(work.end(), p.saved.begin(), p.saved.end());
  while (!work.empty()) {
    std::string n = work.back();
    work.pop_back();
    auto it = node_of.find(n);
    if (it == node_of.end() || !fw_needed.insert(n).second) continue;
    if (phase_of[n] != Phase::Forward) return GraphError{g.file, n, "a forward output is computed by the backward"};
    for (const std::string& r : compiler::node_refs(*it->second)) work.push_back(r);
  }
  p.forward.file = g.file;
  for (const auto& in : g.inputs)
    if (primals.count(in.name)) p.forward.inputs.push_back(in);
  for (const compiler::Node& n : g.nodes)
    if (fw_needed.count(n.name)) p.forward.nodes.push_back(n);
  p.forward.outputs = jg.forward_outputs;
  for (const std::string& n : p.saved)
    if (std::find(p.forward.outputs.begin(), p.forward.outputs.end(), n) == p.forward.outputs.end())
      p.forward.outputs.push_back(n);

  // Backward graph: its nodes, plus the forward nodes it recomputes.
  std::set<std::string> bw_nodes, used_inputs;
  work.assign(g.outputs.begin() + long(nf), g.outputs.end());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (jg.phase[i] == Phase::Backward) work.push_back(g.nodes[i].name);
  while (!work.empty()) {
    std::string n = work.back();
    work.pop_back();
    if (saved_set.count(n) || primals.count(n) || tangents.count(n)) {
      used_inputs.insert(n);
      continue;
    }
    auto it = node_of.find(n);
    if (it == node_of.end() || !bw_nodes.insert(n).second) continue;
    for (const std::string& r : compiler::node_refs(*it->second)) work.push_back(r);
  }
  p.backward.file = g.file;
  for (const std::string& n : p.saved)
    if (used_inputs.count(n)) p.backward.inputs.push_back({n, net.at(n).type});
  for (const auto& in : g.inputs)
    if (used_inputs.count(in.name)) p.backward.inputs.push_back(in);
  for (const auto& in : g.inputs)
    if (primals.count(in.name) && used_inputs.count(in.name)) p.primals_read.push_back(in.name);
  for (const compiler::Node& n : g.nodes)
    if (bw_nodes.count(n.name)) {
      p.backward.nodes.push_back(n);
      if (phase_of[n.name] == Phase::Forward) p.recomputed.push_back(n.name);
    }
  p.backward.outputs.assign(g.outputs.begin() + long(nf), g.outputs.end());
  return p;
}

std::variant<Partition, GraphError> partition(const JointGraph& jg, const Network& net, Strategy s, MinCut* cut) {
  MinCut local;
  std::vector<std::string> saved = saved_set(net, s, &local);
  bool fell_back = s == Strategy::MinCut && !local.finite;
  if (cut) *cut = std::move(local);
  auto r = split(jg, net, saved, s);
  if (auto* p = std::get_if<Partition>(&r)) p->fell_back = fell_back;
  return r;
}

}  // namespace stax::remat
