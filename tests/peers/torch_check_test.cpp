// peers/torch_check.h: PyTorch eager op by op and compiled outputs, judged
// without tolerances. A fake PyTorch (our own interpreter, sums in
// torch-sum's order) must pass; each deliberate error — one ULP off in `mul`,
// a NaN dropped by `maximum`, exp three ULPs off, a sum one ULP off, a matmul
// off by 1e-3, a wrong shape, a compiled output off — must be a finding at
// the right node and element. The traces of real PyTorch 2.15 (eager and
// Inductor) committed under examples/torch/exported/ must pass.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <random>

#include "compiler/lower.h"
#include "peers/torch_check.h"
#include "semantics/enclosure_domain.h"
#include "semantics/evaluator.h"
#include "semantics/npy.h"
#include "tests/test_util.h"
#include "transforms/passes.h"

namespace fs = std::filesystem;
using namespace stax;
using sem::DType;
using sem::Tensor;

namespace {

const char* kGraph = R"({
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 64]}, {"name": "y", "dtype": "f32", "shape": [4, 64]}],
  "nodes": [
    {"name": "a", "op": "add.Tensor", "args": ["x", "y"]},
    {"name": "m", "op": "mul.Tensor", "args": ["a", "y"]},
    {"name": "s", "op": "sum.dim_IntList", "args": ["m", [-1], false]},
    {"name": "m2", "op": "mul.Tensor", "args": ["x", "y"]},
    {"name": "mx", "op": "maximum.default", "args": ["x", "y"]},
    {"name": "e", "op": "exp.default", "args": ["x"]},
    {"name": "p", "op": "permute.default", "args": ["y", [1, 0]]},
    {"name": "mm", "op": "mm.default", "args": ["x", "p"]}
  ],
  "outputs": ["s", "m2", "mx", "e", "mm"]
})";

compiler::Graph graph() {
  auto g = compiler::parse_graph(kGraph, "test.json");
  REQUIRE(std::holds_alternative<compiler::Graph>(g));
  return std::get<compiler::Graph>(g);
}

peers::TensorMap inputs() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3, 3);
  std::vector<float> x(256), y(256);
  for (auto& v : x) v = u(rng);
  for (auto& v : y) v = u(rng);
  x[0] = test::kNaN;  // maximum must propagate it, exp too
  x[5] = -0.0f;
  y[5] = 0.0f;
  return {{"x", test::f32({4, 64}, x)}, {"y", test::f32({4, 64}, y)}};
}

/// A faithful PyTorch: our interpreter on the eager lowering with every node
/// an output, sums in torch-sum's order.
peers::TensorMap fake_eager(const compiler::Graph& g0, const peers::TensorMap& in) {
  compiler::Graph g = g0;
  g.outputs.clear();
  for (const auto& n : g.nodes) g.outputs.push_back(n.name);
  compiler::LowerOptions lo;
  lo.eager = true;
  auto l = compiler::lower_graph(g, lo);
  REQUIRE(std::holds_alternative<compiler::Lowered>(l));
  xform::Context ctx;
  sem::Program p = xform::torch_sum(std::get<compiler::Lowered>(l).program, {}, ctx).program;
  REQUIRE(ctx.count > 0);
  sem::IeeeOutcome out = sem::eval_ieee(p, in);
  REQUIRE(!out.failure);
  peers::TensorMap r;
  for (const auto& [k, v] : out.outputs) r[k] = *v;
  return r;
}

void step_ulps(Tensor& t, int64_t i, int k) {
  float* f = t.as<float>();
  for (int s = 0; s < std::abs(k); ++s) f[i] = std::nextafter(f[i], k > 0 ? INFINITY : -INFINITY);
}

peers::Report eager_report(const peers::TensorMap& eager, peers::Options opt = {}) {
  peers::Report r;
  peers::check_eager(graph(), inputs(), eager, opt, r);
  return r;
}

/// The one finding of `eager`'s report, which must be at `node_name`, of class `cls`.
peers::Finding only_finding(const peers::TensorMap& eager, const std::string& node_name, const std::string& cls) {
  peers::Report r = eager_report(eager);
  INFO(r.text());
  REQUIRE(r.finding_count == 1);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].node == node_name);
  CHECK(r.findings[0].cls == cls);
  return r.findings[0];
}

