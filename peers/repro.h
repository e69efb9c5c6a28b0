// Standalone PyTorch reproducers of torch-check findings: a Python script
// plus the .npy files it reads, needing only torch and numpy — not our tool.
// It runs the graph (one op for an eager finding, the shrunk graph under
// torch.compile for a compiled one), prints PyTorch's value at the element
// and what a faithful implementation may give, and exits 1 when the finding
// reproduces (0 when PyTorch's value is allowed).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "peers/torch_check.h"

namespace stax::peers {

/// Writes DIR/repro.py, DIR/graph.json and DIR/NAME.npy for each graph input.
/// `compiled`: run the graph through torch.compile (Inductor). Returns an
/// error message, or nullopt.
std::optional<std::string> write_repro(const std::filesystem::path& dir, const compiler::Graph& g,
                                       const TensorMap& inputs, const Finding& f, bool compiled,
                                       const std::string& title);

/// The graph made of `node` alone, its operands as inputs of the given types
/// (for an eager finding: PyTorch's own inputs of that op).
compiler::Graph single_node_graph(const compiler::Graph& g, const std::string& node, const TensorMap& operands);

/// The part of `g` that `output` depends on, with `output` its only output.
compiler::Graph cone(const compiler::Graph& g, const std::string& output);

}  // namespace stax::peers
