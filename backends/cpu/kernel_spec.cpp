// The description of a kernel, apart from its emission (codegen.cpp): the
// buffers a binding reads, whether it is one strict kernel, its loop shape
// (lanes and their blocks, the parallel range) and its cache key.
#include <algorithm>
#include <limits>
#include <set>

#include "backends/cpu/codegen.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/vecmath.h"
#include "mathlib/f32_lanes.h"
#include "semantics/index_eval.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::backends::cpu {

using namespace stax::sem;

namespace {

std::optional<std::string> unsupported_below(const Expr& e, bool top) {
  if (std::holds_alternative<LetE>(e->p)) return "a let-in expression (run normalize first)";
  if (const auto* r = std::get_if<RedE>(&e->p)) {
    if (!top) return "a reduction below the top of a binding (run normalize first)";
    return unsupported_below(r->src, false);
  }
  if (const auto* v = std::get_if<ViewE>(&e->p)) {
    // A view evaluates its operand only where it reads it; the interpreter
    // evaluates all of it (strict ⊥). Only an operand that cannot fail may
    // be read in part.
    if (!std::holds_alternative<NameE>(v->src->p) && expr_may_fail(v->src))
      return "a view of a computed value that may fail (run normalize first)";
    return unsupported_below(v->src, false);
  }
  if (const auto* m = std::get_if<MapE>(&e->p)) {
    for (const Expr& a : m->args)
      if (auto why = unsupported_below(a, false)) return why;
  }
  return std::nullopt;
}

}  // namespace

KernelSpec make_spec(const Program& p, const Binding& b) {
  KernelSpec s;
  s.binding = b.name;
  s.expr = b.expr;
  s.names.push_back(b.name);
  s.types.push_back(b.expr->type);
  std::vector<std::string> reads;
  collect_free_names(b.expr, reads);
  std::set<std::string> seen;
  for (const std::string& n : reads) {
    if (!seen.insert(n).second) continue;  // a buffer is one kernel argument however often it is read
    const TensorType* t = p.type_of(n);
    if (!t) throw CompileError("binding " + b.name + " reads an unknown tensor " + n);
    s.names.push_back(n);
    s.types.push_back(*t);
  }
  return s;
}

std::optional<std::string> unsupported(const Expr& e) { return unsupported_below(e, true); }

// Up to 32 lanes (interleave-lanes:w=16 fills one AVX-512 or two AVX2
// registers of f32; w=32, two AVX-512 registers: two independent
// accumulator chains, which a max fold, whose step is a chain of compares and
// selects, needs to run at the read bandwidth: softmax's row max took 2.2 ms
// instead of 3.8); wider innermost outputs keep one accumulator at a time
// (w=64 measured no faster and compiled slower).
constexpr int64_t kMaxLanes = 32;
// Short folds (the combine steps of a lane or tree reduction) gain nothing
// from lanes and only cost compile time.
constexpr int64_t kMinLaneFold = 8;

namespace {

// Rows of a blocked fold stepped together, when some read does not depend on
// the row but does on the fold (a matrix product's second operand): its
// column block is then loaded once for several rows, and the rows' lanes are
// independent accumulator chains (4 rows of 32 lanes: 8 AVX-512 chains,
// enough to hide the add's latency). Reads that all depend on the row (the
// lanes of `interleave-lanes`) would only become more streams: Example 1.1
// with w=16 measured slower that way. Only for folds long enough and
// outputs large enough to pay for the larger body's compile time.
constexpr int64_t kMaxRowBlock = 4;
constexpr int64_t kMinRowFold = 32;
constexpr int64_t kMinRowBlockOutput = 4096;
// Lanes of a row block when the columns allow, by the host's registers:
// with AVX-512, 4 rows of 64 (16 accumulators) measured 1.1-1.4x faster than
// 4 of 32 on a [256,256] x [256,1024] product. AVX2 has 16 registers of 8
// lanes: 64 lanes spill, and 4 rows of 16 (8 accumulators) ran the
// transformer block's products 1.6x faster than 64, 2.2x faster than 32 and
// 1.3x faster than 8 (docs/cpu-backend.md, "Matrix products").
int64_t row_lanes() {
  static const int64_t lanes = math::f32::host_has_avx512() ? 64 : 16;
  return lanes;
}
// Elements of a packed operand's scratch (fold x lanes): 256 KiB of f32.
constexpr int64_t kMaxPackElements = 65536;
// Transposed folds (transpose_rows) only where the work pays for the
// larger body's compile time.
constexpr int64_t kMinTransposeWork = int64_t(1) << 16;

/// The index domain of the variables an index expression depends on, as a
/// bit mask of the loop dimensions (`vars`: each variable's mask).
struct DependenceDomain {
  using Value = uint64_t;
  const std::vector<uint64_t>& vars;
  Value constant(const IExprNode&, int64_t) { return 0; }
  Value var(const IExprNode&, int64_t k) { return vars.at(size_t(k)); }
  Value add(const IExprNode&, Value a, Value b) { return a | b; }
  Value sub(const IExprNode&, Value a, Value b) { return a | b; }
  Value mul(const IExprNode&, int64_t c, Value a) { return c == 0 ? 0 : a; }
  Value floordiv(const IExprNode&, Value a, int64_t) { return a; }
  Value mod(const IExprNode&, Value a, int64_t) { return a; }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    Value m = 0;
    for (size_t k = 0; k < e.args.size(); ++k) m |= arg(k);
    return m;
  }
};

