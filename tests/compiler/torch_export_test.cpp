// The graphs exported from PyTorch (python -m stax_torch export,
// examples/torch/exported/): each committed graph loads and lowers (eager
// and policy agree through the oracle); Example 1.1's export equals the
// hand-written Listing 5.1 graph up to names; the core-aten operators
// added for the exporter (addmm, scalar_tensor, gather) expand to what they mean,
// and deliberately wrong expansions are rejected; the exporter's operator
// list (python/stax_torch/export.py) is op_signatures(). Runs without torch.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "compiler/lower.h"
#include "oracle/checker.h"
#include "semantics/printer.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::compiler;
using nlohmann::json;

namespace {

std::string src(const std::string& rel) { return std::string(STAX_SOURCE_DIR) + "/" + rel; }

Graph graph_of(const std::string& text) {
  auto g = parse_graph(text);
  if (auto* e = std::get_if<GraphError>(&g)) FAIL(e->node + ": " + e->message);
  return std::get<Graph>(g);
}

Lowered lower(const Graph& g, bool eager) {
  auto l = lower_graph(g, {Device{}, eager});
  if (auto* e = std::get_if<GraphError>(&l)) FAIL(e->node + ": " + e->message);
  return std::get<Lowered>(l);
}

oracle::Status same(const Graph& a, const Graph& b) {
  return oracle::check_programs(lower(a, true).program, lower(b, true).program, xform::SemClass::Exact,
                                oracle::CheckOptions{3, 7})
      .status;
}

/// A graph's structure with nodes and inputs renamed by position (n0, n1, ...;
/// i0, i1, ...): op, args and kwargs of every node, input types, outputs.
json canonical(const Graph& g) {
  std::map<std::string, std::string> rn;
  for (size_t i = 0; i < g.inputs.size(); ++i) rn[g.inputs[i].name] = "i" + std::to_string(i);
  for (size_t i = 0; i < g.nodes.size(); ++i) rn[g.nodes[i].name] = "n" + std::to_string(i);
  std::function<json(const json&)> ren = [&](const json& a) -> json {
    if (a.is_string()) return rn.count(a.get<std::string>()) ? json(rn[a.get<std::string>()]) : a;
    if (a.is_array()) {
      json r = json::array();
      for (const json& x : a) r.push_back(ren(x));
      return r;
    }
    return a;
  };
  json j;
  for (const GraphInput& in : g.inputs) j["inputs"].push_back({std::string(sem::dtype_name(in.type.dtype)), in.type.shape});
  for (const Node& n : g.nodes) j["nodes"].push_back({n.op, ren(n.args), n.kwargs});
  for (const std::string& o : g.outputs) j["outputs"].push_back(rn[o]);
  return j;
}

}  // namespace

TEST_CASE("exported PyTorch graphs load and lower; eager equals policy", "[compiler][torch]") {
  int seen = 0;
  for (const auto& d : std::filesystem::directory_iterator(src("examples/torch/exported"))) {
    for (const char* f : {"graph.json", "joint.json"}) {
      std::filesystem::path p = d.path() / f;
      if (!std::filesystem::exists(p)) continue;
      INFO(p.string());
      auto g = read_graph(p.string());
      REQUIRE(std::holds_alternative<Graph>(g));
      Lowered e = lower(std::get<Graph>(g), true), l = lower(std::get<Graph>(g), false);
      CHECK(oracle::check_programs(e.program, l.program, l.cls, oracle::CheckOptions{2, 7}).status ==
            oracle::Status::Verified);
      ++seen;
    }
  }
  CHECK(seen >= 6);  // mlp, transformer_block, cross_entropy, example_1_1, example_5_1 (graph, joint)
}

TEST_CASE("Example 1.1 exported from PyTorch is Listing 5.1 up to names", "[compiler][torch][golden]") {
  auto ex = read_graph(src("examples/torch/exported/example_1_1/graph.json"));
  auto hand = read_graph(src("examples/graphs/example_1_1.json"));
  REQUIRE(std::holds_alternative<Graph>(ex));
  REQUIRE(std::holds_alternative<Graph>(hand));
  CHECK(canonical(std::get<Graph>(ex)) == canonical(std::get<Graph>(hand)));
  // Wrong: mul.Tensor(relu, 2) (torch.export's spelling) is not Listing 5.1's mul.Scalar.
  Graph wrong = std::get<Graph>(ex);
  for (Node& n : wrong.nodes)
    if (n.op == "mul.Scalar") n.op = "mul.Tensor";
  CHECK(canonical(wrong) != canonical(std::get<Graph>(hand)));
}

