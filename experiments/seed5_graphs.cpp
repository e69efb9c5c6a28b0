// §5.3 and 5.5: Listing 5.2 (the joint graph of Example 5.1) and Table
// 5.1 (its rematerialization network and min cut), text against ours.
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "autodiff/vjp.h"
#include "experiments/comparison.h"
#include "remat/min_cut.h"
#include "remat/network.h"
#include "remat/partition.h"

namespace stax::experiments {

namespace {

std::map<std::string, std::string> listing_lines(const std::string& listing) {
  std::map<std::string, std::string> by_name;
  std::istringstream in(listing);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("return", 0) == 0) {
      by_name["return"] = line;
      continue;
    }
    size_t a = line.find("] "), b = line.find(" : ");
    if (a != std::string::npos && b != std::string::npos && b > a) by_name[line.substr(a + 2, b - a - 2)] = line;
  }
  return by_name;
}

std::string sig3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

}  // namespace

int listing_5_2(const Options& o, std::ostream& log) {
  std::string path = o.examples_dir + "/example_5_1_forward.json";
  auto g = compiler::read_graph(path);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) {
    o.error_stream(log) << e->str() << "\n";
    return 2;
  }
  autodiff::GradOptions go;
  go.wrt = {"W"};
  go.listing_names = true;
  auto j = autodiff::build_joint_graph(std::get<compiler::Graph>(g), go);
  if (auto* e = std::get_if<compiler::GraphError>(&j)) {
    o.error_stream(log) << e->str() << "\n";
    return 2;
  }
  std::map<std::string, std::string> ours = listing_lines(autodiff::joint_listing(std::get<autodiff::JointGraph>(j)));
  // Listing 5.2, translated into our listing's form: the text's matmul,
  // gelu, sum_0, matmul_0 are our h, g, y, mm (Example 5.1's JSON names the
  // forward nodes; tp.matmul of two matrices is the graph format's
  // mm.default); the text omits placeholder shapes and dtypes (f32 in
  // Example 5.1).
  struct TextNode {
    std::string text_name, ours_name, expected, original, note;
  };
  std::vector<TextNode> nodes = {
      {"primals_1", "primals_1", "[FW] primals_1 : f32[32, 64] = placeholder",
       "[FW] %primals_1 : [num_users=2] = placeholder[target=primals_1]", "x"},
      {"primals_2", "primals_2", "[FW] primals_2 : f32[64, 64] = placeholder",
       "[FW] %primals_2 : [num_users=1] = placeholder[target=primals_2]", "W"},
      {"tangents_1", "tangents_1", "[BW] tangents_1 : f32[] = placeholder",
       "[BW] %tangents_1 : [num_users=1] = placeholder[target=tangents_1]", "the upstream gradient of L"},
      {"matmul", "h", "[FW] h : f32[32, 64] = mm.default(primals_1, primals_2)",
       "[FW] %matmul shape=(32, 64) = tp.matmul.default(%primals_1, %primals_2)", ""},
      {"gelu", "g", "[FW] g : f32[32, 64] = gelu.default(h)", "[FW] %gelu shape=(32, 64) = tp.gelu.default(%matmul, 'none')",
       "approximate='none' is gelu's default; our graph omits it"},
      {"sum_0", "y", "[FW] y : f32[] = sum.default(g)", "[FW] %sum_0 shape=() = tp.sum.default(%gelu,)", ""},
      {"expand", "expand", "[BW] expand : f32[32, 64] = expand.default(tangents_1, [32, 64])",
       "[BW] %expand shape=(32, 64) = tp.expand.default(%tangents_1, [32, 64])", ""},
      {"gelu_backward", "gelu_backward",
       o.wrong_expectation ? "[BW] gelu_backward : f32[32, 64] = gelu_backward.default(expand, g)"
                           : "[BW] gelu_backward : f32[32, 64] = gelu_backward.default(expand, h)",
       "[BW] %gelu_backward shape=(32, 64) = tp.gelu_backward.default(%expand, %matmul, 'none')",
       "reads h, not gelu's output (the text's point for 5.5)"},
      {"t", "t", "[BW] t : f32[64, 32] = t.default(primals_1)", "[BW] %t shape=(64, 64) = tp.t.default(%primals_1,)",
       "the text prints shape=(64, 64); t of the 32x64 primals_1 is 64x32 (a misprint), compared as 64x32"},
      {"matmul_0", "mm", "[BW] mm : f32[64, 64] = mm.default(t, gelu_backward)",
       "[BW] %matmul_0 shape=(64, 64) = tp.matmul.default(%t, %gelu_backward)", "the gradient of W"},
      {"return", "return", "return (y, mm)", "[FW] return (sum_0, matmul_0)", ""},
  };
  std::vector<ComparisonRow> rows;
  for (const TextNode& n : nodes) {
    auto it = ours.find(n.ours_name);
    std::string got = it == ours.end() ? "(absent)" : it->second;
    std::string item = n.text_name == n.ours_name ? n.text_name : n.text_name + " (ours: " + n.ours_name + ")";
    std::string note = "text: " + n.original + (n.note.empty() ? "" : "; " + n.note);
    rows.push_back(compare_row(item, "node", n.expected, got, got == n.expected, note));
    if (it != ours.end()) ours.erase(it);
  }
  for (const auto& [name, line] : ours) rows.push_back(compare_row(name, "node", "(absent)", line, false, "not in Listing 5.2"));
  return write_comparison(o, "listing-5-2", "Listing 5.2: the joint graph of Example 5.1",
                          "`stax grad " + path + " --wrt W --listing-names` against Listing 5.2, node for node.", rows, log);
}

