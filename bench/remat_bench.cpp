// Min-cut partition of a generated joint graph of about 10^5 nodes (§5.4;
// target: ≤ 1 s): a deep residual MLP, per layer a = h·W, b = tanh(a),
// c = b·b, h' = c + h, and its backward (10 nodes per layer). Reports the time
// to build the network, Edmonds–Karp's and Boykov–Kolmogorov's times (each
// over the per-component networks, graph construction included), the split,
// and the figures of the cut. `--monolithic` solves the whole network at once
// (for comparison, at smaller sizes: Edmonds–Karp's full BFS per augmenting
// path makes it quadratic there).
//
//   stax_bench_remat [--nodes N] [--monolithic]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "proofs/obligation.h"
#include "remat/partition.h"

using namespace stax;
using namespace stax::remat;
using nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Generated {
  autodiff::JointGraph jg;
  TypeMap types;
};

Generated residual_mlp(int layers, int64_t batch, int64_t width) {
  Generated g;
  sem::TensorType act{sem::DType::F32, {batch, width}}, weight{sem::DType::F32, {width, width}};
  auto& G = g.jg.graph;
  auto input = [&](const std::string& n, sem::TensorType t, bool primal) {
    G.inputs.push_back({n, t});
    (primal ? g.jg.primals : g.jg.tangents).push_back(n);
    if (primal) g.types[n] = t;
  };
  auto node = [&](autodiff::Phase ph, const std::string& n, const char* op, json args, sem::TensorType t) {
    G.nodes.push_back({n, op, std::move(args), json::object()});
    g.jg.phase.push_back(ph);
    if (ph == autodiff::Phase::Forward) g.types[n] = t;
  };
  const auto F = autodiff::Phase::Forward, B = autodiff::Phase::Backward;
  input("x", act, true);
  std::string h = "x";
  std::vector<std::string> hs = {"x"};
  for (int l = 0; l < layers; ++l) {
    std::string s = std::to_string(l);
    input("W" + s, weight, true);
    node(F, "a" + s, "mm.default", {h, "W" + s}, act);
    node(F, "b" + s, "tanh.default", {"a" + s}, act);
    node(F, "c" + s, "mul.Tensor", {"b" + s, "b" + s}, act);
    node(F, "h" + s, "add.Tensor", {"c" + s, h}, act);
    h = "h" + s;
    hs.push_back(h);
  }
  input("tangents_1", act, false);
  std::string dh = "tangents_1";
  for (int l = layers - 1; l >= 0; --l) {
    std::string s = std::to_string(l), prev = hs[size_t(l)];
    node(B, "db" + s, "mul.Tensor", {dh, "b" + s}, act);
    node(B, "db2" + s, "add.Tensor", {"db" + s, "db" + s}, act);
    node(B, "bb" + s, "mul.Tensor", {"b" + s, "b" + s}, act);
    node(B, "t1" + s, "mul.Tensor", {"db2" + s, "bb" + s}, act);
    node(B, "da" + s, "sub.Tensor", {"db2" + s, "t1" + s}, act);
    node(B, "ht" + s, "t.default", {prev}, act);
    node(B, "dW" + s, "mm.default", {"ht" + s, "da" + s}, weight);
    node(B, "Wt" + s, "t.default", {"W" + s}, weight);
    node(B, "dhm" + s, "mm.default", {"da" + s, "Wt" + s}, act);
    node(B, "dh" + s, "add.Tensor", {"dhm" + s, dh}, act);
    dh = "dh" + s;
    g.jg.grads["W" + s] = "dW" + s;
  }
  g.jg.forward_outputs = {h};
  G.outputs = {h};
  for (int l = 0; l < layers; ++l) G.outputs.push_back("dW" + std::to_string(l));
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  stax::proofs::install_default_discharger();  // the transforms' and the lowering's side conditions
  long nodes = 100000;
  bool monolithic = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--monolithic")) monolithic = true;
    else {
      std::fprintf(stderr, "usage: stax_bench_remat [--nodes N] [--monolithic]\n");
      return 2;
    }
  }
  int layers = int(std::max(1L, nodes / 14));
  Generated g = residual_mlp(layers, 32, 64);
  std::printf("joint graph: %d layers, %zu nodes (%zu inputs)\n", layers, g.jg.graph.nodes.size(), g.jg.graph.inputs.size());

  auto t0 = std::chrono::steady_clock::now();
  auto nr = build_network(g.jg, g.types);
  double t_net = seconds_since(t0);
  if (auto* e = std::get_if<compiler::GraphError>(&nr)) {
    std::fprintf(stderr, "%s\n", e->str().c_str());
    return 1;
  }
  const Network& net = std::get<Network>(nr);
  t0 = std::chrono::steady_clock::now();
  MinCut c = min_cut(net, {monolithic});
  double t_cut = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  std::vector<std::string> saved;
  for (int i : c.saved)
    if (!net.values[size_t(i)].primal) saved.push_back(net.values[size_t(i)].name);
  auto pr = split(g.jg, net, saved, Strategy::MinCut);
  double t_split = seconds_since(t0);
  if (auto* e = std::get_if<compiler::GraphError>(&pr)) {
    std::fprintf(stderr, "%s\n", e->str().c_str());
    return 1;
  }
  const Partition& p = std::get<Partition>(pr);
  std::printf("network: %zu values, %d vertices, %d edges, %d components%s\n", net.values.size(), c.vertices, c.edges,
              c.components, monolithic ? " (monolithic)" : "");
  std::printf("max flow: Edmonds-Karp %lld, Boykov-Kolmogorov %lld; saved %zu values (%lld bytes), recomputed %zu ops\n",
              (long long)c.flow_ek, (long long)c.flow_bk, p.saved.size(), (long long)p.saved_bytes, p.recomputed.size());
  std::printf("time: network %.3f s, Edmonds-Karp %.3f s, Boykov-Kolmogorov %.3f s, min cut with checks %.3f s, split %.3f s\n",
              t_net, c.seconds_ek, c.seconds_bk, t_cut, t_split);
  double partition_s = t_net + t_cut + t_split;
  std::printf("partition in all: %.3f s (target 1 s: %s)\n", partition_s, partition_s <= 1.0 ? "met" : "missed");
  if (!c.error.empty()) {
    std::fprintf(stderr, "cross-check failed: %s\n", c.error.c_str());
    return 1;
  }
  return 0;
}