/// The dependences of the index of each buffer read of `e`, read at
/// indices whose dependences are `vars`; with `innermost`, of the read's
/// innermost index only (its position along the buffer's lines).
void read_masks(const Expr& e, const std::vector<uint64_t>& vars, std::vector<uint64_t>& out,
                bool innermost = false) {
  if (std::holds_alternative<NameE>(e->p)) {
    uint64_t m = 0;
    if (innermost) m = vars.empty() ? 0 : vars.back();
    else
      for (uint64_t v : vars) m |= v;
    out.push_back(m);
  } else if (const auto* v = std::get_if<ViewE>(&e->p)) {
    DependenceDomain dom{vars};
    std::vector<uint64_t> at;
    for (const IExpr& x : v->map.exprs) at.push_back(eval_iexpr(x, dom));
    read_masks(v->src, at, out, innermost);
  } else if (const auto* m = std::get_if<MapE>(&e->p)) {
    for (const Expr& a : m->args) read_masks(a, vars, out, innermost);
  }
}

/// Row blocks, their lanes and the packed operands of a lane-blocked fold
/// (KernelShape).
void block_rows(KernelShape& k, const Shape& out, const RedE& r) {
  size_t n = out.size(), rank = n + r.extents.size();
  int64_t fold_n = num_elements(r.extents);
  if (n < 2 || rank > 64 || fold_n < kMinRowFold || num_elements(out) < kMinRowBlockOutput) return;
  std::vector<uint64_t> vars(rank);
  for (size_t d = 0; d < rank; ++d) vars[d] = uint64_t(1) << d;
  const uint64_t row = uint64_t(1) << (n - 2);
  const uint64_t fold = ((rank == 64 ? 0 : uint64_t(1) << rank) - 1) & ~((uint64_t(1) << n) - 1);
  // Reads that step with the fold and not with the row: loaded once for
  // the rows of a block.
  auto shared = [&](const std::vector<uint64_t>& ms) {
    return std::any_of(ms.begin(), ms.end(), [&](uint64_t m) { return (m & row) == 0 && (m & fold) != 0; });
  };
  std::vector<uint64_t> all;
  read_masks(r.src, vars, all);
  if (!shared(all)) return;
  for (int64_t b = kMaxRowBlock; b > 1 && k.row_block == 1; b /= 2)
    if (out[n - 2] % b == 0) k.row_block = b;
  if (k.row_block == 1) return;
  if (out.back() % row_lanes() == 0) k.lane_block = row_lanes();
  // Packing: each operand of the map that reads no row is copied, a column
  // block at a time, into a contiguous scratch (fold x lanes), and the
  // column blocks become the outer loop. A transposed or power-of-two
  // strided operand otherwise maps its column block onto few cache sets.
  const auto* m = std::get_if<MapE>(&r.src->p);
  if (!m || expr_may_fail(r.src) || fold_n > kMaxPackElements / k.lane_block) return;
  const uint64_t column = uint64_t(1) << (n - 1);
  for (const Expr& a : m->args) {
    std::vector<uint64_t> ms, inner;
    read_masks(a, vars, ms);
    k.packed.push_back(shared(ms) && std::none_of(ms.begin(), ms.end(), [&](uint64_t x) { return (x & row) != 0; }));
    read_masks(a, vars, inner, /*innermost=*/true);
    if (k.packed.back() && r.extents.size() == 1 && r.extents[0] % 8 == 0 && k.lane_block % 8 == 0 &&
        std::any_of(inner.begin(), inner.end(), [&](uint64_t x) { return (x & fold) != 0 && (x & column) == 0; }))
      k.pack_along_fold = true;
  }
  if (std::none_of(k.packed.begin(), k.packed.end(), [](bool p) { return p; })) k.packed.clear();
  // The register transpose packs every packed operand; not booleans, whose
  // i1 lanes are not bytes.
  for (size_t a = 0; a < k.packed.size(); ++a)
    if (k.packed[a] && m->args[a]->type.dtype == DType::Bool) k.pack_along_fold = false;
  if (!k.pack()) k.pack_along_fold = false;
  // Zen 4 runs a broadcast into a zmm register on its floating-point pipes,
  // an embedded broadcast ({1to16}) not: a [4, 256] x [256, 64] step of
  // 16 multiplications and 16 additions took 21.2 cycles with four
  // broadcasts shared by the vectors, 16.2 with one folded into each
  // multiplication (2026-12-05).
  k.salt_broadcasts = k.pack() && math::f32::host_has_avx512();
}

