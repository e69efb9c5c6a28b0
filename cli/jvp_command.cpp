// `stax jvp` (docs/design.md §8; §5.7): forward mode. Prints the JVP graph
// (forward nodes, each followed by its tangent's nodes), or with --jacobian
// the full Jacobian by n JVPs and by m VJPs in the Real domain, their
// agreement, and the op counts n·W vs m·W of Proposition 5.2 (exit 1 when
// the two Jacobians differ, 3 when the graph is too large for it).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "autodiff/jacobian.h"
#include "autodiff/hvp.h"
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

struct HvpCommandOptions {
  std::string graph, wrt, mode = "forward-over-reverse";
  bool json = false, hessian = false;
  uint64_t seed = 1;
  long precision = 256;
};

int hvp_command(const HvpCommandOptions& o) {
  auto g = compiler::read_graph(o.graph);
  if (auto* e = std::get_if<compiler::GraphError>(&g)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  const compiler::Graph& graph = std::get<compiler::Graph>(g);
  autodiff::HvpOptions opt;
  opt.wrt = split_list(o.wrt);
  opt.mode = o.mode == "reverse-over-reverse" ? autodiff::HvpMode::ReverseOverReverse : autodiff::HvpMode::ForwardOverReverse;
  if (!o.hessian) {
    auto h = autodiff::build_hvp_graph(graph, opt);
    if (auto* e = std::get_if<compiler::GraphError>(&h)) {
      std::cerr << e->str() << "\n";
      return 2;
    }
    const autodiff::HvpGraph& hg = std::get<autodiff::HvpGraph>(h);
    if (o.json) {
      nlohmann::json j = compiler::graph_to_json(hg.graph);
      j["wrt"] = hg.wrt;
      j["directions"] = hg.directions;
      j["upstream"] = hg.upstream;
      j["extra_upstream"] = hg.extra_upstream;
      j["hvp"] = hg.hvp;
      std::cout << j.dump(2) << "\n";
    } else {
      autodiff::JointGraph view;
      view.graph = hg.graph;
      view.phase = hg.phase;
      view.tangents = hg.directions;
      std::cout << autodiff::joint_listing(view);
      for (size_t k = 0; k < hg.wrt.size(); ++k)
        std::cout << "# H v for " << hg.wrt[k] << " (direction " << hg.directions[k] << "): "
                  << (hg.hvp[k].empty() ? "zero" : hg.hvp[k]) << "\n";
    }
    return 0;
  }
  auto in = autodiff::random_primals(graph, o.seed);
  if (auto* e = std::get_if<compiler::GraphError>(&in)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  auto r = autodiff::hessians(graph, std::get<sem::Inputs>(in), opt, o.precision);
  if (auto* e = std::get_if<compiler::GraphError>(&r)) {
    std::cerr << e->str() << "\n";
    return e->message.find("more than the limit") != std::string::npos ? 3 : 2;
  }
  const autodiff::HessianReport& rep = std::get<autodiff::HessianReport>(r);
  if (o.json) std::cout << rep.json().dump(2) << "\n";
  else std::cout << rep.text();
  return rep.symmetric && rep.agree ? 0 : 1;
}

}  // namespace

Subcommand register_hvp(CLI::App& app) {
  auto o = std::make_shared<HvpCommandOptions>();
  auto* c = app.add_subcommand("hvp", "Hessian-vector products: forward over reverse or reverse over reverse (§5.7)");
  c->add_option("graph", o->graph, "graph file (docs/graph-format.md)")->required();
  c->add_option("--wrt", o->wrt, "inputs to differentiate, NAME[,NAME...] (default: every float input)");
  c->add_option("--mode", o->mode, "forward-over-reverse or reverse-over-reverse")
      ->check(CLI::IsMember({"forward-over-reverse", "reverse-over-reverse"}));
  c->add_flag("--json", o->json, "one JSON document");
  c->add_flag("--hessian", o->hessian, "H by n HVPs both ways (Real domain, upstream gradients 1): symmetric, and the two agree");
  c->add_option("--seed", o->seed, "seed of the primal point for --hessian");
  c->add_option("--precision", o->precision, "MPFR precision for --hessian")->check(CLI::Range(64, 65536));
  return {c, [o] { return hvp_command(*o); }};
}

Subcommand register_jvp(CLI::App& app) {
  auto o = std::make_shared<JvpCommandOptions>();
  auto* c = app.add_subcommand("jvp", "Forward mode: the JVP graph, or the full Jacobian both ways (§5.7)");
  c->add_option("graph", o->graph, "graph file (docs/graph-format.md)")->required();
  c->add_option("--wrt", o->wrt, "inputs to differentiate, NAME[,NAME...] (default: every float input)");
  c->add_flag("--json", o->json, "one JSON document");
  c->add_flag("--jacobian", o->jacobian, "J by n JVPs and by m VJPs (Real domain), compared; op counts n*W vs m*W");
  c->add_option("--seed", o->seed, "seed of the primal point for --jacobian");
  c->add_option("--precision", o->precision, "MPFR precision for --jacobian")->check(CLI::Range(64, 65536));
  return {c, [o] { return jvp_command(*o); }};
}

}  // namespace stax::cli
