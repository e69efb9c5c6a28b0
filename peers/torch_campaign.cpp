#include "peers/torch_campaign.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "peers/repro.h"
#include "semantics/evaluator.h"
#include "semantics/npy.h"

namespace stax::peers {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<std::string> write_graph_dir(const fs::path& dir, const compiler::Graph& g, const TensorMap& inputs) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "graph.json") << compiler::graph_to_json(g).dump(1) << "\n";
  for (const auto& in : g.inputs)
    if (auto e = sem::write_npy((dir / (in.name + ".npy")).string(), inputs.at(in.name))) return e;
  return std::nullopt;
}

/// One PyTorch process traces every folder; false and the log's tail on a failure of the process itself.
std::optional<std::string> trace_batch(const CampaignOptions& o, const std::vector<fs::path>& dirs, bool compile,
                                       double& seconds) {
  auto t0 = Clock::now();
  if (o.tracer) {
    auto e = o.tracer(dirs, compile);
    seconds += since(t0);
    return e;
  }
  fs::path log = o.work / "python.log";
  std::string cmd = "PYTHONPATH=" + quote(o.python_path) + " " + quote(o.python) + " -m stax_torch trace-batch" +
                    (compile ? "" : " --no-compile") + " --threads " + std::to_string(o.threads);
  for (const fs::path& d : dirs) cmd += " " + quote(d.string());
  cmd += " >" + quote(log.string()) + " 2>&1";
  int st = std::system(cmd.c_str());
  seconds += since(t0);
  if (st != 0) {
    std::string text = slurp(log);
    if (text.size() > 2000) text = text.substr(text.size() - 2000);
    return "PyTorch's tracer failed (" + o.python + ", exit status " + std::to_string(st) + "):\n" + text;
  }
  return std::nullopt;
}

std::string note_key(const std::string& note) {
  const std::string undecided = "the enclosure decides nothing";
  if (note.rfind(undecided, 0) == 0) return note;
  return note.substr(0, note.find(':'));
}

std::vector<std::string> node_names(const compiler::Graph& g) {
  std::vector<std::string> v;
  for (const auto& n : g.nodes) v.push_back(n.name);
  return v;
}

/// Compiled: the smallest cone of one node of `g` whose compiled output is
/// still outside its enclosure; `g` itself (and `f`) when none is.
std::pair<compiler::Graph, Finding> shrink_compiled(const CampaignOptions& o, const compiler::Graph& g,
                                                    const TensorMap& inputs, const Finding& f, double& py_seconds) {
  compiler::Graph whole = cone(g, f.node);
  std::vector<compiler::Graph> cands;
  std::vector<fs::path> dirs;
  for (const auto& n : whole.nodes) {
    if (n.name == f.node) continue;
    cands.push_back(cone(whole, n.name));
    dirs.push_back(o.work / ("shrink-" + std::to_string(dirs.size())));
    if (write_graph_dir(dirs.back(), cands.back(), inputs)) return {whole, f};
  }
  if (dirs.empty() || trace_batch(o, dirs, true, py_seconds)) return {whole, f};
  std::pair<compiler::Graph, Finding> best = {whole, f};
  for (size_t i = 0; i < cands.size(); ++i) {
    TensorMap compiled;
    if (read_tensors(dirs[i] / "compiled", cands[i].outputs, true, compiled)) continue;
    Report r;
    check_outputs(cands[i], inputs, compiled, "compiled", o.check, r);
    if (r.findings.empty() || cands[i].nodes.size() >= best.first.nodes.size()) continue;
    best = {cands[i], r.findings.front()};
  }
  for (const fs::path& d : dirs) fs::remove_all(d);
  return best;
}

}  // namespace

