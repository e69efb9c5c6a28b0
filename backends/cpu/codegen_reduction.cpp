// Reductions (codegen.h): one accumulator per output element folding in
// program order; lanes, their blocks, row blocks and packed operands
// (KernelShape) only change which accumulators are stepped together.
#include "backends/cpu/emitter.h"
#include "transforms/reassoc.h"

namespace stax::backends::cpu::detail {

Value* Emitter::fold(const RedE& r, Value* acc, Value* x, DType t, Value* arg_slot, Value* rflat) {
  bool f = is_float(compute_type(t));
  switch (r.op) {
    case RedOp::Sum: return f ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x);
    case RedOp::Prod: return f ? b_.CreateFMul(acc, x) : b_.CreateMul(acc, x);
    case RedOp::Max:
      return f ? fold_maximum(r, acc, x, true) : b_.CreateSelect(b_.CreateICmpSLT(acc, x), x, acc);
    case RedOp::Min:
      return f ? fold_maximum(r, acc, x, false) : b_.CreateSelect(b_.CreateICmpSLT(x, acc), x, acc);
    case RedOp::ArgMax:
    case RedOp::ArgMin: {
      Value* take;
      bool mx = r.op == RedOp::ArgMax;
      // PyTorch #93630 (Inductor): ties broken toward the larger index.
      bool tie_last = mutant_active("argmax-tie-last");
      if (f) {
        Value* better = tie_last ? (mx ? b_.CreateFCmpOGE(x, acc) : b_.CreateFCmpOLE(x, acc))
                                 : (mx ? b_.CreateFCmpOGT(x, acc) : b_.CreateFCmpOLT(x, acc));
        Value* xnan = b_.CreateFCmpUNO(x, x);
        Value* anan = b_.CreateFCmpUNO(acc, acc);
        // NaN is the greatest value: argmax takes the first NaN; argmin
        // leaves a NaN accumulator for any number.
        Value* nan_rule = mx ? b_.CreateAnd(xnan, b_.CreateNot(anan)) : b_.CreateAnd(b_.CreateNot(xnan), anan);
        take = b_.CreateOr(better, nan_rule);
      } else {
        take = tie_last ? (mx ? b_.CreateICmpSGE(x, acc) : b_.CreateICmpSLE(x, acc))
                        : (mx ? b_.CreateICmpSGT(x, acc) : b_.CreateICmpSLT(x, acc));
      }
      Value* old = b_.CreateLoad(b_.getInt64Ty(), arg_slot);
      b_.CreateStore(b_.CreateSelect(take, rflat, old), arg_slot);
      return b_.CreateSelect(take, x, acc);
    }
  }
  return acc;
}

// maximum(acc, x) (fmaximum: a + b where either is NaN or both are zeros,
// else the larger) with one comparison of the accumulator on the fold's
// chain instead of three: the tests of x (NaN, a zero of the sign that
// wins) do not wait for the previous step. For max:
//  * x NaN: acc + x, as fmaximum;
//  * x = +0: acc where acc > +0 or acc is NaN (unordered), else x: -0 and
//    +0 give +0, as acc + x;
//  * otherwise: x where x > acc, else acc: a NaN acc stays (fmaximum gives
//    acc + x, the same quiet NaN: acc is only ever NaN from an addition,
//    or from the initial value, which is why a NaN initial value takes
//    fmaximum), equal zeros give acc (-0 and -0: -0; +0 and -0: +0).
// Min mirrors it with -0 winning. Plain softmax's transposed max fold over
// 4096^2: 8.0 -> 5.0 ms (the whole program 21.2 -> 18.3 ms).
Value* Emitter::fold_maximum(const RedE& r, Value* acc, Value* x, bool is_max) {
  auto* init = llvm::dyn_cast<llvm::ConstantFP>(constant(r.init, r.src->type.dtype));
  if (mutant_active("max-drops-nan") || !init || init->isNaN()) return fmaximum(acc, x, is_max);
  llvm::Type* t = x->getType();
  Value* z = maximum_of_equals(acc, x, is_max);
  llvm::IntegerType* it = b_.getIntNTy(t->getPrimitiveSizeInBits());
  Value* winning_zero = b_.CreateICmpEQ(b_.CreateBitCast(x, it),
                                        b_.CreateBitCast(llvm::ConstantFP::get(t, is_max ? 0.0 : -0.0), it));
  Value* keep_acc = is_max ? b_.CreateFCmpUGT(acc, x) : b_.CreateFCmpULT(acc, x);
  Value* take_x = is_max ? b_.CreateFCmpOGT(x, acc) : b_.CreateFCmpOLT(x, acc);
  Value* m = b_.CreateSelect(winning_zero, b_.CreateSelect(keep_acc, acc, x), b_.CreateSelect(take_x, x, acc));
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), z, m);
}

