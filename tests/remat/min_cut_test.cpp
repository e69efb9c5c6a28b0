// The rematerialization network (Def. 5.2 of the text), its rules for U and its min
// cut: Table 5.1, Proposition 5.1 and optimality against brute force over
// every saved set on random networks of at most 16 values, the per-component
// solution against the monolithic one, and the text's fallback.
#include <catch2/catch.hpp>

#include <random>

#include "remat/min_cut.h"
#include "compiler/lower.h"
#include "remat/network.h"
#include "tests/remat/remat_test_util.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::remat;
using stax::test::read_joint;
using stax::test::network_of;
using nlohmann::json;

namespace {

/// A joint graph assembled in memory, with the types given by hand (no lowering).
struct Builder {
  autodiff::JointGraph jg;
  TypeMap types;
  sem::TensorType f32(sem::Shape s) { return {sem::DType::F32, std::move(s)}; }
  void primal(const std::string& n, sem::Shape s) {
    jg.graph.inputs.push_back({n, f32(s)});
    jg.primals.push_back(n);
    types[n] = f32(s);
  }
  void tangent(const std::string& n, sem::Shape s) {
    jg.graph.inputs.push_back({n, f32(s)});
    jg.tangents.push_back(n);
  }
  void node(autodiff::Phase ph, const std::string& n, const std::string& op, json args, sem::Shape s = {}) {
    jg.graph.nodes.push_back({n, op, std::move(args), json::object()});
    jg.phase.push_back(ph);
    if (ph == autodiff::Phase::Forward) types[n] = f32(s);
  }
  void fw(const std::string& n, const std::string& op, json args, sem::Shape s) { node(autodiff::Phase::Forward, n, op, args, s); }
  void bw(const std::string& n, const std::string& op, json args) { node(autodiff::Phase::Backward, n, op, args); }
  Network net(const NetworkOptions& opt = {}) {
    auto n = build_network(jg, types, opt);
    if (auto* e = std::get_if<compiler::GraphError>(&n)) FAIL(e->str());
    return std::get<Network>(n);
  }
};

std::vector<std::string> names(const Network& net, const std::vector<int>& ix, bool primals = false) {
  std::vector<std::string> out;
  for (int i : ix)
    if (primals || !net.values[size_t(i)].primal) out.push_back(net.values[size_t(i)].name);
  return out;
}

bool has_reason(const Value& v, const std::string& part) {
  for (const std::string& r : v.u_reasons)
    if (test::contains(r, part)) return true;
  return false;
}

}  // namespace

TEST_CASE("Table 5.1: Example 5.1's network, max flow 9011, only h saved") {
  Network net = network_of(read_joint("examples/graphs/example_5_1_joint.json"));
  const Value& h = net.at("h");
  const Value& g = net.at("g");
  CHECK(h.bytes == 8192);
  CHECK(h.distance == 1);
  CHECK(h.beta == 1);
  CHECK(h.capacity == 9011);
  CHECK(h.in_u());
  CHECK(h.in_b);
  CHECK(g.distance == 100);
  CHECK(g.beta == 2);
  CHECK(g.capacity == 2 * int64_t(std::floor(8192 * std::pow(1.1, 100))));
  CHECK(g.capacity >= 225500000);
  CHECK(g.capacity < 226500000);  // ≈ 2.26·10^8
  CHECK_FALSE(g.in_u());
  CHECK_FALSE(g.in_b);
  CHECK(net.at("x").capacity == 0);  // a primal: an input of both graphs
  MinCut c = min_cut(net);
  CHECK(c.error.empty());
  CHECK(c.finite);
  CHECK(c.flow_ek == 9011);
  CHECK(c.flow_bk == 9011);
  CHECK(names(net, c.saved) == std::vector<std::string>{"h"});
  CHECK(names(net, c.saved_bk) == std::vector<std::string>{"h"});
  MinCut m = min_cut(net, {true});
  CHECK(m.flow_ek == 9011);
  CHECK(m.components == 1);
}