const peers::NodeReport& node(const peers::Report& r, const std::string& name) {
  for (const auto& n : r.nodes)
    if (n.node == name) return n;
  FAIL("no node " << name);
  return r.nodes.front();
}

}  // namespace

TEST_CASE("torch-check: a faithful PyTorch passes, each node by its class") {
  peers::Report r = eager_report(fake_eager(graph(), inputs()));
  INFO(r.text());
  CHECK(r.finding_count == 0);
  REQUIRE(r.nodes.size() == 8);
  for (const auto& n : r.nodes) CHECK(n.checked);
  CHECK(node(r, "a").cls == "exact");
  CHECK(node(r, "s").cls == "torch-sum");
  CHECK(node(r, "e").cls == "enclosure");
  CHECK(node(r, "mm").cls == "enclosure");
  CHECK(node(r, "s").differ == 0);
}

TEST_CASE("torch-check: one ULP off in mul is a finding at that node and element only") {
  peers::TensorMap eager = fake_eager(graph(), inputs());
  step_ulps(eager["m2"], 67, 1);  // [1, 3]
  CHECK(only_finding(eager, "m2", "exact").index == std::vector<int64_t>{1, 3});
}

TEST_CASE("torch-check: maximum dropping a NaN is a finding") {
  peers::TensorMap eager = fake_eager(graph(), inputs());
  REQUIRE(std::isnan(eager["mx"].as<float>()[0]));
  eager["mx"].as<float>()[0] = inputs()["y"].as<float>()[0];
  peers::Finding f = only_finding(eager, "mx", "exact");
  CHECK(f.index == std::vector<int64_t>{0, 0});
  CHECK(f.kind == "NaN");
  CHECK(test::contains(f.ours, "nan"));
}

TEST_CASE("torch-check: exp within the model's ULP passes, three ULPs off fails; a correctly rounded model is strict") {
  peers::TensorMap eager = fake_eager(graph(), inputs());
  step_ulps(eager["e"], 10, 1);
  CHECK(eager_report(eager).finding_count == 0);
  peers::Options cr;
  cr.model = sem::FaithfulModel::correctly_rounded();
  // CR model: the enclosure is [RD, RU] of the real value; a step off the CR
  // result may still be the other neighbour, two steps never are.
  step_ulps(eager["e"], 10, 1);
  peers::Report strict = eager_report(eager, cr);
  CHECK(strict.finding_count == 1);
  step_ulps(eager["e"], 10, 1);  // 3 ULPs off
  only_finding(eager, "e", "enclosure");
}

TEST_CASE("torch-check: a sum one ULP off is a finding (torch-sum is exact)") {
  peers::TensorMap eager = fake_eager(graph(), inputs());
  step_ulps(eager["s"], 2, -1);
  only_finding(eager, "s", "torch-sum");
}

TEST_CASE("torch-check: a matmul off by 1e-3 leaves its enclosure; any summation order stays inside") {
  peers::TensorMap in = inputs();
  in["x"].as<float>()[0] = 0.5f;  // mm without NaN
  peers::TensorMap eager = fake_eager(graph(), in);
  // Other orders of mm's sums: sequential, the reverse, and an fma chain.
  const float* x = in["x"].as<float>();
  const float* y = in["y"].as<float>();
  for (int order = 0; order < 3; ++order) {
    peers::TensorMap e2 = eager;
    float* mm = e2["mm"].as<float>();
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float acc = 0;
        for (int k0 = 0; k0 < 64; ++k0) {
          int k = order == 1 ? 63 - k0 : k0;
          acc = order == 2 ? std::fma(x[i * 64 + k], y[j * 64 + k], acc) : acc + x[i * 64 + k] * y[j * 64 + k];
        }
        mm[i * 4 + j] = acc;
      }
    peers::Report r;
    peers::check_eager(graph(), in, e2, {}, r);
    INFO("order " << order << "\n" << r.text());
    CHECK(r.finding_count == 0);
  }
  eager["mm"].as<float>()[5] *= 1.001f;
  peers::Report r;
  peers::check_eager(graph(), in, eager, {}, r);
  INFO(r.text());
  REQUIRE(r.finding_count == 1);
  CHECK(r.findings[0].node == "mm");
  CHECK(r.findings[0].index == std::vector<int64_t>{1, 1});
}

