// Fixtures shared by the tests of remat/: joint graphs read from the source
// tree, their networks, min-cut partitions and random inputs. Include after
// catch.hpp (the helpers fail the test on a bad graph).
#pragma once

#include <string>

#include "autodiff/joint_graph.h"
#include "remat/network.h"
#include "remat/partition.h"
#include "semantics/random_inputs.h"

namespace stax::test {

/// A joint graph by its path relative to the source tree.
inline autodiff::JointGraph read_joint(const std::string& rel) {
  auto r = autodiff::read_joint_graph(std::string(STAX_SOURCE_DIR) + "/" + rel);
  if (auto* e = std::get_if<compiler::GraphError>(&r)) FAIL(e->str());
  return std::get<autodiff::JointGraph>(r);
}

/// The rematerialization network of Definition 5.2.
inline remat::Network network_of(const autodiff::JointGraph& jg, const remat::NetworkOptions& opt = {}) {
  auto t = remat::forward_types(jg);
  if (auto* e = std::get_if<compiler::GraphError>(&t)) FAIL(e->str());
  auto n = remat::build_network(jg, std::get<remat::TypeMap>(t), opt);
  if (auto* e = std::get_if<compiler::GraphError>(&n)) FAIL(e->str());
  return std::get<remat::Network>(n);
}

inline remat::Partition min_cut_partition(const autodiff::JointGraph& jg) {
  auto p = remat::partition(jg, network_of(jg), remat::Strategy::MinCut);
  if (auto* e = std::get_if<compiler::GraphError>(&p)) FAIL(e->str());
  return std::get<remat::Partition>(p);
}

/// Random inputs (no special values) for every input of the joint graph.
inline sem::Inputs joint_inputs(const autodiff::JointGraph& jg, uint64_t seed) {
  sem::Program p;
  for (const auto& i : jg.graph.inputs) p.inputs.push_back({i.name, i.type, {}});
  return sem::random_inputs(p, seed, sem::RandomOptions{0.0});
}

}  // namespace stax::test