TEST_CASE("Proposition 5.1: the feasibility check rejects a set that misses a path") {
  Network net = network_of(read_joint("examples/graphs/example_5_1_joint.json"));
  std::vector<int> saved = {net.index.at("x"), net.index.at("h")};
  CHECK_FALSE(infeasible_path(net, saved));
  CHECK(cut_cost(net, saved) == 9011);
  // Deliberately wrong: h dropped. h ∈ U ∩ B is its own path.
  auto p = infeasible_path(net, {net.index.at("x")});
  REQUIRE(p);
  CHECK(*p == "h");
  // Deliberately wrong: saving g instead of h leaves U → B open.
  CHECK(infeasible_path(net, {net.index.at("x"), net.index.at("g")}));
  CHECK(brute_force_min_cost(net) == std::optional<int64_t>(9011));
}

TEST_CASE("rules for U: expensive, materialized in the backward, reductions, near and far, long chains") {
  Builder b;
  b.primal("p", {64, 64});
  b.tangent("tangents_1", {64});
  b.fw("big", "sum.dim_IntList", json::array({"p", json::array({1}), false}), {64});  // 4·256 < 16384
  b.fw("small", "sum.default", json::array({"big"}), {});                            // 4·4 < 256
  b.fw("tiny", "sum.default", json::array({"small"}), {});                           // 4·4 = 16: allowed
  b.fw("a", "tanh.default", json::array({"p"}), {64, 64});
  b.fw("v", "t.default", json::array({"a"}), {64, 64});
  b.fw("u1", "exp.default", json::array({"a"}), {64, 64});
  b.fw("k", "mm.default", json::array({"u1", "p"}), {64, 64});
  b.fw("far", "add.Tensor", json::array({"a", "k"}), {64, 64});
  b.bw("bm", "mm.default", json::array({"a", "p"}));  // a is read by a backward mm
  b.bw("bv", "mm.default", json::array({"v", "p"}));
  b.bw("bt", "mul.Tensor", json::array({"tiny", "tangents_1"}));
  b.jg.forward_outputs = {"tiny"};
  b.jg.graph.outputs = {"tiny", "bm"};
  Network net = b.net();
  CHECK(has_reason(net.at("big"), "rule 3"));
  CHECK(has_reason(net.at("small"), "rule 3"));
  CHECK_FALSE(net.at("tiny").in_u());
  CHECK(has_reason(net.at("k"), "rule 1"));
  CHECK(has_reason(net.at("a"), "rule 2"));
  CHECK_FALSE(net.at("v").in_u());  // a view is never banned for its backward users
  CHECK_FALSE(net.at("u1").in_u());
  CHECK(has_reason(net.at("far"), "near and far"));
  CHECK(net.at("tiny").forward_output);
  CHECK(net.at("tiny").beta == 1);
  CHECK(net.at("u1").beta == 1);   // read by mm: written to memory in the forward anyway
  CHECK(net.at("far").beta == 2);  // not read in the forward: fusible away
  CHECK(net.at("far").distance == kMaxDistance);
  CHECK(net.at("a").distance == 1);
  CHECK(net.at("u1").distance == kMaxDistance);  // u1 -> k -> far: no backward reader downstream
  CHECK(net.at("v").distance == 1);
}

TEST_CASE("extra rule: the end of a fusible chain longer than 100 steps is saved") {
  Builder b;
  b.primal("p", {4});
  b.tangent("tangents_1", {4});
  std::string prev = "p";
  for (int i = 0; i < 130; ++i) {
    std::string n = "c" + std::to_string(i);
    b.fw(n, "tanh.default", json::array({prev}), {4});
    prev = n;
  }
  b.bw("g", "mul.Tensor", json::array({prev, "tangents_1"}));
  b.jg.forward_outputs = {prev};
  b.jg.graph.outputs = {prev, "g"};
  Network net = b.net();
  int banned = 0;
  for (const Value& v : net.values)
    if (has_reason(v, "fusible chain")) ++banned;
  CHECK(banned == 1);
  CHECK(has_reason(net.at("c101"), "fusible chain"));
  // A chain of 100 is not long.
  Builder s;
  s.primal("p", {4});
  prev = "p";
  for (int i = 0; i < 100; ++i) {
    std::string n = "c" + std::to_string(i);
    s.fw(n, "tanh.default", json::array({prev}), {4});
    prev = n;
  }
  s.jg.forward_outputs = {prev};
  s.jg.graph.outputs = {prev};
  for (const Value& v : s.net().values) CHECK_FALSE(has_reason(v, "fusible chain"));
}