/// The most rows of a transposed fold's block whose reads of one step
/// (`step` bytes of each row) start in the same `step`-sized part of the
/// L1 set period, when row l starts l * lag bytes behind row 0's column.
int64_t rows_per_slot(int64_t row_bytes, int64_t step, int64_t lag) {
  std::vector<int64_t> count(size_t(std::max<int64_t>(1, kL1SetPeriod / step)), 0);
  int64_t most = 0;
  for (int64_t l = 0; l < kTransposeLanes; ++l) {
    int64_t off = ((l * (row_bytes - lag)) % kL1SetPeriod + kL1SetPeriod) % kL1SetPeriod;
    most = std::max(most, ++count[size_t(off / step) % count.size()]);
  }
  return most;
}

}  // namespace

int64_t transpose_tiles(int64_t n, int64_t bits) {
  int64_t T = std::max<int64_t>(1, 8 * kTransposeRowBytes / (kTransposeLanes * bits));
  while (T > 1 && n % (T * kTransposeLanes) != 0) T /= 2;
  return T;
}

bool transposed_skew(RedOp op, int64_t n, int64_t bits) {
  const int64_t step = transpose_tiles(n, bits) * kTransposeLanes * bits / 8;
  if ((op != RedOp::Sum && op != RedOp::Prod) || n / (step * 8 / bits) < 2) return false;
  const int64_t row_bytes = n * bits / 8, plain = rows_per_slot(row_bytes, step, 0);
  return plain > 2 && rows_per_slot(row_bytes, step, step) < plain;
}

