// Exactness of the partition: joint graph vs forward-then-backward.
#include "remat/verify.h"

#include "compiler/lower.h"
#include "semantics/evaluator.h"
#include "semantics/input_gen.h"

namespace stax::remat {

std::string_view verify_status_name(VerifyStatus s) {
  switch (s) {
    case VerifyStatus::Verified: return "tested";
    case VerifyStatus::Counterexample: return "refuted";
    case VerifyStatus::NotCheckable: return "not checkable";
  }
  return "?";
}

namespace {

/// Lowers a graph built in memory after a round trip through its JSON form,
/// which checks what parse_graph checks (names, references, cycles).
std::variant<sem::Program, std::string> lower_eager(const compiler::Graph& g0) {
  auto parsed = compiler::parse_graph(compiler::graph_to_json(g0).dump(), g0.file);
  if (auto* e = std::get_if<compiler::GraphError>(&parsed)) return e->str();
  auto l = compiler::lower_graph(std::get<compiler::Graph>(parsed), {compiler::Device{}, true});
  if (auto* e = std::get_if<compiler::GraphError>(&l)) return e->str();
  return std::get<compiler::Lowered>(std::move(l)).program;
}

std::string outcome_failure(const sem::IeeeOutcome& o) { return o.failure ? o.failure->str() : ""; }

}  // namespace

std::optional<std::string> first_difference(const sem::Tensor& a, const sem::Tensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape)
    return "type " + sem::type_str({b.dtype, b.shape}) + ", expected " + sem::type_str({a.dtype, a.shape});
  for (int64_t i = 0; i < a.size(); ++i)
    if (!sem::element_equal(a, b, i))
      return sem::index_text(sem::unflatten(a.shape, i)) + ": expected " + sem::element_text(a, i) + ", got " +
             sem::element_text(b, i);
  return std::nullopt;
}

VerifyResult verify_partition(const autodiff::JointGraph& jg, const Partition& p, const VerifyOptions& opt) {
  VerifyResult r;
  auto joint = lower_eager(jg.graph);
  if (auto* e = std::get_if<std::string>(&joint)) {
    r.status = VerifyStatus::NotCheckable;
    r.message = "the joint graph does not lower, so there is nothing to compare with: " + *e;
    return r;
  }
  // A forward or backward graph that does not lower is a wrong partition
  // (a value the backward reads is neither saved nor recomputed, ...).
  auto fw = lower_eager(p.forward);
  if (auto* e = std::get_if<std::string>(&fw)) {
    r.status = VerifyStatus::Counterexample;
    r.message = "the forward graph is malformed: " + *e;
    return r;
  }
  auto bw = lower_eager(p.backward);
  if (auto* e = std::get_if<std::string>(&bw)) {
    r.status = VerifyStatus::Counterexample;
    r.message = "the backward graph is malformed: " + *e;
    return r;
  }
  const sem::Program& pj = std::get<sem::Program>(joint);
  const sem::Program& pf = std::get<sem::Program>(fw);
  const sem::Program& pb = std::get<sem::Program>(bw);
  for (int k = 0; k < opt.trials; ++k) {
    sem::InputKind kind = sem::kInputKinds[size_t(k) % std::size(sem::kInputKinds)];
    uint64_t seed = opt.seed + uint64_t(k);
    sem::Inputs in = sem::generate_inputs(pj, kind, seed);
    std::string where = " (inputs: " + std::string(sem::input_kind_name(kind)) + ", seed " + std::to_string(seed) + ")";
    ++r.trials;
    sem::IeeeOutcome oj = sem::eval_ieee(pj, in);
    sem::Inputs fin;
    for (const auto& i : pf.inputs) fin[i.name] = in.at(i.name);
    sem::IeeeOutcome of = sem::eval_ieee(pf, fin);
    sem::IeeeOutcome ob;
    if (!of.failure) {
      sem::Inputs bin;
      for (const auto& i : pb.inputs) {
        auto o = of.outputs.find(i.name);
        if (o != of.outputs.end()) bin[i.name] = *o->second;
        else if (in.count(i.name)) bin[i.name] = in.at(i.name);
        else {
          r.status = VerifyStatus::Counterexample;
          r.message = "the backward graph reads '" + i.name + "', which the forward graph does not hand over";
          return r;
        }
      }
      if (auto bad = sem::check_inputs(pb, bin)) {
        r.status = VerifyStatus::Counterexample;
        r.message = "the backward graph's inputs do not match the forward's outputs: " + *bad;
        return r;
      }
      ob = sem::eval_ieee(pb, bin);
    }
    std::string fail_split = of.failure ? "forward: " + outcome_failure(of)
                             : ob.failure ? "backward: " + outcome_failure(ob)
                                          : "";
    if (oj.failure || !fail_split.empty()) {
      if (oj.failure && !fail_split.empty()) continue;  // both ⊥
      r.status = VerifyStatus::Counterexample;
      r.message = oj.failure ? "the joint graph fails (" + outcome_failure(oj) + ") but the partition has a value" + where
                             : "the partition fails (" + fail_split + ") but the joint graph has a value" + where;
      return r;
    }
    size_t nf = jg.forward_outputs.size();
    for (size_t o = 0; o < pj.outputs.size(); ++o) {
      const std::string& name = pj.outputs[o];
      const sem::IeeeOutcome& side = o < nf ? of : ob;
      auto it = side.outputs.find(name);
      if (it == side.outputs.end()) {
        r.status = VerifyStatus::Counterexample;
        r.message = std::string(o < nf ? "the forward" : "the backward") + " graph lacks the output '" + name + "'";
        return r;
      }
      if (auto d = first_difference(*oj.outputs.at(name), *it->second)) {
        r.status = VerifyStatus::Counterexample;
        r.message = "output '" + name + "' of the " + (o < nf ? "forward" : "backward") + " graph differs from the joint graph's at " +
                    *d + where;
        return r;
      }
    }
  }
  return r;
}

}  // namespace stax::remat