// Keyed maximum/minimum folds (lanes, see emit_reduction): the order key of
// a float's bits b, b ^ ((b >>a (w-1)) >>l 1), orders every value that is
// not NaN as IEEE maximum does (-0 below +0; equal keys, equal bits) by
// signed integer comparison, and the key is its own inverse. A positive NaN
// keys above +inf, a negative one below -inf.
Value* Emitter::order_key(Value* bits) {
  const unsigned w = bits->getType()->getScalarSizeInBits();
  return b_.CreateXor(bits, b_.CreateLShr(b_.CreateAShr(bits, uint64_t(w - 1)), 1));
}

void Emitter::keyed_step(Value* k, Value* hi, Value* lo) {
  llvm::Type* kt = k->getType();
  Value* hv = b_.CreateLoad(kt, hi), *lv = b_.CreateLoad(kt, lo);
  b_.CreateStore(b_.CreateSelect(b_.CreateICmpSGT(k, hv), k, hv), hi);
  b_.CreateStore(b_.CreateSelect(b_.CreateICmpSLT(k, lv), k, lv), lo);
}

Value* Emitter::keyed_nan(Value* hk, Value* lk, llvm::Type* ct) {
  return b_.CreateOr(b_.CreateICmpSGT(hk, key_of(llvm::ConstantFP::getInfinity(ct))),
                     b_.CreateICmpSLT(lk, key_of(llvm::ConstantFP::getInfinity(ct, true))));
}

bool Emitter::keyed_fold(const RedE& r) {
  auto* init = llvm::dyn_cast<llvm::ConstantFP>(constant(r.init, r.src->type.dtype));
  return (r.op == RedOp::Max || r.op == RedOp::Min) && is_float(r.src->type.dtype) && init && !init->isNaN() &&
         !expr_may_fail(r.src) && !mutant_active("max-drops-nan");
}

std::vector<Value*> Emitter::transpose(std::vector<Value*> v) {
  // An 8 x 8 transpose in three stages of two-input shuffles that stay
  // within 4-element halves but for the last (AVX's unpcklps/unpckhps,
  // shufps and vperm2f128 for f32: 24 shuffles a tile). With rows r0..r7:
  //  1. t(2p), t(2p+1) = the low and high interleaves of r(2p), r(2p+1) in
  //     each half: t0 = [r0_0 r1_0 r0_1 r1_1 | r0_4 r1_4 r0_5 r1_5];
  //  2. s(4h+c) for c = 0..3 takes pairs of t(4h..4h+3): column c of rows
  //     4h..4h+3 in the low half, column c+4 in the high one;
  //  3. column c = the low halves of s(c) and s(c+4), column c+4 their
  //     high halves.
  if (v.size() != 8) throw CompileError("transpose: 8 rows expected");
  auto shuf = [&](Value* a, Value* b, std::initializer_list<int> m) {
    return b_.CreateShuffleVector(a, b, llvm::ArrayRef<int>(m.begin(), m.size()));
  };
  std::vector<Value*> t(8), s(8), c(8);
  for (size_t p = 0; p < 4; ++p) {
    t[2 * p] = shuf(v[2 * p], v[2 * p + 1], {0, 8, 1, 9, 4, 12, 5, 13});
    t[2 * p + 1] = shuf(v[2 * p], v[2 * p + 1], {2, 10, 3, 11, 6, 14, 7, 15});
  }
  for (size_t h = 0; h < 2; ++h) {
    Value* const* q = &t[4 * h];
    s[4 * h + 0] = shuf(q[0], q[2], {0, 1, 8, 9, 4, 5, 12, 13});
    s[4 * h + 1] = shuf(q[0], q[2], {2, 3, 10, 11, 6, 7, 14, 15});
    s[4 * h + 2] = shuf(q[1], q[3], {0, 1, 8, 9, 4, 5, 12, 13});
    s[4 * h + 3] = shuf(q[1], q[3], {2, 3, 10, 11, 6, 7, 14, 15});
  }
  for (size_t k = 0; k < 4; ++k) {
    c[k] = shuf(s[k], s[k + 4], {0, 1, 2, 3, 8, 9, 10, 11});
    c[k + 4] = shuf(s[k], s[k + 4], {4, 5, 6, 7, 12, 13, 14, 15});
  }
  return c;
}

