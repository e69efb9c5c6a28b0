// Joint graphs under a memory budget: the DAG, the partition's schedule and
// the node-by-node executor.
#include "remat/budget_joint.h"

#include <set>

#include "autodiff/jacobian.h"
#include "compiler/lower.h"
#include "remat/verify.h"
#include "semantics/evaluator.h"

namespace stax::remat {

using compiler::GraphError;

namespace {

int64_t bytes_of(const sem::TensorType& t) { return sem::num_elements(t.shape) * int64_t(sem::dtype_bytes(t.dtype)); }

std::variant<sem::Program, GraphError> lower_one(const compiler::Graph& g, bool eager) {
  auto l = compiler::lower_graph(g, {compiler::Device{}, eager});
  if (auto* e = std::get_if<GraphError>(&l)) return *e;
  return std::get<compiler::Lowered>(std::move(l)).program;
}

}  // namespace

std::variant<JointBudget, GraphError> joint_budget(const autodiff::JointGraph& jg) {
  const compiler::Graph& g = jg.graph;
  auto whole = lower_one(g, true);
  if (auto* e = std::get_if<GraphError>(&whole)) return *e;
  const sem::Program& pw = std::get<sem::Program>(whole);
  JointBudget b;
  for (const auto& in : g.inputs) b.types[in.name] = in.type;
  std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  for (const compiler::Node& n : g.nodes) {
    const sem::TensorType* t = pw.type_of(n.name);
    if (!t) return GraphError{g.file, n.name, "the joint graph's lowering has no value for this node"};
    b.types[n.name] = *t;
    compiler::Graph one;
    one.file = g.file;
    BudgetNode bn{n.name, bytes_of(*t), 1, {}, outputs.count(n.name) > 0};
    std::set<std::string> seen;
    for (const std::string& r : compiler::node_refs(n)) {
      if (!seen.insert(r).second) continue;
      auto it = b.types.find(r);
      if (it == b.types.end()) return GraphError{g.file, n.name, "reads '" + r + "', which has no type"};
      one.inputs.push_back({r, it->second});
      if (auto k = b.index.find(r); k != b.index.end()) bn.inputs.push_back(k->second);
    }
    one.nodes.push_back(n);
    one.outputs.push_back(n.name);
    auto eager = lower_one(one, true);
    if (auto* e = std::get_if<GraphError>(&eager)) return *e;
    bn.cost = autodiff::program_ops(std::get<sem::Program>(eager)) + 1;
    auto policy = lower_one(one, false);
    if (auto* e = std::get_if<GraphError>(&policy)) return *e;
    b.programs.push_back(std::get<sem::Program>(std::move(policy)));
    b.index[n.name] = int(b.dag.size());
    b.dag.nodes.push_back(std::move(bn));
  }
  return b;
}

NodeSchedule partition_schedule(const JointBudget& b, const Partition& p) {
  std::vector<int> order;
  for (const compiler::Graph* g : {&p.forward, &p.backward})
    for (const compiler::Node& n : g->nodes)
      if (auto it = b.index.find(n.name); it != b.index.end()) order.push_back(it->second);
  return schedule_from_order(b.dag, order);
}

std::optional<NodeSchedule> min_cut_schedule(const autodiff::JointGraph& jg, const JointBudget& b) {
  auto types = forward_types(jg);
  if (!std::holds_alternative<TypeMap>(types)) return std::nullopt;
  auto net = build_network(jg, std::get<TypeMap>(types));
  if (!std::holds_alternative<Network>(net)) return std::nullopt;
  auto p = partition(jg, std::get<Network>(net), Strategy::MinCut);
  if (!std::holds_alternative<Partition>(p)) return std::nullopt;
  return partition_schedule(b, std::get<Partition>(p));
}

std::variant<Tensors, sem::Failure, StepError> run_node_schedule(const autodiff::JointGraph& jg, const JointBudget& b,
                                                                 const NodeSchedule& s, const sem::Inputs& in,
                                                                 const Runner& run) {
  ScheduleCheck c = check_node_schedule(b.dag, s, std::nullopt);
  if (!c.ok) return StepError{"illegal schedule: " + c.error};
  for (const auto& i : jg.graph.inputs)
    if (!in.count(i.name)) return StepError{"missing input '" + i.name + "'"};
  Tensors live;
  for (const Event& e : s) {
    const std::string& name = b.dag.nodes[size_t(e.node)].name;
    if (e.kind == Event::Free) {
      live.erase(name);
      continue;
    }
    const sem::Program& p = b.programs[size_t(e.node)];
    sem::Inputs args;
    for (const auto& pi : p.inputs) {
      if (auto it = live.find(pi.name); it != live.end()) args[pi.name] = *it->second;
      else args[pi.name] = in.at(pi.name);
    }
    sem::IeeeOutcome o = run(p, args);
    if (o.failure) return *o.failure;
    auto it = o.outputs.find(name);
    if (it == o.outputs.end()) return StepError{"the lowering of '" + name + "' has no output of that name"};
    live[name] = it->second;
  }
  Tensors out;
  for (const std::string& name : jg.graph.outputs) {
    if (auto it = live.find(name); it != live.end()) out[name] = it->second;
    else if (in.count(name)) out[name] = std::make_shared<const sem::Tensor>(in.at(name));
    else return StepError{"the output '" + name + "' is not live at the end"};
  }
  return out;
}

std::optional<std::string> differs_from_joint(const autodiff::JointGraph& jg, const sem::Inputs& in, const Tensors& got) {
  auto whole = lower_one(jg.graph, true);
  if (auto* e = std::get_if<GraphError>(&whole)) return "the joint graph does not lower: " + e->str();
  sem::IeeeOutcome o = sem::eval_ieee(std::get<sem::Program>(whole), in);
  if (o.failure) return "the joint graph fails: " + o.failure->str();
  for (const std::string& name : jg.graph.outputs) {
    auto g = got.find(name);
    if (g == got.end()) return "output '" + name + "' missing";
    if (auto d = first_difference(*o.outputs.at(name), *g->second)) return "output '" + name + "' differs at " + *d;
  }
  return std::nullopt;
}

}  // namespace stax::remat
