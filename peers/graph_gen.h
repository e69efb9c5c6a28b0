// Random operator-level graphs (docs/graph-format.md) for differential
// campaigns against PyTorch (`stax fuzz --target torch-eager|torch-inductor`):
// chains of aten ops that PyTorch and our compiler both accept — pointwise
// IEEE and library ops, scalars, comparisons and where, reductions, softmax,
// matmuls, views — on inputs that mix ordinary values with the special ones
// (NaN, ±inf, ±0, subnormals, huge and tiny values). A seed determines the
// graph and its inputs.
#pragma once

#include <cstdint>
#include <string>

#include "peers/torch_check.h"

namespace stax::peers {

struct GraphGenOptions {
  int max_nodes = 8;
  double special_rate = 0.05;  ///< share of input elements that are special values
  double f64_rate = 0.2;       ///< share of graphs in f64 (the rest f32)
};

struct GeneratedGraph {
  compiler::Graph graph;  ///< lowers with `stax lower` (checked by the generator)
  TensorMap inputs;
  uint64_t seed = 0;
};

/// The graph and inputs of `seed`. Throws nothing: a draw our lowering
/// refuses is redrawn from the same seed's stream.
GeneratedGraph generate_graph(uint64_t seed, const GraphGenOptions& opt = {});

}  // namespace stax::peers
