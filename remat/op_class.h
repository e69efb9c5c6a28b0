// What the min-cut partition (§5.4) needs to know about an operator: is it
// cheap to recompute, and can it fuse with its producer. The classes follow
// the text's rule 1 ("not the result of a cheap op, e.g. matmul or
// convolution") and the fusion premise of 5.6 (a recomputed elementwise chain
// fuses into the loop the backward runs anyway).
#pragma once

#include <optional>
#include <string_view>

namespace stax::remat {

enum class OpClass {
  Pointwise,  ///< elementwise (and creation: full, arange): cheap, fusible
  View,       ///< index remapping only (t, permute, expand, slice, ...): cheap, fusible
  Reduction,  ///< sum, amax, softmax, layer_norm, ...: fusible; rule 3 may forbid recomputing it
  Cat,        ///< concatenation: fuses as a consumer, not as a producer
  Expensive,  ///< mm, bmm, matmul, convolution: never recomputed (rule 1)
  Random,     ///< rand, dropout: recomputing gives other numbers (never recomputed)
};

/// The class of an operator overload (`mm.default`, `add.Tensor`, ...); nullopt
/// for an operator the partition does not know. Every operator of the lowering
/// (compiler::op_signatures) has a class, as do the backward-only operators a
/// joint graph uses (`gelu_backward.default`, `tanh_backward.default`, ...).
std::optional<OpClass> op_class(std::string_view op);

/// Whether a consumer of class `consumer` fuses with its producer of class
/// `producer` (one loop, the producer's value never written to memory).
bool fusible(OpClass producer, OpClass consumer);

}  // namespace stax::remat