std::variant<CampaignResult, std::string> run_campaign(const CampaignOptions& o, std::ostream& progress) {
  CampaignResult res;
  auto t0 = Clock::now();
  fs::create_directories(o.work);
  if (!o.out.empty()) fs::create_directories(o.out);
  uint64_t seed = o.seed;
  auto more = [&] {
    if (o.count > 0 && uint64_t(res.programs + res.pytorch_errors) >= o.count) return false;
    if (o.time_s > 0 && since(t0) >= o.time_s) return false;
    return o.count > 0 || o.time_s > 0;
  };
  while (more()) {
    int64_t left = o.count > 0 ? int64_t(o.count) - (res.programs + res.pytorch_errors) : o.batch;
    int64_t k = std::min<int64_t>(o.batch, left);
    std::vector<GeneratedGraph> graphs;
    std::vector<fs::path> dirs;
    for (int64_t i = 0; i < k; ++i, ++seed) {
      graphs.push_back(generate_graph(seed, o.gen));
      dirs.push_back(o.work / ("g-" + std::to_string(seed)));
      if (auto e = write_graph_dir(dirs.back(), graphs.back().graph, graphs.back().inputs)) return *e;
    }
    if (auto e = trace_batch(o, dirs, o.inductor, res.python_seconds)) return *e;
    for (size_t i = 0; i < graphs.size(); ++i) {
      const compiler::Graph& g = graphs[i].graph;
      const TensorMap& inputs = graphs[i].inputs;
      if (fs::exists(dirs[i] / "error.txt")) {
        std::string msg = slurp(dirs[i] / "error.txt");
        while (!msg.empty() && msg.back() == '\n') msg.pop_back();
        ++res.pytorch_errors;
        ++res.errors[msg];
        fs::remove_all(dirs[i]);
        continue;
      }
      ++res.programs;
      if (res.torch_version.empty()) {
        auto meta = nlohmann::json::parse(slurp(dirs[i] / "trace.json"), nullptr, false);
        if (meta.is_object() && meta.contains("torch")) res.torch_version = meta["torch"].get<std::string>();
      }
      TensorMap eager, compiled;
      if (auto e = read_tensors(dirs[i] / "eager", node_names(g), true, eager)) return *e;
      if (auto e = read_tensors(dirs[i] / "compiled", g.outputs, true, compiled)) return *e;
      Options check = o.check;
      if (auto e = read_trace_meta((dirs[i] / "trace.json").string(), check)) return *e;
      Report r;
      try {
        if (o.inductor) check_outputs(g, inputs, compiled, "compiled", check, r);
        else check_eager(g, inputs, eager, check, r);
      } catch (const sem::ResourceError& e) {
        ++res.unchecked[e.message];
        continue;
      }
      for (const auto* list : {&r.nodes, &r.outputs})
        for (const NodeReport& n : *list) {
          if (!n.checked) {
            ++res.not_checked;
            ++res.unchecked[note_key(n.note)];
            continue;
          }
          ++res.checks;
          if (n.outside == 0) continue;
          ++res.findings;
          res.elements_outside += n.outside;
          const Finding* f = nullptr;
          for (const Finding& x : r.findings)
            if (x.node == n.node && !f) f = &x;
          std::string kind = f ? ", " + f->kind : "";
          std::string key = o.inductor ? "compiled [" + n.cls + kind + "]" : "eager " + n.op + " [" + n.cls + kind + "]";
          ++res.by_class[key];
          if (o.out.empty() || !f) continue;
          fs::path fd = o.out / ("finding-" + std::to_string(graphs[i].seed) + "-" + n.node);
          std::string title = std::string("A finding of `stax fuzz --target ") +
                              (o.inductor ? "torch-inductor" : "torch-eager") + "` (graph seed " +
                              std::to_string(graphs[i].seed) + ", torch " + res.torch_version + ").";
          std::optional<std::string> err;
          if (o.inductor) {
            auto [small, sf] = o.shrink ? shrink_compiled(o, g, inputs, *f, res.python_seconds)
                                        : std::pair<compiler::Graph, Finding>{cone(g, f->node), *f};
            err = write_repro(fd, small, inputs, sf, true, title);
          } else {
            TensorMap operands = inputs;
            for (const auto& [k2, v] : eager) operands[k2] = v;
            err = write_repro(fd, single_node_graph(g, n.node, operands), operands, *f, false, title);
          }
          if (err) {
            progress << "warning: " << fd.string() << ": " << *err << "\n";
            continue;
          }
          std::ofstream(fd / "original-graph.json") << compiler::graph_to_json(g).dump(1) << "\n";
          res.finding_dirs.push_back(fd.string());
        }
      fs::remove_all(dirs[i]);
    }
    if (!o.out.empty()) {  // a campaign cut off keeps its counts
      res.seconds = since(t0);
      std::ofstream(o.out / "summary.json") << res.to_json().dump(1) << "\n";
    }
    if (!o.quiet)
      progress << "\r" << res.programs << " graphs, " << res.checks << " checks, " << res.findings << " findings, "
               << res.pytorch_errors << " refused by PyTorch, " << int(since(t0)) << " s" << std::flush;
  }
  if (!o.quiet) progress << "\n";
  res.seconds = since(t0);
  if (!o.out.empty()) std::ofstream(o.out / "summary.json") << res.to_json().dump(1) << "\n";
  return res;
}

nlohmann::json CampaignResult::to_json() const {
  return {{"programs", programs},
          {"checks", checks},
          {"not_checked", not_checked},
          {"pytorch_errors", pytorch_errors},
          {"findings", findings},
          {"elements_outside", elements_outside},
          {"by_class", by_class},
          {"errors", errors},
          {"unchecked", unchecked},
          {"finding_dirs", finding_dirs},
          {"seconds", seconds},
          {"python_seconds", python_seconds},
          {"torch", torch_version}};
}

std::string CampaignResult::text() const {
  std::ostringstream s;
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.1f s (%.1f s in PyTorch), %.2f graphs/s", seconds, python_seconds,
                seconds > 0 ? double(programs) / seconds : 0.0);
  s << "torch " << torch_version << ": " << programs << " graphs, " << checks << " checks, " << findings
    << " findings (" << elements_outside << " elements), " << not_checked << " not checked, " << pytorch_errors
    << " graphs refused by PyTorch; " << buf << "\n";
  for (const auto& [k, v] : by_class) s << "  finding: " << k << " x" << v << "\n";
  for (const auto& [k, v] : errors) s << "  PyTorch refused: " << k << " x" << v << "\n";
  for (const auto& [k, v] : unchecked) s << "  not checked: " << k << " x" << v << "\n";
  for (const std::string& d : finding_dirs) s << "  reproducer: " << d << "/repro.py\n";
  return s.str();
}

}  // namespace stax::peers
