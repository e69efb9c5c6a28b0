// Input generators of the checks (the oracle's checker and fuzzer, the
// backends' and the autodiff's tests), deterministic by seed: normal,
// uniform, adversarial for cancellation, and special values (±0, ±inf, NaN,
// subnormals, max/min normal, f16/bf16 rounding ties).
#pragma once

#include <optional>
#include <string_view>

#include "semantics/evaluator.h"

namespace stax::sem {

/// Extreme: one pattern per float tensor — all -0.0, a mixture of ±0, all
/// NaN with different payloads and signs, ±inf pairs that cancel, all
/// subnormal, all of the largest magnitude. Solver: inputs found by the
/// prover (never drawn). Products: 90 % of the elements drawn from a small
/// pool shared by all the call's float tensors of a dtype (the rest normal),
/// {p, q, fl(p*q), -fl(p*q), -fl(p*p), r, -r} with inexact products p*q and
/// r*r, so that `a*b + c` meets c = -fl(a*b) on many elements and `x*x - x`
/// meets x = r (a fused multiply-add then gives the product's rounding
/// error, the unfused sum 0). Not in kInputKinds: the fuzzer's backend
/// trials draw it (kBackendInputKinds).
enum class InputKind { Normal, Uniform, Cancellation, Special, Extreme, Solver, Products };
std::string_view input_kind_name(InputKind k);
constexpr InputKind kInputKinds[] = {InputKind::Normal, InputKind::Uniform, InputKind::Cancellation,
                                     InputKind::Special, InputKind::Extreme};
/// The kinds of the fuzzer's backend comparisons, in turn.
constexpr InputKind kBackendInputKinds[] = {InputKind::Normal, InputKind::Uniform, InputKind::Products,
                                            InputKind::Cancellation, InputKind::Special, InputKind::Extreme};

/// Draws every input of the program. Integer inputs used as indirect indices
/// stay within [-s, s) for the extent s they index (so wrap-around happens and
/// most draws are in range); Special also draws out-of-range ones.
sem::Inputs generate_inputs(const sem::Program& p, InputKind kind, uint64_t seed);

/// Inputs restricted to the program's declared inputs; nullopt when one is
/// missing or has another type (a shrunk or transformed program reusing the
/// inputs of the original).
std::optional<sem::Inputs> adapt_inputs(const sem::Program& p, const sem::Inputs& in);

}  // namespace stax::sem
