// The adjoint identity as a check (§5.7) and a generator of random
// differentiable graphs, shared by the tests and `stax fuzz autodiff`.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "autodiff/jvp.h"
#include "autodiff/vjp.h"
#include "compiler/graph.h"

namespace stax::autodiff {

/// A random differentiable graph over f64 tensors of shape [3, 4] (with [4]
/// and [3, 1] operands to exercise broadcasting), built from smooth
/// operators whose domains are safe for normal inputs (tanh, sigmoid, sin,
/// exp, mul, add with alpha, sub, x / (1 + y²), softmax, sum and mean over a
/// dim, x·(xᵀx)); outputs: the sum of the last value and the value before
/// it. The graph format's JSON text; the same seed gives the same text.
std::string random_graph(uint64_t seed);

/// <u, J v> = <Jᵀ u, v> (the JVP and the VJP are the same linear map read two
/// ways), evaluated in the Real domain at P bits: the JVP graph on (x, v) and
/// the joint graph on (x, u) for random x, u, v drawn from `seed`. Equal up to
/// MPFR's own rounding at P bits: |lhs − rhs| ≤ 2^-(P-64)·(1 + Σ|u·Jv| +
/// Σ|Jᵀu·v|) — the 2^64 headroom covers the roundings along the two
/// programs; it is not a float tolerance.
struct AdjointResult {
  bool ok = false;
  double lhs = 0, rhs = 0, bound = 0;
  std::string str() const;
};

/// An error: a graph that does not differentiate, lower, or evaluate (⊥).
std::variant<AdjointResult, compiler::GraphError> adjoint_check(const compiler::Graph& g, uint64_t seed, long P,
                                                                const GradOptions& go = {}, const JvpOptions& jo = {});

}  // namespace stax::autodiff
