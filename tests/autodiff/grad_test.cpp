// §5.3 (Algorithm 5.1, Listing 5.2): the joint graph of Example 5.1
// node for node, the structure of joint graphs (phases, tangents, grads,
// JSON round trip, lowering), `stax grad` / `stax jvp` on the command line,
// and bad input (golden files whose first line states the expected error).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/autodiff/ad_util.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::autodiff;

namespace {

JointGraph joint(const compiler::Graph& g, const GradOptions& go = {}) {
  auto j = build_joint_graph(g, go);
  if (auto* e = std::get_if<compiler::GraphError>(&j)) FAIL(e->str());
  return std::get<JointGraph>(j);
}

}  // namespace

TEST_CASE("Listing 5.2: the joint graph of Example 5.1 with respect to W", "[autodiff]") {
  std::string golden = test::slurp(adtest::src("tests/golden/autodiff/example_5_1_wrt_W.txt"));
  REQUIRE(golden.rfind("# expect: exit 0", 0) == 0);
  std::string expected = golden.substr(golden.find('\n') + 1);
  GradOptions go;
  go.wrt = {"W"};
  go.listing_names = true;
  JointGraph j = joint(adtest::load("examples/graphs/example_5_1_forward.json"), go);
  CHECK(joint_listing(j) == expected);
  // Node for node: expand of the tangent, gelu_backward(expand, h) reading gelu's
  // INPUT, t(primals_1), mm(t, gelu_backward); x gets no gradient nodes.
  REQUIRE(j.graph.nodes.size() == 7);
  CHECK(j.graph.nodes[3].op == "expand.default");
  CHECK(j.graph.nodes[3].args[0] == "tangents_1");
  CHECK(j.graph.nodes[4].op == "gelu_backward.default");
  CHECK(j.graph.nodes[4].args == nlohmann::json::array({"expand", "h"}));
  CHECK(j.graph.nodes[5].op == "t.default");
  CHECK(j.graph.nodes[5].args[0] == "primals_1");
  CHECK(j.graph.nodes[6].op == "mm.default");
  CHECK(j.graph.nodes[6].args == nlohmann::json::array({"t", "gelu_backward"}));
  CHECK(j.grads.size() == 1);
  CHECK(j.grads.at("primals_2") == "mm");
  CHECK(j.primals == std::vector<std::string>{"primals_1", "primals_2"});
  CHECK(j.tangents == std::vector<std::string>{"tangents_1"});
  CHECK(j.graph.outputs == std::vector<std::string>{"y", "mm"});
  for (size_t i = 0; i < 3; ++i) CHECK(j.phase[i] == Phase::Forward);
  for (size_t i = 3; i < 7; ++i) CHECK(j.phase[i] == Phase::Backward);

  // The golden is also what the command prints.
  auto dir = test::scratch("autodiff_grad");
  test::Run r = test::run_stax(dir, "grad " + adtest::src("examples/graphs/example_5_1_forward.json") + " --wrt W --listing-names");
  CHECK(r.code == 0);
  CHECK(r.out == expected);
  // A wrong golden (gelu_backward reading gelu's output) must not match.
  std::string wrong = expected;
  wrong.replace(wrong.find("gelu_backward.default(expand, h)"), 32, "gelu_backward.default(expand, g)");
  CHECK(joint_listing(j) != wrong);
}

TEST_CASE("Listing 5.2 with its own names: matmul.default kept, matmul_0 in the backward", "[autodiff]") {
  std::string golden = test::slurp(adtest::src("tests/golden/autodiff/listing_5_2_wrt_W.txt"));
  REQUIRE(golden.rfind("# expect: exit 0", 0) == 0);
  auto dir = test::scratch("autodiff_listing");
  test::Run r = test::run_stax(dir, "grad " + adtest::src("tests/autodiff/graphs/listing_5_2.json") + " --wrt W --listing-names");
  CHECK(r.code == 0);
  CHECK(r.out == golden.substr(golden.find('\n') + 1));
  CHECK(test::contains(r.out, "[BW] gelu_backward : f32[32, 64] = gelu_backward.default(expand, matmul)"));
  CHECK(test::contains(r.out, "[BW] matmul_0 : f32[64, 64] = matmul.default(t, gelu_backward)"));
}

TEST_CASE("joint graphs: JSON round trip, lowering, accumulation, pruning", "[autodiff]") {
  JointGraph j = joint(adtest::load("tests/autodiff/graphs/ops_small.json"));
  auto back = parse_joint_graph(joint_graph_to_json(j).dump(), "<rt>");
  REQUIRE(std::holds_alternative<JointGraph>(back));
  const JointGraph& b = std::get<JointGraph>(back);
  CHECK(b.grads == j.grads);
  CHECK(b.phase == j.phase);
  CHECK(b.tangents == j.tangents);
  CHECK(b.graph.nodes.size() == j.graph.nodes.size());
  // It lowers with compiler/lower, eagerly and by the policies.
  auto l = compiler::lower_graph(j.graph, {});
  REQUIRE(std::holds_alternative<compiler::Lowered>(l));
  // The integer input idx has no gradient; every float input does.
  CHECK(j.grads.count("idx") == 0);
  CHECK(j.grads.size() == 4);

  // A value used twice: its adjoint is an add.Tensor of the two contributions.
  compiler::Graph twice = adtest::parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
    "nodes": [{"name": "a", "op": "exp.default", "args": ["x"]}, {"name": "b", "op": "sin.default", "args": ["x"]},
              {"name": "y", "op": "mul.Tensor", "args": ["a", "b"]}], "outputs": ["y"]})");
  JointGraph jt = joint(twice);
  CHECK(jt.graph.nodes.back().op == "add.Tensor");
  CHECK(jt.grads.at("x") == jt.graph.nodes.back().name);

  // An input off every path to an output gets no gradient nodes.
  compiler::Graph off = adtest::parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [3]},
    {"name": "z", "dtype": "f32", "shape": [3]}],
    "nodes": [{"name": "y", "op": "tanh.default", "args": ["x"]}, {"name": "dead", "op": "exp.default", "args": ["z"]}],
    "outputs": ["y"]})");
  JointGraph jo = joint(off);
  CHECK(jo.grads.count("x") == 1);
  CHECK(jo.grads.count("z") == 0);
  for (size_t i = 0; i < jo.graph.nodes.size(); ++i)
    if (jo.phase[i] == Phase::Backward)
      for (const auto& r : compiler::node_refs(jo.graph.nodes[i])) CHECK(r != "dead");
}