TEST_CASE("bad joint graphs: errors name the node") {
  Builder b;
  b.primal("p", {4});
  b.tangent("tangents_1", {4});
  b.fw("a", "frobnicate.default", json::array({"p"}), {4});
  auto r = build_network(b.jg, b.types);
  REQUIRE(std::holds_alternative<compiler::GraphError>(r));
  CHECK(std::get<compiler::GraphError>(r).node == "a");
  CHECK(test::contains(std::get<compiler::GraphError>(r).message, "unknown operator"));

  Builder c;
  c.primal("p", {4});
  c.tangent("tangents_1", {4});
  c.fw("a", "mul.Tensor", json::array({"p", "tangents_1"}), {4});
  auto r2 = build_network(c.jg, c.types);
  REQUIRE(std::holds_alternative<compiler::GraphError>(r2));
  CHECK(std::get<compiler::GraphError>(r2).node == "a");
  CHECK(test::contains(std::get<compiler::GraphError>(r2).message, "tangent"));

  Builder u;
  u.primal("p", {4});
  u.bw("b", "mul.Tensor", json::array({"p", "nowhere"}));
  auto r4 = build_network(u.jg, u.types);
  REQUIRE(std::holds_alternative<compiler::GraphError>(r4));
  CHECK(std::get<compiler::GraphError>(r4).node == "b");
  CHECK(test::contains(std::get<compiler::GraphError>(r4).message, "nowhere"));

  Builder d;
  d.primal("p", {4});
  d.fw("a", "tanh.default", json::array({"p"}), {4});
  d.types.erase("a");
  auto r3 = build_network(d.jg, d.types);
  REQUIRE(std::holds_alternative<compiler::GraphError>(r3));
  CHECK(std::get<compiler::GraphError>(r3).node == "a");
}

TEST_CASE("no finite cut: a value the backward needs that can be neither saved nor recomputed") {
  auto jg = read_joint("examples/graphs/example_5_1_joint.json");
  Network net = network_of(jg, {{"h"}});
  CHECK(net.at("h").capacity == kInfinite);
  MinCut c = min_cut(net);
  CHECK_FALSE(c.finite);
  // An unsaveable value with a cheap way around it still has a finite cut.
  Network g = network_of(jg, {{"g"}});
  MinCut cg = min_cut(g);
  CHECK(cg.finite);
  CHECK(cg.flow_ek == 9011);
}

