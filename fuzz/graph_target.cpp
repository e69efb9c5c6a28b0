// Fuzz target: the graph JSON loader, shape inference and the lowering
// (eager and by policy, on a CPU and a GPU device). A graph that lowers gives
// a program whose text (`stax lower`'s output) parses as .stx.
#include <variant>

#include "compiler/graph.h"
#include "compiler/lower.h"
#include "fuzz/fuzz_target.h"
#include "proofs/obligation.h"
#include "semantics/parser.h"

using namespace stax;

namespace {

void check(const uint8_t* data, size_t size) {
  compiler::GraphResult g = compiler::parse_graph(fuzz::as_text(data, size), "<fuzz>");
  if (const auto* e = std::get_if<compiler::GraphError>(&g)) {
    if (e->message.empty()) fuzz::fail("an empty error message", e->str());
    return;
  }
  const compiler::Graph& graph = std::get<compiler::Graph>(g);
  // The input's length picks the device and the mode, so all four are fuzzed.
  bool gpu = size & 1, eager = size & 2;
  compiler::Device d;
  d.gpu = gpu;
  auto l = compiler::lower_graph(graph, {d, eager});
  if (const auto* e = std::get_if<compiler::GraphError>(&l)) {
    if (e->message.empty()) fuzz::fail("an empty error message", e->str());
    return;
  }
  std::string text = compiler::lowered_text(std::get<compiler::Lowered>(l), d);
  sem::ParseResult parsed = sem::parse_program(text, "<lowered>");
  if (const auto* diag = std::get_if<sem::Diag>(&parsed))
    fuzz::fail("the lowered program does not parse: " + diag->str(), text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool installed = (stax::proofs::install_default_discharger(), true);
  (void)installed;
  check(data, size);
  proofs::release_thread_solver();
  return 0;
}
