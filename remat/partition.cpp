// Splitting a joint graph at a saved set (§5.4, 5.6).
#include "remat/partition.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

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
  // Every input and node by id: inputs first, then nodes in order.
  const size_t ni = g.inputs.size(), nn = g.nodes.size();
  std::unordered_map<std::string, size_t> id;
  id.reserve(ni + nn);
  for (size_t i = 0; i < ni; ++i) id[g.inputs[i].name] = i;
  for (size_t i = 0; i < nn; ++i) id[g.nodes[i].name] = ni + i;
  auto lookup = [&](const std::string& n) -> std::optional<size_t> {
    auto it = id.find(n);
    if (it == id.end()) return std::nullopt;
    return it->second;
  };
  std::vector<char> is_primal(ni, 0), is_tangent(ni, 0), is_saved(ni + nn, 0);
  for (const std::string& n : jg.primals)
    if (auto k = lookup(n); k && *k < ni) is_primal[*k] = 1;
  for (const std::string& n : jg.tangents)
    if (auto k = lookup(n); k && *k < ni) is_tangent[*k] = 1;
  for (const std::string& n : saved) {
    auto it = net.index.find(n);
    if (it == net.index.end()) return GraphError{g.file, n, "a saved value must be a forward value"};
    const Value& v = net.values[size_t(it->second)];
    if (v.primal) continue;
    size_t k = id.at(n);
    if (!is_saved[k]) {
      is_saved[k] = 1;
      p.saved.push_back(n);
      p.saved_bytes += v.bytes;
    }
  }
  std::vector<std::vector<size_t>> refs(nn);
  for (size_t i = 0; i < nn; ++i)
    for (const std::string& r : compiler::node_refs(g.nodes[i]))
      if (auto k = lookup(r)) refs[i].push_back(*k);
  size_t nf = jg.forward_outputs.size();
  if (g.outputs.size() < nf || !std::equal(jg.forward_outputs.begin(), jg.forward_outputs.end(), g.outputs.begin()))
    return GraphError{g.file, "", "the joint graph's outputs must start with its forward outputs"};

  // Forward graph: everything the forward outputs and the saved values need.
  std::vector<char> fw_needed(nn, 0);
  std::vector<size_t> work;
  for (const std::string& n : jg.forward_outputs)
    if (auto k = lookup(n)) work.push_back(*k);
  for (const std::string& n : p.saved) work.push_back(id.at(n));
  while (!work.empty()) {
    size_t k = work.back();
    work.pop_back();
    if (k < ni || fw_needed[k - ni]) continue;
    if (jg.phase[k - ni] != Phase::Forward)
      return GraphError{g.file, g.nodes[k - ni].name, "a forward output is computed by the backward"};
    fw_needed[k - ni] = 1;
    for (size_t r : refs[k - ni]) work.push_back(r);
  }
  p.forward.file = g.file;
  for (size_t i = 0; i < ni; ++i)
    if (is_primal[i]) p.forward.inputs.push_back(g.inputs[i]);
  for (size_t i = 0; i < nn; ++i)
    if (fw_needed[i]) p.forward.nodes.push_back(g.nodes[i]);
  p.forward.outputs = jg.forward_outputs;
  std::unordered_set<std::string> fw_outputs(jg.forward_outputs.begin(), jg.forward_outputs.end());
  for (const std::string& n : p.saved)
    if (fw_outputs.insert(n).second) p.forward.outputs.push_back(n);

  // Backward graph: its nodes, plus the forward nodes it recomputes.
  std::vector<char> in_bw(nn, 0), used(ni + nn, 0);
  work.clear();
  for (size_t o = nf; o < g.outputs.size(); ++o)
    if (auto k = lookup(g.outputs[o])) work.push_back(*k);
  for (size_t i = 0; i < nn; ++i)
    if (jg.phase[i] == Phase::Backward) work.push_back(ni + i);
  while (!work.empty()) {
    size_t k = work.back();
    work.pop_back();
    if (is_saved[k] || k < ni) {
      used[k] = 1;
      continue;
    }
    if (in_bw[k - ni]) continue;
    in_bw[k - ni] = 1;
    for (size_t r : refs[k - ni]) work.push_back(r);
  }
  p.backward.file = g.file;
  p.backward.compiled = "the backward graph of a " + std::string(strategy_name(s)) +
                        " partition (remat), which reads the values its forward saved";
  for (const std::string& n : p.saved)
    if (used[id.at(n)]) p.backward.inputs.push_back({n, net.at(n).type});
  for (size_t i = 0; i < ni; ++i)
    if (used[i]) {
      p.backward.inputs.push_back(g.inputs[i]);
      if (is_primal[i]) p.primals_read.push_back(g.inputs[i].name);
    }
  for (size_t i = 0; i < nn; ++i)
    if (in_bw[i]) {
      p.backward.nodes.push_back(g.nodes[i]);
      if (jg.phase[i] == Phase::Forward) p.recomputed.push_back(g.nodes[i].name);
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
