// `stax torch-check DIR`: PyTorch eager op by op, and PyTorch's
// compiled (Inductor) outputs against the whole graph's faithful enclosure,
// from a trace written by `python -m stax_torch trace DIR` (peers/torch_check.h).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/subcommands.h"
#include "peers/torch_check.h"
#include "semantics/evaluator.h"
#include "semantics/npy.h"

namespace stax::cli {

namespace {

namespace fs = std::filesystem;

struct TorchCheckOptions {
  std::string dir, graph, eager, compiled, model = "pytorch-cpu";
  bool json = false, no_eager = false, no_compiled = false;
  int64_t threads = 0, max_findings = 10;
};

int torch_check_command(const TorchCheckOptions& o) {
  fs::path dir(o.dir);
  std::string graph_file = o.graph.empty() ? (dir / "graph.json").string() : o.graph;
  auto gr = compiler::read_graph(graph_file);
  if (auto* e = std::get_if<compiler::GraphError>(&gr)) {
    std::cerr << e->str() << "\n";  // "FILE: error: ..." (docs/bad-input.md)
    return 2;
  }
  const compiler::Graph& g = std::get<compiler::Graph>(gr);
  peers::Options opt;
  if (o.model == "correctly-rounded") opt.model = sem::FaithfulModel::correctly_rounded();
  else if (o.model != "pytorch-cpu") {
    std::cerr << "error: --model must be pytorch-cpu or correctly-rounded, got '" << o.model << "'\n";
    return 2;
  }
  opt.max_findings = o.max_findings;
  opt.threads = 1;
  // graph.json's trace is eager/, compiled/, trace.json; another graph's
  // (joint.json) joint-eager/, joint-compiled/, joint-trace.json.
  std::string stem = fs::path(graph_file).stem().string();
  std::string prefix = stem == "graph" ? "" : stem + "-";
  if (fs::path meta = dir / (prefix + "trace.json"); fs::exists(meta)) {
    if (auto e = peers::read_trace_meta(meta.string(), opt)) {
      std::cerr << "error: " << *e << "\n";
      return 2;
    }
  }
  if (o.threads > 0) opt.threads = o.threads;
  if (opt.threads < 1 || opt.threads > 1024) {
    std::cerr << "error: threads must be in [1, 1024], got " << opt.threads << "\n";
    return 2;
  }
  std::vector<std::string> input_names, node_names;
  for (const auto& in : g.inputs) input_names.push_back(in.name);
  for (const auto& n : g.nodes) node_names.push_back(n.name);
  peers::TensorMap inputs, eager, compiled;
  auto read = [](const fs::path& d, const std::vector<std::string>& names, bool optional, peers::TensorMap& out) {
    auto e = peers::read_tensors(d, names, optional, out);
    if (e) std::cerr << "error: " << *e << "\n";
    return !e;
  };
  if (!read(dir, input_names, false, inputs)) return 2;
  fs::path eager_dir = o.eager.empty() ? dir / (prefix + "eager") : fs::path(o.eager);
  fs::path compiled_dir = o.compiled.empty() ? dir / (prefix + "compiled") : fs::path(o.compiled);
  bool do_eager = !o.no_eager && fs::is_directory(eager_dir);
  bool do_compiled = !o.no_compiled && fs::is_directory(compiled_dir);
  if (!do_eager && !do_compiled) {
    std::cerr << "error: neither " << eager_dir.string() << " nor " << compiled_dir.string()
              << " is a folder: run `python -m stax_torch trace " << o.dir << "` first\n";
    return 2;
  }
  if (do_eager && !read(eager_dir, node_names, true, eager)) return 2;
  if (do_compiled && !read(compiled_dir, g.outputs, true, compiled)) return 2;
  peers::Report r;
  try {
    if (do_eager) peers::check_eager(g, inputs, eager, opt, r);
    // The whole graph's enclosure once, for Inductor's outputs and eager's final ones.
    std::vector<peers::PeerOutputs> wholes;
    if (do_compiled) wholes.push_back({"compiled", compiled});
    if (do_eager) {
      peers::PeerOutputs finals{"eager", {}};
      for (const std::string& out : g.outputs)
        if (auto it = eager.find(out); it != eager.end()) finals.outputs[out] = it->second;
      wholes.push_back(std::move(finals));
    }
    peers::check_outputs(g, inputs, wholes, opt, r);
  } catch (const sem::ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  }
  int64_t checked = 0;
  for (const auto* list : {&r.nodes, &r.outputs})
    for (const auto& n : *list) checked += n.checked;
  if (o.json) std::cout << r.to_json().dump(1) << "\n";
  else std::cout << r.text();
  if (r.finding_count > 0) {
    if (!o.json) std::cout << "verdict: refuted (" << r.finding_count << " findings)\n";
    return 1;
  }
  if (checked == 0) {
    if (!o.json) std::cout << "verdict: not checkable (nothing could be checked)\n";
    return 3;
  }
  if (!o.json) std::cout << "verdict: tested (one input set: " << checked << " checks, 0 findings)\n";
  return 0;
}

}  // namespace

Subcommand register_torch_check(CLI::App& app) {
  auto o = std::make_shared<TorchCheckOptions>();
  auto* c = app.add_subcommand("torch-check",
                               "Check PyTorch eager (op by op) and compiled outputs of a traced graph, no tolerances");
  c->add_option("dir", o->dir, "folder of `python -m stax_torch trace`: graph.json, inputs, eager/, compiled/")
      ->required();
  c->add_option("--graph", o->graph, "the graph (default DIR/graph.json; DIR/joint.json reads DIR/joint-eager/, ...)");
  c->add_option("--eager", o->eager, "PyTorch's output of each node (default DIR/eager)");
  c->add_option("--compiled", o->compiled, "the compiled graph's outputs (default DIR/compiled)");
  c->add_flag("--no-eager", o->no_eager, "skip the op-by-op check");
  c->add_flag("--no-compiled", o->no_compiled, "skip the compiled outputs");
  c->add_option("--model", o->model, "library model: pytorch-cpu (default) or correctly-rounded");
  c->add_option("--threads", o->threads, "PyTorch's thread count (default: trace.json's, else 1)");
  c->add_option("--max-findings", o->max_findings, "findings listed per node (all are counted)");
  c->add_flag("--json", o->json, "one JSON document");
  return {c, [o] { return torch_check_command(*o); }};
}

}  // namespace stax::cli
