// Printing a lowering: the .stx program with its decisions as `#` comments
// (so the text still parses), or one JSON document.
#include <set>

#include "compiler/lower.h"
#include "semantics/expr_util.h"
#include "semantics/parser.h"
#include "semantics/printer.h"

namespace stax::compiler {

namespace {

/// The program with every name that .stx reserves (a graph may name a node
/// `expand` or `input`) renamed to a free `name_`, `name__`, ..., so that the
/// printed text parses; `renamed` collects "old -> new".
sem::Program printable(const sem::Program& p, std::vector<std::string>* renamed) {
  std::set<std::string> used;
  for (const sem::Input& in : p.inputs) used.insert(in.name);
  for (const sem::Binding& b : p.bindings) used.insert(b.name);
  sem::Program q = p;
  for (const std::string& old : used) {
    if (!sem::is_reserved_word(old)) continue;
    std::string to = old + "_";
    while (used.count(to) || sem::is_reserved_word(to)) to += "_";
    used.insert(to);
    if (renamed) renamed->push_back(old + " -> " + to);
    for (sem::Input& in : q.inputs)
      if (in.name == old) in.name = to;
    for (sem::Binding& b : q.bindings) {
      if (b.name == old) b.name = to;
      b.expr = sem::rename(b.expr, old, to);
    }
    for (std::string& o : q.outputs)
      if (o == old) o = to;
  }
  return q;
}

std::string printed(const sem::Program& p) { return sem::print_program(printable(p, nullptr)); }

}  // namespace

std::string lowered_text(const Lowered& l, const Device& d) {
  std::string s = "# stax lower: device " + d.str() + ", class " + std::string(xform::class_name(l.cls)) + "\n";
  std::vector<std::string> renamed;
  sem::Program p = printable(l.program, &renamed);
  for (const std::string& r : renamed) s += "# renamed " + r + " (a .stx keyword)\n";
  for (const Decision& x : l.decisions)
    s += "# realize " + x.node + ": " + (x.realized ? "realized" : "inlined") + " -- " + x.reason + "\n";
  for (const std::string& n : l.notes) s += "# " + n + "\n";
  for (const LoopNest& k : l.kernels) {
    std::string loops, acc;
    for (const std::string& x : k.loops) loops += (loops.empty() ? "" : ", ") + x;
    for (const std::string& x : k.accesses) acc += (acc.empty() ? "" : "; ") + x;
    s += "# kernel " + k.binding + ": loops " + loops + ": " + acc + "\n";
    for (const std::string& x : k.steps) s += "#   " + x + "\n";
  }
  return s + sem::print_program(p);
}

nlohmann::json lowered_json(const Lowered& l, const Device& d) {
  nlohmann::json j;
  j["device"] = d.str();
  j["class"] = std::string(xform::class_name(l.cls));
  j["program"] = printed(l.program);
  if (!l.canonical.bindings.empty()) j["canonical"] = printed(l.canonical);
  j["decisions"] = nlohmann::json::array();
  for (const Decision& x : l.decisions) j["decisions"].push_back({{"node", x.node}, {"realized", x.realized}, {"reason", x.reason}});
  j["notes"] = l.notes;
  j["kernels"] = nlohmann::json::array();
  for (const LoopNest& k : l.kernels)
    j["kernels"].push_back({{"binding", k.binding}, {"loops", k.loops}, {"accesses", k.accesses}, {"canonicalisation", k.steps}});
  return j;
}

}  // namespace stax::compiler
