#include "remat/autodiff_fuzz.h"

#include <chrono>

#include "autodiff/adjoint.h"
#include "remat/network.h"
#include "remat/partition.h"
#include "remat/verify.h"

namespace stax::remat {

using compiler::GraphError;

namespace {

/// The partition check of one graph: its joint graph, the min-cut partition,
/// forward then backward against the joint graph (same bits). A message on a
/// finding, "" when verified.
std::string partition_check(const compiler::Graph& g, const AutodiffFuzzOptions& o, uint64_t seed, std::string& check) {
  autodiff::GradOptions go;
  go.rules = o.rules;
  auto jr = autodiff::build_joint_graph(g, go);
  check = "error";
  if (auto* e = std::get_if<GraphError>(&jr)) return "reverse mode: " + e->str();
  const autodiff::JointGraph& jg = std::get<autodiff::JointGraph>(jr);
  auto types = forward_types(jg);
  if (auto* e = std::get_if<GraphError>(&types)) return "forward types: " + e->str();
  auto nr = build_network(jg, std::get<TypeMap>(types));
  if (auto* e = std::get_if<GraphError>(&nr)) return "network: " + e->str();
  MinCut cut;
  auto pr = partition(jg, std::get<Network>(nr), Strategy::MinCut, &cut);
  if (auto* e = std::get_if<GraphError>(&pr)) return "partition: " + e->str();
  check = "partition";
  if (!cut.error.empty()) return "min cut cross-check: " + cut.error;
  VerifyResult v = verify_partition(jg, std::get<Partition>(pr), {o.trials, seed});
  if (v.status == VerifyStatus::Counterexample) return "forward + backward differ from the joint graph: " + v.message;
  if (v.status == VerifyStatus::NotCheckable) {
    check = "error";
    return "not checkable: " + v.message;
  }
  return "";
}

}  // namespace

AutodiffFuzzReport fuzz_autodiff(const AutodiffFuzzOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  AutodiffFuzzReport rep;
  for (uint64_t k = 0; k < o.count; ++k) {
    uint64_t seed = o.seed + k;
    std::string text = autodiff::random_graph(seed);
    auto gr = compiler::parse_graph(text, "random_graph_" + std::to_string(seed));
    ++rep.graphs;
    if (auto* e = std::get_if<GraphError>(&gr)) {
      rep.findings.push_back({seed, "error", "the generator's graph does not parse: " + e->str(), text});
    } else {
      const compiler::Graph& g = std::get<compiler::Graph>(gr);
      autodiff::GradOptions go;
      go.rules = o.rules;
      auto ar = autodiff::adjoint_check(g, seed, o.precision, go);
      if (auto* e = std::get_if<GraphError>(&ar)) {
        rep.findings.push_back({seed, "error", "adjoint check: " + e->str(), text});
      } else {
        ++rep.adjoint_checked;
        const autodiff::AdjointResult& r = std::get<autodiff::AdjointResult>(ar);
        if (!r.ok) rep.findings.push_back({seed, "adjoint", "the adjoint identity fails: " + r.str(), text});
      }
      std::string check;
      std::string msg = partition_check(g, o, seed, check);
      if (check == "partition") ++rep.partitions_checked;
      if (!msg.empty()) rep.findings.push_back({seed, check, msg, text});
    }
    if (o.progress) o.progress(k + 1, rep.findings.size());
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

std::vector<std::string> planted_vjp_rule_names() { return {"tanh-sign", "mul-drop-rhs", "exp-twice"}; }

std::optional<autodiff::VjpRules> planted_vjp_rules(const std::string& name) {
  using autodiff::VjpContext;
  autodiff::VjpRules r = autodiff::default_vjp_rules();
  if (name == "tanh-sign") {
    r["tanh.default"] = [](VjpContext& c) {  // grad * (y^2 - 1) instead of grad * (1 - y^2)
      std::string sq = c.emit("mul.Tensor", {c.out(), c.out()});
      c.give(0, c.emit("mul.Tensor", {c.grad, c.emit("sub.Tensor", {sq, 1.0})}));
    };
  } else if (name == "mul-drop-rhs") {
    r["mul.Tensor"] = [](VjpContext& c) {  // only the first operand gets grad * rhs
      if (c.is_tensor(1)) c.give(0, c.emit("mul.Tensor", {c.grad, c.arg(1)}));
    };
  } else if (name == "exp-twice") {
    r["exp.default"] = [](VjpContext& c) {  // 2 * grad * exp(x)
      c.give(0, c.emit("mul.Scalar", {c.emit("mul.Tensor", {c.grad, c.out()}), 2.0}));
    };
  } else {
    return std::nullopt;
  }
  return r;
}

}  // namespace stax::remat