// A transposed fold (KernelShape::transposed) in registers: the kernel's
// range counts blocks of L consecutive rows, one accumulator vector (lane l:
// row l of the block, folding its own row in order). For each tile of L fold
// steps the source (the map whole: it cannot fail) is evaluated along each
// row, L consecutive elements a vector; the L row vectors are transposed and
// the accumulator takes the L columns in order. Whole cache lines of each
// row are consumed at once (T tiles, kTransposeRowBytes): rows of a
// power-of-two length share a few cache sets, so a line would not survive
// until the next tile. The source
// values go through a small scratch, written by a loop over each row's T L
// elements that the loop vectoriser runs L wide: built element by element
// instead, LLVM assembled each row from 4-, 2- and 2-element loads and
// blends, and the tile took ~2.7 instructions an element (softmax's max
// fold: 7.5 -> 5.6 ms at 4096^2; its O3 compile 400 -> 30 ms).
void Emitter::transposed_fold(const RedE& r, bool skew, Value* begin, Value* end) {
  const Shape& out = spec_.types[0].shape;
  const DType t = r.src->type.dtype;
  llvm::Type* ct = ctype(t);
  const int64_t L = kTransposeLanes, n = r.extents[0];
  auto* vt = llvm::FixedVectorType::get(ct, unsigned(L));
  const int64_t T = transpose_tiles(n, ct->getScalarSizeInBits());
  llvm::AllocaInst* acc_slot = entry_alloca(vt, 1);  // SROA keeps it in a register
  // The tiles' source values, row by row, from a loop the vectoriser runs L
  // wide (whatever the source: calls take their vector variants).
  llvm::AllocaInst* tile = entry_alloca(ct, L * T * L);
  tile->setAlignment(llvm::Align(64));
  // Skewed rows: where the block's rows would read the same L1 sets in a
  // step (a row a multiple of 4 KiB long: with two inputs, 32 lines in two
  // sets of 8 ways), row l reads step s - l, and a step outside the row
  // folds the operation's identity: x + -0 and x * 1 are x, NaN payloads
  // and signed zeros included (an initial signalling NaN is quieted by the
  // first step either way, and keeps its payload). Example 1.1's plain row
  // sums of two [16, 4096] inputs from L2: 28 -> 44 GB/s.
  const int64_t steps = n / (L * T);
  auto in_order = [&](Value* base) {
    b_.CreateStore(b_.CreateVectorSplat(unsigned(L), constant(r.init, t)), acc_slot);
    loop(i64(0), i64(steps + (skew ? L - 1 : 0)), [&](Value* s) {
      loop(i64(0), i64(L), [&](Value* l) {
        Value* row = b_.CreateAdd(base, l);
        pos_ = flat({row}, out);
        // The next block of rows into L2, in address order: each (step,
        // row) of this block prefetches its share of that block's lines
        // (the source evaluated for its loads' prefetches; its values are
        // dead). L rows read a step apart are L streams per input, which
        // the hardware prefetcher alone kept at ~20 GB/s; each line of a
        // row's step kPrefetchBytes ahead reached 24-25 GB/s; the next
        // block's lines in order, two streams, 28-31 GB/s. Example 1.1's
        // plain row sums over 4096^2: 6.6-6.8 ms (none), 5.4-5.6 (a line
        // ahead of each row), 4.1-4.6 (skewed, the next block).
        Value* next = b_.CreateAdd(base, i64(L));
        prefetch_if_ = b_.CreateAnd(b_.CreateICmpULT(s, i64(steps)), b_.CreateICmpSLT(next, i64(out[0])));
        prefetch_bytes_ = 0;
        Value* e0 = b_.CreateMul(b_.CreateAdd(b_.CreateMul(s, i64(L)), l), i64(T * L));
        for (int64_t c = 0; c < T * L; c += per_line(ct)) {
          Value* e = b_.CreateAdd(e0, i64(c));
          // A row within the buffer: the loads stay (dead) where nothing
          // removes them, at O0.
          Value* pr = b_.CreateAdd(next, b_.CreateUDiv(e, i64(n)));
          pr = b_.CreateSelect(b_.CreateICmpSLT(pr, i64(out[0])), pr, row);
          elem(r.src, {pr, b_.CreateURem(e, i64(n))});
        }
        prefetch_bytes_ = kPrefetchBytes;
        prefetch_if_ = nullptr;
        Value* at = b_.CreateMul(l, i64(T * L));
        Value* jt = skew ? b_.CreateSub(s, l) : s;
        auto fill = [&] {
          Value* j0 = b_.CreateMul(jt, i64(L * T));
          loop(i64(0), i64(T * L), [&](Value* jj) {
            b_.CreateStore(elem(r.src, {row, b_.CreateAdd(j0, jj)}), b_.CreateInBoundsGEP(ct, tile, b_.CreateAdd(at, jj)));
          }, /*unroll_full=*/false, int(L));
        };
        if (!skew) return fill();
        Value* inside = b_.CreateICmpULT(jt, i64(steps));  // 0 <= s - l < steps
        if_then(inside, "skew.row", false, fill);
        if_then(b_.CreateNot(inside), "skew.pad", false, [&] {
          for (int64_t k = 0; k < T; ++k)
            b_.CreateStore(b_.CreateVectorSplat(unsigned(L), constant(xform::reassoc::identity(r.op, t), t)),
                           b_.CreateInBoundsGEP(ct, tile, b_.CreateAdd(at, i64(k * L))));
        });
      });
      std::vector<std::vector<Value*>> rows_v(static_cast<size_t>(T));  // [tile][row]
      for (int64_t l = 0; l < L; ++l)
        for (int64_t k = 0; k < T; ++k)
          rows_v[size_t(k)].push_back(b_.CreateLoad(vt, b_.CreateConstInBoundsGEP1_64(ct, tile, uint64_t((l * T + k) * L))));
      Value* acc = b_.CreateLoad(vt, acc_slot);
      for (int64_t k = 0; k < T; ++k)
        for (Value* col : transpose(rows_v[size_t(k)])) acc = fold(r, acc, col, t, nullptr, nullptr);
      b_.CreateStore(acc, acc_slot);
    });
    Value* acc = b_.CreateLoad(vt, acc_slot);
    for (int64_t l = 0; l < L; ++l)
      store(b_.CreateExtractElement(acc, uint64_t(l)), flat({b_.CreateAdd(base, i64(l))}, out));
  };
  // Keyed (a maximum or minimum: keyed_fold), each row's largest and
  // smallest order key in any order, a reduction the loop vectoriser runs
  // whole registers wide; a block where a NaN was folded is folded again in
  // order. Plain softmax's max fold over 4096^2: 4.4 -> 2.6 ms.
  const bool keyed = keyed_fold(r);
  llvm::Type* kt = b_.getIntNTy(ct->getScalarSizeInBits());
  llvm::AllocaInst* hi = entry_alloca(kt, 1), *lo = entry_alloca(kt, 1), *any = entry_alloca(b_.getInt8Ty(), 1);
  loop(begin, end, [&](Value* rb) {
    Value* base = b_.CreateMul(rb, i64(L));
    if (!keyed) return in_order(base);
    b_.CreateStore(b_.getInt8(0), any);
    loop(i64(0), i64(L), [&](Value* l) {
      Value* row = b_.CreateAdd(base, l);
      pos_ = flat({row}, out);
      b_.CreateStore(key_of(constant(r.init, t)), hi);
      b_.CreateStore(key_of(constant(r.init, t)), lo);
      loop(i64(0), i64(n), [&](Value* j) { keyed_step(key_of(elem(r.src, {row, j})), hi, lo); });
      Value* hv = b_.CreateLoad(kt, hi), *lv = b_.CreateLoad(kt, lo);
      Value* nan = keyed_nan(hv, lv, ct);
      store(unkey(r.op == RedOp::Max ? hv : lv, ct), pos_);
      b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt8Ty(), any), b_.CreateZExt(nan, b_.getInt8Ty())), any);
    });
    if (spec_.keyed_unchecked) return;
    if_then(b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), any), b_.getInt8(0)), "nan.rows", true,
            [&] { in_order(base); });
  });
}

