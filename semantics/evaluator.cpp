#include "semantics/evaluator.h"

#include "semantics/ieee_domain.h"
#include "semantics/tensor_eval.h"

namespace stax::sem {

namespace {
constexpr int64_t kMaxIeeeElements = int64_t(1) << 32;
constexpr int64_t kMaxRealElements = int64_t(1) << 25;
}  // namespace

std::string Failure::str() const {
  std::string w = where.size() > 240 ? where.substr(0, 240) + "..." : where;
  return "binding '" + binding + "' failed at index " + index_text(index) + ": " + reason + "\n  in: " + w;
}

std::optional<std::string> check_inputs(const Program& p, const Inputs& in) {
  for (const Input& i : p.inputs) {
    auto it = in.find(i.name);
    if (it == in.end()) return "missing input '" + i.name + "' : " + type_str(i.type);
    TensorType got{it->second.dtype, it->second.shape};
    if (!(got == i.type)) return "input '" + i.name + "' expects " + type_str(i.type) + ", got " + type_str(got);
  }
  for (const auto& [name, t] : in) {
    bool known = false;
    for (const Input& i : p.inputs) known |= i.name == name;
    if (!known) return "the program has no input named '" + name + "'";
  }
  return std::nullopt;
}

IeeeOutcome eval_ieee(const Program& p, const Inputs& in) {
  IeeeDomain dom;
  TensorEvaluator<IeeeDomain> ev(dom, kMaxIeeeElements);
  // Inputs are borrowed, not copied: they outlive the evaluation. An output
  // that is an input itself is copied at the end.
  for (const Input& i : p.inputs)
    ev.env[i.name].push_back(std::shared_ptr<const Tensor>(std::shared_ptr<const Tensor>(), &in.at(i.name)));
  IeeeOutcome out;
  run_bindings(ev, p, out.failure, out.outputs);
  for (auto& [name, t] : out.outputs)
    if (in.count(name) && t.get() == &in.at(name)) t = std::make_shared<const Tensor>(*t);
  return out;
}

RealOutcome eval_real(const Program& p, const Inputs& in, long precision) {
  RealDomain dom(precision);
  RealOutcome out;
  run_converted(dom, p, in, kMaxRealElements, "Real domain", out);
  return out;
}

}  // namespace stax::sem
