// Code generation of one kernel per binding (§6.6–6.8): a loop nest over the
// binding's domain, with each lambda emitted through the Llvm domain of the
// generic evaluator (semantics/lambda_eval.h) — the same instruction walk as
// the Ieee domain, so an op added to the table breaks this build until it is
// handled here too.
//
// Floating point exactly as the interpreter (docs/design.md §3): no fast-math or
// contraction flags; transcendental functions call the correctly rounded
// functions the Ieee domain calls (vecmath.h), vectorised where the loop
// is; f16/bf16 loads upcast and stores round through the shared runtime
// (runtime.h); IEEE maximum/minimum as the
// branch-free compare/select form of ieee_scalar.h. Reductions fold in the
// order the program states: one accumulator per output element, sequential
// over the reduced indices. When the innermost output dimension is small
// (the lanes of `interleave-lanes`), the kernel keeps one accumulator per
// lane and steps the lanes innermost — each accumulator still folds in its
// own order, so the bits are those of the program, and the optimiser turns
// the lanes into vector registers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "semantics/ir.h"

namespace llvm {
class Module;
}

namespace stax::backends::cpu {

/// One binding to compile. Buffer 0 is the output; the others are the
/// tensors the expression reads (names and index loads), in a fixed order.
struct KernelSpec {
  std::string binding;
  sem::Expr expr;
  std::vector<std::string> names;
  std::vector<sem::TensorType> types;
  /// Per buffer (empty: none): its storage holds only the rows of the
  /// range the kernel is called for, from row `begin` times its rows per
  /// range unit (chains.h: fold_storage). The kernel subtracts that row's
  /// offset from every address in it.
  std::vector<bool> folded;
  /// Its output (a program output no kernel reads, allocated aligned to
  /// kStreamAlign) is written with non-temporal stores where the stores are
  /// proved aligned (stream_stores.h).
  bool stream = false;
  /// The tests' deliberately wrong keyed folds (codegen_reduction.cpp): a
  /// block where a NaN was folded keeps its keys' result, never for use.
  bool keyed_unchecked = false;
};

/// Builds the spec of a binding: the buffers it reads, in first-use order.
KernelSpec make_spec(const sem::Program& p, const sem::Binding& b);

/// Why an expression cannot be one strict kernel (a let, a reduction below
/// the top, a view of a value that may fail), or nullopt.
std::optional<std::string> unsupported(const sem::Expr& e);

struct KernelShape {
  bool lanes = false;           ///< vector accumulators over the last output dimension
  int64_t lane_block = 0;       ///< with lanes: accumulators at a time (the last dimension, or a divisor of it)
  /// With lanes and a rank-2+ output: rows of the second-to-last dimension
  /// stepped together (their lane blocks share each load that does not
  /// depend on the row). When that dimension is the first, the kernel's
  /// range counts blocks of rows.
  int64_t row_block = 1;
  /// With row blocks, when the fold's source is a map that cannot fail:
  /// which of its operands read no row (packed: copied a column block at a
  /// time into a contiguous scratch, column blocks outermost); empty when
  /// none is.
  std::vector<bool> packed;
  /// With packed operands, on AVX-512: an operand that is not packed (one
  /// value for the lanes of a row: a matrix product's left side) is read at
  /// an address of its own for each vector of lanes (Emitter::salted), so
  /// that each broadcast has one user and folds into its multiplication.
  bool salt_broadcasts = false;
  /// With packed operands over one fold dimension (a multiple of 8, as the
  /// lanes): one of them reads its lines along the fold, not along the lanes
  /// (a transposed right side): they are packed 8 lanes x 8 fold steps at a
  /// time, transposed in registers (Emitter::transpose), instead of a fold
  /// step at a time, whose lanes each read another line.
  bool pack_along_fold = false;
  /// A rank-1 output folded over one contiguous dimension (row sums): its
  /// lanes are kTransposeLanes consecutive rows, each folding its own row in
  /// order; the source is evaluated along the rows (vectorised, into a
  /// scratch), a kTransposeLanes x kTransposeLanes tile at a time, and
  /// transposed in registers (Emitter::transpose: 24 shuffles). The
  /// kernel's range counts blocks of rows.
  bool transposed = false;
  /// With transposed: the block's rows are a step apart (row l reads step
  /// s - l, the identity outside its row), where their reads of one step
  /// would otherwise fall in the same few L1 sets (transposed_skew).
  bool skewed = false;
  bool pack() const { return !packed.empty(); }
  /// A pointwise kernel of rank 2 or more that reads an operand through a
  /// transpose (the innermost index of the read steps with the row, not
  /// with the column): its last two dimensions are stepped in tile x tile
  /// blocks, so that a block reads `tile` lines of that operand and writes
  /// `tile` lines of the output instead of one line an element (a
  /// [2048, 2048] transpose ran at 1 GB/s). With rank 2 the kernel's range
  /// counts blocks of rows. 0: no tiles.
  int64_t tile = 0;
  int64_t parallel_extent = 1;  ///< the kernel's range is [0, parallel_extent)
  /// Work (output elements times fold steps) below kMaxWholeWork: the
  /// kernel is only ever run as one task over [0, parallel_extent), and its
  /// loops have constant bounds (which LLVM unrolls or leaves scalar where
  /// a range of unknown length would get vector bodies and remainders).
  bool whole = false;
};
inline constexpr int64_t kMaxWholeWork = 4096;
KernelShape kernel_shape(const KernelSpec& s);
/// Output elements times fold steps (saturating at the int64 maximum).
int64_t kernel_work(const KernelSpec& s);
/// Rows of a transposed fold (KernelShape::transposed), and the tile size.
inline constexpr int64_t kTransposeLanes = 8;
/// Bytes of each row a transposed fold consumes a step (whole tiles; fewer
/// where the row is shorter): two cache lines. Example 1.1's plain row sums
/// ([64, 2048] from L2): 0.37 ns an element with one line a step (the
/// earlier choice), 0.31 with two, 0.21 with four; over 4096^2 from
/// memory 7.0, 6.4 and 6.2-6.6 ms. But softmax's max fold, more operations
/// an element, went 7.4 -> 7.5-7.8 ms with two and 8.4 with four.
inline constexpr int64_t kTransposeRowBytes = 128;
/// Bytes between addresses that share an L1 set (a 32 KiB, 8-way cache).
inline constexpr int64_t kL1SetPeriod = 4096;
/// Tiles of kTransposeLanes elements a transposed fold of `n` steps over
/// values of `bits` consumes a step of each row (kTransposeRowBytes, fewer
/// where n is not a multiple).
int64_t transpose_tiles(int64_t n, int64_t bits);
/// Whether a transposed fold of `n` steps over values of `bits` skews its
/// rows (KernelShape::skewed): a sum or a product (an identity to fold
/// outside a row), and more than two of a block's rows reading one step's
/// bytes in the same part of the L1 set period, fewer once skewed.
bool transposed_skew(sem::RedOp op, int64_t n, int64_t bits);
/// How far ahead of each load a lanes fold prefetches (Emitter::prefetch_ahead),
/// once a line of kCacheLineBytes.
inline constexpr int64_t kPrefetchBytes = 1024;
inline constexpr int64_t kCacheLineBytes = 64;
/// The side of a pointwise kernel's tiles (KernelShape::tile).
inline constexpr int64_t kPointwiseTile = 16;

/// The text that determines the emitted code (the compile cache's key).
std::string kernel_key(const KernelSpec& s);

/// Emits the kernel as the KernelFn `fname`; returns its failure reasons.
std::vector<std::string> emit_kernel(llvm::Module& m, const std::string& fname, const KernelSpec& s);

}  // namespace stax::backends::cpu
