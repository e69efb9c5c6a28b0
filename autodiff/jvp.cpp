// Forward mode (§5.7): the forward nodes in order, each followed by its
// tangent's nodes (the dual numbers of the text, written out as a graph).
#include "autodiff/jvp.h"

#include <set>
#include <sstream>

#include "autodiff/vjp.h"
#include "semantics/dtype.h"

namespace stax::autodiff {

using compiler::Graph;
using compiler::GraphError;
using compiler::Node;
using nlohmann::json;

std::variant<JvpGraph, GraphError> build_jvp_graph(const Graph& g0, const JvpOptions& opt) {
  if (auto e = refuse_compiled(g0, "forward mode")) return *e;
  const JvpRules& rules = opt.rules ? *opt.rules : default_jvp_rules();
  auto wr = resolve_wrt(g0, opt.wrt);
  if (auto* e = std::get_if<GraphError>(&wr)) return *e;
  JvpGraph jg;
  jg.wrt = std::get<std::vector<std::string>>(wr);
  auto dg = decompose_for(g0, [&](const std::string& op) { return rules.count(op) > 0; });
  if (auto* e = std::get_if<GraphError>(&dg)) return *e;
  const Graph& fg = std::get<Graph>(dg);
  jg.graph.inputs = fg.inputs;
  jg.graph.file = g0.file;
  for (const auto& in : fg.inputs) jg.primals.push_back(in.name);
  jg.forward_outputs = fg.outputs;
  Emitter em(jg.graph, &jg.phase);
  for (const Node& n : fg.nodes) em.reserve(n.name);

  try {
    std::map<std::string, std::string> tan;  // value -> its tangent
    std::map<std::string, std::string> varied;
    for (const std::string& w : jg.wrt) {
      std::string t = em.fresh(w + "_tangent");
      em.add_input(t, em.type(w));
      jg.tangents.push_back(t);
      tan[w] = t;
      varied[w] = w;
    }
    std::set<std::string> useful(fg.outputs.begin(), fg.outputs.end());
    for (size_t k = fg.nodes.size(); k-- > 0;)
      if (useful.count(fg.nodes[k].name))
        for (const std::string& r : compiler::node_refs(fg.nodes[k])) useful.insert(r);
    std::map<std::string, const Node*> producer;
    for (const Node& n : fg.nodes) producer[n.name] = &n;
    auto has_rule = [&](const std::string& op) { return rules.count(op) > 0; };
    auto tangent_of = [&](const std::string& v) {
      auto it = tan.find(v);
      return it == tan.end() ? std::string() : it->second;
    };
    for (const Node& n : fg.nodes) {
      em.current = Phase::Forward;
      em.copy(n);
      std::string from;
      for (const std::string& r : compiler::node_refs(n))
        if (varied.count(r)) from = varied[r];
      if (from.empty()) continue;
      varied[n.name] = from;
      if (!useful.count(n.name) || !sem::is_float(em.type(n.name).dtype)) continue;
      check_derivative_path(n, producer, varied, has_rule, em);
      auto rule = rules.find(n.op);
      if (rule == rules.end())
        throw AdError{n.name, "(" + n.op + ") is not differentiable (no derivative rule), but the derivative with respect to '" +
                                  from + "' flows through it"};
      em.current = Phase::Backward;
      JvpContext ctx(n, em, tangent_of);
      std::string t = rule->second(ctx);
      if (!t.empty()) tan[n.name] = em.expand_to(t, em.type(n.name));
    }
    em.current = Phase::Backward;
    jg.graph.outputs = fg.outputs;
    for (const std::string& o : fg.outputs) {
      std::string t = tangent_of(o);
      if (t.empty()) t = em.zeros(em.type(o));
      jg.tangent_outputs.push_back(t);
      jg.graph.outputs.push_back(t);
    }
  } catch (const AdError& e) {
    return GraphError{g0.file, e.node, e.message};
  } catch (const std::exception& e) {  // a rule's bug (ill-typed node, ...): reported, never a crash
    return GraphError{g0.file, "", std::string("internal error: ") + e.what()};
  }
  return jg;
}

std::string jvp_listing(const JvpGraph& j) {
  JointGraph view;
  view.graph = j.graph;
  view.phase = j.phase;
  view.tangents = j.tangents;
  std::string s = joint_listing(view);
  // Tangent nodes are tagged [JV] (the [BW] of a joint graph).
  std::string out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("[BW] ", 0) == 0) line = "[JV] " + line.substr(5);
    out += line + "\n";
  }
  return out;
}

json jvp_graph_to_json(const JvpGraph& j) {
  json o = compiler::graph_to_json(j.graph);
  for (size_t i = 0; i < j.phase.size(); ++i) o["nodes"][i]["phase"] = j.phase[i] == Phase::Forward ? "forward" : "tangent";
  o["primals"] = j.primals;
  o["wrt"] = j.wrt;
  o["tangents"] = j.tangents;
  o["forward_outputs"] = j.forward_outputs;
  o["tangent_outputs"] = j.tangent_outputs;
  return o;
}

}  // namespace stax::autodiff
