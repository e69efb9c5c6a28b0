// Reverse mode (§5.2) building the joint graph of Algorithm 5.1: the
// forward nodes, then for each node in reverse topological order its
// accumulated adjoint and its VJP rule's backward nodes.
#include "autodiff/vjp.h"

#include <set>
#include <sstream>

#include "semantics/dtype.h"

namespace stax::autodiff {

using compiler::Graph;
using compiler::GraphError;
using compiler::Node;
using nlohmann::json;

namespace {

json rename_refs(const json& a, const std::map<std::string, std::string>& ren) {
  if (a.is_string()) {
    auto it = ren.find(a.get<std::string>());
    return it == ren.end() ? a : json(it->second);
  }
  if (a.is_array()) {
    json out = json::array();
    for (const json& x : a) out.push_back(rename_refs(x, ren));
    return out;
  }
  return a;
}

}  // namespace

std::variant<std::vector<std::string>, GraphError> resolve_wrt(const Graph& g, const std::vector<std::string>& wrt) {
  std::vector<std::string> out;
  if (wrt.empty()) {
    for (const auto& in : g.inputs)
      if (sem::is_float(in.type.dtype)) out.push_back(in.name);
    return out;
  }
  std::set<std::string> seen;
  for (const std::string& w : wrt) {
    const compiler::GraphInput* in = nullptr;
    for (const auto& i : g.inputs)
      if (i.name == w) in = &i;
    if (!in) {
      bool is_node = false;
      for (const Node& n : g.nodes) is_node |= n.name == w;
      return GraphError{g.file, w, is_node ? "--wrt names a node; gradients are taken with respect to inputs only"
                                           : "--wrt: the graph has no input named '" + w + "'"};
    }
    if (!sem::is_float(in->type.dtype))
      return GraphError{g.file, w, "input '" + w + "' is " + sem::type_str(in->type) +
                                       ": an integer or bool tensor has no gradient (only float inputs are differentiable)"};
    if (seen.insert(w).second) out.push_back(w);
  }
  return out;
}

compiler::GraphResult decompose_for(const Graph& g, const std::function<bool(const std::string&)>& has_rule) {
  return compiler::decompose(g, has_rule);
}

std::optional<GraphError> refuse_compiled(const Graph& g, const std::string& mode) {
  if (g.compiled.empty()) return std::nullopt;
  return GraphError{
      g.file, g.outputs.empty() ? "" : g.outputs.front(),
      "a second-order gradient was requested (" + mode + " of " + g.compiled +
          "): a compiled backward is not itself differentiable (its inputs include the values the forward saved, so "
          "its derivative with respect to the primals would miss their dependence on the primals). Differentiate the "
          "uncompiled function instead: `stax hvp` on the forward graph (Hessian-vector products), or `stax grad` on the "
          "joint graph's forward graph (autodiff::build_hvp_graph / build_joint_graph on the uncompiled graph)"};
}

std::variant<JointGraph, GraphError> build_joint_graph(const Graph& g0, const GradOptions& opt) {
  if (auto e = refuse_compiled(g0, "reverse mode")) return *e;
  const VjpRules& rules = opt.rules ? *opt.rules : default_vjp_rules();
  auto wr = resolve_wrt(g0, opt.wrt);
  if (auto* e = std::get_if<GraphError>(&wr)) return *e;
  std::vector<std::string> wrt = std::get<std::vector<std::string>>(wr);
  auto dg = decompose_for(g0, [&](const std::string& op) { return rules.count(op) > 0; });
  if (auto* e = std::get_if<GraphError>(&dg)) return *e;
  Graph fg = std::get<Graph>(dg);

  if (opt.listing_names) {
    std::map<std::string, std::string> ren;
    std::set<std::string> nodes;
    for (const Node& n : fg.nodes) nodes.insert(n.name);
    for (size_t k = 0; k < fg.inputs.size(); ++k) {
      std::string to = "primals_" + std::to_string(k + 1);
      if (nodes.count(to)) return GraphError{g0.file, to, "cannot rename the inputs to primals_*: a node has that name"};
      ren[fg.inputs[k].name] = to;
    }
    for (auto& in : fg.inputs) in.name = ren.at(in.name);
    for (Node& n : fg.nodes) n.args = rename_refs(n.args, ren);
    for (std::string& o : fg.outputs) o = rename_refs(json(o), ren).get<std::string>();
    for (std::string& w : wrt) w = ren.at(w);
  }

  JointGraph jg;
  jg.graph.inputs = fg.inputs;
  jg.graph.file = g0.file;
  for (const auto& in : fg.inputs) jg.primals.push_back(in.name);
  jg.forward_outputs = fg.outputs;
  Emitter em(jg.graph, &jg.phase);
  for (const Node& n : fg.nodes) em.reserve(n.name);
  // tangents_1, ... (fresh names when the graph already uses them, as a
  // joint graph differentiated again does).
  std::vector<std::string> tangent_names;
  for (size_t k = 0; k < fg.outputs.size(); ++k) tangent_names.push_back(em.fresh("tangents_" + std::to_string(k + 1)));

  try {
    for (const Node& n : fg.nodes) em.copy(n);

    // varied: depends on a differentiated input (value: which one, for messages).
    std::map<std::string, std::string> varied;
    for (const std::string& w : wrt) varied[w] = w;
    for (const Node& n : fg.nodes)
      for (const std::string& r : compiler::node_refs(n))
        if (varied.count(r)) {
          varied[n.name] = varied[r];
          break;
        }
    // useful: some output depends on it.
    std::set<std::string> useful(fg.outputs.begin(), fg.outputs.end());
    for (size_t k = fg.nodes.size(); k-- > 0;)
      if (useful.count(fg.nodes[k].name))
        for (const std::string& r : compiler::node_refs(fg.nodes[k])) useful.insert(r);
    std::set<std::string> active;
    for (const auto& [name, from] : varied)
      if (useful.count(name) && sem::is_float(em.type(name).dtype)) active.insert(name);

    std::map<std::string, const Node*> producer;
    for (const Node& n : fg.nodes) producer[n.name] = &n;
    auto has_rule = [&](const std::string& op) { return rules.count(op) > 0; };

    em.current = Phase::Backward;
    for (size_t k = 0; k < fg.outputs.size(); ++k) {
      const std::string& t = tangent_names[k];
      em.add_input(t, em.type(fg.outputs[k]));
      jg.tangents.push_back(t);
    }
    std::map<std::string, std::vector<std::string>> contrib;
    for (size_t k = 0; k < fg.outputs.size(); ++k)
      if (active.count(fg.outputs[k])) contrib[fg.outputs[k]].push_back(jg.tangents[k]);
    auto adjoint = [&](const std::string& v) {
      if (opt.accumulate) return opt.accumulate(em, contrib[v]);
      std::string acc;
      for (const std::string& c : contrib[v]) acc = em.add(acc, c);
      return acc;
    };
    auto wants = [&](const std::string& v) { return active.count(v) > 0; };
    auto give = [&](const std::string& v, const std::string& g) { contrib[v].push_back(g); };

    for (size_t k = fg.nodes.size(); k-- > 0;) {
      const Node& n = fg.nodes[k];
      if (!active.count(n.name) || contrib[n.name].empty()) continue;
      check_derivative_path(n, producer, varied, has_rule, em);
      auto rule = rules.find(n.op);
      if (rule == rules.end())
        throw AdError{n.name, "(" + n.op + ") is not differentiable (no derivative rule), but the derivative with respect to '" +
                                  varied[n.name] + "' flows through it"};
      std::string g = adjoint(n.name);
      VjpContext ctx(n, g, em, wants, give);
      rule->second(ctx);
    }
    jg.graph.outputs = fg.outputs;
    for (const std::string& w : wrt) {
      if (contrib[w].empty()) continue;
      std::string g = adjoint(w);
      jg.grads[w] = g;
      jg.graph.outputs.push_back(g);
    }
  } catch (const AdError& e) {
    return GraphError{g0.file, e.node, e.message};
  } catch (const std::exception& e) {  // a rule's bug (ill-typed node, ...): reported, never a crash
    return GraphError{g0.file, "", std::string("internal error: ") + e.what()};
  }
  return jg;
}

namespace {

std::string arg_text(const json& a) {
  if (a.is_string()) return a.get<std::string>();
  if (a.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + arg_text(a[i]);
    return s + "]";
  }
  return a.dump();
}

}  // namespace

std::string joint_listing(const JointGraph& j) {
  std::ostringstream o;
  compiler::NodeTyper ty(j.graph.inputs);
  std::set<std::string> tangents(j.tangents.begin(), j.tangents.end());
  for (const auto& in : j.graph.inputs)
    o << (tangents.count(in.name) ? "[BW] " : "[FW] ") << in.name << " : " << sem::type_str(in.type) << " = placeholder\n";
  for (size_t i = 0; i < j.graph.nodes.size(); ++i) {
    const Node& n = j.graph.nodes[i];
    ty.add(n);
    auto t = ty.type(n.name);
    o << (j.phase[i] == Phase::Forward ? "[FW] " : "[BW] ") << n.name << " : " << (t ? sem::type_str(*t) : "?") << " = "
      << n.op << "(";
    size_t k = 0;
    for (; k < n.args.size(); ++k) o << (k ? ", " : "") << arg_text(n.args[k]);
    if (n.kwargs.is_object())
      for (const auto& [key, v] : n.kwargs.items()) o << (k++ ? ", " : "") << key << "=" << arg_text(v);
    o << ")\n";
  }
  o << "return (";
  for (size_t k = 0; k < j.graph.outputs.size(); ++k) o << (k ? ", " : "") << j.graph.outputs[k];
  o << ")\n";
  return o.str();
}

}  // namespace stax::autodiff
