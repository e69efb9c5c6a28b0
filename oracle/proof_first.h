// Proof before testing (issue 16): an exact or refines check first asks the
// prover (proofs/program_equiv.h) for all inputs at these shapes. Internal
// to oracle/checker.cpp.
#pragma once

#include "oracle/checker.h"

namespace stax::oracle {

/// Runs the prover when `opt.prove` asks for it and the class is exact or
/// refines. Returns true when the verdict is decided: proved (status
/// Verified, `proved` set) or refuted (a Counterexample replayed on the
/// interpreter, input kind Solver). Otherwise records in `v` why no proof was
/// found, and testing follows.
bool try_proof(const sem::Program& src, const sem::Program& tgt, xform::SemClass cls, const CheckOptions& opt,
               Verdict& v);

}  // namespace stax::oracle
