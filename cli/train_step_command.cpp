// `stax train-step` (docs/design.md §8; §5.6): one training step through the
// runtime composition — the partition's forward and backward graphs, each
// lowered with the compiler's policies and run on a backend, the forward's
// saved values kept as the context, the backward compiled at its first call
// — checked bit for bit against the joint graph run whole in the interpreter.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/joint_input.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "remat/train_step.h"
#include "remat/verify.h"
#include "semantics/npy.h"
#include "semantics/parser.h"
#include "semantics/random_inputs.h"

namespace stax::cli {

namespace fs = std::filesystem;

namespace {

std::string preview(const sem::Tensor& t) {
  std::string s = "[";
  int64_t n = std::min<int64_t>(t.size(), 4);
  for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + sem::element_text(t, i);
  if (t.size() > n) s += ", ... (" + std::to_string(t.size()) + " elements)";
  return s + "]";
}

/// A tensor of ones (the upstream gradient of a loss): `full(T, 1.0)` run.
std::optional<sem::Tensor> ones(const sem::TensorType& t) {
  auto p = sem::parse_program("let o : " + sem::type_str(t) + " = full(" + sem::type_str(t) + ", 1)\noutput o\n");
  if (!std::holds_alternative<sem::Program>(p)) return std::nullopt;
  sem::IeeeOutcome o = sem::eval_ieee(std::get<sem::Program>(p), {});
  if (o.failure) return std::nullopt;
  return *o.outputs.at("o");
}

bool write_out(const std::string& dir, const std::string& name, const sem::Tensor& t) {
  std::string path = (fs::path(dir) / (name + sem::npy_suffix(t.dtype))).string();
  if (auto e = sem::write_npy(path, t)) {
    std::cerr << "error: " << *e << "\n";
    return false;
  }
  return true;
}

/// A step's error channels: a StepError is a misuse (exit 2), ⊥ is reported
/// and finishes the step (exit 1); nullopt when the step has its tensors.
template <class Finish>
std::optional<int> step_failed(const std::variant<remat::Tensors, sem::Failure, remat::StepError>& r,
                               const std::string& what, std::ostream& os, Finish&& finish) {
  if (auto* e = std::get_if<remat::StepError>(&r)) {
    std::cerr << "error: " << e->message << "\n";
    return 2;
  }
  if (auto* fail = std::get_if<sem::Failure>(&r)) {
    os << what << " failed (⊥): " << fail->str() << "\n";
    return finish(1, what + " failed: " + fail->str());
  }
  return std::nullopt;
}

/// --memory-budget: the chosen node schedule (remat/budget_plan.h) run node by
/// node on the backend; the same files as the partition's step, and the same
/// check against the joint graph.
int budgeted_step(const TrainStepOptions& o, const autodiff::JointGraph& jg, const BudgetInput& b, const sem::Inputs& in,
                  const remat::Runner& run) {
  const remat::StrategyOutcome& chosen = *b.plan.chosen();
  nlohmann::json j;
  j["graph"] = o.graph;
  j["backend"] = o.backend;
  j["memory_budget"] = b.plan.json(b.joint.dag);
  std::ostringstream sink;
  std::ostream& os = o.json ? static_cast<std::ostream&>(sink) : std::cout;
  os << b.plan.text(b.joint.dag);
  auto finish = [&](int code, const std::string& check) {
    j["check"] = check;
    if (o.json) std::cout << j.dump(2) << "\n";
    return code;
  };
  return exit_on_backend_error([&]() -> int {
    auto r = remat::run_node_schedule(jg, b.joint, chosen.schedule, in, run);
    if (auto rc = step_failed(r, "the schedule", os, finish)) return *rc;
    const remat::Tensors& t = std::get<remat::Tensors>(r);
    os << "the " << chosen.name << " schedule (" << o.backend << ", node by node):\n";
    j["forward_outputs"] = nlohmann::json::object();
    for (const std::string& name : jg.forward_outputs) {
      const sem::Tensor& x = *t.at(name);
      os << "  " << name << " : " << sem::type_str({x.dtype, x.shape}) << " = " << preview(x) << "\n";
      j["forward_outputs"][name] = {{"type", sem::type_str({x.dtype, x.shape})}, {"first", preview(x)}};
      if (!o.out_dir.empty() && !write_out(o.out_dir, name, x)) return 2;
    }
    j["grads"] = nlohmann::json::object();
    for (const auto& [input, value] : jg.grads) {
      const sem::Tensor& x = *t.at(value);
      os << "  grad " << input << " : " << sem::type_str({x.dtype, x.shape}) << " = " << preview(x) << "\n";
      j["grads"][input] = {{"type", sem::type_str({x.dtype, x.shape})}, {"first", preview(x)}};
      if (!o.out_dir.empty() && !write_out(o.out_dir, "grad_" + input, x)) return 2;
    }
    auto d = remat::differs_from_joint(jg, in, t);
    if (d) {
      os << "check against the joint graph: " << *d << "\n";
      return finish(1, *d);
    }
    os << "check against the joint graph (interpreter, every node realized): same bits on every output\n";
    return finish(0, "same bits");
  });
}

int train_step(const TrainStepOptions& o) {
  if (o.backend != "interp" && o.backend != "cpu") {
    std::cerr << "error: --backend expects interp or cpu, got '" << o.backend << "'\n";
    return 2;
  }
  auto joint = read_joint_input(o.graph, o.strategy);
  if (!joint) return 2;
  const autodiff::JointGraph& jg = joint->graph;
  std::optional<BudgetInput> budget;
  if (o.memory_budget && o.forward_only) {
    std::cerr << "error: --forward-only and --memory-budget: a budgeted schedule computes the whole joint graph\n";
    return 2;
  }
  if (o.memory_budget) {
    budget = plan_joint_budget(*joint, *o.memory_budget, o.solver);
    if (!budget) return 2;
    if (!budget->plan.chosen()) {
      std::cerr << "error: " << budget->plan.below_minimum() << "\n";
      return 2;
    }
  }
  remat::MinCut cut;
  auto pr = remat::partition(jg, joint->net, joint->strategy, &cut);
  if (auto* e = std::get_if<compiler::GraphError>(&pr)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  if (!cut.error.empty()) {
    std::cerr << "error: the min cut's cross-check failed: " << cut.error << "\n";
    return 1;
  }
  auto fr = remat::CompiledFunction::create(jg, std::get<remat::Partition>(pr), compiler::Device{});
  if (auto* e = std::get_if<compiler::GraphError>(&fr)) {
    std::cerr << e->str() << "\n";
    return 2;
  }
  remat::CompiledFunction& f = std::get<remat::CompiledFunction>(fr);

  // Inputs: --input files, the rest of the primals drawn, tangents = ones.
  sem::Inputs in;
  if (!read_inputs(o.inputs, in)) return 2;
  sem::Program joint_inputs;  // only its inputs: what random_inputs draws from
  for (const auto& i : jg.graph.inputs) joint_inputs.inputs.push_back({i.name, i.type, {}});
  std::set<std::string> tangents(jg.tangents.begin(), jg.tangents.end());
  if (o.random_seed) {
    // A training step's data: normal values, no specials (stax run mixes them in).
    sem::Inputs drawn = sem::random_inputs(joint_inputs, *o.random_seed, sem::RandomOptions{0.0});
    for (auto& [name, t] : drawn)
      if (!in.count(name) && !tangents.count(name)) in[name] = std::move(t);
  }
  for (const auto& i : jg.graph.inputs)
    if (tangents.count(i.name) && !in.count(i.name)) {
      auto t = ones(i.type);
      if (!t) {
        std::cerr << "error: cannot make the tangent '" << i.name << "' of type " << sem::type_str(i.type)
                  << " (give it with --input)\n";
        return 2;
      }
      in[i.name] = *t;
    }
  if (auto err = sem::check_inputs(joint_inputs, in)) {
    std::cerr << "error: " << *err << " (give every primal with --input NAME=FILE.npy, or --random-inputs SEED)\n";
    return 2;
  }
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(fs::path(o.out_dir) / "inputs", ec);
    if (ec) {
      std::cerr << "error: cannot create " << o.out_dir << ": " << ec.message() << "\n";
      return 2;
    }
    for (const auto& [name, t] : in)
      if (!write_out((fs::path(o.out_dir) / "inputs").string(), name, t)) return 2;
  }
  remat::Runner run = [&](const sem::Program& p, const sem::Inputs& x) { return run_on_backend(o.backend, p, x, o.threads); };
  if (budget) return budgeted_step(o, jg, *budget, in, run);

  const remat::Partition& p = f.partition();
  // Prose goes to stdout; with --json, one document instead.
  std::ostringstream sink;
  std::ostream& os = o.json ? static_cast<std::ostream&>(sink) : std::cout;
  nlohmann::json j;
  j["graph"] = o.graph;
  j["backend"] = o.backend;
  j["partition"] = {{"strategy", remat::strategy_name(p.strategy)}, {"saved", p.saved}, {"saved_bytes", p.saved_bytes},
                    {"recomputed", p.recomputed}};
  auto tensors_json = [](const remat::Tensors& ts) {
    nlohmann::json a = nlohmann::json::object();
    for (const auto& [name, t] : ts) a[name] = {{"type", sem::type_str({t->dtype, t->shape})}, {"first", preview(*t)}};
    return a;
  };
  auto finish = [&](int code, const std::string& check) {
    j["check"] = check;
    j["backward_compiled"] = f.backward_compiled();
    if (o.json) std::cout << j.dump(2) << "\n";
    return code;
  };
  os << "partition (" << remat::strategy_name(p.strategy) << "): saved";
  for (const std::string& s : p.saved) os << " " << s;
  os << " (" << p.saved_bytes << " bytes); the backward recomputes " << p.recomputed.size() << " ops\n";
  int rc = 0;
  return exit_on_backend_error([&]() -> int {
    auto fo = f.forward(in, run);
    if (auto rc = step_failed(fo, "forward", os, finish)) return *rc;
    const remat::Tensors& outs = std::get<remat::Tensors>(fo);
    j["forward_outputs"] = tensors_json(outs);
    j["context"] = tensors_json(f.context());
    os << "forward (" << o.backend << "):\n";
    for (const auto& [name, t] : outs) {
      os << "  " << name << " : " << sem::type_str({t->dtype, t->shape}) << " = " << preview(*t) << "\n";
      if (!o.out_dir.empty() && !write_out(o.out_dir, name, *t)) return 2;
    }
    os << "  context:";
    for (const auto& [name, t] : f.context()) os << " " << name << " " << sem::type_str({t->dtype, t->shape});
    os << "\n";
    if (o.forward_only) {
      os << "backward not compiled (--forward-only: inference pays nothing for it)\n";
      return finish(0, "forward only");
    }
    auto bo = f.backward(in, run);
    if (auto rc = step_failed(bo, "backward", os, finish)) return *rc;
    const remat::Tensors& grads = std::get<remat::Tensors>(bo);
    j["grads"] = tensors_json(grads);
    os << "backward (" << o.backend << ", compiled at its first call):\n";
    for (const auto& [name, t] : grads) {
      os << "  grad " << name << " : " << sem::type_str({t->dtype, t->shape}) << " = " << preview(*t) << "\n";
      if (!o.out_dir.empty() && !write_out(o.out_dir, "grad_" + name, *t)) return 2;
    }
    // The joint graph run whole (eager lowering, interpreter) must agree bit for bit.
    auto jl = compiler::lower_graph(jg.graph, {compiler::Device{}, true});
    if (auto* e = std::get_if<compiler::GraphError>(&jl)) {
      os << "check against the joint graph: not checkable (" << e->str() << ")\n";
      return finish(3, "not checkable: " + e->str());
    }
    sem::IeeeOutcome jo = sem::eval_ieee(std::get<compiler::Lowered>(jl).program, in);
    if (jo.failure) {
      os << "check against the joint graph: the joint graph fails (" << jo.failure->str() << ")\n";
      return finish(1, "the joint graph fails: " + jo.failure->str());
    }
    std::string first_diff;
    auto compare = [&](const std::string& what, const std::string& joint_name, const sem::Tensor& got) {
      auto d = remat::first_difference(*jo.outputs.at(joint_name), got);
      if (d) {
        os << "check against the joint graph: " << what << " differs at " << *d << "\n";
        if (first_diff.empty()) first_diff = what + " differs at " + *d;
      }
      return !d;
    };
    for (const auto& [name, t] : outs)
      if (!compare(name, name, *t)) rc = 1;
    for (const auto& [input, value] : jg.grads)
      if (grads.count(input) && !compare("grad " + input, value, *grads.at(input))) rc = 1;
    if (rc == 0) os << "check against the joint graph (interpreter, every node realized): same bits on every output\n";
    return finish(rc, rc == 0 ? "same bits" : first_diff);
  });
}

}  // namespace

int train_step_command(const TrainStepOptions& o) { return train_step(o); }

Subcommand register_train_step(CLI::App& app) {
  auto o = std::make_shared<TrainStepOptions>();
  auto seed = std::make_shared<uint64_t>(0);
  auto* c = app.add_subcommand("train-step",
                               "One training step through the partition's compiled forward and backward (§5.6), "
                               "or the cheapest node schedule under --memory-budget, run node by node");
  add_joint_options(c, o->graph, o->strategy, o->memory_budget, o->solver);
  c->add_option("--input", o->inputs, "NAME=FILE.npy for a primal or a tangent (tangents default to ones)");
  auto* seed_opt = c->add_option("--random-inputs", *seed, "draw the primals not given from SEED (normal values)");
  c->add_option("--backend", o->backend, "interp or cpu");
  c->add_option("--threads", o->threads, "CPU backend threads (0: all)");
  c->add_option("--out", o->out_dir, "write the inputs, forward outputs and gradients (grad_NAME) as .npy into DIR");
  c->add_flag("--json", o->json, "one JSON document");
  c->add_flag("--forward-only", o->forward_only, "run the forward only: the backward is never compiled");
  return {c, [o, seed, seed_opt] {
            if (*seed_opt) o->random_seed = *seed;
            return train_step_command(*o);
          }};
}

}  // namespace stax::cli
