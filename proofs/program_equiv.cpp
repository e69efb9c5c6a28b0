// Whole-program equivalence with Z3 (program_equiv.h).
#include "proofs/program_equiv.h"

#include <z3++.h>

#include <algorithm>
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

/// ±0, ±1, ±2, ±inf, NaN, ±the smallest subnormal, ±the smallest normal,
/// ±the largest finite value, as bits of the dtype.
std::vector<uint64_t> special_bits(DType t) {
  int eb = t == DType::F16 ? 5 : t == DType::BF16 ? 8 : t == DType::F32 ? 8 : 11;
  int fb = int(dtype_bytes(t)) * 8 - 1 - eb;
  uint64_t sign = 1ull << (eb + fb), bias = (1ull << (eb - 1)) - 1, inf = ((1ull << eb) - 1) << fb;
  std::vector<uint64_t> mags = {0, bias << fb, (bias + 1) << fb, inf, 1, 1ull << fb, inf - 1};
  std::vector<uint64_t> r = {inf | (1ull << (fb - 1))};  // the quiet NaN
  for (uint64_t m : mags) {
    r.push_back(m);
    r.push_back(m | sign);
  }
  return r;
}

bool has_float_input(const Program& p) {
  for (const Input& i : p.inputs)
    if (is_float(i.type.dtype)) return true;
  return false;
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

// Without uninterpreted functions a goal is bit-vectors and floats only: the
// qffpbv tactic (bit-blasting to SAT) beats the default incremental solver
// there (4 s against > 60 s on the ±0 sum of 4). With them (transcendental
// ops), floats are blasted to bit-vectors first and the result solved as
// QF_UFBV: the default solver's own float handling does not poll the cancel
// flag in places, so a deadline could not stop it (f64 sqrt of log, fuzz
// seed 2000605: over 11 GB and minutes).
z3::solver goal_solver(z3::context& c, const FpaOps& ops) {
  if (ops.uninterpreted().empty()) return z3::tactic(c, "qffpbv").mk_solver();
  return (z3::tactic(c, "simplify") & z3::tactic(c, "fpa2bv") & z3::tactic(c, "qfufbv")).mk_solver();
}

EquivResult prove_equivalent(const Program& src, const Program& tgt, Relation rel, const EquivOptions& opt,
                             const Confirm& confirm) {
  EquivResult res;
  ProofVerdict& v = res.verdict;
  auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  unknown_on_failure(v, [&] {
    z3::context c;
    FpaOps ops(c, /*half_in_f32=*/true);
    SmtDomain dom(ops, opt.max_terms, t0 + std::chrono::milliseconds(opt.timeout_ms));
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
    // One goal per way to differ: the ⊥ behaviour, then each output element
    // (its cone of terms only, so a map of n elements is n small queries, and
    // elements whose terms are identical after hash-consing cost nothing).
    std::vector<z3::expr> goals;
    try {
      Encoded e = encode(src, dom, inputs, opt.max_elements);
      Encoded f = encode(tgt, dom, inputs, opt.max_elements);
      goals.push_back(rel == Relation::Exact ? e.bottom != f.bottom : !e.bottom && f.bottom);
      z3::expr defined = rel == Relation::Exact ? !e.bottom && !f.bottom : !e.bottom;
      for (const std::string& o : src.outputs) {
        const SmtTensor &x = *e.outputs.at(o), &y = *f.outputs.at(o);
        for (size_t k = 0; k < x.data.size(); ++k)
          if (!z3::eq(x.data[k], y.data[k])) goals.push_back(defined && !ops.same(x.data[k], y.data[k]));
      }
    } catch (const ResourceError& r) {
      throw Unsupported{"over the size limit: " + r.message};
    }
    res.terms = dom.terms();
    res.uninterpreted.assign(ops.uninterpreted().begin(), ops.uninterpreted().end());
    auto timeout = [&] {
      v.kind = ProofVerdict::Unknown;
      v.reason = "solver timeout after " + std::to_string(int64_t(elapsed())) + " ms";
    };
    auto refuted = [&](Inputs in, const std::string& how) {
      v.kind = ProofVerdict::Refuted;
      res.counterexample = std::move(in);
      v.reason = how;
      if (!res.uninterpreted.empty())
        v.reason += "; confirmed by the interpreter (the solver treated " + std::to_string(res.uninterpreted.size()) +
                    " op(s) as uninterpreted)";
    };
    // Phase 1, a quarter of the time at most: the float inputs fixed to
    // special values (each of them everywhere, then mixtures), the integer
    // inputs left to the solver. A difference that needs, say, every element
    // -0.0 is a needle for the bit-blasted adders — the ±0 sum of 8 is out
    // of reach of phase 2 in a minute — and immediate here.
    if (has_float_input(src)) {
      z3::expr any = c.bool_val(false);
      for (const z3::expr& g : goals) any = any || g;
      uint64_t rng = 0x9e3779b97f4a7c15ull;
      for (int pattern = 0; pattern < 48 && elapsed() < double(opt.timeout_ms) / 4; ++pattern) {
        z3::expr_vector from(c), to(c);
        for (const Input& i : src.inputs) {
          if (!is_float(i.type.dtype)) continue;
          std::vector<uint64_t> sp = special_bits(i.type.dtype);
          for (const z3::expr& x : inputs.at(i.name)->data) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            size_t pick = size_t(pattern) < sp.size() ? size_t(pattern) : size_t(rng % sp.size());
            from.push_back(x);
            to.push_back(ops.from_bits(sp[pick], i.type.dtype));
          }
        }
        z3::solver s = goal_solver(c, ops);
        try {
          Deadline deadline(500, [&c] { c.interrupt(); });
          z3::expr r = any.substitute(from, to).simplify();
          if (r.is_false()) continue;
          s.add(r);
          for (unsigned k = 0; k < from.size(); ++k) s.add(from[int(k)] == to[int(k)]);
          if (s.check() != z3::sat) continue;
        } catch (const z3::exception&) {
          continue;  // interrupted: the next pattern
        }
        Inputs in = model_inputs(s.get_model(), src, inputs);
        if (confirm(in)) return refuted(std::move(in), "found with the float inputs fixed to special values");
      }
    }
    for (const z3::expr& g0 : goals) {
      if (elapsed() >= double(opt.timeout_ms)) return timeout();
      z3::solver s = goal_solver(c, ops);
      bool trivial = false;
      try {
        Deadline deadline(unsigned(std::max(1.0, double(opt.timeout_ms) - elapsed())), [&c] { c.interrupt(); });
        z3::expr g = g0.simplify();
        trivial = g.is_false();
        s.add(g);
      } catch (const z3::exception&) {
        return timeout();  // interrupted while simplifying
      }
      if (trivial) continue;
      for (;;) {
        if (elapsed() >= double(opt.timeout_ms)) return timeout();
        z3::check_result cr;
        bool expired;
        {
          Deadline deadline(unsigned(std::max(1.0, double(opt.timeout_ms) - elapsed())), [&c] { c.interrupt(); });
          cr = s.check();
          expired = deadline.expired();
        }
        if (cr == z3::unsat) break;
        if (cr == z3::unknown) {
          v.kind = ProofVerdict::Unknown;
          std::string why = s.reason_unknown();
          if (expired || why == "canceled" || why == "timeout") return timeout();
          v.reason = "solver: " + why;
          return;
        }
        z3::model m = s.get_model();
        Inputs in = model_inputs(m, src, inputs);
        if (confirm(in)) return refuted(std::move(in), "found by the solver");
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
          for (int64_t k = 0; k < x.size(); ++k)
            same = same && t.data[size_t(k)] == ops.from_bits(x.get_bits(k), i.type.dtype);
        }
        s.add(!same);
      }
    }
    if (res.unconfirmed == 0) {
      v.kind = ProofVerdict::Proved;
    } else {
      v.kind = ProofVerdict::Unknown;
      v.reason = std::to_string(res.unconfirmed) +
                 " solver counterexample(s) that the interpreter does not reproduce, then no more";
    }
  });
  v.ms = elapsed();
  // Every size refusal (inputs, intermediates, terms) says so in this form.
  res.over_limit = v.kind == ProofVerdict::Unknown && v.reason.find("over the size limit") != std::string::npos;
  return res;
}

}  // namespace stax::proofs