int table_5_1(const Options& o, std::ostream& log) {
  std::string path = o.examples_dir + "/example_5_1_joint.json";
  auto jr = autodiff::read_joint_graph(path);
  if (auto* e = std::get_if<compiler::GraphError>(&jr)) {
    o.error_stream(log) << e->str() << "\n";
    return 2;
  }
  const autodiff::JointGraph& jg = std::get<autodiff::JointGraph>(jr);
  auto types = remat::forward_types(jg);
  if (auto* e = std::get_if<compiler::GraphError>(&types)) {
    o.error_stream(log) << e->str() << "\n";
    return 2;
  }
  auto nr = remat::build_network(jg, std::get<remat::TypeMap>(types));
  if (auto* e = std::get_if<compiler::GraphError>(&nr)) {
    o.error_stream(log) << e->str() << "\n";
    return 2;
  }
  const remat::Network& net = std::get<remat::Network>(nr);
  remat::MinCut cut;
  auto pr = remat::partition(jg, net, remat::Strategy::MinCut, &cut);
  if (auto* e = std::get_if<compiler::GraphError>(&pr)) {
    o.error_stream(log) << e->str() << "\n";
    return 2;
  }
  const remat::Partition& p = std::get<remat::Partition>(pr);
  auto value = [&](const std::string& n) -> const remat::Value* {
    auto it = net.index.find(n);
    return it == net.index.end() ? nullptr : &net.values[size_t(it->second)];
  };
  std::vector<ComparisonRow> rows;
  auto num = [&](const std::string& item, const std::string& what, int64_t text, std::optional<int64_t> ours,
                 const std::string& note = "") {
    std::string os = ours ? std::to_string(*ours) : "(absent)";
    rows.push_back(compare_row(item, what, std::to_string(text), os, ours && *ours == text, note));
  };
  auto field = [&](const std::string& n, auto get) -> std::optional<int64_t> {
    const remat::Value* v = value(n);
    return v ? std::optional<int64_t>(get(*v)) : std::nullopt;
  };
  const int64_t h_cap = o.wrong_expectation ? 9012 : 9011;
  num("matmul (ours: h)", "bytes b(v)", 8192, field("h", [](const remat::Value& v) { return v.bytes; }));
  num("matmul (ours: h)", "d(v)", 1, field("h", [](const remat::Value& v) { return int64_t(v.distance); }),
      "read by gelu_backward");
  num("matmul (ours: h)", "capacity", h_cap, field("h", [](const remat::Value& v) { return v.capacity; }),
      "8192 x 1.1 = 9011.2, rounded down");
  num("gelu (ours: g)", "d(v)", 100, field("g", [](const remat::Value& v) { return int64_t(v.distance); }),
      "no backward node reads it: d at its cap");
  num("gelu (ours: g)", "beta", 2, field("g", [](const remat::Value& v) { return int64_t(v.beta); }), "fuses with the sum");
  {
    const remat::Value* g = value("g");
    std::string ours = g ? std::to_string(g->capacity) + " = " + sig3(double(g->capacity)) : "(absent)";
    rows.push_back(compare_row("gelu (ours: g)", "capacity", "2 x 8192 x 1.1^100 = 2.26e+08", ours,
                               g && sig3(double(g->capacity)) == "2.26e+08", "compared to the text's three digits"));
  }
  num("network", "max flow (Edmonds-Karp)", 9011, cut.flow_ek);
  num("network", "max flow (Boykov-Kolmogorov)", 9011, cut.flow_bk);
  num("network", "min cut capacity", 9011, cut.cut_ek);
  std::string cut_edges;
  for (int i : cut.saved) {
    const std::string& n = net.values[size_t(i)].name;
    if (!net.values[size_t(i)].primal) cut_edges += (cut_edges.empty() ? "" : ", ") + n + "_in -> " + n + "_out";
  }
  rows.push_back(compare_row("network", "cut edges", "matmul_in -> matmul_out", cut_edges, cut_edges == "h_in -> h_out",
                             "ours named h"));
  std::string saved;
  for (const std::string& s : p.saved) saved += (saved.empty() ? "" : ", ") + s;
  rows.push_back(compare_row("partition", "saved", "h only", saved, saved == "h"));
  std::string recomputed;
  for (const std::string& s : p.recomputed) recomputed += (recomputed.empty() ? "" : ", ") + s;
  rows.push_back({"partition", "recomputed", "GELU'(h) from h, inside gelu_backward", recomputed.empty() ? "(none)" : recomputed,
                  "not compared",
                  "gelu_backward reads h and computes GELU'(h) itself; no forward node of ours is recomputed"});
  if (!cut.error.empty()) rows.push_back(compare_row("network", "cross-check", "ok", cut.error, false));
  return write_comparison(o, "table-5-1", "Table 5.1: the rematerialization network of Example 5.1",
                          "`stax partition " + path + "` against Table 5.1 and the text around it (§5.5).", rows, log);
}

}  // namespace stax::experiments
