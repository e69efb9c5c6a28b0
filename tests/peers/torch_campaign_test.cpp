// peers/torch_campaign.h and graph_gen.h without torch: a fake PyTorch (our
// interpreter, sums in torch-sum's order) stands in for the tracer. A
// faithful fake gives no finding; a fake whose sqrt is one ULP off (eager)
// or whose exp is 1 % off (compiled) is caught, each finding gets a
// standalone reproducer, and a compiled finding is shrunk to the cone of the
// wrong exp node.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "compiler/lower.h"
#include "peers/graph_gen.h"
#include "peers/repro.h"
#include "peers/torch_campaign.h"
#include "semantics/evaluator.h"
#include "semantics/npy.h"
#include "tests/test_util.h"
#include "transforms/passes.h"

namespace fs = std::filesystem;
using namespace stax;

namespace {

std::string slurp(const fs::path& p) { return test::slurp(p); }

/// Every node's value by our interpreter (torch-sum's order), node by node
/// like PyTorch eager, `wrong_op`'s results made wrong (what comes after
/// them sees the wrong values).
peers::TensorMap fake_values(const compiler::Graph& g, const peers::TensorMap& in, const std::string& wrong_op,
                             bool relative) {
  peers::TensorMap values = in;
  for (const auto& n : g.nodes) {
    compiler::LowerOptions lo;
    lo.eager = true;
    auto l = compiler::lower_graph(peers::single_node_graph(g, n.name, values), lo);
    REQUIRE(std::holds_alternative<compiler::Lowered>(l));
    xform::Context ctx;
    sem::Program p = xform::torch_sum(std::get<compiler::Lowered>(l).program, {}, ctx).program;
    sem::IeeeOutcome out = sem::eval_ieee(p, values);
    REQUIRE(!out.failure);
    sem::Tensor t = *out.outputs.at(n.name);
    if (n.op == wrong_op && t.dtype == sem::DType::F32)
      for (int64_t i = 0; i < t.size(); ++i) {
        float& v = t.as<float>()[i];
        if (std::isfinite(v) && v != 0) v = relative ? v * 1.01f : std::nextafter(v, INFINITY);
      }
    values[n.name] = t;
  }
  for (const auto& i : in) values.erase(i.first);
  return values;
}

/// A tracer writing what `fake_values` gives, like `python -m stax_torch trace-batch`.
peers::Tracer fake_tracer(const std::string& wrong_op, bool wrong_in_compiled_only) {
  return [=](const std::vector<fs::path>& dirs, bool compile) -> std::optional<std::string> {
    for (const fs::path& d : dirs) {
      auto gr = compiler::read_graph((d / "graph.json").string());
      REQUIRE(std::holds_alternative<compiler::Graph>(gr));
      const compiler::Graph& g = std::get<compiler::Graph>(gr);
      peers::TensorMap in;
      for (const auto& i : g.inputs) in[i.name] = std::get<sem::Tensor>(sem::read_npy((d / (i.name + ".npy")).string()));
      peers::TensorMap eager = fake_values(g, in, wrong_in_compiled_only ? "" : wrong_op, false);
      fs::create_directories(d / "eager");
      for (const auto& [k, v] : eager) REQUIRE(!sem::write_npy((d / "eager" / (k + ".npy")).string(), v));
      if (compile) {
        peers::TensorMap c = fake_values(g, in, wrong_op, true);
        fs::create_directories(d / "compiled");
        for (const auto& o : g.outputs) REQUIRE(!sem::write_npy((d / "compiled" / (o + ".npy")).string(), c[o]));
      }
      std::ofstream(d / "trace.json") << R"({"torch": "fake", "threads": 1, "noncontiguous": []})";
    }
    return std::nullopt;
  };
}

peers::CampaignOptions options(const std::string& name) {
  peers::CampaignOptions o;
  o.seed = 100;
  o.count = 40;
  o.batch = 16;
  o.quiet = true;
  fs::path base = test::scratch("stax_torch_campaign") / name;
  fs::remove_all(base);
  o.work = base / "work";
  o.out = base / "out";
  return o;
}

/// The campaign's result; it must not be an error.
peers::CampaignResult run(const peers::CampaignOptions& o) {
  auto r = peers::run_campaign(o, std::cerr);
  REQUIRE(std::holds_alternative<peers::CampaignResult>(r));
  return std::get<peers::CampaignResult>(r);
}

}  // namespace

