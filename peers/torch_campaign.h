// Differential campaigns against PyTorch (`stax fuzz --target torch-eager |
// torch-inductor`): generated graphs (graph_gen.h) are run by PyTorch in
// batches (`python -m stax_torch trace-batch`, one interpreter per batch) and
// judged by torch_check.h — eager op by op, or Inductor's outputs against the
// whole graph's faithful enclosure. Each finding becomes a standalone
// PyTorch script with its .npy inputs (repro.h): eager findings are one op
// on PyTorch's own inputs of it; compiled findings are shrunk to the
// smallest sub-graph (the cone of one node) whose compiled value is still
// outside its enclosure.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "peers/graph_gen.h"
#include "peers/torch_check.h"

namespace stax::peers {

/// Runs PyTorch on each folder (graph.json and inputs) as
/// `python -m stax_torch trace-batch` does; an error message when the tracer
/// itself fails. `compile`: also torch.compile's outputs.
using Tracer = std::function<std::optional<std::string>(const std::vector<std::filesystem::path>& dirs, bool compile)>;

struct CampaignOptions {
  bool inductor = false;  ///< torch-inductor: compiled outputs; torch-eager: op by op
  uint64_t seed = 1;
  uint64_t count = 0;     ///< graphs; 0: until `time_s`
  double time_s = 0;      ///< 0: until `count`
  int batch = 16;         ///< graphs per PyTorch process
  std::string python;     ///< an interpreter with torch and numpy
  std::string python_path;  ///< our python/ folder (PYTHONPATH)
  int threads = 1;          ///< PyTorch's intra-op threads in the traces
  std::filesystem::path work;  ///< scratch folder of the traces
  std::filesystem::path out;   ///< findings: OUT/finding-SEED-NODE/ (empty: not written)
  bool shrink = true;
  bool quiet = false;
  GraphGenOptions gen;
  Options check;
  /// Empty: PyTorch through `python` (tests put a fake PyTorch here).
  Tracer tracer;
};

struct CampaignResult {
  int64_t programs = 0;        ///< graphs PyTorch ran
  int64_t checks = 0;          ///< nodes (eager) or outputs (compiled) judged
  int64_t not_checked = 0;
  int64_t pytorch_errors = 0;  ///< graphs PyTorch refused (our compiler accepted them)
  int64_t findings = 0;        ///< nodes or outputs with at least one element outside
  int64_t elements_outside = 0;
  std::map<std::string, int64_t> by_class;   ///< "eager exp.default [enclosure]" -> findings
  std::map<std::string, int64_t> errors;     ///< PyTorch's error (first line) -> graphs
  std::map<std::string, int64_t> unchecked;  ///< why a node or output was not judged -> count
  std::vector<std::string> finding_dirs;
  double seconds = 0, python_seconds = 0;
  std::string torch_version;
  nlohmann::json to_json() const;
  std::string text() const;
};

/// Runs the campaign; an error message when PyTorch cannot run at all.
std::variant<CampaignResult, std::string> run_campaign(const CampaignOptions& o, std::ostream& progress);

}  // namespace stax::peers
