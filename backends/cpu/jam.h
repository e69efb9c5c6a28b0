// Jammed chain members (software pipelining across a chain's chunks). A
// chain runs its members over a chunk of rows, then over the next chunk
// (chains.h). Where its last member is a pointwise kernel (softmax's
// division, written to memory) and an earlier member a pointwise kernel
// that computes (softmax's exp, which reads and writes rows in the cache),
// the last member of chunk c - 1 runs inside the loop of that earlier
// member over chunk c: one loop, each step an element of each. The first
// waits on memory, the second on the multiply-add pipes; jammed, the core
// overlaps the two, where in turn it would wait for each.
//
// The bits are those of the chain: each element of each kernel is computed
// as before, from the same operands. The last member's rows of chunk c - 1
// read only what the chunks up to c - 1 wrote: folded buffers (a chunk's
// rows, reused chunk after chunk) get two slots, chunk c's writes going to
// slot c mod 2 (CompiledProgram's run_chain), and a full buffer is read at
// the member's own rows (chains.h: reads_own_rows), which chunk c does not
// write. Nothing in the chain reads the last member. Neither kernel may fail
// (⊥ at an element of one would cut the other's loop short, and change which
// failure comes first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/chains.h"

namespace llvm {
class Module;
}

namespace stax::backends::cpu {

/// The member that the last one of `c` is jammed with (program index), or
/// nullopt: the last pointwise member before the last one, of the last
/// one's shape and range, that calls a function of the math library (a
/// kernel bound by its arithmetic), over two chunks or more, neither
/// kernel able to fail.
std::optional<size_t> plan_jam(const Chain& c, const std::vector<KernelSpec>& specs,
                               const std::vector<KernelShape>& shapes);

/// The cache key of a jam (the two kernels' keys and the chunk).
std::string jam_key(const std::string& early_key, const std::string& late_key, int64_t chunk_units);

/// Emits the KernelFn `fname` of `early` jammed with `late`: buffers
/// `early`'s then `late`'s, the range [begin, end) early's, late's
/// [begin - chunk_units, end - chunk_units), and two failure records
/// (early's, late's). Returns early's failure reasons (none: neither may
/// fail).
std::vector<std::string> emit_jam(llvm::Module& m, const std::string& fname, const KernelSpec& early,
                                  const KernelSpec& late, int64_t chunk_units);

}  // namespace stax::backends::cpu