TEST_CASE("bad input exits 2 with a message naming the node", "[autodiff]") {
  auto dir = test::scratch("autodiff_bad");
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(adtest::src("tests/golden/autodiff"))) {
    if (e.path().extension() != ".json") continue;
    std::string text = test::slurp(e.path());
    // First line: {"expect": "<part of the message>", "wrt": "NAMES",
    nlohmann::json j = nlohmann::json::parse(text);
    std::string expect = j["expect"], wrt = j["wrt"];
    INFO(e.path().string());
    for (const char* cmd : {"grad", "jvp"}) {
      test::Run r = test::run_stax(dir, std::string(cmd) + " " + e.path().string() + " --wrt " + wrt);
      INFO(cmd << ": " << r.err);
      CHECK(r.code == 2);
      CHECK(test::contains(r.err, expect));
    }
    // The library says the same.
    compiler::Graph g = adtest::parse(text);
    GradOptions go;
    for (size_t a = 0, b; a <= wrt.size(); a = b + 1) {
      b = wrt.find(',', a);
      if (b == std::string::npos) b = wrt.size();
      go.wrt.push_back(wrt.substr(a, b - a));
    }
    auto res = build_joint_graph(g, go);
    REQUIRE(std::holds_alternative<compiler::GraphError>(res));
    CHECK(test::contains(std::get<compiler::GraphError>(res).str(), expect));
    ++n;
  }
  CHECK(n >= 7);
  // Masks from comparisons used as operands are fine (PyTorch's reading: piecewise constant).
  compiler::Graph mask = adtest::parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
    "nodes": [{"name": "c", "op": "gt.Scalar", "args": ["x", 0]}, {"name": "y", "op": "mul.Tensor", "args": ["x", "c"]},
              {"name": "w", "op": "where.self", "args": ["c", "y", 1.0]}], "outputs": ["w"]})");
  CHECK(std::holds_alternative<JointGraph>(build_joint_graph(mask)));
  // Not a crash on a malformed file.
  test::write(dir, "broken.json", "{\"inputs\": [");
  test::Run r = test::run_stax(dir, "grad " + (dir / "broken.json").string());
  CHECK(r.code == 2);
}

TEST_CASE("stax jvp / hvp print their graphs, the Jacobians and Hessians both ways", "[autodiff]") {
  auto dir = test::scratch("autodiff_jvp");
  test::Run r = test::run_stax(dir, "jvp " + adtest::src("examples/graphs/example_5_1_forward.json") + " --wrt W");
  CHECK(r.code == 0);
  CHECK(test::contains(r.out, "[JV] W_tangent : f32[64, 64] = placeholder"));
  CHECK(test::contains(r.out, "= mm.default(x, W_tangent)"));
  CHECK(test::contains(r.out, "= gelu_backward.default(mm, h)"));
  r = test::run_stax(dir, "jvp " + adtest::src("tests/autodiff/graphs/smooth_mlp.json") + " --jacobian --json");
  CHECK(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["equal"] == true);
  CHECK(j["n"] == 52);
  CHECK(j["m"] == 35);
  CHECK(j["ops"]["n_jvp"].get<int64_t>() == 52 * j["ops"]["jvp"].get<int64_t>());
  r = test::run_stax(dir, "grad " + adtest::src("tests/autodiff/graphs/ops_small.json") + " --json");
  CHECK(r.code == 0);
  CHECK(std::holds_alternative<JointGraph>(parse_joint_graph(r.out)));
  // stax hvp: both modes print a graph; --hessian checks symmetry and agreement.
  for (const char* mode : {"forward-over-reverse", "reverse-over-reverse"}) {
    r = test::run_stax(dir, "hvp " + adtest::src("examples/graphs/example_5_1_forward.json") + " --wrt W --mode " + mode);
    CHECK(r.code == 0);
    CHECK(test::contains(r.out, "# H v for W"));
  }
  r = test::run_stax(dir, "hvp " + adtest::src("tests/autodiff/graphs/erf_graph.json") + " --hessian --json");
  CHECK(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["symmetric"] == true);
  CHECK(j["agree"] == true);
  r = test::run_stax(dir, "hvp " + adtest::src("tests/golden/autodiff/bad_floor.json") + " --wrt x");
  CHECK(r.code == 2);
  // Too large for --jacobian: refused with exit 3, not run for hours.
  r = test::run_stax(dir, "jvp " + adtest::src("examples/graphs/example_5_1_forward.json") + " --jacobian");
  CHECK(r.code == 3);
}
