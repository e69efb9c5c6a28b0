// Proof before testing (proof_first.h).
#include "oracle/proof_first.h"

#include <cstdio>

#include "proofs/program_equiv.h"

namespace stax::oracle {

bool try_proof(const sem::Program& src, const sem::Program& tgt, xform::SemClass cls, const CheckOptions& opt,
               Verdict& v) {
  if (opt.prove == ProveMode::Off) return false;
  if (cls == xform::SemClass::Real) {
    v.proof_note = "class real is checked against the Real domain and error bounds, not by the prover";
    return false;
  }
  proofs::EquivOptions eo;
  eo.max_elements = opt.prove_max_elements;
  eo.max_terms = opt.prove_max_terms;
  eo.timeout_ms = opt.prove_timeout_ms;
  proofs::Relation rel = cls == xform::SemClass::Exact ? proofs::Relation::Exact : proofs::Relation::Refines;
  auto confirm = [&](const sem::Inputs& in) { return compare_on(src, tgt, cls, in).has_value(); };
  proofs::EquivResult r = proofs::prove_equivalent(src, tgt, rel, eo, confirm);
  v.proof_tried = true;
  v.proof_ms = r.verdict.ms;
  v.proof_terms = r.terms;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.0f ms", r.verdict.ms);
  std::string uf;
  for (const std::string& f : r.uninterpreted) uf += (uf.empty() ? "" : ", ") + f;
  if (!uf.empty()) uf = "; uninterpreted: " + uf;
  switch (r.verdict.kind) {
    case proofs::ProofVerdict::Proved:
      v.status = Status::Verified;
      v.proved = true;
      v.message = "proved for all inputs at these shapes (Z3: " + std::to_string(r.terms) + " terms, " + ms + uf +
                  "); testing found no difference on " + std::to_string(v.trials) + " input set(s) either";
      return true;
    case proofs::ProofVerdict::Refuted: {
      bool failed = false;
      auto c = compare_on(src, tgt, cls, r.counterexample, &failed);
      if (!c) break;  // cannot happen: `confirm` saw it
      c->kind = InputKind::Solver;
      v.status = Status::Counterexample;
      v.message = std::string(c->output.empty() ? "definedness mismatch" : "value mismatch") +
                  " on inputs found by Z3 (" + ms + ", " + r.verdict.reason + ") after " + std::to_string(v.trials) +
                  " input set(s) of testing found none; replayed on the interpreter";
      v.cex = std::move(c);
      return true;
    }
    case proofs::ProofVerdict::Unknown: break;
  }
  v.proof_note = r.verdict.reason.empty() ? "the prover gave no verdict" : r.verdict.reason;
  return false;
}

}  // namespace stax::oracle
