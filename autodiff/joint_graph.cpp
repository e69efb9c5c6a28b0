#include "autodiff/joint_graph.h"

#include <fstream>
#include <set>
#include <sstream>

namespace stax::autodiff {

using nlohmann::json;

namespace {

std::vector<std::string> names(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) throw compiler::GraphError{"", "", std::string("\"") + key + "\" must be an array of names"};
  for (const json& n : j[key]) {
    if (!n.is_string()) throw compiler::GraphError{"", "", std::string("\"") + key + "\" must hold names, got " + n.dump()};
    out.push_back(n.get<std::string>());
  }
  return out;
}

}  // namespace

std::variant<JointGraph, compiler::GraphError> parse_joint_graph(std::string_view text, std::string file) {
  compiler::GraphResult r = compiler::parse_graph(text, file);
  if (auto* e = std::get_if<compiler::GraphError>(&r)) return *e;
  JointGraph jg;
  jg.graph = std::move(std::get<compiler::Graph>(r));
  json j = json::parse(text);  // parse_graph accepted it
  try {
    std::map<std::string, Phase> by_name;
    for (const json& n : j["nodes"]) {
      std::string name = n["name"].get<std::string>();
      json ph = n.value("phase", json());
      if (ph == json("forward")) by_name[name] = Phase::Forward;
      else if (ph == json("backward")) by_name[name] = Phase::Backward;
      else throw compiler::GraphError{file, name, "a joint graph's node needs \"phase\": \"forward\" or \"backward\""};
    }
    for (const compiler::Node& n : jg.graph.nodes) jg.phase.push_back(by_name.at(n.name));
    std::set<std::string> inputs, all;
    for (const auto& in : jg.graph.inputs) inputs.insert(in.name), all.insert(in.name);
    for (const auto& n : jg.graph.nodes) all.insert(n.name);
    jg.primals = names(j, "primals");
    jg.tangents = names(j, "tangents");
    jg.forward_outputs = names(j, "forward_outputs");
    for (const auto* list : {&jg.primals, &jg.tangents})
      for (const std::string& n : *list)
        if (!inputs.count(n)) throw compiler::GraphError{file, n, "primals and tangents must be inputs of the graph"};
    for (const std::string& n : jg.forward_outputs)
      if (!all.count(n)) throw compiler::GraphError{file, n, "forward output names an unknown value"};
    if (j.contains("grads")) {
      if (!j["grads"].is_object()) throw compiler::GraphError{file, "", "\"grads\" must be an object {input: value}"};
      for (const auto& [k, v] : j["grads"].items()) {
        if (!inputs.count(k)) throw compiler::GraphError{file, k, "a gradient is only for an input"};
        if (!v.is_string() || !all.count(v.get<std::string>()))
          throw compiler::GraphError{file, k, "its gradient names an unknown value: " + v.dump()};
        jg.grads[k] = v.get<std::string>();
      }
    }
  } catch (const compiler::GraphError& e) {
    compiler::GraphError out = e;
    out.file = file;
    return out;
  }
  return jg;
}

std::variant<JointGraph, compiler::GraphError> read_joint_graph(const std::string& path) {
  std::ifstream in(path);
  if (!in) return compiler::GraphError{path, "", "cannot read the file"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_joint_graph(ss.str(), path);
}

json joint_graph_to_json(const JointGraph& jg) {
  json j = compiler::graph_to_json(jg.graph);
  for (size_t i = 0; i < jg.phase.size(); ++i)
    j["nodes"][i]["phase"] = jg.phase[i] == Phase::Forward ? "forward" : "backward";
  j["primals"] = jg.primals;
  j["tangents"] = jg.tangents;
  j["forward_outputs"] = jg.forward_outputs;
  j["grads"] = json::object();
  for (const auto& [k, v] : jg.grads) j["grads"][k] = v;
  return j;
}

}  // namespace stax::autodiff
