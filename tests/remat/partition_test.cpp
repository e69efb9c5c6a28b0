// The partition as a verified transform (§5.4–5.6): the forward and
// backward graphs, run in turn, give the joint graph's bits, for the three
// strategies, on Example 5.1, an MLP and random joint graphs; deliberately
// wrong partitions (a saved value dropped, a wrong recomputation, a backward
// reading the wrong saved value) are caught; `stax partition` prints Table 5.1
// and rejects bad input with exit 2.
#include <catch2/catch.hpp>

#include <random>

#include "compiler/lower.h"
#include "remat/partition.h"
#include "remat/verify.h"
#include "tests/remat/remat_test_util.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::remat;
using stax::test::read_joint;
using stax::test::network_of;
using nlohmann::json;

namespace {

Partition partition_ok(const autodiff::JointGraph& jg, const Network& net, Strategy s, MinCut* cut = nullptr) {
  auto p = partition(jg, net, s, cut);
  if (auto* e = std::get_if<compiler::GraphError>(&p)) FAIL(e->str());
  return std::get<Partition>(p);
}

std::vector<std::string> input_names(const compiler::Graph& g) {
  std::vector<std::string> v;
  for (const auto& in : g.inputs) v.push_back(in.name);
  return v;
}

compiler::Node& node(compiler::Graph& g, const std::string& name) {
  for (auto& n : g.nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  return g.nodes[0];
}

}  // namespace

TEST_CASE("Example 5.1: h saved, nothing recomputed, the two graphs give the joint graph's bits") {
  auto jg = read_joint("examples/graphs/example_5_1_joint.json");
  Network net = network_of(jg);
  MinCut cut;
  auto pr = partition(jg, net, Strategy::MinCut, &cut);
  REQUIRE(std::holds_alternative<Partition>(pr));
  const Partition& p = std::get<Partition>(pr);
  CHECK(cut.flow_ek == 9011);
  CHECK(p.saved == std::vector<std::string>{"h"});
  CHECK(p.saved_bytes == 8192);
  CHECK(p.primals_read == std::vector<std::string>{"x"});
  CHECK(p.recomputed.empty());
  CHECK(p.forward.outputs == std::vector<std::string>{"y", "h"});
  CHECK(input_names(p.backward) == std::vector<std::string>{"h", "x", "tangents_1"});
  CHECK(p.backward.outputs == std::vector<std::string>{"matmul_0"});
  VerifyResult v = verify_partition(jg, p);
  INFO(v.message);
  CHECK(v.status == VerifyStatus::Verified);
  CHECK(v.trials == 8);

  // Recompute-all recomputes h (an mm) in the backward: still exact.
  Partition r = partition_ok(jg, net, Strategy::RecomputeAll);
  CHECK(r.saved.empty());
  CHECK(r.recomputed == std::vector<std::string>{"h"});
  CHECK(verify_partition(jg, r).status == VerifyStatus::Verified);
}

TEST_CASE("MLP: min cut saves h1 and a2 and recomputes relu and exp; all strategies exact") {
  auto jg = read_joint("examples/graphs/mlp_joint.json");
  Network net = network_of(jg);
  Partition m = partition_ok(jg, net, Strategy::MinCut);
  CHECK(m.saved == std::vector<std::string>{"h1", "a2"});
  CHECK(m.saved_bytes == 640);
  CHECK(m.recomputed == std::vector<std::string>{"r", "e"});
  Partition s = partition_ok(jg, net, Strategy::SaveAll);
  CHECK(s.saved == std::vector<std::string>{"h1", "r", "e"});
  CHECK(s.saved_bytes == 768);
  CHECK(s.recomputed.empty());
  Partition r = partition_ok(jg, net, Strategy::RecomputeAll);
  CHECK(r.saved_bytes == 0);
  CHECK(r.recomputed == std::vector<std::string>{"a1", "h1", "a2", "r", "e"});
  for (const Partition* p : {&m, &s, &r}) {
    VerifyResult v = verify_partition(jg, *p, {12, 7});
    INFO(strategy_name(p->strategy) << ": " << v.message);
    CHECK(v.status == VerifyStatus::Verified);
  }
}

TEST_CASE("deliberately wrong partitions are caught") {
  auto jg = read_joint("examples/graphs/mlp_joint.json");
  Network net = network_of(jg);
  const Partition good = partition_ok(jg, net, Strategy::MinCut);

  SECTION("a saved value dropped from the backward's inputs") {
    Partition p = good;
    auto& in = p.backward.inputs;
    in.erase(std::remove_if(in.begin(), in.end(), [](const auto& i) { return i.name == "a2"; }), in.end());
    VerifyResult v = verify_partition(jg, p);
    CHECK(v.status == VerifyStatus::Counterexample);
    CHECK(test::contains(v.message, "a2"));
  }
  SECTION("a saved value the forward does not hand over") {
    Partition p = good;
    p.forward.outputs.pop_back();  // a2
    VerifyResult v = verify_partition(jg, p);
    CHECK(v.status == VerifyStatus::Counterexample);
    CHECK(test::contains(v.message, "'a2'"));
  }
  SECTION("a wrong recomputation (relu recomputed as abs)") {
    Partition p = good;
    node(p.backward, "r").op = "abs.default";
    VerifyResult v = verify_partition(jg, p);
    CHECK(v.status == VerifyStatus::Counterexample);
    CHECK(test::contains(v.message, "backward graph"));
  }
  SECTION("the backward reads the wrong saved value of the same type") {
    Partition p = partition_ok(jg, net, Strategy::SaveAll);
    node(p.backward, "de").args[1] = "e";  // r in the joint graph
    VerifyResult v = verify_partition(jg, p);
    CHECK(v.status == VerifyStatus::Counterexample);
    CHECK(test::contains(v.message, "output 'dW"));
  }
  SECTION("the forward's saved value computed from the wrong operand") {
    Partition p = good;
    node(p.forward, "a2").args[0] = "x";  // x is f32[8,16] like h1
    VerifyResult v = verify_partition(jg, p);
    CHECK(v.status == VerifyStatus::Counterexample);
  }
}

TEST_CASE("random joint graphs: every strategy's partition is exact") {
  std::mt19937_64 rng(51);
  auto pick = [&](size_t n) { return size_t(rng() % n); };
  const char* unary[] = {"tanh.default", "relu.default", "neg.default", "sigmoid.default", "t.default"};
  const char* binary[] = {"mm.default", "mul.Tensor", "add.Tensor"};
  int recomputing = 0;
  for (int iter = 0; iter < 25; ++iter) {
    json j;
    j["inputs"] = json::array();
    std::vector<std::string> sq;  // f32[4,4] forward values
    int np = 1 + int(pick(3));
    for (int i = 0; i < np; ++i) {
      std::string n = "p" + std::to_string(i);
      j["inputs"].push_back({{"name", n}, {"dtype", "f32"}, {"shape", {4, 4}}});
      j["primals"].push_back(n);
      sq.push_back(n);
    }
    j["inputs"].push_back({{"name", "tangents_1"}, {"dtype", "f32"}, {"shape", {4, 4}}});
    j["tangents"] = {"tangents_1"};
    j["nodes"] = json::array();
    int nf = 3 + int(pick(8));
    for (int i = 0; i < nf; ++i) {
      std::string n = "f" + std::to_string(i);
      json args;
      std::string op;
      if (pick(2)) {
        op = unary[pick(std::size(unary))];
        args = {sq[pick(sq.size())]};
      } else {
        op = binary[pick(std::size(binary))];
        args = {sq[pick(sq.size())], sq[pick(sq.size())]};
      }
      j["nodes"].push_back({{"name", n}, {"op", op}, {"args", args}, {"phase", "forward"}});
      sq.push_back(n);
    }
    j["nodes"].push_back({{"name", "y"}, {"op", "sum.default"}, {"args", {sq.back()}}, {"phase", "forward"}});
    std::vector<std::string> bw = {"tangents_1"};
    int nb = 2 + int(pick(6));
    for (int i = 0; i < nb; ++i) {
      std::string n = "b" + std::to_string(i);
      auto any = [&]() { return pick(2) ? bw[pick(bw.size())] : sq[pick(sq.size())]; };
      std::string op = binary[pick(std::size(binary))];
      j["nodes"].push_back({{"name", n}, {"op", op}, {"args", {any(), any()}}, {"phase", "backward"}});
      bw.push_back(n);
    }
    j["outputs"] = {"y", bw.back()};
    j["forward_outputs"] = {"y"};
    j["grads"] = {{"p0", bw.back()}};
    j["nodes"][0]["phase"] = "forward";
    // y's tangent is f32[] in a real joint graph; here any f32[4,4] seed will do.
    auto r = autodiff::parse_joint_graph(j.dump(), "random_" + std::to_string(iter));
    if (auto* e = std::get_if<compiler::GraphError>(&r)) FAIL(e->str());
    const autodiff::JointGraph& jg = std::get<autodiff::JointGraph>(r);
    Network net = network_of(jg);
    for (Strategy s : {Strategy::MinCut, Strategy::SaveAll, Strategy::RecomputeAll}) {
      MinCut cut;
      Partition p = partition_ok(jg, net, s, &cut);
      if (s == Strategy::MinCut) {
        INFO(cut.error);
        CHECK(cut.error.empty());
        if (!p.recomputed.empty()) ++recomputing;
      }
      VerifyResult v = verify_partition(jg, p, {4, uint64_t(iter)});
      INFO("graph " << iter << ", " << strategy_name(s) << ": " << v.message << "\n" << j.dump());
      CHECK(v.status == VerifyStatus::Verified);
    }
  }
  CHECK(recomputing > 5);
}

// ----------------------------------------------------------------- the CLI

TEST_CASE("stax partition prints Table 5.1 for Example 5.1") {
  auto dir = test::scratch("remat_partition_cli");
  std::string ex = std::string(STAX_SOURCE_DIR) + "/examples/graphs/example_5_1_joint.json";
  test::Run r = test::run_stax(dir, "partition " + ex);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(test::contains(r.out, "9011"));
  CHECK(test::contains(r.out, "225781552"));
  CHECK(test::contains(r.out, "Edmonds-Karp 9011, Boykov-Kolmogorov 9011"));
  CHECK(test::contains(r.out, "saved h (8192 bytes)"));
  CHECK(test::contains(r.out, "tested"));
  test::Run j = test::run_stax(dir, "partition " + ex + " --json --strategy save-all");
  REQUIRE(j.code == 0);
  json doc = json::parse(j.out);
  CHECK(doc["flow"]["edmonds_karp"] == 9011);
  CHECK(doc["saved"] == json({"h"}));
  CHECK(doc["strategy"] == "save-all");
  CHECK(doc["verification"]["status"] == "tested");
  CHECK(doc["strategies"].size() == 3);
  // The budget: below the exact minimum exits 2 naming it; above,
  // the budgeted schedules are printed.
  test::Run b = test::run_stax(dir, "partition " + ex + " --memory-budget 4096 --no-verify");
  CHECK(b.code == 2);
  CHECK(test::contains(b.err, "the exact minimum is 32772 bytes"));
  b = test::run_stax(dir, "partition " + ex + " --memory-budget 40000 --no-verify");
  CHECK(b.code == 0);
  CHECK(test::contains(b.out, "memory budget 40000 bytes"));
  CHECK_FALSE(test::contains(b.out, "verification"));
  CHECK(test::run_stax(dir, "partition " + ex + " --memory-budget -1").code == 2);
}

TEST_CASE("stax partition: bad input exits 2 with a message naming the node") {
  auto dir = test::scratch("remat_partition_cli");
  // A forward graph (no phases at all) is differentiated first; a joint
  // graph with a node lacking its phase is an error naming the node.
  std::string plain = std::string(STAX_SOURCE_DIR) + "/examples/graphs/example_5_1_forward.json";
  test::Run r = test::run_stax(dir, "partition " + plain);
  CHECK(r.code == 0);
  CHECK(test::contains(r.out, "reverse mode first"));
  auto no_phase = test::write(dir, "no_phase.json", R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [4]},
    {"name": "tangents_1", "dtype": "f32", "shape": [4]}],
    "nodes": [{"name": "h", "op": "tanh.default", "args": ["x"]}],
    "outputs": ["h"], "primals": ["x"], "tangents": ["tangents_1"], "forward_outputs": ["h"]})");
  r = test::run_stax(dir, "partition " + no_phase.string());
  CHECK(r.code == 2);
  CHECK(test::contains(r.err, "node 'h'"));
  CHECK(test::contains(r.err, "phase"));

  auto bad_op = test::write(dir, "bad_op.json", R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [4]},
    {"name": "tangents_1", "dtype": "f32", "shape": [4]}],
    "nodes": [{"name": "a", "op": "tanh.default", "args": ["x"], "phase": "forward"},
              {"name": "b", "op": "frobnicate.default", "args": ["a", "tangents_1"], "phase": "backward"}],
    "outputs": ["a", "b"], "primals": ["x"], "tangents": ["tangents_1"], "forward_outputs": ["a"], "grads": {"x": "b"}})");
  r = test::run_stax(dir, "partition " + bad_op.string());
  CHECK(r.code == 2);
  CHECK(test::contains(r.err, "node 'b'"));
  CHECK(test::contains(r.err, "unknown operator"));

  auto reads_tangent = test::write(dir, "reads_tangent.json", R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [4]},
    {"name": "tangents_1", "dtype": "f32", "shape": [4]}],
    "nodes": [{"name": "a", "op": "mul.Tensor", "args": ["x", "tangents_1"], "phase": "forward"}],
    "outputs": ["a"], "primals": ["x"], "tangents": ["tangents_1"], "forward_outputs": ["a"]})");
  r = test::run_stax(dir, "partition " + reads_tangent.string());
  CHECK(r.code == 2);
  CHECK(test::contains(r.err, "node 'a'"));

  auto stray = test::write(dir, "stray_input.json", R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [4]},
    {"name": "z", "dtype": "f32", "shape": [4]}],
    "nodes": [{"name": "a", "op": "tanh.default", "args": ["x"], "phase": "forward"}],
    "outputs": ["a"], "primals": ["x"], "forward_outputs": ["a"]})");
  r = test::run_stax(dir, "partition " + stray.string());
  CHECK(r.code == 2);
  CHECK(test::contains(r.err, "node 'z'"));

  auto garbage = test::write(dir, "garbage.json", "{\"inputs\": [");
  r = test::run_stax(dir, "partition " + garbage.string());
  CHECK(r.code == 2);
  r = test::run_stax(dir, "partition " + (dir / "missing.json").string());
  CHECK(r.code == 2);
  r = test::run_stax(dir, "partition " + std::string(STAX_SOURCE_DIR) + "/examples/graphs/mlp_joint.json --strategy greedy");
  CHECK(r.code == 2);
  CHECK(test::contains(r.err, "greedy"));
}