TEST_CASE("graph generator: deterministic, lowers, mixes ops and special values") {
  std::set<std::string> ops;
  int64_t specials = 0, elements = 0;
  for (uint64_t s = 0; s < 200; ++s) {
    peers::GeneratedGraph g = peers::generate_graph(s);
    peers::GeneratedGraph h = peers::generate_graph(s);
    REQUIRE(compiler::graph_to_json(g.graph) == compiler::graph_to_json(h.graph));
    compiler::LowerOptions lo;
    lo.eager = true;
    CHECK(std::holds_alternative<compiler::Lowered>(compiler::lower_graph(g.graph, lo)));
    for (const auto& n : g.graph.nodes) ops.insert(n.op);
    for (const auto& [k, t] : g.inputs)
      for (int64_t i = 0; i < t.size(); ++i, ++elements) {
        double v = t.get_double(i);
        specials += std::isnan(v) || std::isinf(v) || v == 0 || std::fabs(v) > 1e30;
      }
  }
  CHECK(ops.size() >= 30);
  for (const char* op : {"mm.default", "_softmax.default", "where.self", "sum.dim_IntList", "exp.default"})
    CHECK(ops.count(op));
  CHECK(specials > elements / 100);
}

TEST_CASE("torch campaign: a faithful fake PyTorch gives no finding") {
  for (bool inductor : {false, true}) {
    peers::CampaignOptions o = options(inductor ? "clean-inductor" : "clean-eager");
    o.inductor = inductor;
    o.tracer = fake_tracer("", false);
    peers::CampaignResult res = run(o);
    INFO(res.text());
    CHECK(res.programs == 40);
    CHECK(res.findings == 0);
    CHECK(res.checks > 40);
    CHECK(fs::exists(o.out / "summary.json"));
  }
}

TEST_CASE("torch campaign: an eager sqrt one ULP off is found, with a one-op reproducer") {
  peers::CampaignOptions o = options("sqrt");
  o.count = 120;
  o.tracer = fake_tracer("sqrt.default", false);
  peers::CampaignResult res = run(o);
  INFO(res.text());
  REQUIRE(res.findings > 0);
  for (const auto& [k, v] : res.by_class) CHECK(test::contains(k, "eager sqrt.default [exact, value]"));
  REQUIRE(!res.finding_dirs.empty());
  fs::path d = res.finding_dirs.front();
  std::string py = slurp(d / "repro.py");
  CHECK(test::contains(py, "torch.ops.aten.sqrt.default("));
  CHECK(test::contains(py, "sys.exit(0 if ok else 1)"));
  auto g = compiler::read_graph((d / "graph.json").string());
  REQUIRE(std::holds_alternative<compiler::Graph>(g));
  CHECK(std::get<compiler::Graph>(g).nodes.size() == 1);
  CHECK(fs::exists(d / "original-graph.json"));
}

TEST_CASE("torch campaign: a compiled exp 1 % off is found and shrunk to the exp node's cone") {
  peers::CampaignOptions o = options("exp");
  o.inductor = true;
  o.count = 120;
  o.tracer = fake_tracer("exp.default", true);
  peers::CampaignResult res = run(o);
  INFO(res.text());
  REQUIRE(res.findings > 0);
  REQUIRE(!res.finding_dirs.empty());
  int shrunk_to_exp = 0;
  for (const std::string& d : res.finding_dirs) {
    auto g = compiler::read_graph((fs::path(d) / "graph.json").string());
    REQUIRE(std::holds_alternative<compiler::Graph>(g));
    const compiler::Graph& gg = std::get<compiler::Graph>(g);
    shrunk_to_exp += gg.nodes.back().op == "exp.default";
    CHECK(test::contains(slurp(fs::path(d) / "repro.py"), "torch.compile(graph"));
  }
  CHECK(shrunk_to_exp > 0);
}

TEST_CASE("torch campaign: a tracer failure is an error, not a result") {
  peers::CampaignOptions o = options("broken");
  o.tracer = [](const std::vector<fs::path>&, bool) -> std::optional<std::string> { return "no torch"; };
  auto r = peers::run_campaign(o, std::cerr);
  REQUIRE(std::holds_alternative<std::string>(r));
  CHECK(std::get<std::string>(r) == "no torch");
}