namespace {

/// A source element's index: the output index `o`, then the fold index `ridx`.
std::vector<Value*> source_index(const std::vector<Value*>& o, const std::vector<Value*>& ridx) {
  std::vector<Value*> all = o;
  all.insert(all.end(), ridx.begin(), ridx.end());
  return all;
}

}  // namespace

Value* Emitter::fold_offset(const std::vector<int64_t>& rstr, const std::vector<Value*>& ridx) {
  Value* f = i64(0);
  for (size_t k = 0; k < ridx.size(); ++k) f = b_.CreateAdd(f, b_.CreateMul(ridx[k], i64(rstr[k])));
  return f;
}

void Emitter::scalar_reduction(const RedE& r, Value* begin, Value* end) {
  const Shape& out = spec_.types[0].shape;
  DType t = r.src->type.dtype;
  llvm::Type* ct = ctype(t);
  Value* init = constant(r.init, t);
  bool arg = red_is_arg(r.op);
  std::vector<int64_t> rstr = row_major_strides(r.extents);
  std::vector<Value*> o;
  llvm::AllocaInst* acc = entry_alloca(ct, 1);
  llvm::AllocaInst* argslot = entry_alloca(b_.getInt64Ty(), 1);
  auto body = [&]() {
    pos_ = flat(o, out);
    b_.CreateStore(init, acc);
    b_.CreateStore(i64(0), argslot);
    std::vector<Value*> ridx;
    nest(r.extents, 0, ridx, [&]() {
      Value* x = elem(r.src, source_index(o, ridx));
      Value* a = b_.CreateLoad(ct, acc);
      b_.CreateStore(fold(r, a, x, t, argslot, arg ? fold_offset(rstr, ridx) : nullptr), acc);
    });
    if (arg) store(b_.CreateLoad(b_.getInt64Ty(), argslot), pos_);
    else store(b_.CreateLoad(ct, acc), pos_);
  };
  if (out.empty()) {
    body();
    return;
  }
  loop(begin, end, [&](Value* i0) {
    o.push_back(i0);
    nest(out, 1, o, body);
    o.pop_back();
  });
}

