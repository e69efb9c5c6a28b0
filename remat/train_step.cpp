// §5.6: the compiled forward and backward composed like an autograd.Function.
#include "remat/train_step.h"

#include <set>

namespace stax::remat {

namespace {

std::variant<sem::Program, compiler::GraphError> lower_policy(const compiler::Graph& g0, const compiler::Device& d) {
  // The JSON round trip checks names and references of a graph built in memory.
  auto parsed = compiler::parse_graph(compiler::graph_to_json(g0).dump(), g0.file);
  if (auto* e = std::get_if<compiler::GraphError>(&parsed)) return *e;
  auto l = compiler::lower_graph(std::get<compiler::Graph>(parsed), {d, false});
  if (auto* e = std::get_if<compiler::GraphError>(&l)) return *e;
  return std::get<compiler::Lowered>(std::move(l)).program;
}

StepError usage(const std::string& what) { return StepError{what}; }

}  // namespace

std::variant<CompiledFunction, compiler::GraphError> CompiledFunction::create(const autodiff::JointGraph& jg, Partition p,
                                                                              compiler::Device d) {
  auto fw = lower_policy(p.forward, d);
  if (auto* e = std::get_if<compiler::GraphError>(&fw)) return *e;
  CompiledFunction f;
  f.jg_ = jg;
  f.p_ = std::move(p);
  f.dev_ = d;
  f.fw_ = std::get<sem::Program>(std::move(fw));
  return f;
}

std::variant<Tensors, sem::Failure, StepError> CompiledFunction::forward(const sem::Inputs& primals, const Runner& run) {
  sem::Inputs in;
  for (const auto& i : fw_.inputs) {
    auto it = primals.find(i.name);
    if (it == primals.end()) return usage("the forward needs the primal '" + i.name + "'");
    in[i.name] = it->second;
  }
  if (auto bad = sem::check_inputs(fw_, in)) return usage(*bad);
  sem::IeeeOutcome o = run(fw_, in);
  if (o.failure) return *o.failure;
  Tensors outs;
  for (const std::string& n : jg_.forward_outputs) outs[n] = o.outputs.at(n);
  ctx_.clear();
  for (const std::string& n : p_.saved) ctx_[n] = o.outputs.at(n);
  for (const std::string& n : p_.primals_read) ctx_[n] = std::make_shared<const sem::Tensor>(in.at(n));
  have_ctx_ = true;
  return outs;
}

std::variant<Tensors, sem::Failure, StepError> CompiledFunction::backward(const sem::Inputs& tangents,
                                                                                     const Runner& run) {
  if (!have_ctx_) return usage("backward() before forward(): there are no saved values");
  if (!bw_) {
    auto bw = lower_policy(p_.backward, dev_);
    if (auto* e = std::get_if<compiler::GraphError>(&bw)) return usage("the backward graph does not lower: " + e->str());
    bw_ = std::get<sem::Program>(std::move(bw));
  }
  sem::Inputs in;
  for (const auto& i : bw_->inputs) {
    if (auto c = ctx_.find(i.name); c != ctx_.end()) in[i.name] = *c->second;
    else if (auto t = tangents.find(i.name); t != tangents.end()) in[i.name] = t->second;
    else return usage("the backward needs the tangent '" + i.name + "'");
  }
  if (auto bad = sem::check_inputs(*bw_, in)) return usage(*bad);
  sem::IeeeOutcome o = run(*bw_, in);
  if (o.failure) return *o.failure;
  Tensors grads;
  for (const auto& [input, value] : jg_.grads) {
    auto it = o.outputs.find(value);
    if (it != o.outputs.end()) grads[input] = it->second;
    else if (auto c = ctx_.find(value); c != ctx_.end()) grads[input] = c->second;  // a gradient that is a saved value
    else if (auto t = tangents.find(value); t != tangents.end()) grads[input] = std::make_shared<const sem::Tensor>(t->second);
  }
  return grads;
}

}  // namespace stax::remat
