// The CPU backend's kernel emitter (codegen.h): the class shared by the
// emission of pointwise kernels and index arithmetic (codegen.cpp) and of
// reductions (codegen_reduction.cpp). Internal to the backend.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <set>
#include <span>

#include "backends/cpu/codegen.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/vecmath.h"
#include "backends/cpu/vecmath_ir.h"
#include "backends/reasons.h"
#include "semantics/mutants.h"

namespace stax::backends::cpu::detail {

using namespace stax::sem;
using llvm::Value;

// ------------------------------------------------------------------ emitter

class Emitter {
 public:
  Emitter(llvm::Module& m, const KernelSpec& s) : ctx_(m.getContext()), m_(m), b_(ctx_), spec_(s) {
    addr32_ = mutant_active("addr32-overflow");
  }

  std::vector<std::string> run(const std::string& fname);
  /// The kernel's internal function over `nbufs` buffers, its entry block
  /// made and the builder in it: impl(ptr noalias b0, ..., i64 begin,
  /// i64 end, ptr noalias fail).
  llvm::Function* begin_impl(const std::string& fname, size_t nbufs);
  /// This spec's state in `impl`: its buffers from argument `first_buf` on,
  /// its failure record, its folded buffers' origins from `begin`.
  void enter(llvm::Function* impl, unsigned first_buf, Value* begin, Value* fail, const KernelShape& ks);
  /// The exported KernelFn `fname`: loads the buffers of `specs` in turn
  /// from its pointer array (streamed outputs marked) and calls `impl`.
  void export_kernel(const std::string& fname, llvm::Function* impl, const std::vector<const KernelSpec*>& specs);

  // ---- types and constants
  llvm::Type* ctype(DType t) {
    switch (compute_type(t)) {
      case DType::F32: return b_.getFloatTy();
      case DType::F64: return b_.getDoubleTy();
      case DType::I32: return b_.getInt32Ty();
      case DType::I64: return b_.getInt64Ty();
      case DType::Bool: return b_.getInt1Ty();
      default: break;
    }
    throw CompileError("no compute type for " + std::string(dtype_name(t)));
  }
  llvm::Type* stype(DType t) {
    switch (t) {
      case DType::F16:
      case DType::BF16: return b_.getInt16Ty();
      case DType::Bool: return b_.getInt8Ty();
      default: return ctype(t);
    }
  }
  Value* i64(int64_t v) { return b_.getInt64(uint64_t(v)); }
  Value* constant(const Const& c, DType tag) {
    switch (compute_type(tag)) {
      case DType::F32: return llvm::ConstantFP::get(b_.getFloatTy(), double(float(c.as_double())));
      case DType::F64: return llvm::ConstantFP::get(b_.getDoubleTy(), c.as_double());
      case DType::I32: return b_.getInt32(uint32_t(int32_t(c.as_int())));
      case DType::I64: return b_.getInt64(uint64_t(c.as_int()));
      case DType::Bool: return b_.getInt1(c.bits != 0);
      default: break;
    }
    throw CompileError("bad constant");
  }
  Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

  // ---- calls into the runtime
  Value* call(const std::string& name, llvm::Type* ret, std::vector<Value*> args) {
    std::vector<llvm::Type*> ts;
    for (Value* a : args) ts.push_back(a->getType());
    auto* fty = llvm::FunctionType::get(ret, ts, false);
    llvm::FunctionCallee f = m_.getOrInsertFunction(name, fty);
    if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
      fn->setDoesNotThrow();
      fn->setDoesNotAccessMemory();
      fn->setWillReturn();
    }
    return b_.CreateCall(f, args);
  }
  // Transcendental functions: the correctly rounded ones (vecmath_ir.h).
  Value* math(const char* base, Value* a, Value* b = nullptr) {
    return emit_math_call(b_, m_, base, b ? std::vector<Value*>{a, b} : std::vector<Value*>{a});
  }
  Value* intrinsic(llvm::Intrinsic::ID id, std::vector<Value*> args) {
    return b_.CreateIntrinsic(id, {args[0]->getType()}, args);
  }