Emitter::LaneFold Emitter::lane_fold(const RedE& r, const KernelShape& ks) {
  LaneFold f(r, ks, spec_.types[0].shape);
  f.t = r.src->type.dtype;
  f.ct = ctype(f.t);
  f.init = constant(r.init, f.t);
  f.rstr = row_major_strides(r.extents);
  f.lanes = ks.lane_block;
  f.blocks = f.out.back() / f.lanes;
  f.rows = ks.row_block;
  f.outer = Shape(f.out.begin(), f.out.end() - (f.rows > 1 ? 2 : 1));
  f.accs = entry_alloca(f.ct, f.rows * f.lanes);
  f.pm = ks.pack() ? std::get_if<MapE>(&r.src->p) : nullptr;
  if (f.pm)
    for (size_t a = 0; a < f.pm->args.size(); ++a)
      f.scratch.push_back(ks.packed[a] ? entry_alloca(ctype(f.pm->args[a]->type.dtype), num_elements(r.extents) * f.lanes)
                                       : nullptr);
  // KernelShape::salt_broadcasts: an operand that is not packed is read at
  // its last fold index plus z times the lane's vector (l / lanes of a
  // 512-bit register), z an opaque zero (the runtime's constant
  // stax_index_zero, loaded once): the same element, at an address the
  // optimiser cannot merge with another vector's.
  if (f.pm && ks.salt_broadcasts) {
    auto* g = llvm::cast<llvm::GlobalVariable>(
        b_.GetInsertBlock()->getModule()->getOrInsertGlobal("stax_index_zero", b_.getInt64Ty()));
    g->setConstant(true);
    f.zero = b_.CreateLoad(b_.getInt64Ty(), g);
  }
  // A maximum or minimum fold of lanes (one row, nothing packed, a source
  // that cannot fail, a number as init) keeps each lane's largest and
  // smallest order key (order_key): two integer operations an element, no
  // comparison into a mask register and no chain through one (Zen 4 runs
  // those on its multiply-add pipes: the select form took 6.9 cycles a
  // 16-lane register, softmax's max fold over 4096^2 2.3 ms). The extreme
  // key is the result's bits, unless a key lies beyond an infinity's: a NaN
  // was folded, and that lane is folded again by fold (the first NaN,
  // quieted, as in the program's order).
  f.keyed = f.rows == 1 && !f.pm && keyed_fold(r);
  f.kt = b_.getIntNTy(f.ct->getScalarSizeInBits());
  f.hi = f.keyed ? entry_alloca(f.kt, f.lanes) : nullptr;
  f.lo = f.keyed ? entry_alloca(f.kt, f.lanes) : nullptr;
  return f;
}

