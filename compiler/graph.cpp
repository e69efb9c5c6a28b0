#include "compiler/graph.h"

#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace stax::compiler {

using nlohmann::json;

std::string GraphError::str() const {
  std::string where = node.empty() ? "" : "node '" + node + "': ";
  return file + ": error: " + where + message;
}

namespace {

void collect_refs(const json& a, std::vector<std::string>& out) {
  if (a.is_string()) out.push_back(a.get<std::string>());
  else if (a.is_array())
    for (const json& x : a) collect_refs(x, out);
}

struct Fail {
  std::string node, message;
};

sem::TensorType parse_type(const json& in, const std::string& name) {
  if (!in.contains("dtype") || !in["dtype"].is_string()) throw Fail{name, "input needs a \"dtype\" string"};
  auto dt = sem::dtype_from_name(in["dtype"].get<std::string>());
  if (!dt)
    throw Fail{name, "unknown dtype '" + in["dtype"].get<std::string>() + "' (expected f32, f64, f16, bf16, i32, i64 or bool)"};
  if (!in.contains("shape") || !in["shape"].is_array()) throw Fail{name, "input needs a \"shape\" array"};
  sem::Shape s;
  for (const json& d : in["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (int64_t(1) << 40))
      throw Fail{name, "shape entries must be non-negative integers, got " + d.dump()};
    s.push_back(d.get<int64_t>());
  }
  if (s.size() > 8) throw Fail{name, "rank " + std::to_string(s.size()) + " exceeds 8"};
  if (sem::too_many_elements(s)) throw Fail{name, "shape " + sem::shape_text(s) + " has more than 2^48 elements"};
  return {*dt, s};
}

Graph parse_json(const json& j, std::string file) {
  Graph g;
  g.file = std::move(file);
  if (!j.is_object()) throw Fail{"", "the graph must be a JSON object with inputs, nodes and outputs"};
  for (const char* key : {"inputs", "nodes", "outputs"})
    if (!j.contains(key) || !j[key].is_array()) throw Fail{"", std::string("missing array \"") + key + "\""};
  std::set<std::string> names;
  auto check_name = [&](const json& n, const std::string& what) {
    if (!n.is_string() || n.get<std::string>().empty()) throw Fail{"", what + " needs a non-empty \"name\" string"};
    std::string s = n.get<std::string>();
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
        throw Fail{s, "names may contain letters, digits and '_' only"};
    if (std::isdigit(static_cast<unsigned char>(s[0]))) throw Fail{s, "names must not start with a digit"};
    if (!names.insert(s).second) throw Fail{s, "name defined twice"};
    return s;
  };
  if (j.contains("compiled")) {
    if (!j["compiled"].is_string() || j["compiled"].get<std::string>().empty())
      throw Fail{"", "\"compiled\" must be a non-empty string (what the compile path produced)"};
    g.compiled = j["compiled"].get<std::string>();
  }
  for (const json& in : j["inputs"]) {
    if (!in.is_object()) throw Fail{"", "each input must be an object {name, dtype, shape}"};
    std::string name = check_name(in.value("name", json()), "an input");
    g.inputs.push_back({name, parse_type(in, name)});
  }
  std::vector<Node> nodes;
  for (const json& n : j["nodes"]) {
    if (!n.is_object()) throw Fail{"", "each node must be an object {name, op, args, kwargs}"};
    std::string name = check_name(n.value("name", json()), "a node");
    if (!n.contains("op") || !n["op"].is_string()) throw Fail{name, "node needs an \"op\" string"};
    json args = n.value("args", json::array());
    json kwargs = n.value("kwargs", json::object());
    if (!args.is_array()) throw Fail{name, "\"args\" must be an array"};
    if (!kwargs.is_object()) throw Fail{name, "\"kwargs\" must be an object"};
    nodes.push_back({name, n["op"].get<std::string>(), args, kwargs});
  }
  for (const json& o : j["outputs"]) {
    if (!o.is_string()) throw Fail{"", "outputs must be node or input names, got " + o.dump()};
    std::string s = o.get<std::string>();
    if (!names.count(s)) throw Fail{s, "output names an unknown node"};
    g.outputs.push_back(s);
  }
  if (g.outputs.empty()) throw Fail{"", "the graph has no outputs"};
  // References, then a topological order (DFS; a back edge is a cycle).
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].name] = i;
  for (const Node& n : nodes)
    for (const std::string& r : node_refs(n))
      if (!names.count(r)) throw Fail{n.name, "argument '" + r + "' is not an input or node"};
  std::vector<int> state(nodes.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<size_t> order;
  std::function<void(size_t)> visit = [&](size_t i) {
    if (state[i] == 2) return;
    if (state[i] == 1) throw Fail{nodes[i].name, "the graph has a cycle through this node"};
    state[i] = 1;
    for (const std::string& r : node_refs(nodes[i])) {
      auto it = index.find(r);
      if (it != index.end()) visit(it->second);
    }
    state[i] = 2;
    order.push_back(i);
  };
  for (size_t i = 0; i < nodes.size(); ++i) visit(i);
  for (size_t i : order) g.nodes.push_back(nodes[i]);
  return g;
}

}  // namespace

std::vector<std::string> node_refs(const Node& n) {
  std::vector<std::string> out;
  collect_refs(n.args, out);
  return out;
}

GraphResult parse_graph(std::string_view text, std::string file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    return GraphError{file, "", std::string("not valid JSON: ") + e.what()};
  }
  // Copies and walks of a json value recurse: bound its nesting first (an
  // explicit stack here), as the .stx parser bounds its own.
  constexpr size_t kMaxNesting = 64;
  std::vector<std::pair<const json*, size_t>> pending{{&j, 1}};
  while (!pending.empty()) {
    auto [v, depth] = pending.back();
    pending.pop_back();
    if (depth > kMaxNesting)
      return GraphError{file, "", "JSON nested deeper than " + std::to_string(kMaxNesting) + " levels"};
    if (v->is_structured())
      for (const json& c : *v) pending.push_back({&c, depth + 1});
  }
  try {
    return parse_json(j, file);
  } catch (const Fail& f) {
    return GraphError{file, f.node, f.message};
  } catch (const json::exception& e) {
    return GraphError{file, "", std::string("malformed graph: ") + e.what()};
  }
}

GraphResult read_graph(const std::string& path) {
  std::ifstream in(path);
  if (!in) return GraphError{path, "", "cannot read the file"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_graph(ss.str(), path);
}

json graph_to_json(const Graph& g) {
  json j;
  j["inputs"] = json::array();
  for (const GraphInput& in : g.inputs)
    j["inputs"].push_back({{"name", in.name}, {"dtype", std::string(sem::dtype_name(in.type.dtype))}, {"shape", in.type.shape}});
  j["nodes"] = json::array();
  for (const Node& n : g.nodes) j["nodes"].push_back({{"name", n.name}, {"op", n.op}, {"args", n.args}, {"kwargs", n.kwargs}});
  j["outputs"] = g.outputs;
  if (!g.compiled.empty()) j["compiled"] = g.compiled;
  return j;
}

}  // namespace stax::compiler