TEST_CASE("min cut = brute force over every saved set, on random networks of at most 16 values") {
  std::mt19937_64 rng(20261201);
  const char* fw_ops[] = {"mm.default", "tanh.default", "add.Tensor", "mul.Tensor", "sum.dim_IntList",
                          "t.default", "exp.default", "cat.default", "relu.default"};
  const char* bw_ops[] = {"mul.Tensor", "mm.default", "t.default", "add.Tensor", "tanh.default"};
  int with_recompute = 0, checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Builder b;
    auto pick = [&](size_t n) { return size_t(rng() % n); };
    auto shape = [&] { return sem::Shape{int64_t(1 + pick(16)), int64_t(1 + pick(16))}; };
    int np = 1 + int(pick(3));
    std::vector<std::string> fwv, bwv;
    for (int i = 0; i < np; ++i) {
      b.primal("p" + std::to_string(i), shape());
      fwv.push_back("p" + std::to_string(i));
    }
    b.tangent("tangents_1", {4});
    int nf = 2 + int(pick(size_t(16 - np - 1)));
    for (int i = 0; i < nf; ++i) {
      std::string op = fw_ops[pick(std::size(fw_ops))];
      json args = json::array({fwv[pick(fwv.size())]});
      if (op == "mm.default" || op == "add.Tensor" || op == "mul.Tensor") args.push_back(fwv[pick(fwv.size())]);
      std::string n = "f" + std::to_string(i);
      b.fw(n, op, args, shape());
      fwv.push_back(n);
    }
    int nb = 1 + int(pick(5));
    for (int i = 0; i < nb; ++i) {
      std::string op = bw_ops[pick(std::size(bw_ops))];
      auto any = [&]() -> std::string {
        size_t k = pick(fwv.size() + bwv.size() + 1);
        if (k < fwv.size()) return fwv[k];
        if (k < fwv.size() + bwv.size()) return bwv[k - fwv.size()];
        return "tangents_1";
      };
      json args = json::array({any()});
      if (op != "t.default" && op != "tanh.default") args.push_back(any());
      std::string n = "b" + std::to_string(i);
      b.bw(n, op, args);
      bwv.push_back(n);
    }
    b.jg.forward_outputs = {fwv.back()};
    b.jg.graph.outputs = {fwv.back(), bwv.back()};
    Network net = b.net();
    REQUIRE(net.values.size() <= 16);
    MinCut c = min_cut(net);
    INFO("iteration " << iter);
    REQUIRE(c.error.empty());
    REQUIRE(c.finite);
    CHECK(c.flow_ek == c.flow_bk);
    auto best = brute_force_min_cost(net);
    REQUIRE(best);
    CHECK(c.flow_ek == *best);
    CHECK(cut_cost(net, c.saved) == c.flow_ek);
    CHECK_FALSE(infeasible_path(net, c.saved));
    CHECK(min_cut(net, {true}).flow_ek == c.flow_ek);
    // Optimality seen from the other side: dropping any saved value of
    // positive capacity leaves a path from U to B open.
    for (size_t k = 0; k < c.saved.size(); ++k) {
      if (net.values[size_t(c.saved[k])].capacity == 0) continue;
      std::vector<int> fewer = c.saved;
      fewer.erase(fewer.begin() + long(k));
      CHECK(infeasible_path(net, fewer));
    }
    ++checked;
    for (const Value& v : net.values)
      if (v.in_b && !v.in_u() && std::find(c.saved.begin(), c.saved.end(), net.index.at(v.name)) == c.saved.end())
        ++with_recompute;
  }
  CHECK(checked == 300);
  CHECK(with_recompute > 50);  // the generator exercises recomputation, not just "save B"
}

TEST_CASE("the cross-checks catch a wrong flow and a wrong cut") {
  Network net = network_of(read_joint("examples/graphs/example_5_1_joint.json"));
  MinCut bk = min_cut(net, {false, CutOptions::Fault::BkCapacity});
  CHECK(bk.flow_bk == 9013);  // h and the primal x, one more each
  CHECK(test::contains(bk.error, "differs from Boykov-Kolmogorov's 9013"));
  MinCut ek = min_cut(net, {false, CutOptions::Fault::EkCutDropsOne});
  CHECK(test::contains(ek.error, "Proposition 5.1: Edmonds-Karp's saved set is not feasible: the path h misses it"));
  CHECK(min_cut(net).error.empty());
}

TEST_CASE("every operator of the lowering has a class") {
  for (const compiler::OpSignature& s : compiler::op_signatures()) {
    INFO(s.name);
    CHECK(op_class(s.name));
  }
  CHECK_FALSE(op_class("frobnicate.default"));
  CHECK(op_class("gelu_backward.default") == OpClass::Pointwise);
  CHECK(op_class("mm.default") == OpClass::Expensive);
  CHECK_FALSE(fusible(OpClass::Expensive, OpClass::Pointwise));
  CHECK_FALSE(fusible(OpClass::Pointwise, OpClass::Expensive));
  CHECK(fusible(OpClass::Pointwise, OpClass::Cat));
  CHECK_FALSE(fusible(OpClass::Cat, OpClass::Pointwise));
  CHECK(fusible(OpClass::Pointwise, OpClass::Reduction));
}