Value* Emitter::acc_slot(const LaneFold& f, Value* l, int64_t rr) {
  return b_.CreateInBoundsGEP(f.ct, f.accs, b_.CreateAdd(l, i64(rr * f.lanes)));
}

std::vector<Value*> Emitter::lane_index(const LaneFold& f, Value* row0, int64_t rr, Value* col) {
  std::vector<Value*> ol = f.o;
  if (f.rows > 1) ol.push_back(b_.CreateAdd(row0, i64(rr)));
  ol.push_back(col);
  return ol;
}

void Emitter::pack_lane(const LaneFold& f, Value* row0, Value* base, const std::vector<Value*>& ridx, Value* l) {
  Value* at = b_.CreateAdd(b_.CreateMul(fold_offset(f.rstr, ridx), i64(f.lanes)), l);
  std::vector<Value*> idx = source_index(lane_index(f, row0, 0, b_.CreateAdd(base, l)), ridx);
  for (size_t a = 0; a < f.scratch.size(); ++a)
    if (f.scratch[a])
      b_.CreateStore(elem(f.pm->args[a], idx),
                     b_.CreateInBoundsGEP(f.scratch[a]->getAllocatedType(), f.scratch[a], at));
}

// KernelShape::pack_along_fold: 8 lanes x 8 fold steps at a time, each
// lane's 8 steps (consecutive in memory) a vector, transposed in registers
// into each step's 8 lanes. A [256, 1024] x [1024, 256] product read
// through a transpose: its packing took 0.70 ms a step at a time, where
// each lane's line lies 4 KiB from the next lane's, all in one set of the
// L1 cache, and 0.21 ms a line of the fold at a time, lane by lane; the
// product 1.92 ms, 1.44 ms that way, 1.34 ms in registers.
void Emitter::pack_along_fold(const LaneFold& f, Value* row0, Value* base) {
  loop(i64(0), i64(f.r.extents[0] / 8), [&](Value* kb) {
    Value* k0 = b_.CreateMul(kb, i64(8));
    loop(i64(0), i64(f.lanes / 8), [&](Value* lb) {
      Value* l0 = b_.CreateMul(lb, i64(8));
      for (size_t a = 0; a < f.scratch.size(); ++a) {
        if (!f.scratch[a]) continue;
        llvm::Type* st = f.scratch[a]->getAllocatedType();
        std::vector<Value*> lines(8);
        for (int64_t j = 0; j < 8; ++j) {
          Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(st, 8));
          Value* col = b_.CreateAdd(base, b_.CreateAdd(l0, i64(j)));
          for (int64_t i = 0; i < 8; ++i)
            v = b_.CreateInsertElement(
                v, elem(f.pm->args[a], source_index(lane_index(f, row0, 0, col), {b_.CreateAdd(k0, i64(i))})),
                uint64_t(i));
          lines[size_t(j)] = v;
        }
        std::vector<Value*> steps = transpose(lines);
        for (int64_t i = 0; i < 8; ++i) {
          Value* at = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(k0, i64(i)), i64(f.lanes)), l0);
          b_.CreateAlignedStore(steps[size_t(i)], b_.CreateInBoundsGEP(st, f.scratch[a], at),
                                llvm::Align(st->getScalarSizeInBits() / 8));
        }
      }
    });
  });
}

void Emitter::pack_operands(const LaneFold& f, Value* row0, Value* base) {
  if (f.ks.pack_along_fold) return pack_along_fold(f, row0, base);
  std::vector<Value*> ridx;
  nest(f.r.extents, 0, ridx, [&]() { loop(i64(0), i64(f.lanes), [&](Value* l) { pack_lane(f, row0, base, ridx, l); }); });
}

