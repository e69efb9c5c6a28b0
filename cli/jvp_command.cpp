// `stax jvp` (DESIGN §8; seed 5.7): forward mode. Prints the JVP graph
// (forward nodes, each followed by its tangent's nodes), or with --jacobian
// the full Jacobian by n JVPs and by m VJPs in the Real domain, their
// agreement, and the op counts n·W vs m·W of Proposition 5.2 (exit 1 when
// the two Jacobians differ, 3 when the graph is too large for it).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "autodiff/jacobian.h"
#include "autodiff/jvp.h"
#include "cli/subcommands.h"

namespace stax::cli {

namespace {

struct JvpCommandOptions {
  std::string graph;
  std::string wrt;
  bool json = false;
  bool jacobian = false;
  uint64_t seed = 1;
  long precision = 256;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s + ",") {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return out;
}

int jvp_command(const JvpCommandOptions& o) {
  auto g = compiler::read_graph(o.graph);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  const compiler::Graph& graph = std::get<compiler::Graph>(g);
  autodiff::JvpOptions opt;
  opt.wrt = split_list(o.wrt);
  auto j = autodiff::build_jvp_graph(graph, opt);
  if (auto* e = std::get_if<compiler::GraphError>(&j)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  const autodiff::JvpGraph& jg = std::get<autodiff::JvpGraph>(j);
  if (!o.jacobian) {
    if (o.json) std::cout << autodiff::jvp_graph_to_json(jg).dump(2) << "\n";
    else std::cout << autodiff::jvp_listing(jg);
    return 0;
  }
  auto in = autodiff::random_primals(graph, o.seed);
  if (auto* e = std::get_if<compiler::GraphError>(&in)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  autodiff::JacobianOptions jo;
  jo.wrt = opt.wrt;
  jo.precision = o.precision;
  auto r = autodiff::jacobians(graph, std::get<sem::Inputs>(in), jo);
  if (auto* e = std::get_if<compiler::GraphError>(&r)) {
    std::cerr << e->str() << "\n";
    return e->message.find("more than the limit") != std::string::npos ? 3 : 2;
  }
  const autodiff::JacobianReport& rep = std::get<autodiff::JacobianReport>(r);
  if (o.json) std::cout << rep.json().dump(2) << "\n";
  else std::cout << rep.text();
  return rep.equal ? 0 : 1;
}

}  // namespace

Subcommand register_jvp(CLI::App& app) {
  auto o = std::make_shared<JvpCommandOptions>();
  auto* c = app.add_subcommand("jvp", "Forward mode: the JVP graph, or the full Jacobian both ways (seed 5.7)");
  c->add_option("graph", o->graph, "graph file (docs/graph-format.md)")->required();
  c->add_option("--wrt", o->wrt, "inputs to differentiate, NAME[,NAME...] (default: every float input)");
  c->add_flag("--json", o->json, "one JSON document");
  c->add_flag("--jacobian", o->jacobian, "J by n JVPs and by m VJPs (Real domain), compared; op counts n*W vs m*W");
  c->add_option("--seed", o->seed, "seed of the primal point for --jacobian");
  c->add_option("--precision", o->precision, "MPFR precision for --jacobian")->check(CLI::Range(64, 65536));
  return {c, [o] { return jvp_command(*o); }};
}

}  // namespace stax::cli
