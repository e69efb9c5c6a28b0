// Printing a lowering: the .stx program with its decisions as `#` comments
// (so the text still parses), or one JSON document.
#include "compiler/lower.h"
#include "semantics/printer.h"

namespace stax::compiler {

std::string lowered_text(const Lowered& l, const Device& d) {
  std::string s = "# stax lower: device " + d.str() + ", class " + std::string(xform::class_name(l.cls)) + "\n";
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
  return s + sem::print_program(l.program);
}

nlohmann::json lowered_json(const Lowered& l, const Device& d) {
  nlohmann::json j;
  j["device"] = d.str();
  j["class"] = std::string(xform::class_name(l.cls));
  j["program"] = sem::print_program(l.program);
  if (!l.canonical.bindings.empty()) j["canonical"] = sem::print_program(l.canonical);
  j["decisions"] = nlohmann::json::array();
  for (const Decision& x : l.decisions) j["decisions"].push_back({{"node", x.node}, {"realized", x.realized}, {"reason", x.reason}});
  j["notes"] = l.notes;
  j["kernels"] = nlohmann::json::array();
  for (const LoopNest& k : l.kernels)
    j["kernels"].push_back({{"binding", k.binding}, {"loops", k.loops}, {"accesses", k.accesses}, {"canonicalisation", k.steps}});
  return j;
}

}  // namespace stax::compiler
