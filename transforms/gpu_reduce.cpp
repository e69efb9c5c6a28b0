// §6.6: the order in which one CUDA thread block reduces a
// row, written in the core language so the interpreter's left folds are the
// kernel's order (class real, bounded like the other reassociations). With m
// threads per block and warps of w lanes:
//   1. thread t folds the elements t, t+m, t+2m, ... of the flattened
//      reduction from the identity (a block-stride loop; ceil(n/m) each,
//      identity-padded): the lanes of interleave-lanes with W = m;
//   2. each warp g combines its lanes g·w + l by a shuffle tree: log2(w)
//      halving levels, lane l (< h) taking v[l] ⊕ v[l + h] (__shfl_down_sync
//      with offsets w/2, ..., 1);
//   3. the m/w warp results, written to shared memory, are combined by the
//      same halving tree (warp 0 reads them back, or a shared-memory tree:
//      the same pairs), the root folding in init (reassoc.h).
// Algorithm 6.1's split into k blocks per row is split-reduction:k=K before
// this (Example 6.2 on S = 132: k = 2, m = 256, w = 32, 32 elements per
// thread); the k partials are then a second, shorter reduction.
#include "transforms/passes.h"
#include "transforms/reassoc.h"

namespace stax::xform {

using namespace sem;

Result gpu_reduce(const Program& p, const GpuReduceOptions& opt, Context& ctx) {
  const int64_t m = opt.threads, w = opt.warp;
  return reassoc::for_each_red(p, opt.binding, ctx, "gpu-reduce", [&](const reassoc::Site& s) {
    // Thread l of the block, step k, reads j = m·k + l.
    bool padded = false;
    Expr lanes = reassoc::interleaved_lanes(s, m, &padded);
    int64_t t = (s.n + m - 1) / m;
    int nd = int(s.outer.size());
    // Lanes as D ++ [m/w, w]: warp g, lane l is thread g·w + l.
    Shape warps = s.outer;
    warps.push_back(m / w);
    warps.push_back(w);
    std::vector<IExpr> idx;
    for (int k = 0; k < nd; ++k) idx.push_back(ivar(k));
    idx.push_back(iadd(imul(w, ivar(nd)), ivar(nd + 1)));
    Expr per_warp = reassoc::tree(s, reassoc::mk_view(lanes, warps, std::move(idx)), /*adjacent=*/false, s.id);
    Expr r = reassoc::tree(s, per_warp, /*adjacent=*/false, s.init);
    std::string what = std::to_string(m) + " threads of " + std::to_string(t) + ", warps of " + std::to_string(w) +
                       " (shuffle trees), " + std::to_string(m / w) + " warp results by a halving tree";
    if (padded) what += " (" + std::to_string(m * t - s.n) + " identity-padded)";
    return reassoc::Rewrite{reassoc::finish(s, r), what};
  });
}

}  // namespace stax::xform
