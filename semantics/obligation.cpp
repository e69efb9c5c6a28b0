#include "semantics/obligation.h"

namespace stax::sem {

namespace {
Discharger& default_slot() {
  static Discharger d;
  return d;
}
}  // namespace

ProofVerdict discharge_default(const Obligation& ob) {
  if (const Discharger& d = default_slot()) return d(ob);
  ProofVerdict v;
  v.reason = "no prover installed";
  return v;
}

void set_default_discharger(Discharger d) { default_slot() = std::move(d); }

std::string_view verdict_name(ProofVerdict::Kind k) {
  switch (k) {
    case ProofVerdict::Proved: return "proved";
    case ProofVerdict::Refuted: return "refuted";
    case ProofVerdict::Unknown: return "unknown";
  }
  return "unknown";
}

std::string_view kind_name(ObligationKind k) {
  switch (k) {
    case ObligationKind::InBounds: return "in-bounds";
    case ObligationKind::Int32: return "int32";
    case ObligationKind::Affinity: return "affinity";
    case ObligationKind::Composition: return "composition";
    case ObligationKind::LoopMerge: return "loop-merge";
    case ObligationKind::Interval: return "interval";
  }
  return "?";
}

std::string_view consequence_text(Consequence c) {
  switch (c) {
    case Consequence::Fails: return "the program fails (⊥) there";
    case Consequence::RuntimeCheck: return "kept: runtime check";
    case Consequence::WideIndex: return "kept: 64-bit indexing";
    case Consequence::NotAffine: return "kept: floor/mod indexing";
    case Consequence::Refused: return "the transform refuses";
    case Consequence::AnalysisBug: return "the Interval analysis is unsound";
  }
  return "?";
}

}  // namespace stax::sem