  // ---- failures (⊥): a branch to a block that records the first failure
  void check(Value* bad, const std::string& reason, Value* value) {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(bad); c && c->isZero()) return;
    auto* f = b_.GetInsertBlock()->getParent();
    auto* failbb = llvm::BasicBlock::Create(ctx_, "fail", f);
    auto* okbb = llvm::BasicBlock::Create(ctx_, "ok", f);
    b_.CreateCondBr(bad, failbb, okbb, llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20));
    b_.SetInsertPoint(failbb);
    int64_t id = int64_t(reasons_.size());
    reasons_.push_back(reason);
    auto* i64t = b_.getInt64Ty();
    b_.CreateStore(i64(id), b_.CreateConstInBoundsGEP1_64(i64t, fail_, 0));
    b_.CreateStore(pos_, b_.CreateConstInBoundsGEP1_64(i64t, fail_, 1));
    b_.CreateStore(value ? b_.CreateSExtOrTrunc(value, i64t) : i64(0), b_.CreateConstInBoundsGEP1_64(i64t, fail_, 2));
    b_.CreateRet(b_.getInt32(1));
    b_.SetInsertPoint(okbb);
  }

  // ---- conversions with the Ieee domain's rounding (convert_from)
  /// The bf16-truncate mutant (tt-metal #19882): f32 -> bf16 keeps the top
  /// 16 bits, rounding toward zero instead of to nearest even.
  static bool bf16_truncates() { return mutant_active("bf16-truncate"); }
  Value* bf16_truncate(Value* f) {
    Value* bits = b_.CreateAnd(b_.CreateBitCast(f, b_.getInt32Ty()), b_.getInt32(0xFFFF0000u));
    return b_.CreateBitCast(bits, b_.getFloatTy());
  }
  Value* convert(Value* v, DType from, DType to) {
    DType cf = compute_type(from);
    llvm::Type* f32 = b_.getFloatTy();
    if (to == DType::BF16 && bf16_truncates() && is_float(cf))
      return bf16_truncate(cf == DType::F64 ? b_.CreateFPTrunc(v, f32) : v);
    if (is_half(to)) {
      bool f16 = to == DType::F16;
      if (cf == DType::F64) return call(f16 ? "stax_rt_f64_to_f16" : "stax_rt_f64_to_bf16", f32, {v});
      if (cf == DType::F32) return call(f16 ? "stax_rt_round_f16" : "stax_rt_round_bf16", f32, {v});
      if (cf == DType::Bool) return b_.CreateSelect(v, fconst(f32, 1.0), fconst(f32, 0.0));
      return call(f16 ? "stax_rt_i64_to_f16" : "stax_rt_i64_to_bf16", f32, {b_.CreateSExt(v, b_.getInt64Ty())});
    }
    llvm::Type* t = ctype(to);
    switch (to) {
      case DType::F32:
      case DType::F64:
        if (is_float(cf)) return b_.CreateFPCast(v, t);
        if (cf == DType::Bool) return b_.CreateSelect(v, fconst(t, 1.0), fconst(t, 0.0));
        return b_.CreateSIToFP(v, t);
      case DType::I32:
      case DType::I64: {
        if (is_float(cf)) {
          std::string n = std::string("stax_rt_") + (cf == DType::F32 ? "f32" : "f64") + "_to_" +
                          (to == DType::I32 ? "i32" : "i64");
          return call(n, t, {v});
        }
        if (cf == DType::Bool) return b_.CreateZExt(v, t);
        return b_.CreateSExtOrTrunc(v, t);
      }
      case DType::Bool:
        if (is_float(cf)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
        if (cf == DType::Bool) return v;
        return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
      default: break;
    }
    throw CompileError("bad conversion");
  }
  Value* round_to_tag(Value* v, DType tag) {
    if (!is_half(tag)) return v;
    if (tag == DType::BF16 && bf16_truncates()) return bf16_truncate(v);
    return call(tag == DType::F16 ? "stax_rt_round_f16" : "stax_rt_round_bf16", b_.getFloatTy(), {v});
  }

  // ---- IEEE maximum/minimum (ieee::maximum_branchless)
  /// fmaximum's value where a or b is NaN or both are zeros: a + b (max),
  /// -((-a) + (-b)) (min): the first NaN quieted, +0 (max) or -0 (min)
  /// unless both zeros have the other sign.
  Value* maximum_of_equals(Value* a, Value* b, bool is_max) {
    return is_max ? b_.CreateFAdd(a, b) : b_.CreateFNeg(b_.CreateFAdd(b_.CreateFNeg(a), b_.CreateFNeg(b)));
  }
  Value* fmaximum(Value* a, Value* b, bool is_max) {
    if (mutant_active("max-drops-nan"))  // Triton tl.max: compare and select
      return b_.CreateSelect(is_max ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b), a, b);
    Value* m = b_.CreateSelect(is_max ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b), a, b);
    Value* z = maximum_of_equals(a, b, is_max);
    Value* zero = llvm::ConstantFP::get(a->getType(), 0.0);
    Value* use_z = b_.CreateOr(b_.CreateOr(b_.CreateFCmpUNO(a, a), b_.CreateFCmpUNO(b, b)),
                               b_.CreateAnd(b_.CreateFCmpOEQ(a, b), b_.CreateFCmpOEQ(a, zero)));
    return b_.CreateSelect(use_z, z, m);
  }

  // ---- scalar ops (the Llvm domain's apply)
  Value* apply(ScalarOp op, DType operand_tag, std::span<Value* const> a);
  Value* float_op(ScalarOp op, std::span<Value* const> a);
  Value* int_op(ScalarOp op, std::span<Value* const> a);

  // ---- index arithmetic (64 bits; 32 under the addr32-overflow mutant)
  llvm::Type* itype() { return addr32_ ? b_.getInt32Ty() : b_.getInt64Ty(); }
  Value* iconst_(int64_t v) { return llvm::ConstantInt::get(itype(), uint64_t(v), true); }
  Value* to_i(Value* v) { return b_.CreateSExtOrTrunc(v, itype()); }
  Value* to_64(Value* v) { return b_.CreateSExtOrTrunc(v, b_.getInt64Ty()); }
  Value* floordiv_const(Value* a, int64_t c, bool mod);
  struct IndexDomain;
  Value* iexpr(const IExpr& e, const std::vector<Value*>& idx);
  Value* flat(const std::vector<Value*>& idx, const Shape& s, bool read = false) {
    std::vector<int64_t> st = row_major_strides(s);
    if (read && mutant_active("broadcast-stride")) {
      // PyTorch #71665 / nvFuser (csarofeen/pytorch #1514): an extent-1 dim
      // gets the broadcast stride 0, and the outer strides are computed from
      // that 0 instead of from the extents.
      int64_t acc = 1;
      for (size_t k = s.size(); k-- > 0;) {
        st[k] = s[k] == 1 ? 0 : acc;
        acc = st[k] * s[k];
      }
    }
    Value* off = iconst_(0);
    for (size_t k = 0; k < idx.size(); ++k)
      off = b_.CreateAdd(off, b_.CreateMul(to_i(idx[k]), iconst_(st[k])));
    return to_64(off);
  }

  // ---- memory
  /// A folded buffer's offsets count from its first row in the range.
  bool folded(size_t buf) const { return buf < origin_.size() && origin_[buf]; }
  Value* rebase(size_t buf, Value* off) {
    if (!folded(buf)) return off;
    return b_.CreateSub(b_.CreateSExtOrTrunc(off, b_.getInt64Ty()), origin_[buf]);
  }
  Value* load(size_t buf, Value* off) {
    DType t = spec_.types[buf].dtype;
    Value* p = b_.CreateInBoundsGEP(stype(t), bufs_[buf], rebase(buf, off));
    if (prefetch_if_ && !folded(buf)) prefetch_ahead(p);
    Value* raw = b_.CreateLoad(stype(t), p);
    switch (t) {
      case DType::F16: return call("stax_rt_f16_to_f32", b_.getFloatTy(), {raw});
      case DType::BF16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(raw, b_.getInt32Ty()), 16), b_.getFloatTy());
      case DType::Bool: return b_.CreateICmpNE(raw, b_.getInt8(0));
      default: return raw;
    }
  }
  void store(Value* v, Value* off) {
    DType t = spec_.types[0].dtype;
    Value* p = b_.CreateInBoundsGEP(stype(t), bufs_[0], rebase(0, off));
    switch (t) {
      case DType::F16: v = call("stax_rt_f32_to_f16", b_.getInt16Ty(), {v}); break;
      case DType::BF16:
        if (bf16_truncates())
          v = b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
        else
          v = call("stax_rt_f32_to_bf16", b_.getInt16Ty(), {v});
        break;
      case DType::Bool: v = b_.CreateZExt(v, b_.getInt8Ty()); break;
      default: break;
    }
    b_.CreateStore(v, p);
  }
  /// Under prefetch_if_ (a lanes fold's step, once a cache line of lanes; a
  /// transposed fold's rows, once a line of each):
  /// a prefetch into L2 of the line kPrefetchBytes past p. A fold over a
  /// matrix from memory reads each row's lines in order, one line an input
  /// a step; the hardware prefetcher alone kept one core's reads at ~30
  /// GB/s (README: 'Stack alignment, constant tables and prefetching'). A
  /// prefetch never faults, past the end of a buffer too.
  void prefetch_ahead(Value* p) {
    if_then(prefetch_if_, "prefetch", false, [&] {
      Value* ahead = b_.CreateGEP(b_.getInt8Ty(), p, b_.getInt64(uint64_t(prefetch_bytes_)));
      b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {ahead->getType()},
                         {ahead, b_.getInt32(0), b_.getInt32(1), b_.getInt32(1)});
    });
  }
  /// A prefetch of buffer `buf`'s element `off` for writing, into L1 (no
  /// fault, past the end too; none for a folded buffer, which lives in
  /// cache).
  void prefetch_write(size_t buf, Value* off) {
    if (folded(buf)) return;
    Value* p = b_.CreateGEP(stype(spec_.types[buf].dtype), bufs_[buf], off);
    b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {p->getType()}, {p, b_.getInt32(1), b_.getInt32(3), b_.getInt32(1)});
  }
  /// Elements of type `t` in a cache line (at least 1).
  static int64_t per_line(llvm::Type* t) {
    return std::max<int64_t>(1, 8 * kCacheLineBytes / int64_t(t->getScalarSizeInBits()));
  }
  /// `if (cond) body();` at the insert point, which ends in the block after;
  /// `rare`: weights the branch 1 : 2^20 against the body.
  void if_then(Value* cond, const char* name, bool rare, const std::function<void()>& body) {
    auto* f = b_.GetInsertBlock()->getParent();
    auto* yes = llvm::BasicBlock::Create(ctx_, name, f);
    auto* cont = llvm::BasicBlock::Create(ctx_, std::string(name) + ".done", f);
    b_.CreateCondBr(cond, yes, cont, rare ? llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20) : nullptr);
    b_.SetInsertPoint(yes);
    body();
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  }
  size_t buffer(const std::string& n) {
    for (size_t i = 1; i < spec_.names.size(); ++i)
      if (spec_.names[i] == n) return i;
    throw CompileError("kernel reads an unknown tensor " + n);
  }

  /// The value of `e` at index `idx` (in its compute type).
  Value* elem(const Expr& e, const std::vector<Value*>& idx);
  /// The map's lambda applied to `args`, rounded to `tag`.
  Value* map_value(const sem::MapE& m, DType tag, const std::vector<Value*>& args);
  /// The columns of an 8 x 8 matrix of vectors (its rows): three stages of
  /// two-vector shuffles, the first two within 4-element halves.
  std::vector<Value*> transpose(std::vector<Value*> rows);
  void transposed_fold(const RedE& r, bool skew, Value* begin, Value* end);
  /// A pointwise kernel's last two dimensions in T x T tiles
  /// (KernelShape::tile), `body` at each index.
  void tiled_pointwise(int64_t T, Value* begin, Value* end, std::vector<Value*>& idx,
                       const std::function<void()>& body);

  // ---- loops: `for (i = lo; i < hi; ++i) body(i)`
  /// `unroll_full`: llvm.loop.unroll.full on the back edge (the pipeline
  /// unrolls only such loops; see jit.cpp, kernel_pipeline). `width` > 0:
  /// llvm.loop.vectorize.width, the loop vectoriser's factor.
  void loop(Value* lo, Value* hi, const std::function<void(Value*)>& body, bool unroll_full = false,
            int width = 0) {
    auto* f = b_.GetInsertBlock()->getParent();
    auto* pre = b_.GetInsertBlock();
    auto* bodybb = llvm::BasicBlock::Create(ctx_, "loop", f);
    auto* exitbb = llvm::BasicBlock::Create(ctx_, "done", f);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), bodybb, exitbb);
    b_.SetInsertPoint(bodybb);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2);
    i->addIncoming(lo, pre);
    body(i);
    Value* next = b_.CreateAdd(i, i64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    i->addIncoming(next, b_.GetInsertBlock());
    auto* br = b_.CreateCondBr(b_.CreateICmpSLT(next, hi), bodybb, exitbb);
    std::vector<llvm::Metadata*> hints{nullptr};
    if (unroll_full) hints.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.full")));
    if (width > 0)
      hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                                               llvm::ConstantAsMetadata::get(b_.getInt32(uint32_t(width)))}));
    if (hints.size() > 1) {
      llvm::MDNode* md = llvm::MDNode::getDistinct(ctx_, hints);
      md->replaceOperandWith(0, md);
      br->setMetadata(llvm::LLVMContext::MD_loop, md);
    }
    b_.SetInsertPoint(exitbb);
  }
  /// Nested loops over dims [from, s.size()) of `s`, appending to idx.
  void nest(const Shape& s, size_t from, std::vector<Value*>& idx, const std::function<void()>& body) {
    if (from == s.size()) {
      body();
      return;
    }
    loop(i64(0), i64(s[from]), [&](Value* i) {
      idx.push_back(i);
      nest(s, from + 1, idx, body);
      idx.pop_back();
    });
  }
  llvm::AllocaInst* entry_alloca(llvm::Type* t, int64_t n) {
    llvm::IRBuilder<> eb(&alloca_block_->front());
    return eb.CreateAlloca(t, eb.getInt64(uint64_t(n)));
  }

  void emit_pointwise(const KernelShape& ks, Value* begin, Value* end);
  /// A reduction kernel over [begin, end): one accumulator per output
  /// element folding in program order, in lanes, transposed or not
  /// (KernelShape); its steps are the private functions below.
  void emit_reduction(const RedE& r, const KernelShape& ks, Value* begin, Value* end);
  Value* fold(const RedE& r, Value* acc, Value* x, DType t, Value* arg_slot, Value* rflat);
  Value* fold_maximum(const RedE& r, Value* acc, Value* x, bool is_max);
  /// The order key of a float's bits (codegen_reduction.cpp: keyed folds).
  Value* order_key(Value* bits);
  /// The order key of a float value.
  Value* key_of(Value* v) {
    return order_key(b_.CreateBitCast(v, b_.getIntNTy(v->getType()->getScalarSizeInBits())));
  }
  /// The float of type `ct` whose order key is `key` (the key is its own inverse).
  Value* unkey(Value* key, llvm::Type* ct) { return b_.CreateBitCast(order_key(key), ct); }
  /// A keyed fold's step: the largest key so far at `hi`, the smallest at `lo`.
  void keyed_step(Value* k, Value* hi, Value* lo);
  /// Whether a NaN was folded into keys whose extremes are `hk` and `lk`
  /// (an i1): a key beyond an infinity's.
  Value* keyed_nan(Value* hk, Value* lk, llvm::Type* ct);
  /// Whether a maximum/minimum fold may keep order keys: a float fold from a
  /// number, of a source that cannot fail, without the max-drops-nan mutant.
  bool keyed_fold(const RedE& r);

  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  llvm::IRBuilder<> b_;
  const KernelSpec& spec_;
  bool addr32_ = false;
  std::vector<Value*> bufs_;
  std::vector<Value*> origin_;  ///< per buffer: a folded one's first element in the range, else null
  Value* fail_ = nullptr;
  Value* pos_ = nullptr;  ///< flat output index of the element being computed
  Value* prefetch_if_ = nullptr;  ///< an i1: loads from memory prefetch ahead where it holds (prefetch_ahead)
  int64_t prefetch_bytes_ = kPrefetchBytes;  ///< how far past a load prefetch_ahead reaches
  llvm::BasicBlock* alloca_block_ = nullptr;
  std::vector<std::string> reasons_;

 private:
  // ---- emit_reduction's steps (codegen_reduction.cpp)

  /// A reduction folded in lanes (KernelShape::lanes): one accumulator per
  /// index of the last output dimension (per index of a block of it),
  /// stepped innermost, each folding its own elements in program order.
  /// With a row block, `rows` consecutive indices of the second-to-last
  /// dimension are stepped together, each with its own block of
  /// accumulators. What the steps below share.
  struct LaneFold {
    LaneFold(const RedE& r, const KernelShape& ks, const Shape& out) : r(r), ks(ks), out(out) {}
    const RedE& r;
    const KernelShape& ks;
    const Shape& out;           ///< the output's shape
    DType t = DType::F32;       ///< the source's dtype
    llvm::Type* ct = nullptr;   ///< its compute type
    Value* init = nullptr;      ///< the fold's initial value
    std::vector<int64_t> rstr;  ///< row-major strides of the fold's extents
    int64_t lanes = 0;          ///< accumulators a row of a block (KernelShape::lane_block)
    int64_t blocks = 0;         ///< blocks of lanes in the last output dimension
    int64_t rows = 1;           ///< rows of a block (KernelShape::row_block)
    Shape outer;                ///< the output dimensions outside the lanes and rows
    std::vector<Value*> o;      ///< the index in `outer` being emitted
    llvm::AllocaInst* accs = nullptr;  ///< rows x lanes accumulators
    /// Packed operands (KernelShape::packed): the map, and per operand a
    /// scratch of fold x lanes values (null: not packed), filled for a
    /// column block before its rows.
    const MapE* pm = nullptr;
    std::vector<llvm::AllocaInst*> scratch;
    Value* zero = nullptr;      ///< the opaque zero of KernelShape::salt_broadcasts, or null
    bool keyed = false;         ///< the lanes keep order keys (see lane_fold)
    llvm::Type* kt = nullptr;   ///< the keys' integer type
    llvm::AllocaInst* hi = nullptr;  ///< per lane, the largest key so far
    llvm::AllocaInst* lo = nullptr;  ///< per lane, the smallest key so far
  };

  /// The flat fold index of `ridx`, `rstr` the fold's row-major strides.
  Value* fold_offset(const std::vector<int64_t>& rstr, const std::vector<Value*>& ridx);
  /// A reduction without lanes: one accumulator (and an index slot for
  /// argmax/argmin) folding each output element in turn.
  void scalar_reduction(const RedE& r, Value* begin, Value* end);
  /// The state of a reduction in lanes: its accumulators, the packed
  /// operands' scratch, the opaque zero, the keys' slots.
  LaneFold lane_fold(const RedE& r, const KernelShape& ks);
  /// The slot of lane `l`'s accumulator in row `rr` of the block.
  Value* acc_slot(const LaneFold& f, Value* l, int64_t rr);
  /// The output index of column `col` of row `rr` of the block at `row0`:
  /// the index in `outer`, then the row (with a row block), then the column.
  std::vector<Value*> lane_index(const LaneFold& f, Value* row0, int64_t rr, Value* col);
  /// Packs the operands of lane `l` (column base + l) at fold index `ridx`.
  void pack_lane(const LaneFold& f, Value* row0, Value* base, const std::vector<Value*>& ridx, Value* l);
  /// Packs the operands of a column block 8 lanes x 8 fold steps at a time
  /// (KernelShape::pack_along_fold), transposed in registers.
  void pack_along_fold(const LaneFold& f, Value* row0, Value* base);
  /// Fills the packed operands' scratch for the column block at `base`.
  void pack_operands(const LaneFold& f, Value* row0, Value* base);
  /// The index `idx` of operand `arg` read by lane `l`, salted with the
  /// opaque zero (KernelShape::salt_broadcasts) when there is one.
  std::vector<Value*> salted_index(const LaneFold& f, std::vector<Value*> idx, const Expr& arg, Value* l);
  /// The source's value at `idx` for lane `l`: from the packed scratch (at
  /// offset `at`) where an operand is packed.
  Value* lane_value(const LaneFold& f, const std::vector<Value*>& idx, Value* at, Value* l);
  /// The lanes' results from their keys, stored; returns whether a NaN was
  /// folded into any (an i1).
  Value* keyed_results(const LaneFold& f, Value* base);
  /// The fold of a block of lanes into the accumulators (`keys`: into their
  /// keys), then their results stored; with keys, returns whether a NaN was
  /// folded (else null).
  Value* fold_lane_block(const LaneFold& f, Value* row0, Value* base, bool keys);
  /// One block of lanes; keyed, a block where a NaN was folded is folded
  /// again as the program says, all its lanes together (a lane alone would
  /// not be vectorised).
  void lane_block(const LaneFold& f, Value* row0, Value* base);
  /// The row blocks [lo, hi) of one column block, packed first.
  void packed_rows(const LaneFold& f, Value* lo, Value* hi, Value* base);
  /// `body(base)` for each column block of lanes.
  void each_column(const LaneFold& f, const std::function<void(Value*)>& body);
  /// The column blocks of the row block at `row0`.
  void columns(const LaneFold& f, Value* row0);
  /// The loops of a reduction in lanes over the kernel's range [begin, end):
  /// it counts blocks of rows (rank 2 with a row block), blocks of lanes
  /// (rank 1), or indices of the outermost output dimension.
  void lane_ranges(LaneFold& f, Value* begin, Value* end);
};

// The Llvm domain of the generic evaluator (lambda_eval.h).
struct LlvmDomain {
  using Value = llvm::Value*;
  Emitter& e;
  Value param(size_t, size_t, const Value& a) { return a; }
  Value constant(size_t, const Const& c, DType tag) { return e.constant(c, tag); }
  Value apply(size_t, ScalarOp op, DType, DType operand_tag, std::span<const Value> args) {
    return e.apply(op, operand_tag, args);
  }
  Value cast(size_t, const Value& v, DType from, DType to) { return e.convert(v, from, to); }
};

}  // namespace stax::backends::cpu::detail
