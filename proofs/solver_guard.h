// Internal to proofs/ (it includes z3++.h): the one mapping of an encoder's
// or the solver's failure to an Unknown verdict. A check returns a verdict,
// never an exception (the Alive2 habit).
#pragma once

#include <z3++.h>

#include <string>

#include "semantics/obligation.h"

namespace stax::proofs {

/// Thrown while encoding a construct the encoder does not support.
struct Unsupported {
  std::string what;
};

/// Runs `body`; an Unsupported construct or a Z3 exception makes `v` Unknown
/// with the reason.
template <class F>
void unknown_on_failure(sem::ProofVerdict& v, F&& body) {
  try {
    body();
  } catch (const Unsupported& u) {
    v.kind = sem::ProofVerdict::Unknown;
    v.reason = "unsupported: " + u.what;
  } catch (const z3::exception& e) {
    v.kind = sem::ProofVerdict::Unknown;
    v.reason = std::string("z3: ") + e.msg();
  }
}

}  // namespace stax::proofs