TEST_CASE("torch-check: a wrong shape is a finding; a missing output is not checked") {
  peers::TensorMap eager = fake_eager(graph(), inputs());
  eager["e"] = test::f32({2}, {1, 2});
  eager.erase("mx");
  peers::Report r = eager_report(eager);
  INFO(r.text());
  REQUIRE(r.finding_count == 1);
  CHECK(r.findings[0].cls == "shape");
  CHECK(!node(r, "mx").checked);
  CHECK(test::contains(node(r, "mx").note, "no PyTorch output"));
}

TEST_CASE("torch-check: compiled outputs against the whole graph's enclosure") {
  peers::TensorMap in = inputs();
  peers::TensorMap eager = fake_eager(graph(), in);
  peers::TensorMap outs;
  for (const char* o : {"s", "m2", "mx", "e", "mm"}) outs[o] = eager[o];
  {
    peers::Report r;
    peers::check_outputs(graph(), in, outs, "compiled", {}, r);
    INFO(r.text());
    CHECK(r.finding_count == 0);
    CHECK(r.outputs.size() == 5);
  }
  outs["s"].as<float>()[1] *= 1.0f + 1.0f / 1024;  // far outside
  outs["e"].as<float>()[9] = test::kNaN;           // NaN where exp(x) is a number
  peers::Report r;
  peers::check_outputs(graph(), in, outs, "compiled", {}, r);
  INFO(r.text());
  CHECK(r.finding_count == 2);
  for (const auto& f : r.findings) CHECK(f.cls == "compiled enclosure");
}

TEST_CASE("torch-check CLI: the committed PyTorch 2.15 traces pass; a perturbed copy is refuted") {
  fs::path ex = fs::path(STAX_SOURCE_DIR) / "examples/torch/exported";
  for (const char* name : {"example_1_1", "example_5_1", "mlp", "transformer_block", "cross_entropy"}) {
    test::Run r = test::run_stax(test::scratch("stax_torch_check"), "torch-check " + (ex / name).string());
    INFO(name << "\n" << r.out << r.err);
    CHECK(r.code == 0);
    CHECK(test::contains(r.out, "0 findings"));
  }
  // Example 5.1's joint graph (forward and backward, make_fx through autograd): its own trace.
  fs::path e51 = ex / "example_5_1";
  test::Run j = test::run_stax(test::scratch("stax_torch_check"),
                               "torch-check " + e51.string() + " --graph " + (e51 / "joint.json").string());
  INFO(j.out << j.err);
  CHECK(j.code == 0);
  CHECK(test::contains(j.out, "mm_1 (mm.default) [enclosure] 4096 ok"));
  CHECK(test::contains(j.out, "mm_1 [compiled] 4096 ok"));
  fs::path dir = test::scratch("stax_torch_check") / "mlp";
  fs::remove_all(dir);
  fs::copy(ex / "mlp", dir, fs::copy_options::recursive);
  auto t = sem::read_npy((dir / "eager" / "relu.npy").string());
  REQUIRE(std::holds_alternative<Tensor>(t));
  Tensor relu = std::get<Tensor>(t);
  relu.as<float>()[17] = -relu.as<float>()[17] - 1.0f;  // relu can never be negative
  REQUIRE(!sem::write_npy((dir / "eager" / "relu.npy").string(), relu));
  test::Run r = test::run_stax(test::scratch("stax_torch_check"), "torch-check " + dir.string() + " --json");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(test::contains(r.out, "\"node\": \"relu\""));
  test::Run bad = test::run_stax(test::scratch("stax_torch_check"), "torch-check " + (dir / "nothing").string());
  CHECK(bad.code == 2);
  CHECK(test::contains(bad.err, "graph.json"));
}
