#include "peers/repro.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "semantics/npy.h"

namespace stax::peers {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string var(const std::string& name) { return "v_" + name; }

/// A double as Python source that round-trips (hex float).
std::string py_float(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  char buf[64];
  std::snprintf(buf, sizeof buf, "float.fromhex('%a')", v);
  return buf;
}

std::string py_dtype(const std::string& d) {
  static const std::map<std::string, std::string> m = {{"f32", "float32"}, {"f64", "float64"}, {"f16", "float16"},
                                                       {"bf16", "bfloat16"}, {"i32", "int32"}, {"i64", "int64"},
                                                       {"bool", "bool"}};
  auto it = m.find(d);
  return "torch." + (it == m.end() ? d : it->second);
}

std::string py_literal(const json& v) {
  if (v.is_string()) return var(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) {
    double d = v.get<double>();
    return std::signbit(d) && d == 0 ? "-0.0" : py_float(d);
  }
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py_literal(v[i]);
    return s + "]";
  }
  return v.dump();
}

std::string py_index(const std::vector<int64_t>& idx) {
  std::string s = "(";
  for (int64_t i : idx) s += std::to_string(i) + ", ";
  return s + ")";
}

}  // namespace

compiler::Graph single_node_graph(const compiler::Graph& g, const std::string& node, const TensorMap& operands) {
  compiler::Graph one;
  one.file = g.file;
  for (const auto& n : g.nodes) {
    if (n.name != node) continue;
    std::set<std::string> seen;
    for (const std::string& r : compiler::node_refs(n)) {
      if (!seen.insert(r).second) continue;
      auto it = operands.find(r);
      if (it != operands.end()) one.inputs.push_back({r, {it->second.dtype, it->second.shape}});
    }
    one.nodes = {n};
    one.outputs = {n.name};
  }
  return one;
}

compiler::Graph cone(const compiler::Graph& g, const std::string& output) {
  std::set<std::string> need = {output};
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it)
    if (need.count(it->name))
      for (const std::string& r : compiler::node_refs(*it)) need.insert(r);
  compiler::Graph c;
  c.file = g.file;
  for (const auto& in : g.inputs)
    if (need.count(in.name)) c.inputs.push_back(in);
  for (const auto& n : g.nodes)
    if (need.count(n.name)) c.nodes.push_back(n);
  c.outputs = {output};
  return c;
}

std::optional<std::string> write_repro(const fs::path& dir, const compiler::Graph& g, const TensorMap& inputs,
                                       const Finding& f, bool compiled, const std::string& title) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return dir.string() + ": " + ec.message();
  std::ostringstream py;
  py << "#!/usr/bin/env python3\n\"\"\"" << title << "\n\n" << f.str() << "\n\n"
     << "Standalone: needs torch and numpy only. Exit 1: the finding reproduces (PyTorch's value is\n"
     << "outside what a faithful implementation may give); exit 0: it does not.\n\"\"\"\n"
     << "import math\nimport os\nimport sys\n\nimport numpy as np\nimport torch\n\n"
     << "torch.set_num_threads(1)\nHERE = os.path.dirname(os.path.abspath(__file__))\n\n\n"
     << "def load(name):\n    return torch.from_numpy(np.load(os.path.join(HERE, name + \".npy\")))\n\n\n";
  py << "def graph(";
  for (size_t i = 0; i < g.inputs.size(); ++i) py << (i ? ", " : "") << var(g.inputs[i].name);
  py << "):\n";
  for (const auto& n : g.nodes) {
    std::string base = n.op.substr(0, n.op.find('.'));
    std::string overload = n.op.find('.') == std::string::npos ? "default" : n.op.substr(n.op.find('.') + 1);
    py << "    " << var(n.name) << " = torch.ops.aten." << base << "." << overload << "(";
    bool first = true;
    for (const auto& a : n.args) {
      py << (first ? "" : ", ") << py_literal(a);
      first = false;
    }
    if (n.kwargs.is_object())
      for (const auto& [k, v] : n.kwargs.items()) {
        py << (first ? "" : ", ") << k << "=" << (k == "dtype" && v.is_string() ? py_dtype(v) : py_literal(v));
        first = false;
      }
    py << ")\n";
  }
  py << "    return " << var(f.node) << "\n\n\n";
  py << "args = [";
  for (size_t i = 0; i < g.inputs.size(); ++i) py << (i ? ", " : "") << "load(\"" << g.inputs[i].name << "\")";
  py << "]\nwith torch.no_grad():\n"
     << (compiled ? "    y = torch.compile(graph, backend=\"inductor\", fullgraph=True)(*args)\n"
                  : "    y = graph(*args)\n");
  py << "got = y[" << py_index(f.index) << "].item()\n";
  if (f.exact) {
    py << "ALLOWED = " << py_float(f.ours_value) << "  # the same bits (any NaN for NaN)\n"
       << "ok = (math.isnan(got) and math.isnan(ALLOWED)) or (got == ALLOWED and "
       << "math.copysign(1, got) == math.copysign(1, ALLOWED))\n"
       << "allowed = \"exactly %r\" % ALLOWED\n";
  } else {
    py << "LO, HI, NAN_OK = " << py_float(f.lo) << ", " << py_float(f.hi) << ", " << (f.nan_ok ? "True" : "False")
       << "\nok = NAN_OK if math.isnan(got) else (LO <= got <= HI)\n"
       << "allowed = \"only NaN\" if math.isnan(LO) else \"[%r, %r]%s\" % (LO, HI, \" or NaN\" if NAN_OK else \"\")\n";
  }
  py << "print(\"torch %s: " << (compiled ? "torch.compile" : "eager") << " " << f.node << "[" << py_index(f.index)
     << "] = %r; a faithful implementation gives %s: %s\" % (torch.__version__, got, allowed, "
     << "\"not reproduced\" if ok else \"REPRODUCED\"))\n"
     << "sys.exit(0 if ok else 1)\n";
  std::ofstream(dir / "repro.py") << py.str();
  std::ofstream(dir / "graph.json") << compiler::graph_to_json(g).dump(1) << "\n";
  for (const auto& in : g.inputs) {
    auto it = inputs.find(in.name);
    if (it == inputs.end()) return "no value for " + in.name;
    if (auto e = sem::write_npy((dir / (in.name + ".npy")).string(), it->second)) return *e;
  }
  return std::nullopt;
}

}  // namespace stax::peers