std::vector<Value*> Emitter::salted_index(const LaneFold& f, std::vector<Value*> idx, const Expr& arg, Value* l) {
  if (f.zero && !idx.empty()) {
    const int64_t group = 512 / int64_t(ctype(arg->type.dtype)->getScalarSizeInBits());
    idx.back() = b_.CreateAdd(idx.back(), b_.CreateMul(f.zero, b_.CreateUDiv(l, i64(group))));
  }
  return idx;
}

Value* Emitter::lane_value(const LaneFold& f, const std::vector<Value*>& idx, Value* at, Value* l) {
  if (!f.pm) return elem(f.r.src, idx);
  std::vector<Value*> args;
  for (size_t a = 0; a < f.scratch.size(); ++a) {
    llvm::Type* st = f.scratch[a] ? f.scratch[a]->getAllocatedType() : nullptr;
    args.push_back(st ? b_.CreateLoad(st, b_.CreateInBoundsGEP(st, f.scratch[a], at))
                      : elem(f.pm->args[a], salted_index(f, idx, f.pm->args[a], l)));
  }
  return map_value(*f.pm, f.r.src->type.dtype, args);
}

Value* Emitter::keyed_results(const LaneFold& f, Value* base) {
  llvm::AllocaInst* any = entry_alloca(b_.getInt8Ty(), 1);
  b_.CreateStore(b_.getInt8(0), any);
  loop(i64(0), i64(f.lanes), [&](Value* l) {
    Value* hk = b_.CreateLoad(f.kt, b_.CreateInBoundsGEP(f.kt, f.hi, l)), *lk = b_.CreateLoad(f.kt, b_.CreateInBoundsGEP(f.kt, f.lo, l));
    Value* nan = keyed_nan(hk, lk, f.ct);
    store(unkey(f.r.op == RedOp::Max ? hk : lk, f.ct), flat(lane_index(f, nullptr, 0, b_.CreateAdd(base, l)), f.out));
    b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt8Ty(), any), b_.CreateZExt(nan, b_.getInt8Ty())), any);
  });
  return b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), any), b_.getInt8(0));
}

Value* Emitter::fold_lane_block(const LaneFold& f, Value* row0, Value* base, bool keys) {
  const int64_t lanes = f.lanes, rows = f.rows;
  for (int64_t a = 0; a < rows * lanes; ++a) {
    if (!keys) b_.CreateStore(f.init, b_.CreateConstInBoundsGEP1_64(f.ct, f.accs, uint64_t(a)));
    else {
      b_.CreateStore(key_of(f.init), b_.CreateConstInBoundsGEP1_64(f.kt, f.hi, uint64_t(a)));
      b_.CreateStore(key_of(f.init), b_.CreateConstInBoundsGEP1_64(f.kt, f.lo, uint64_t(a)));
    }
  }
  // A block of rows (a matrix product's) first asks for its output's
  // lines for writing (Emitter::prefetch_write): its stores come after
  // the whole fold, by which time the lines are there. A product whose
  // output was last written kernels ago otherwise waited for each line
  // at its stores: [256, 256] x [256, 256] after 16 MiB of other writes
  // 0.344-0.368 -> 0.332-0.350 ms, the transformer block's forward and
  // backward over T=256, D=256, F=1024 ~2.5% (README).
  if (rows > 1 && !keys)
    for (int64_t rr = 0; rr < rows; ++rr)
      for (int64_t l = 0; l < lanes; l += per_line(f.ct))
        prefetch_write(0, flat(lane_index(f, row0, rr, b_.CreateAdd(base, i64(l))), f.out));
  std::vector<Value*> ridx;
  nest(f.r.extents, 0, ridx, [&]() {
    Value* at0 = f.scratch.empty() ? nullptr : b_.CreateMul(fold_offset(f.rstr, ridx), i64(lanes));
    loop(i64(0), i64(lanes), [&](Value* l) {
      Value* at = at0 ? b_.CreateAdd(at0, l) : nullptr;
      // A lane that starts a cache line prefetches (Emitter::prefetch_ahead);
      // the full unrolling folds the test away. Not with row blocks: a
      // matrix product's step reads a line of B and one element of A a
      // row, and the prefetches' branches kept its rows and lanes from
      // being vectorised together (its kernels 4x slower).
      if (rows == 1 && !f.pm)
        prefetch_if_ = b_.CreateICmpEQ(
            b_.CreateURem(l, i64(per_line(f.ct))), i64(0));
      for (int64_t rr = 0; rr < rows; ++rr) {
        std::vector<Value*> ol = lane_index(f, row0, rr, b_.CreateAdd(base, l));
        pos_ = flat(ol, f.out);
        Value* slot = acc_slot(f, l, rr);
        Value* x = lane_value(f, source_index(ol, ridx), at, l);
        if (keys) keyed_step(key_of(x), b_.CreateInBoundsGEP(f.kt, f.hi, l), b_.CreateInBoundsGEP(f.kt, f.lo, l));
        else b_.CreateStore(fold(f.r, b_.CreateLoad(f.ct, slot), x, f.t, nullptr, nullptr), slot);
      }
      prefetch_if_ = nullptr;
    }, /*unroll_full=*/true);  // then SROA keeps the accumulators in registers
  });
  if (keys) return keyed_results(f, base);
  loop(i64(0), i64(lanes), [&](Value* l) {
    for (int64_t rr = 0; rr < rows; ++rr) {
      store(b_.CreateLoad(f.ct, acc_slot(f, l, rr)), flat(lane_index(f, row0, rr, b_.CreateAdd(base, l)), f.out));
    }
  });
  return nullptr;
}

