// Whole-program equivalence with Z3 (program_equiv.h).
#include "proofs/program_equiv.h"

#include <z3++.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>

#include "proofs/deadline.h"
#include "proofs/fpa_ops.h"
#include "proofs/smt_domain.h"
#include "semantics/tensor_eval.h"

namespace stax::proofs {

using namespace sem;

namespace {

using Clock = std::chrono::steady_clock;
using Outputs = std::map<std::string, std::shared_ptr<const SmtTensor>>;

struct Encoded {
  Outputs outputs;
  z3::expr bottom;
};

/// One program over the symbolic inputs.
Encoded encode(const Program& p, SmtDomain& dom, const std::map<std::string, std::shared_ptr<const SmtTensor>>& inputs,
               int64_t max_elements) {
  dom.bottom = dom.ops().ctx().bool_val(false);
  TensorEvaluator<SmtDomain> ev(dom, max_elements);
  for (const Input& i : p.inputs) ev.env[i.name].push_back(inputs.at(i.name));
  std::optional<Failure> failure;
  Outputs out;
  run_bindings(ev, p, failure, out);
  // A failure the evaluator raised itself (not a symbolic condition) happens
  // whatever the inputs.
  if (failure) throw Unsupported{"the program is ⊥ on every input (" + failure->reason + ")"};
  return {std::move(out), dom.bottom};
}

/// The inputs of a model as tensors.
Inputs model_inputs(const z3::model& m, const Program& p,
                    const std::map<std::string, std::shared_ptr<const SmtTensor>>& inputs) {
  Inputs in;
  for (const Input& i : p.inputs) {
    Tensor t(i.type.dtype, i.type.shape);
    const SmtTensor& s = *inputs.at(i.name);
    size_t b = size_t(dtype_bytes(i.type.dtype));
    for (int64_t k = 0; k < t.size(); ++k) {
      uint64_t bits = model_bits(m, s.data[size_t(k)], i.type.dtype);
      std::memcpy(t.data.data() + size_t(k) * b, &bits, b);  // little-endian
    }
    in[i.name] = std::move(t);
  }
  return in;
}

}  // namespace

EquivResult prove_equivalent(const Program& src, const Program& tgt, Relation rel, const EquivOptions& opt,
                             const Confirm& confirm) {
  EquivResult res;
  ProofVerdict& v = res.verdict;
  auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  unknown_on_failure(v, [&] {
    z3::context c;
    FpaOps ops(c, /*half_in_f32=*/true);
    SmtDomain dom(ops, opt.max_terms);
    std::map<std::string, std::shared_ptr<const SmtTensor>> inputs;
    for (const Input& i : src.inputs) {
      if (num_elements(i.type.shape) > opt.max_elements)
        throw Unsupported{"over the size limit: input '" + i.name + "' has " +
                          std::to_string(num_elements(i.type.shape)) + " elements (limit " +
                          std::to_string(opt.max_elements) + ")"};
      auto t = std::make_shared<SmtTensor>(dom.make_tensor(i.type.dtype, i.type.shape));
      for (int64_t k = 0; k < t->size(); ++k)
        t->data[size_t(k)] = c.constant((i.name + "!" + std::to_string(k)).c_str(), ops.storage_sort(i.type.dtype));
      inputs[i.name] = t;
    }
    z3::expr goal = [&] {
      try {
        Encoded e = encode(src, dom, inputs, opt.max_elements);
        Encoded f = encode(tgt, dom, inputs, opt.max_elements);
        z3::expr differ = c.bool_val(false);
        for (const std::string& o : src.outputs) {
          const SmtTensor &x = *e.outputs.at(o), &y = *f.outputs.at(o);
          for (size_t k = 0; k < x.data.size(); ++k) differ = differ || !ops.same(x.data[k], y.data[k]);
        }
        return rel == Relation::Exact ? (e.bottom != f.bottom) || (!e.bottom && !f.bottom && differ)
                                      : !e.bottom && (f.bottom || differ);
      } catch (const ResourceError& r) {
        throw Unsupported{"over the size limit: " + r.message};
      }
    }();
    res.terms = dom.terms();
    res.uninterpreted.assign(ops.uninterpreted().begin(), ops.uninterpreted().end());
    z3::solver s(c);
    s.add(goal);  // an input on which the programs differ
    for (;;) {
      z3::check_result cr;
      bool expired;
      {
        double left = double(opt.timeout_ms) - elapsed();
        Deadline deadline(left > 1 ? unsigned(left) : 1u, [&c] { c.interrupt(); });
        cr = s.check();
        expired = deadline.expired();
      }
      if (cr == z3::unsat) {
        if (res.unconfirmed == 0) {
          v.kind = ProofVerdict::Proved;
        } else {
          v.kind = ProofVerdict::Unknown;
          v.reason = std::to_string(res.unconfirmed) +
                     " solver counterexample(s) that the interpreter does not reproduce, then no more";
        }
        return;
      }
      if (cr == z3::unknown) {
        v.kind = ProofVerdict::Unknown;
        std::string why = s.reason_unknown();
        v.reason = (expired || why == "canceled" || why == "timeout")
                       ? "solver timeout after " + std::to_string(int64_t(elapsed())) + " ms"
                       : "solver: " + why;
        return;
      }
      z3::model m = s.get_model();
      Inputs in = model_inputs(m, src, inputs);
      if (confirm(in)) {
        v.kind = ProofVerdict::Refuted;
        res.counterexample = std::move(in);
        if (!res.uninterpreted.empty())
          v.reason = "confirmed by the interpreter; the solver treated " + std::to_string(res.uninterpreted.size()) +
                     " op(s) as uninterpreted";
        return;
      }
      // The model rests on an uninterpreted function's fictitious values (or
      // differs only in a NaN payload): block these inputs and ask again.
      if (++res.unconfirmed >= opt.max_unconfirmed) {
        v.kind = ProofVerdict::Unknown;
        v.reason = std::to_string(res.unconfirmed) + " solver counterexamples, none reproduced by the interpreter";
        return;
      }
      z3::expr same = c.bool_val(true);
      for (const Input& i : src.inputs) {
        const SmtTensor& t = *inputs.at(i.name);
        const Tensor& x = in.at(i.name);
        for (int64_t k = 0; k < x.size(); ++k) same = same && t.data[size_t(k)] == ops.from_bits(x.get_bits(k), i.type.dtype);
      }
      s.add(!same);
    }
  });
  v.ms = elapsed();
  return res;
}

}  // namespace stax::proofs
