// `stax grad` (docs/design.md §8; §5.2–5.3): the joint graph of an operator-level
// graph by reverse mode (Algorithm 5.1), printed in the form of Listing 5.2
// or as JSON (autodiff/joint_graph.h). Bad input (an unknown or integer
// --wrt input, a non-differentiable operator on the gradient path) exits 2
// with a message naming the node.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "autodiff/jacobian.h"
#include "autodiff/vjp.h"
#include <sstream>
#include "cli/subcommands.h"

namespace stax::cli {

namespace {

struct GradOptions {
  std::string graph;
  std::string wrt;
  bool json = false;
  bool listing_names = false;
  bool cost = false;
};

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size() && !s.empty()) {
    size_t c = s.find(',', pos);
    std::string n = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!n.empty()) out.push_back(n);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

int grad_command(const GradOptions& o) {
  auto g = compiler::read_graph(o.graph);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  autodiff::GradOptions opt;
  opt.wrt = split_names(o.wrt);
  opt.listing_names = o.listing_names;
  auto j = autodiff::build_joint_graph(std::get<compiler::Graph>(g), opt);
  if (auto* e = std::get_if<compiler::GraphError>(&j)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  const autodiff::JointGraph& jg = std::get<autodiff::JointGraph>(j);
  nlohmann::json doc = autodiff::joint_graph_to_json(jg);
  std::string cost;
  if (o.cost) {
    // Theorem 5.1 on the lowered programs: (forward + backward) / forward.
    auto c = autodiff::gradient_cost(std::get<compiler::Graph>(g));
    if (auto* e = std::get_if<compiler::GraphError>(&c)) {
      std::cerr << e->str() << "\n";
      return 2;
    }
    const autodiff::CostReport& r = std::get<autodiff::CostReport>(c);
    doc["cost"] = {{"forward_ops", r.forward}, {"joint_ops", r.joint}, {"ratio", r.ratio}, {"bound", r.bound},
                   {"c_omega", r.c_omega}, {"within_bound", r.ratio <= r.bound}};
    std::ostringstream s;
    s << "# Theorem 5.1 (every float input differentiated): W = " << r.forward << " ops, forward + backward = " << r.joint
      << ", ratio " << r.ratio << " <= 1 + max(4, c_Omega + 2) = " << r.bound << " (c_Omega = " << r.c_omega
      << (r.omega_ops.empty() ? "" : ": " + r.omega_ops) << ")" << (r.ratio <= r.bound ? "" : "  ** ABOVE THE BOUND **") << "\n";
    cost = s.str();
  }
  if (o.json) std::cout << doc.dump(2) << "\n";
  else std::cout << autodiff::joint_listing(jg) << cost;
  return 0;
}

}  // namespace

Subcommand register_grad(CLI::App& app) {
  auto o = std::make_shared<GradOptions>();
  auto* c = app.add_subcommand("grad", "Reverse mode: the joint graph of an operator graph (§5.2–5.3, Listing 5.2)");
  c->add_option("graph", o->graph, "graph file (docs/graph-format.md)")->required();
  c->add_option("--wrt", o->wrt, "inputs to differentiate, NAME[,NAME...] (default: every float input)");
  c->add_flag("--json", o->json, "the joint graph as JSON (autodiff/joint_graph.h)");
  c->add_flag("--cost", o->cost, "also the op counts of Theorem 5.1 on the eager lowerings (Count domain)");
  c->add_flag("--listing-names", o->listing_names, "rename the inputs primals_1, primals_2, ... (Listing 5.2)");
  return {c, [o] { return grad_command(*o); }};
}

}  // namespace stax::cli
