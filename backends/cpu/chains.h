// Kernel chains (cache blocking across kernels): consecutive kernels whose
// ranges all count rows of one first output dimension, and where each reads
// what an earlier one of them wrote only at its own row, run a block of
// rows at a time — every kernel of the chain over rows [r, r + C), then
// over the next C rows — instead of each kernel over all rows in turn. A
// row block's data (a row of layer norm's x read three times) then stays
// in the cache between the kernels that read it. The kernels and their
// order within a row are unchanged, so are the bits: each kernel computes
// each of its rows as it would over the whole range, from rows of its
// operands that are already written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/codegen.h"

namespace stax::backends::cpu {

/// Kernels [first, last] of a program, run `chunk` rows at a time over
/// their first output dimension of `rows`.
struct Chain {
  size_t first = 0, last = 0;
  int64_t rows = 0;
  int64_t chunk = 0;  ///< a multiple of every member's rows per range unit
  /// Members whose output lives in a buffer of one chunk's rows, reused
  /// chunk after chunk (storage folding, fold_storage), by program index.
  std::vector<size_t> folded;
  /// The member that the last one runs jammed with, a chunk behind
  /// (jam.h: plan_jam), by program index.
  std::optional<size_t> jam;
};

/// Whether every read of `producer` in `consumer` (its views composed into
/// one map of the consumer's loop indices) is at the consumer's own row:
/// first index, as an affine form, equal to the consumer's first output
/// index. False for a first index that is not affine and for an index load
/// of the producer.
bool reads_own_rows(const KernelSpec& consumer, const std::string& producer);

/// The chains of a compiled program (kernels in program order, their
/// shapes), each of two kernels or more with a row-local read between them;
/// `chunk` rows of the chain's data fit in about `cache_bytes`. `unchecked`
/// skips reads_own_rows (the tests' deliberately wrong schedule).
std::vector<Chain> plan_chains(const std::vector<KernelSpec>& specs, const std::vector<KernelShape>& shapes,
                               int64_t cache_bytes, bool unchecked = false);

/// Storage folding (as Halide folds a producer's storage computed inside a
/// consumer's loop): the members of each chain whose output no kernel
/// outside the chain reads, that are no program output, and that every
/// member reading them reads at its own rows (reads_own_rows, checked here
/// whatever the plan's `unchecked`) need a chunk's rows of storage only —
/// a chunk's rows are written, then read, before the next chunk's. Their
/// rows then stay in the cache instead of going out to memory, and the
/// bits are the same: each element is computed and read as before.
/// `unchecked` folds every member that is no program output (the tests'
/// deliberately wrong folding).
void fold_storage(std::vector<Chain>& chains, const std::vector<KernelSpec>& specs,
                  const std::vector<std::string>& outputs, bool unchecked = false);

}  // namespace stax::backends::cpu