TEST_CASE("gelu_backward.default lowers to grad * (Phi(h) + h*phi(h)) (Listing 5.3)") {
  auto graph = [](const char* approximate) {
    json j = {{"inputs", {{{"name", "g"}, {"dtype", "f32"}, {"shape", {4}}}, {{"name", "h"}, {"dtype", "f32"}, {"shape", {4}}}}},
              {"nodes", {{{"name", "d"}, {"op", "gelu_backward.default"}, {"args", {"g", "h"}}, {"kwargs", {{"approximate", approximate}}}}}},
              {"outputs", {"d"}}};
    auto r = compiler::parse_graph(j.dump());
    REQUIRE(std::holds_alternative<compiler::Graph>(r));
    return compiler::lower_graph(std::get<compiler::Graph>(r), {compiler::Device{}, true});
  };
  auto l = graph("none");
  REQUIRE(std::holds_alternative<compiler::Lowered>(l));
  sem::Inputs in = {{"g", test::f32({4}, {1, 2, 1, 3})}, {"h", test::f32({4}, {0, 0, 10, -0.0f})}};
  sem::IeeeOutcome o = sem::eval_ieee(std::get<compiler::Lowered>(l).program, in);
  REQUIRE_FALSE(o.failure);
  // Φ(0) = 0.5 and 0·φ(0) = 0; at h = 10, Φ = 1 and h·φ(h) ≈ 7.7e-22 vanishes in 1 + ....
  CHECK(test::bits32(*o.outputs.at("d")) ==
        std::vector<test::H32>{test::b32(0.5f), test::b32(1.0f), test::b32(1.0f), test::b32(1.5f)});
  // The tanh form lowers too; an unknown approximation is an error naming the node.
  CHECK(std::holds_alternative<compiler::Lowered>(graph("tanh")));
  auto t = graph("cubic");
  REQUIRE(std::holds_alternative<compiler::GraphError>(t));
  CHECK(std::get<compiler::GraphError>(t).node == "d");
  CHECK(test::contains(std::get<compiler::GraphError>(t).message, "approximate"));
}