namespace {

/// A fold of a rank-1 output over one dimension whose source reads its rows
/// contiguously (KernelShape::transposed): one accumulator a row is a chain
/// of dependent steps; kTransposeLanes rows stepped together are as many
/// independent chains in one vector, fed by a transpose of their values
/// (Emitter::transposed_fold). Not for a source that may fail, whose
/// failure must be the first in program order.
bool transpose_rows(KernelShape& k, const Shape& out, const RedE& r) {
  constexpr int64_t L = kTransposeLanes;
  if (out.size() != 1 || r.extents.size() != 1 || red_is_arg(r.op) || expr_may_fail(r.src)) return false;
  if (r.src->type.dtype == DType::Bool) return false;  // i1 lanes
  if (out[0] % L != 0 || r.extents[0] % L != 0 || r.extents[0] < kMinRowFold ||
      num_elements(out) * r.extents[0] < kMinTransposeWork)
    return false;
  // Worth it where some read steps along the row and the fold: a
  // row-broadcast or fold-broadcast read alone does not need the transpose.
  const std::vector<uint64_t> vars = {1, 2};  // the row, the fold
  std::vector<uint64_t> ms;
  read_masks(r.src, vars, ms);
  if (std::none_of(ms.begin(), ms.end(), [](uint64_t m) { return m == 3; })) return false;
  k.lanes = k.transposed = true;
  k.skewed = transposed_skew(r.op, r.extents[0], 8 * dtype_bytes(compute_type(r.src->type.dtype)));
  k.lane_block = L;
  k.parallel_extent = out[0] / L;
  return true;
}

/// The lanes of a block of `n` outputs (more than kMaxLanes: n is not one
/// block): 32, 16 or 8, the largest that divides n; 0 when none does.
int64_t lane_block_of(int64_t n) {
  for (int64_t b : {kMaxLanes, kMaxLanes / 2, kMaxLanes / 4})
    if (n > b && n % b == 0) return b;
  return 0;
}

/// A fold of a rank-1 output over one dimension whose reads run along the
/// output, not the fold (a sum over a matrix's rows, out[j] = sum_i x[i,
/// j]: a bias's gradient): blocks of lanes of consecutive outputs, each
/// step reading a contiguous piece of a line of each input; the kernel's
/// range counts the blocks. The transposed fold (transpose_rows) would step
/// 8 outputs, each along its own column, a line a step (a layer norm's
/// weight gradient over [256, 256]: 0.13 ms, 6 GB/s).
bool column_lanes(KernelShape& k, const Shape& out, const RedE& r) {
  if (out.size() != 1 || r.extents.size() != 1 || red_is_arg(r.op) || r.extents[0] < kMinLaneFold) return false;
  const int64_t block = lane_block_of(out[0]);
  if (block == 0) return false;
  // No read steps along the fold in memory while it depends on the output
  // (a transposed read); some read steps along the output.
  const std::vector<uint64_t> vars = {1, 2};  // the output, the fold
  std::vector<uint64_t> inner, all;
  read_masks(r.src, vars, inner, /*innermost=*/true);
  read_masks(r.src, vars, all);
  bool along = false;
  for (size_t i = 0; i < inner.size(); ++i) {
    if ((inner[i] & 2) != 0 && (all[i] & 1) != 0) return false;
    along = along || (inner[i] & 1) != 0;
  }
  if (!along) return false;
  k.lanes = true;
  k.lane_block = block;
  k.parallel_extent = out[0] / block;
  return true;
}

/// Output elements from which a pointwise kernel with a transposed read is
/// tiled (KernelShape::tile): smaller ones fit in the cache anyway.
constexpr int64_t kMinTileElements = int64_t(1) << 14;

/// KernelShape::tile for a pointwise kernel computing `e` over `out`.
bool tile_pointwise(KernelShape& k, const Shape& out, const Expr& e) {
  constexpr int64_t T = kPointwiseTile;
  const size_t n = out.size();
  if (n < 2 || out[n - 1] % T != 0 || out[n - 2] % T != 0 || num_elements(out) < kMinTileElements) return false;
  std::vector<uint64_t> vars(n, 0);
  vars[n - 2] = 1;  // the row
  vars[n - 1] = 2;  // the column
  // A transposed read: its innermost index steps with the row only, and
  // the read steps with the column (a row's broadcast value, which reads
  // one element a row, is not one).
  std::vector<uint64_t> inner, all;
  read_masks(e, vars, inner, /*innermost=*/true);
  read_masks(e, vars, all);
  bool transposed = false;
  for (size_t i = 0; i < inner.size(); ++i) transposed = transposed || (inner[i] == 1 && (all[i] & 2) != 0);
  if (!transposed) return false;
  k.tile = T;
  k.parallel_extent = n == 2 ? out[0] / T : out[0];
  return true;
}

/// kernel_shape but for `whole`.
KernelShape range_shape(const KernelSpec& s) {
  KernelShape k;
  const Shape& out = s.types[0].shape;
  if (const auto* r = std::get_if<RedE>(&s.expr->p)) {
    if (column_lanes(k, out, *r) || transpose_rows(k, out, *r)) return k;
    // A longer last dimension of a rank-2 or higher output (a matrix
    // product's columns) is stepped in blocks of 32, 16 or 8 lanes, one block
    // of accumulators at a time; each accumulator still folds its own
    // elements in program order. (A rank-1 output of more than kMaxLanes
    // elements has lanes only where column_lanes says so.)
    int64_t last = out.empty() ? 0 : out.back(), block = 0;
    if (last >= 2 && last <= kMaxLanes) block = last;
    else if (out.size() >= 2) block = lane_block_of(last);
    k.lanes = !red_is_arg(r->op) && block > 0 && num_elements(r->extents) >= kMinLaneFold;
    if (k.lanes) {
      k.lane_block = block;
      block_rows(k, out, *r);
      k.parallel_extent = out.size() >= 2 ? out[0] : 1;
      if (out.size() == 2) k.parallel_extent /= k.row_block;
      return k;
    }
  }
  if (!std::holds_alternative<RedE>(s.expr->p) && tile_pointwise(k, out, s.expr)) return k;
  k.parallel_extent = out.empty() ? 1 : out[0];
  return k;
}

}  // namespace

int64_t kernel_work(const KernelSpec& s) {
  const auto* r = std::get_if<RedE>(&s.expr->p);
  int64_t work = 0;
  if (__builtin_mul_overflow(num_elements(s.types[0].shape), r ? num_elements(r->extents) : 1, &work))
    return std::numeric_limits<int64_t>::max();
  return work;
}

KernelShape kernel_shape(const KernelSpec& s) {
  KernelShape k = range_shape(s);
  k.whole = kernel_work(s) < kMaxWholeWork;
  return k;
}

std::string kernel_key(const KernelSpec& s) {
  std::string key = s.binding + " = " + print_expr(s.expr) + "\n";
  for (size_t i = 0; i < s.names.size(); ++i)
    key += s.names[i] + " : " + type_str(s.types[i]) + (i < s.folded.size() && s.folded[i] ? " folded" : "") + "\n";
  if (s.stream) key += "stream\n";
  if (s.keyed_unchecked) key += "keyed unchecked\n";
  // The math binding changes the calls emitted (vecmath.h).
  if (math_binding() != MathBinding::Vector) key += "math " + std::string(math_binding_name(math_binding())) + "\n";
  return key;
}

}  // namespace stax::backends::cpu
