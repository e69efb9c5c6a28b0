// What `stax partition` and `stax train-step` read first: a joint graph, the
// strategy named on the command line, and the graph's rematerialization
// network (seed 5.4).
#pragma once

#include <iostream>
#include <optional>
#include <string>

#include "autodiff/joint_graph.h"
#include "remat/network.h"
#include "remat/partition.h"

namespace stax::cli {

struct JointInput {
  autodiff::JointGraph graph;
  remat::Network net;
  remat::Strategy strategy;
};

/// Prints the error and returns nullopt (the caller exits 2) on a bad
/// strategy name or a graph that is not a joint graph.
inline std::optional<JointInput> read_joint_input(const std::string& path, const std::string& strategy_name) {
  auto strategy = remat::parse_strategy(strategy_name);
  if (!strategy) {
    std::cerr << "error: --strategy: unknown strategy '" << strategy_name << "' (min-cut, save-all, recompute-all)\n";
    return std::nullopt;
  }
  auto jr = autodiff::read_joint_graph(path);
  if (auto* e = std::get_if<compiler::GraphError>(&jr)) {
    std::cerr << "error: " << e->str() << "\n";
    return std::nullopt;
  }
  auto& jg = std::get<autodiff::JointGraph>(jr);
  auto types = remat::forward_types(jg);
  if (auto* e = std::get_if<compiler::GraphError>(&types)) {
    std::cerr << "error: " << e->str() << "\n";
    return std::nullopt;
  }
  auto nr = remat::build_network(jg, std::get<remat::TypeMap>(types));
  if (auto* e = std::get_if<compiler::GraphError>(&nr)) {
    std::cerr << "error: " << e->str() << "\n";
    return std::nullopt;
  }
  return JointInput{std::move(jg), std::move(std::get<remat::Network>(nr)), *strategy};
}

}  // namespace stax::cli
