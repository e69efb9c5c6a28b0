// The prover in the checker: once testing found no difference,
// an exact or refines check asks the prover (proofs/program_equiv.h) for all
// inputs at these shapes. (Testing goes first because it refutes a wrong
// transform in milliseconds, where the solver may need seconds to find
// inputs for, say, a reassociated float sum; the verdict is the same.)
// Internal to oracle/checker.cpp.
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