TEST_CASE("addmm and scalar_tensor expand to what they mean", "[compiler][torch]") {
  const std::string in = R"("inputs": [{"name": "b", "dtype": "f32", "shape": [5]},
      {"name": "x", "dtype": "f32", "shape": [3, 4]}, {"name": "w", "dtype": "f32", "shape": [4, 5]}],)";
  Graph addmm = graph_of("{" + in + R"("nodes": [{"name": "y", "op": "addmm.default", "args": ["b", "x", "w"]}],
      "outputs": ["y"]})");
  Graph mm_add = graph_of("{" + in + R"("nodes": [{"name": "m", "op": "mm.default", "args": ["x", "w"]},
      {"name": "y", "op": "add.Tensor", "args": ["m", "b"]}], "outputs": ["y"]})");
  CHECK(same(addmm, mm_add) == oracle::Status::Verified);
  Graph scaled = graph_of("{" + in + R"("nodes": [{"name": "y", "op": "addmm.default", "args": ["b", "x", "w"],
      "kwargs": {"beta": 2, "alpha": 0.5}}], "outputs": ["y"]})");
  Graph scaled_ref = graph_of("{" + in + R"("nodes": [{"name": "m", "op": "mm.default", "args": ["x", "w"]},
      {"name": "ma", "op": "mul.Scalar", "args": ["m", 0.5]}, {"name": "bb", "op": "mul.Scalar", "args": ["b", 2]},
      {"name": "y", "op": "add.Tensor", "args": ["ma", "bb"]}], "outputs": ["y"]})");
  CHECK(same(scaled, scaled_ref) == oracle::Status::Verified);
  // Wrong: beta ignored.
  CHECK(same(scaled, addmm) == oracle::Status::Counterexample);
  CHECK(same(scaled, graph_of("{" + in + R"("nodes": [{"name": "m", "op": "mm.default", "args": ["x", "w"]},
      {"name": "ma", "op": "mul.Scalar", "args": ["m", 0.5]}, {"name": "y", "op": "add.Tensor", "args": ["ma", "b"]}],
      "outputs": ["y"]})")) == oracle::Status::Counterexample);

  Graph st = graph_of(R"({"inputs": [{"name": "t", "dtype": "i64", "shape": [4]}],
      "nodes": [{"name": "z", "op": "scalar_tensor.default", "args": [0], "kwargs": {"dtype": "i64"}},
                {"name": "y", "op": "maximum.default", "args": ["t", "z"]}], "outputs": ["y", "z"]})");
  CHECK(!lower(st, true).program.bindings.empty());
  auto d = decompose(st);
  REQUIRE(std::holds_alternative<Graph>(d));
  CHECK(std::get<Graph>(d).nodes[0].op == "full.default");
  Graph no_dtype = graph_of(R"({"inputs": [], "nodes": [{"name": "z", "op": "scalar_tensor.default", "args": [1.5]}],
      "outputs": ["z"]})");
  auto d2 = decompose(no_dtype);
  REQUIRE(std::holds_alternative<Graph>(d2));
  CHECK(std::get<Graph>(d2).nodes[0].kwargs.at("dtype") == "f32");
  // Bad: a tensor where scalar_tensor wants a number.
  auto bad = lower_graph(graph_of(R"({"inputs": [{"name": "t", "dtype": "f32", "shape": []}],
      "nodes": [{"name": "z", "op": "scalar_tensor.default", "args": ["t"]}], "outputs": ["z"]})"),
                         {Device{}, true});
  CHECK(std::holds_alternative<GraphError>(bad));
}

TEST_CASE("gather expands to one flat index.Tensor with torch's values", "[compiler][torch]") {
  // x = 0..11 as [3, 4]; gather along dim 1 and dim 0.
  std::vector<float> xv(12);
  for (int i = 0; i < 12; ++i) xv[size_t(i)] = float(i);
  auto run_gather = [&](int dim, const std::vector<int64_t>& idx, sem::Shape ishape) {
    json g = json::parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [3, 4]},
        {"name": "i", "dtype": "i64", "shape": []}], "nodes": [{"name": "y", "op": "gather.default", "args": ["x", 0, "i"]}],
        "outputs": ["y"]})");
    g["inputs"][1]["shape"] = ishape;
    g["nodes"][0]["args"][1] = dim;
    Lowered l = lower(graph_of(g.dump()), true);
    return test::elems<float>(test::run(sem::print_program(l.program),
                                        {{"x", test::f32({3, 4}, xv)}, {"i", test::i64(ishape, idx)}}, "y"));
  };
  // dim 1: y[r][c] = x[r][i[r][c]]
  CHECK(run_gather(1, {3, 0, 1, 1, 2, 3}, {3, 2}) == std::vector<float>{3, 0, 5, 5, 10, 11});
  // dim 0: y[r][c] = x[i[r][c]][c]
  CHECK(run_gather(0, {2, 0, 1, 2, 0, 0, 0, 1}, {2, 4}) == std::vector<float>{8, 1, 6, 11, 0, 1, 2, 7});
  // Wrong: the same index along the other dim gives other values.
  CHECK(run_gather(0, {0, 0, 1, 1, 2, 2}, {3, 2}) != run_gather(1, {0, 0, 1, 1, 2, 2}, {3, 2}));
  // Bad: an index of another rank.
  auto bad = lower_graph(graph_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [3, 4]},
      {"name": "i", "dtype": "i64", "shape": [3]}], "nodes": [{"name": "y", "op": "gather.default", "args": ["x", 1, "i"]}],
      "outputs": ["y"]})"),
                         {Device{}, true});
  CHECK(std::holds_alternative<GraphError>(bad));
}

TEST_CASE("the exporter's operator list is the compiler's", "[compiler][torch]") {
  std::ifstream f(src("python/stax_torch/export.py"));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string open = "SUPPORTED = frozenset(\"\"\"";
  size_t a = text.find(open);
  REQUIRE(a != std::string::npos);
  size_t b = text.find("\"\"\"", a + open.size());
  REQUIRE(b != std::string::npos);
  std::set<std::string> py, cpp;
  std::istringstream in(text.substr(a + open.size(), b - a - open.size()));
  for (std::string w; in >> w;) py.insert(w);
  for (const OpSignature& s : op_signatures()) cpp.insert(s.name);
  CHECK(py == cpp);
  // Wrong: one operator less is noticed.
  py.erase("gather.default");
  CHECK(py != cpp);
}
