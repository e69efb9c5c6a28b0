// Shared construction kit of the reduction reassociation transforms (§6.5,
// Theorem 6.3, Listing 6.4; docs/design.md §4). Every reordering is built from core-
// language nodes only — `red` over a `view`, identity padding with `select`
// over an `iota` mask, trees of `red` over [2] — so the left-fold semantics of
// the transformed program *is* the reordered computation.
//
// Conventions shared by every reassociation:
// - A multi-dim reduction R = [r0, ..., rq-1] is treated as its row-major
//   flattening [n], n = r0·...·rq-1 (element j of the flat reduction is
//   x[d, unflatten_R(j)]); views unflatten j directly, nothing is reshaped
//   in memory.
// - Padding positions j >= n hold the op's exact identity: -0.0 for a float
//   sum (x + -0.0 = x for every x, including -0.0; +0.0 is not an identity:
//   -0.0 + +0.0 = +0.0), 0 for an integer sum, 1 for prod, -inf/+inf (or the
//   integer extremes) for max/min.
// - Every inner `red` starts from that identity, so its first step is exact
//   and adds no rounding; the original `init` goes into exactly one `red`,
//   the outermost one, so the real semantics is unchanged (Theorem 6.3).
// - f16/bf16 reductions accumulate in f32 (docs/design.md §3): partials stay f32 and
//   the result is rounded once with a final cast, as the source's store does.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "semantics/ir.h"
#include "transforms/transform.h"

namespace stax::xform::reassoc {

/// The exact identity of a sum/prod/max/min reduction in dtype `t`.
sem::Const identity(sem::RedOp op, sem::DType t);

/// exact for max/min and for integer reductions (wrap-around arithmetic is
/// associative and commutative); real for float sum/prod.
SemClass class_of(sem::RedOp op, sem::DType t);

/// Whether `red(op, init, [2], [a, b])`, i.e. (init ⊕ a) ⊕ b, equals
/// init ⊕ (a ⊕ b) bit for bit for all a, b: true when init is the identity,
/// for max/min and integers (associative in floats/rings), and for a float
/// sum from +0.0 ((+0 + a) + b and +0 + (a + b) differ only in the sign of a
/// zero, and both are +0 whenever the other is a zero). Then a tree's root
/// may take `init` directly instead of a separate `red` over [1].
bool init_foldable(sem::RedOp op, const sem::Const& init);

/// A reduction the transforms rewrite, with its pieces.
struct Site {
  const sem::RedE* red = nullptr;
  sem::Expr node;         ///< the red itself
  sem::Shape outer;       ///< D: the kept dims
  int64_t n = 0;          ///< the flattened reduction length
  sem::DType dtype;       ///< the red's dtype
  sem::DType acc;         ///< accumulation dtype (f32 for halves)
  sem::Const id;          ///< identity in `acc`
  sem::Const init;        ///< the red's init, converted to `acc` (exact)
};
Site site_of(const sem::Expr& red_node);

// ---- Node builders (types computed here) ----

sem::Expr mk_red(sem::RedOp op, const sem::Const& init, const sem::Shape& extents, const sem::Expr& src);
/// A view with a simplified index map; `shape` is the result shape.
sem::Expr mk_view(const sem::Expr& src, const sem::Shape& shape, std::vector<sem::IExpr> exprs);
/// Index variables i0..i{rank-1}.
std::vector<std::string> var_names(size_t rank);

/// The components over R of flat reduction index `j` (row-major unflattening).
std::vector<sem::IExpr> unflatten_index(const sem::IExpr& j, const sem::Shape& r);

/// The operand of a first-level reduction: a tensor over D ++ `news` whose
/// element (d, a...) is x[d, unflatten_R(j(a...))], converted to the
/// accumulation dtype, or the identity when j(a...) >= n. `j` is an index
/// expression over the variables |D|.. (the new dims). When every j < n the
/// mask is left out; otherwise the operand is
///   map(fn(j, x) => select(lt(j, n), x, ID), view(iota(i64, [N], 0), ...), view(x, ..., j % n ...))
/// (the x view reads j % n, always in range, so no new ⊥ appears).
sem::Expr segmented(const Site& s, const sem::Expr& x, const sem::Shape& news, const sem::IExpr& j, bool padded);

/// A batch of equal segments: `count` of them, `stride` apart in the flat
/// reduction (numpy-pairwise, torch-sum).
struct BatchDim {
  int64_t count, stride;
};

/// x (the reduction's source, over D ++ R) at flat reduction index
/// off + Σ stride_k·b_k + j, as a view over D ++ [count_k...] ++ news (j is
/// an index expression over the variables after the batch ones).
sem::Expr batch_view(const Site& s, const sem::Expr& x, int64_t off, const std::vector<BatchDim>& batch,
                     const sem::Shape& news, const sem::IExpr& j);

/// W interleaved accumulators: lane l folds the flat elements l, l+W, l+2W,
/// ... from the identity, ceil(n/W) each (identity-padded: `*padded` says
/// whether any is). A tensor over D ++ [W] in the accumulation dtype
/// (interleave-lanes, gpu-reduce's threads).
sem::Expr interleaved_lanes(const Site& s, int64_t w, bool* padded);

/// Tree levels over the last dim of `t` (shape O ++ [P], P a power of two):
/// each level is red(op, ID, [2], view) pairing (2l, 2l+1) when `adjacent`,
/// else (l, l + P/2) (a SIMD shuffle: upper half onto lower half). The root
/// takes `root_init` when init_foldable, else a red(op, root_init, [1]) is
/// added on top. Returns a tensor over O in the accumulation dtype.
sem::Expr tree(const Site& s, sem::Expr t, bool adjacent, const sem::Const& root_init);

/// The final step: rounds an f32 accumulation back to the half dtype.
sem::Expr finish(const Site& s, const sem::Expr& acc_result);

/// Drives a per-red rewrite over every binding (or `binding=B` only):
/// refuses argmax/argmin with a log line, asks `rewrite` for each other red
/// (after ctx.allow()), logs each applied rewrite and returns the weakest
/// class among them. `rewrite` returns the replacement and a description,
/// or nullopt and a reason that is logged.
struct Rewrite {
  std::optional<sem::Expr> expr;
  std::string what;  ///< the note on success, the reason on refusal
};
Result for_each_red(const sem::Program& p, const std::optional<std::string>& binding, Context& ctx,
                    const std::string& pass, const std::function<Rewrite(const Site&)>& rewrite);

/// Builder of lambdas in the parser's instruction order (parameters emitted
/// at first use, operands before users), so a printed lambda parses back to
/// the same instructions.
class LambdaBuilder {
 public:
  LambdaBuilder(std::vector<std::string> names, std::vector<sem::DType> types);
  int32_t param(int i);
  int32_t constant(const sem::Const& c);
  int32_t op(sem::ScalarOp op, int32_t a, int32_t b = -1, int32_t c = -1);
  int32_t cast(int32_t a, sem::DType to);
  sem::Lambda done() { return lam_; }

 private:
  sem::Lambda lam_;
};

}  // namespace stax::xform::reassoc
