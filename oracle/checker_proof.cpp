// The prover in the checker, after testing (checker_proof.h).
#include "oracle/checker_proof.h"

#include <cstdio>

#include "proofs/program_equiv.h"
#include "semantics/printer.h"

namespace stax::oracle {

namespace {

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f ms", ms);
  return b;
}

std::string input_shapes(const sem::Program& p) {
  std::string s;
  for (const sem::Input& i : p.inputs)
    s += (s.empty() ? "" : ", ") + i.name + " " + std::string(sem::dtype_name(i.type.dtype)) +
         sem::shape_text(i.type.shape);
  return s;
}

// The shrunk-shape family (shrunk_shapes.h): every extent e becomes
// min(e, k) for k = 1..4, the target rebuilt by `retarget` or shrunk alike;
// each member proved within an equal share of the remaining time. Records
// the members in v.shrunk and a one-line summary in v.shrunk_note.
void prove_shrunk(const sem::Program& src, const sem::Program& tgt, proofs::Relation rel, const CheckOptions& opt,
                  xform::SemClass cls, Verdict& v) {
  std::vector<int64_t> ext = extents_of(src);
  auto t0 = std::chrono::steady_clock::now();
  std::string last_program, why_not;
  std::vector<int64_t> proved;
  constexpr int kMaxBound = 4;
  for (int64_t k = 1; k <= kMaxBound; ++k) {
    std::map<int64_t, int64_t> sigma;
    for (int64_t e : ext)
      if (e > k) sigma[e] = k;
    std::string why;
    std::optional<sem::Program> s = shrink_shapes(src, sigma, &why);
    std::optional<sem::Program> t;
    if (s) {
      t = opt.retarget ? opt.retarget(*s) : shrink_shapes(tgt, sigma, &why);
      if (!t && why.empty()) why = "the transform does not apply at the shrunk shapes";
    }
    if (s && t && interface_mismatch(*s, *t)) {
      why = "not shape-generic: at the shrunk shapes the two programs' interfaces differ";
      t.reset();
    }
    if (!s || !t) {
      if (why_not.empty()) why_not = why;
      continue;
    }
    std::string printed = sem::print_program(*s) + sem::print_program(*t);
    if (printed == last_program) continue;  // every extent was already ≤ k
    last_program = printed;
    double spent = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double left = double(opt.prove_timeout_ms) - spent;
    if (left < 50) break;
    proofs::EquivOptions eo;
    eo.max_elements = opt.prove_max_elements;
    eo.max_terms = opt.prove_max_terms;
    eo.timeout_ms = unsigned(left / double(kMaxBound - k + 1));
    auto confirm = [&](const sem::Inputs& in) { return compare_on(*s, *t, cls, in).has_value(); };
    proofs::EquivResult r = proofs::prove_equivalent(*s, *t, rel, eo, confirm);
    ShrunkCheck c{k, input_shapes(*s), std::string(sem::verdict_name(r.verdict.kind)), r.verdict.reason,
                  r.verdict.ms};
    if (r.verdict.kind == sem::ProofVerdict::Proved) proved.push_back(k);
    v.shrunk.push_back(std::move(c));
    if (r.verdict.kind == sem::ProofVerdict::Refuted) break;
  }
  if (v.shrunk.empty()) {
    v.shrunk_note = "no shrunk shapes checked: " + (why_not.empty() ? std::string("no time left") : why_not);
    return;
  }
  std::string s;
  for (const ShrunkCheck& c : v.shrunk) {
    s += (s.empty() ? "" : "; ") + c.verdict + " at " + c.shapes + " (" + ms_text(c.ms);
    if (c.verdict != "proved" && !c.note.empty()) s += ", " + c.note;
    s += ")";
  }
  v.shrunk_note = "shape-generic, so proved at shrunk shapes instead: " + s +
                  " — a proof at those shapes only, not at these";
  if (proved.empty()) v.shrunk_note = "at shrunk shapes: " + s;
}

}  // namespace

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
  std::string ms = ms_text(r.verdict.ms);
  std::string uf;
  for (const std::string& f : r.uninterpreted) uf += (uf.empty() ? "" : ", ") + f;
  if (!uf.empty()) uf = "; uninterpreted: " + uf;
  switch (r.verdict.kind) {
    case sem::ProofVerdict::Proved:
      v.status = Status::Verified;
      v.proved = true;
      v.message = "proved for all inputs at these shapes (Z3: " + std::to_string(r.terms) + " terms, " + ms + uf +
                  "); testing found no difference on " + std::to_string(v.trials) + " input set(s) either";
      return true;
    case sem::ProofVerdict::Refuted: {
      bool failed = false;
      auto c = compare_on(src, tgt, cls, r.counterexample, &failed);
      if (!c) break;  // cannot happen: `confirm` saw it
      c->kind = sem::InputKind::Solver;
      v.status = Status::Counterexample;
      v.message = std::string(c->output.empty() ? "definedness mismatch" : "value mismatch") +
                  " on inputs found by Z3 (" + ms + ", " + r.verdict.reason + ") after " + std::to_string(v.trials) +
                  " input set(s) of testing found none; replayed on the interpreter";
      v.cex = std::move(c);
      return true;
    }
    case sem::ProofVerdict::Unknown: break;
  }
  v.proof_note = r.verdict.reason.empty() ? "the prover gave no verdict" : r.verdict.reason;
  if (r.over_limit && opt.prove_shrunk) {
    prove_shrunk(src, tgt, rel, opt, cls, v);
    for (const ShrunkCheck& c : v.shrunk) v.proof_ms += c.ms;
  }
  return false;
}

}  // namespace stax::oracle