void Emitter::lane_block(const LaneFold& f, Value* row0, Value* base) {
  if (!f.keyed || spec_.keyed_unchecked) {
    fold_lane_block(f, row0, base, f.keyed);
    return;
  }
  if_then(fold_lane_block(f, row0, base, true), "nan.block", true, [&] { fold_lane_block(f, row0, base, false); });
}

void Emitter::packed_rows(const LaneFold& f, Value* lo, Value* hi, Value* base) {
  pack_operands(f, b_.CreateMul(lo, i64(f.rows)), base);
  loop(lo, hi, [&](Value* rb) { lane_block(f, b_.CreateMul(rb, i64(f.rows)), base); });
}

void Emitter::each_column(const LaneFold& f, const std::function<void(Value*)>& body) {
  loop(i64(0), i64(f.blocks), [&](Value* jb) { body(b_.CreateMul(jb, i64(f.lanes))); });
}

void Emitter::columns(const LaneFold& f, Value* row0) {
  if (f.blocks == 1) return lane_block(f, row0, i64(0));
  each_column(f, [&](Value* base) { lane_block(f, row0, base); });
}

void Emitter::lane_ranges(LaneFold& f, Value* begin, Value* end) {
  const int64_t rows = f.rows;
  if (rows > 1 && f.outer.empty()) {  // rank 2: the range counts blocks of rows
    if (f.pm) return each_column(f, [&](Value* base) { packed_rows(f, begin, end, base); });
    loop(begin, end, [&](Value* i0) { columns(f, b_.CreateMul(i0, i64(rows))); });
    return;
  }
  auto body = [&]() {
    if (rows == 1) return columns(f, nullptr);
    Value* nrb = i64(f.out[f.out.size() - 2] / rows);
    if (f.pm) return each_column(f, [&](Value* base) { packed_rows(f, i64(0), nrb, base); });
    loop(i64(0), nrb, [&](Value* rb) { columns(f, b_.CreateMul(rb, i64(rows))); });
  };
  if (f.outer.empty() && rows == 1) {  // rank 1: the range counts blocks of lanes (column_lanes)
    loop(begin, end, [&](Value* jb) { lane_block(f, nullptr, b_.CreateMul(jb, i64(f.lanes))); });
    return;
  }
  if (f.outer.empty()) {
    body();
    return;
  }
  loop(begin, end, [&](Value* i0) {
    f.o.push_back(i0);
    nest(f.outer, 1, f.o, body);
    f.o.pop_back();
  });
}

void Emitter::emit_reduction(const RedE& r, const KernelShape& ks, Value* begin, Value* end) {
  if (!ks.lanes) return scalar_reduction(r, begin, end);
  if (ks.transposed) return transposed_fold(r, ks.skewed, begin, end);
  LaneFold f = lane_fold(r, ks);
  lane_ranges(f, begin, end);
}

}  // namespace stax::backends::cpu::detail
