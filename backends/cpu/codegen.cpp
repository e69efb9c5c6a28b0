#include "backends/cpu/codegen.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <set>

#include "backends/cpu/jit.h"
#include "backends/cpu/vecmath.h"
#include "backends/cpu/vecmath_ir.h"
#include "backends/reasons.h"
#include "semantics/index_eval.h"
#include "semantics/lambda_eval.h"
#include "semantics/mutants.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::backends::cpu {

using namespace stax::sem;
using llvm::Value;

namespace {

// ------------------------------------------------------------------ emitter

class Emitter {
 public:
  Emitter(llvm::Module& m, const KernelSpec& s) : ctx_(m.getContext()), m_(m), b_(ctx_), spec_(s) {
    addr32_ = mutant_active("addr32-overflow");
  }

  std::vector<std::string> run(const std::string& fname);

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
  Value* fmaximum(Value* a, Value* b, bool is_max) {
    if (mutant_active("max-drops-nan"))  // Triton tl.max: compare and select
      return b_.CreateSelect(is_max ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b), a, b);
    Value* m = b_.CreateSelect(is_max ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b), a, b);
    Value* z = is_max ? b_.CreateFAdd(a, b) : b_.CreateFNeg(b_.CreateFAdd(b_.CreateFNeg(a), b_.CreateFNeg(b)));
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
  Value* load(size_t buf, Value* off) {
    DType t = spec_.types[buf].dtype;
    Value* p = b_.CreateInBoundsGEP(stype(t), bufs_[buf], off);
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
    Value* p = b_.CreateInBoundsGEP(stype(t), bufs_[0], off);
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
  size_t buffer(const std::string& n) {
    for (size_t i = 1; i < spec_.names.size(); ++i)
      if (spec_.names[i] == n) return i;
    throw CompileError("kernel reads an unknown tensor " + n);
  }

  /// The value of `e` at index `idx` (in its compute type).
  Value* elem(const Expr& e, const std::vector<Value*>& idx);
  /// The map's lambda applied to `args`, rounded to `tag`.
  Value* map_value(const sem::MapE& m, DType tag, const std::vector<Value*>& args);

  // ---- loops: `for (i = lo; i < hi; ++i) body(i)`
  /// `unroll_full`: llvm.loop.unroll.full on the back edge (the pipeline
  /// unrolls only such loops; see jit.cpp's PipelineTuningOptions).
  void loop(Value* lo, Value* hi, const std::function<void(Value*)>& body, bool unroll_full = false) {
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
    if (unroll_full) {
      llvm::Metadata* full = llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.full"));
      llvm::MDNode* md = llvm::MDNode::getDistinct(ctx_, {nullptr, full});
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
  void emit_reduction(const RedE& r, const KernelShape& ks, Value* begin, Value* end);
  Value* fold(const RedE& r, Value* acc, Value* x, DType t, Value* arg_slot, Value* rflat);

  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  llvm::IRBuilder<> b_;
  const KernelSpec& spec_;
  bool addr32_ = false;
  std::vector<Value*> bufs_;
  Value* fail_ = nullptr;
  Value* pos_ = nullptr;  ///< flat output index of the element being computed
  llvm::BasicBlock* alloca_block_ = nullptr;
  std::vector<std::string> reasons_;
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

Value* Emitter::apply(ScalarOp op, DType operand_tag, std::span<Value* const> a) {
  DType t = compute_type(operand_tag);
  switch (op) {
    case ScalarOp::Eq: return is_float(t) ? b_.CreateFCmpOEQ(a[0], a[1]) : b_.CreateICmpEQ(a[0], a[1]);
    case ScalarOp::Ne: return is_float(t) ? b_.CreateFCmpUNE(a[0], a[1]) : b_.CreateICmpNE(a[0], a[1]);
    case ScalarOp::Select: return b_.CreateSelect(a[0], a[1], a[2]);
    case ScalarOp::And: return b_.CreateAnd(a[0], a[1]);
    case ScalarOp::Or: return b_.CreateOr(a[0], a[1]);
    case ScalarOp::Not: return b_.CreateNot(a[0]);
    default: break;
  }
  if (is_float(t)) return float_op(op, a);
  return int_op(op, a);
}

Value* Emitter::float_op(ScalarOp op, std::span<Value* const> a) {
  llvm::Type* t = a[0]->getType();
  auto is_fmul = [](Value* v) {
    auto* bo = llvm::dyn_cast<llvm::BinaryOperator>(v);
    return bo && bo->getOpcode() == llvm::Instruction::FMul;
  };
  switch (op) {
    case ScalarOp::Add:
      if (mutant_active("fma-contract")) {  // PyTorch #122260: a*b + c contracted
        for (int k = 0; k < 2; ++k)
          if (is_fmul(a[size_t(k)])) {
            auto* mul = llvm::cast<llvm::BinaryOperator>(a[size_t(k)]);
            return intrinsic(llvm::Intrinsic::fma, {mul->getOperand(0), mul->getOperand(1), a[size_t(1 - k)]});
          }
      }
      return b_.CreateFAdd(a[0], a[1]);
    case ScalarOp::Sub:
      if (mutant_active("fma-contract") && is_fmul(a[0])) {  // a*b - c contracted as well
        auto* mul = llvm::cast<llvm::BinaryOperator>(a[0]);
        return intrinsic(llvm::Intrinsic::fma, {mul->getOperand(0), mul->getOperand(1), b_.CreateFNeg(a[1])});
      }
      return b_.CreateFSub(a[0], a[1]);
    case ScalarOp::Mul: return b_.CreateFMul(a[0], a[1]);
    case ScalarOp::Div: return b_.CreateFDiv(a[0], a[1]);
    case ScalarOp::Mod:
      return call(t->isFloatTy() ? "stax_rt_mod_f32" : "stax_rt_mod_f64", t, {a[0], a[1]});
    case ScalarOp::FloorDiv:
      return call(t->isFloatTy() ? "stax_rt_floordiv_f32" : "stax_rt_floordiv_f64", t, {a[0], a[1]});
    case ScalarOp::Neg: return b_.CreateFNeg(a[0]);
    case ScalarOp::Abs: return intrinsic(llvm::Intrinsic::fabs, {a[0]});
    case ScalarOp::Relu: return fmaximum(a[0], fconst(t, 0.0), true);
    case ScalarOp::Maximum: return fmaximum(a[0], a[1], true);
    case ScalarOp::Minimum: return fmaximum(a[0], a[1], false);
    case ScalarOp::Exp: return math("exp", a[0]);
    case ScalarOp::Log: {
      if (mutant_active("log-exp")) {  // XLA #42732: log(exp(x)) -> x
        if (is_math_call(a[0], "exp")) return llvm::cast<llvm::CallInst>(a[0])->getArgOperand(0);
      }
      return math("log", a[0]);
    }
    case ScalarOp::Log2: return math("log2", a[0]);
    case ScalarOp::Log10: return math("log10", a[0]);
    case ScalarOp::Log1p: return math("log1p", a[0]);
    case ScalarOp::Expm1: return math("expm1", a[0]);
    case ScalarOp::Tanh: return math("tanh", a[0]);
    case ScalarOp::Sigmoid:  // T(1) / (T(1) + exp(-a))
      return b_.CreateFDiv(fconst(t, 1.0), b_.CreateFAdd(fconst(t, 1.0), math("exp", b_.CreateFNeg(a[0]))));
    case ScalarOp::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, {a[0]});
    case ScalarOp::Rsqrt: return b_.CreateFDiv(fconst(t, 1.0), intrinsic(llvm::Intrinsic::sqrt, {a[0]}));
    case ScalarOp::Erf: return math("erf", a[0]);
    case ScalarOp::Sin: return math("sin", a[0]);
    case ScalarOp::Cos: return math("cos", a[0]);
    case ScalarOp::Floor: return intrinsic(llvm::Intrinsic::floor, {a[0]});
    case ScalarOp::Pow: return math("pow", a[0], a[1]);
    case ScalarOp::Fma: return intrinsic(llvm::Intrinsic::fma, {a[0], a[1], a[2]});
    case ScalarOp::Lt: return b_.CreateFCmpOLT(a[0], a[1]);
    case ScalarOp::Le: return b_.CreateFCmpOLE(a[0], a[1]);
    case ScalarOp::Gt: return b_.CreateFCmpOGT(a[0], a[1]);
    case ScalarOp::Ge: return b_.CreateFCmpOGE(a[0], a[1]);
    default: break;
  }
  throw CompileError("float op " + std::string(op_name(op)) + " has no code");
}

Value* Emitter::int_op(ScalarOp op, std::span<Value* const> a) {
  llvm::Type* ty = a[0]->getType();
  Value* zero = llvm::ConstantInt::get(ty, 0);
  Value* one = llvm::ConstantInt::get(ty, 1);
  Value* minus1 = llvm::ConstantInt::get(ty, uint64_t(-1), true);
  auto division = [&](ScalarOp which) -> Value* {
    Value* x = a[0];
    Value* y = a[1];
    check(b_.CreateICmpEQ(y, zero), "integer " + std::string(op_name(which)) + " by zero", nullptr);
    // y == -1 is special-cased (MIN / -1 wraps), and sdiv/srem never see 0 or -1.
    Value* is_m1 = b_.CreateICmpEQ(y, minus1);
    Value* safe = b_.CreateSelect(b_.CreateOr(is_m1, b_.CreateICmpEQ(y, zero)), one, y);
    Value* q = b_.CreateSDiv(x, safe);
    Value* r = b_.CreateSRem(x, safe);
    Value* neg_x = b_.CreateSub(zero, x);
    switch (which) {
      case ScalarOp::Div: return b_.CreateSelect(is_m1, neg_x, q);
      case ScalarOp::FloorDiv: {
        Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                     b_.CreateICmpNE(b_.CreateICmpSLT(x, zero), b_.CreateICmpSLT(y, zero)));
        return b_.CreateSelect(is_m1, neg_x, b_.CreateSelect(adjust, b_.CreateSub(q, one), q));
      }
      default: {
        Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                     b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(y, zero)));
        return b_.CreateSelect(is_m1, zero, b_.CreateSelect(adjust, b_.CreateAdd(r, y), r));
      }
    }
  };
  switch (op) {
    case ScalarOp::Add: return b_.CreateAdd(a[0], a[1]);
    case ScalarOp::Sub: return b_.CreateSub(a[0], a[1]);
    case ScalarOp::Mul: return b_.CreateMul(a[0], a[1]);
    case ScalarOp::Div:
    case ScalarOp::Mod:
    case ScalarOp::FloorDiv: return division(op);
    case ScalarOp::Neg: return b_.CreateSub(zero, a[0]);
    case ScalarOp::Abs: return b_.CreateSelect(b_.CreateICmpSLT(a[0], zero), b_.CreateSub(zero, a[0]), a[0]);
    case ScalarOp::Relu: return b_.CreateSelect(b_.CreateICmpSLT(a[0], zero), zero, a[0]);
    case ScalarOp::Maximum: return b_.CreateSelect(b_.CreateICmpSLT(a[0], a[1]), a[1], a[0]);
    case ScalarOp::Minimum: return b_.CreateSelect(b_.CreateICmpSLT(a[1], a[0]), a[1], a[0]);
    case ScalarOp::Fma: return b_.CreateAdd(b_.CreateMul(a[0], a[1]), a[2]);
    case ScalarOp::Lt: return b_.CreateICmpSLT(a[0], a[1]);
    case ScalarOp::Le: return b_.CreateICmpSLE(a[0], a[1]);
    case ScalarOp::Gt: return b_.CreateICmpSGT(a[0], a[1]);
    case ScalarOp::Ge: return b_.CreateICmpSGE(a[0], a[1]);
    default: break;
  }
  throw CompileError("integer op " + std::string(op_name(op)) + " has no code");
}

Value* Emitter::floordiv_const(Value* a, int64_t c, bool mod) {
  if (c == 0) throw CompileError("index map divides by zero");
  if (!addr32_ && mutant_active("reshape-index-i32") && c == int64_t(int32_t(c))) {
    // jax #15896 (bcoo_reshape): the flat index of a reshape narrowed to
    // int32 before its floor/mod; wraps once it exceeds 2^31 - 1.
    addr32_ = true;
    Value* r = floordiv_const(b_.CreateTrunc(a, b_.getInt32Ty()), c, mod);
    addr32_ = false;
    return b_.CreateSExt(r, b_.getInt64Ty());
  }
  if (c == -1) return mod ? iconst_(0) : b_.CreateSub(iconst_(0), a);
  Value* cv = iconst_(c);
  Value* q = b_.CreateSDiv(a, cv);
  Value* r = b_.CreateSRem(a, cv);
  Value* zero = iconst_(0);
  Value* wrong_sign = c > 0 ? b_.CreateICmpSLT(r, zero) : b_.CreateICmpSGT(r, zero);
  if (mod) return b_.CreateSelect(wrong_sign, b_.CreateAdd(r, cv), r);
  return b_.CreateSelect(wrong_sign, b_.CreateSub(q, iconst_(1)), q);
}

/// The LLVM domain of the index evaluator (index_eval.h): 64-bit wrapping
/// arithmetic as the interpreter's, loads checked against their extents.
struct Emitter::IndexDomain {
  using Value = llvm::Value*;
  Emitter& em;
  const std::vector<Value>& idx;

  Value constant(const IExprNode&, int64_t c) { return em.iconst_(c); }
  Value var(const IExprNode&, int64_t k) { return em.to_i(idx[size_t(k)]); }
  Value add(const IExprNode&, Value a, Value b) { return em.b_.CreateAdd(a, b); }
  Value sub(const IExprNode&, Value a, Value b) { return em.b_.CreateSub(a, b); }
  Value mul(const IExprNode&, int64_t c, Value a) { return em.b_.CreateMul(em.iconst_(c), a); }
  Value floordiv(const IExprNode&, Value a, int64_t c) { return em.floordiv_const(a, c, false); }
  Value mod(const IExprNode&, Value a, int64_t c) { return em.floordiv_const(a, c, true); }
  template <class F>
  Value load(const IExprNode& e, F&& arg) {
    size_t buf = em.buffer(e.name);
    const Shape& s = em.spec_.types[buf].shape;
    std::vector<Value> at;
    for (size_t k = 0; k < e.args.size(); ++k) {
      Value v = em.to_64(arg(k));
      em.check(em.b_.CreateICmpUGE(v, em.i64(s[k])),
               "load(" + e.name + ") index out of range [0, " + std::to_string(s[k]) + ") in dim " + std::to_string(k),
               v);
      at.push_back(v);
    }
    Value x = em.load(buf, em.flat(at, s, true));
    if (x->getType()->isIntegerTy(1)) return em.b_.CreateZExt(x, em.itype());
    return em.to_i(x);
  }
};

Value* Emitter::iexpr(const IExpr& e, const std::vector<Value*>& idx) {
  IndexDomain dom{*this, idx};
  return eval_iexpr(e, dom);
}

Value* Emitter::map_value(const MapE& m, DType tag, const std::vector<Value*>& args) {
  LlvmDomain dom{*this};
  std::vector<Value*> regs;
  Value* v = eval_lambda(m.fn, dom, std::span<Value* const>(args), regs);
  return round_to_tag(v, tag);
}

Value* Emitter::elem(const Expr& e, const std::vector<Value*>& idx) {
  DType tag = e->type.dtype;
  if (const auto* x = std::get_if<NameE>(&e->p)) return load(buffer(x->name), flat(idx, e->type.shape, true));
  if (const auto* x = std::get_if<ViewE>(&e->p)) {
    const Shape& ss = x->src->type.shape;
    bool in_bounds = view_statically_in_bounds(ss, e->type.shape, x->map);
    std::vector<Value*> at;
    for (size_t j = 0; j < ss.size(); ++j) {
      Value* v = to_64(iexpr(x->map.exprs[j], idx));
      bool wrap = iexpr_has_load(x->map.exprs[j]);
      if (wrap && !mutant_active("neg-index-unwrapped"))  // PyTorch #102064 when missing
        v = b_.CreateSelect(b_.CreateICmpSLT(v, i64(0)), b_.CreateAdd(v, i64(ss[j])), v);
      if (!in_bounds)
        check(b_.CreateICmpUGE(v, i64(ss[j])), view_index_reason(ss[j], j, wrap), v);
      at.push_back(v);
    }
    return elem(x->src, at);
  }
  if (const auto* x = std::get_if<MapE>(&e->p)) {
    std::vector<Value*> args;
    for (const Expr& a : x->args) args.push_back(elem(a, idx));
    return map_value(*x, tag, args);
  }
  if (const auto* x = std::get_if<IotaE>(&e->p)) return convert(idx[size_t(x->dim)], DType::I64, tag);
  if (const auto* x = std::get_if<FullE>(&e->p)) return constant(x->value, tag);
  if (const auto* x = std::get_if<RandE>(&e->p)) {
    Value* f = flat(idx, e->type.shape);
    if (compute_type(tag) == DType::F64) return call("stax_rt_rand_f64", b_.getDoubleTy(), {b_.getInt64(x->key), f});
    if (compute_type(tag) != DType::F32) throw CompileError("rand of a non-float dtype");
    return round_to_tag(call("stax_rt_rand_f32", b_.getFloatTy(), {b_.getInt64(x->key), f}), tag);
  }
  throw CompileError("expression not in kernel form: " + print_expr(e));
}

// ---------------------------------------------------------------- kernels

void Emitter::emit_pointwise(const KernelShape& ks, Value* begin, Value* end) {
  const Shape& s = spec_.types[0].shape;
  std::vector<Value*> idx;
  auto body = [&]() {
    pos_ = flat(idx, s);
    Value* v = elem(spec_.expr, idx);
    store(v, pos_);
  };
  if (ks.parallel_extent == 1 && s.empty()) {
    body();
    return;
  }
  loop(begin, end, [&](Value* i0) {
    idx.push_back(i0);
    nest(s, 1, idx, body);
    idx.pop_back();
  });
}

Value* Emitter::fold(const RedE& r, Value* acc, Value* x, DType t, Value* arg_slot, Value* rflat) {
  bool f = is_float(compute_type(t));
  switch (r.op) {
    case RedOp::Sum: return f ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x);
    case RedOp::Prod: return f ? b_.CreateFMul(acc, x) : b_.CreateMul(acc, x);
    case RedOp::Max:
      return f ? fmaximum(acc, x, true) : b_.CreateSelect(b_.CreateICmpSLT(acc, x), x, acc);
    case RedOp::Min:
      return f ? fmaximum(acc, x, false) : b_.CreateSelect(b_.CreateICmpSLT(x, acc), x, acc);
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

void Emitter::emit_reduction(const RedE& r, const KernelShape& ks, Value* begin, Value* end) {
  const Shape& out = spec_.types[0].shape;
  DType t = r.src->type.dtype;
  llvm::Type* ct = ctype(t);
  Value* init = constant(r.init, t);
  bool arg = red_is_arg(r.op);
  std::vector<int64_t> rstr = row_major_strides(r.extents);
  auto rflat_of = [&](const std::vector<Value*>& ridx) {
    Value* f = i64(0);
    for (size_t k = 0; k < ridx.size(); ++k) f = b_.CreateAdd(f, b_.CreateMul(ridx[k], i64(rstr[k])));
    return f;
  };
  auto full_index = [&](const std::vector<Value*>& o, const std::vector<Value*>& ridx) {
    std::vector<Value*> all = o;
    all.insert(all.end(), ridx.begin(), ridx.end());
    return all;
  };
  std::vector<Value*> o;
  if (!ks.lanes) {
    llvm::AllocaInst* acc = entry_alloca(ct, 1);
    llvm::AllocaInst* argslot = entry_alloca(b_.getInt64Ty(), 1);
    auto body = [&]() {
      pos_ = flat(o, out);
      b_.CreateStore(init, acc);
      b_.CreateStore(i64(0), argslot);
      std::vector<Value*> ridx;
      nest(r.extents, 0, ridx, [&]() {
        Value* x = elem(r.src, full_index(o, ridx));
        Value* a = b_.CreateLoad(ct, acc);
        b_.CreateStore(fold(r, a, x, t, argslot, arg ? rflat_of(ridx) : nullptr), acc);
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
    return;
  }
  // Lanes: one accumulator per index of the last output dimension (per
  // index of a block of it), stepped innermost; each accumulator folds its
  // own elements in program order. With a row block, `rows` consecutive
  // indices of the second-to-last dimension are stepped together, each with
  // its own block of accumulators.
  int64_t lanes = ks.lane_block, blocks = out.back() / lanes, rows = ks.row_block;
  Shape outer(out.begin(), out.end() - (rows > 1 ? 2 : 1));
  llvm::AllocaInst* accs = entry_alloca(ct, rows * lanes);
  // The output index of lane l of row r: o, then the row (with a row
  // block), then the column.
  auto index_of = [&](Value* row0, int64_t r, Value* col) {
    std::vector<Value*> ol = o;
    if (rows > 1) ol.push_back(b_.CreateAdd(row0, i64(r)));
    ol.push_back(col);
    return ol;
  };
  // Packed operands (KernelShape::packed): a scratch of fold x lanes
  // values each, filled for a column block before its rows.
  const auto* pm = ks.pack ? std::get_if<MapE>(&r.src->p) : nullptr;
  std::vector<llvm::AllocaInst*> scratch;
  if (pm)
    for (size_t a = 0; a < pm->args.size(); ++a)
      scratch.push_back(ks.packed[a] ? entry_alloca(ctype(pm->args[a]->type.dtype), num_elements(r.extents) * lanes)
                                     : nullptr);
  auto pack = [&](Value* row0, Value* base) {
    std::vector<Value*> ridx;
    nest(r.extents, 0, ridx, [&]() {
      Value* at0 = b_.CreateMul(rflat_of(ridx), i64(lanes));
      loop(i64(0), i64(lanes), [&](Value* l) {
        std::vector<Value*> idx = full_index(index_of(row0, 0, b_.CreateAdd(base, l)), ridx);
        for (size_t a = 0; a < scratch.size(); ++a)
          if (scratch[a]) b_.CreateStore(elem(pm->args[a], idx), b_.CreateInBoundsGEP(scratch[a]->getAllocatedType(), scratch[a], b_.CreateAdd(at0, l)));
      });
    });
  };
  auto value = [&](const std::vector<Value*>& idx, Value* at) {
    if (!pm) return elem(r.src, idx);
    std::vector<Value*> args;
    for (size_t a = 0; a < scratch.size(); ++a) {
      llvm::Type* st = scratch[a] ? scratch[a]->getAllocatedType() : nullptr;
      args.push_back(st ? b_.CreateLoad(st, b_.CreateInBoundsGEP(st, scratch[a], at)) : elem(pm->args[a], idx));
    }
    return map_value(*pm, r.src->type.dtype, args);
  };
  auto block = [&](Value* row0, Value* base) {
    for (int64_t a = 0; a < rows * lanes; ++a)
      b_.CreateStore(init, b_.CreateConstInBoundsGEP1_64(ct, accs, uint64_t(a)));
    std::vector<Value*> ridx;
    nest(r.extents, 0, ridx, [&]() {
      Value* at0 = pm ? b_.CreateMul(rflat_of(ridx), i64(lanes)) : nullptr;
      loop(i64(0), i64(lanes), [&](Value* l) {
        Value* at = pm ? b_.CreateAdd(at0, l) : nullptr;
        for (int64_t rr = 0; rr < rows; ++rr) {
          std::vector<Value*> ol = index_of(row0, rr, b_.CreateAdd(base, l));
          pos_ = flat(ol, out);
          Value* slot = b_.CreateInBoundsGEP(ct, accs, b_.CreateAdd(l, i64(rr * lanes)));
          Value* x = value(full_index(ol, ridx), at);
          b_.CreateStore(fold(r, b_.CreateLoad(ct, slot), x, t, nullptr, nullptr), slot);
        }
      }, /*unroll_full=*/true);  // then SROA keeps the accumulators in registers
    });
    loop(i64(0), i64(lanes), [&](Value* l) {
      for (int64_t rr = 0; rr < rows; ++rr) {
        Value* slot = b_.CreateInBoundsGEP(ct, accs, b_.CreateAdd(l, i64(rr * lanes)));
        store(b_.CreateLoad(ct, slot), flat(index_of(row0, rr, b_.CreateAdd(base, l)), out));
      }
    });
  };
  // The row blocks [lo, hi) of one column block, packed first.
  auto packed_rows = [&](Value* lo, Value* hi, Value* base) {
    pack(b_.CreateMul(lo, i64(rows)), base);
    loop(lo, hi, [&](Value* rb) { block(b_.CreateMul(rb, i64(rows)), base); });
  };
  auto columns = [&](Value* row0) {
    if (blocks == 1) return block(row0, i64(0));
    loop(i64(0), i64(blocks), [&](Value* jb) { block(row0, b_.CreateMul(jb, i64(lanes))); });
  };
  auto each_column = [&](const std::function<void(Value*)>& f) {
    loop(i64(0), i64(blocks), [&](Value* jb) { f(b_.CreateMul(jb, i64(lanes))); });
  };
  if (rows > 1 && outer.empty()) {  // rank 2: the range counts blocks of rows
    if (pm) return each_column([&](Value* base) { packed_rows(begin, end, base); });
    loop(begin, end, [&](Value* i0) { columns(b_.CreateMul(i0, i64(rows))); });
    return;
  }
  auto body = [&]() {
    if (rows == 1) return columns(nullptr);
    Value* nrb = i64(out[out.size() - 2] / rows);
    if (pm) return each_column([&](Value* base) { packed_rows(i64(0), nrb, base); });
    loop(i64(0), nrb, [&](Value* rb) { columns(b_.CreateMul(rb, i64(rows))); });
  };
  if (outer.empty()) {
    body();
    return;
  }
  loop(begin, end, [&](Value* i0) {
    o.push_back(i0);
    nest(outer, 1, o, body);
    o.pop_back();
  });
}

std::vector<std::string> Emitter::run(const std::string& fname) {
  // impl(ptr noalias b0, ..., i64 begin, i64 end, ptr noalias fail), inlined
  // into the exported fname(ptr bufs, i64 begin, i64 end, ptr fail).
  auto* ptr = b_.getPtrTy();
  std::vector<llvm::Type*> params(spec_.names.size(), ptr);
  params.push_back(b_.getInt64Ty());
  params.push_back(b_.getInt64Ty());
  params.push_back(ptr);
  auto* impl_ty = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
  auto* impl = llvm::Function::Create(impl_ty, llvm::Function::InternalLinkage, fname + "_impl", m_);
  impl->addFnAttr(llvm::Attribute::AlwaysInline);
  impl->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < spec_.names.size() + 3; ++i)
    if (params[i]->isPointerTy()) impl->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
  alloca_block_ = llvm::BasicBlock::Create(ctx_, "entry", impl);
  auto* start = llvm::BasicBlock::Create(ctx_, "start", impl);
  llvm::IRBuilder<>(alloca_block_).CreateBr(start);
  b_.SetInsertPoint(start);
  for (size_t i = 0; i < spec_.names.size(); ++i) bufs_.push_back(impl->getArg(unsigned(i)));
  Value* begin = impl->getArg(unsigned(spec_.names.size()));
  Value* end = impl->getArg(unsigned(spec_.names.size() + 1));
  fail_ = impl->getArg(unsigned(spec_.names.size() + 2));
  pos_ = i64(0);
  KernelShape ks = kernel_shape(spec_);
  if (const auto* r = std::get_if<RedE>(&spec_.expr->p)) emit_reduction(*r, ks, begin, end);
  else emit_pointwise(ks, begin, end);
  b_.CreateRet(b_.getInt32(0));

  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, b_.getInt64Ty(), b_.getInt64Ty(), ptr}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fname, m_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f));
  std::vector<Value*> args;
  for (size_t i = 0; i < spec_.names.size(); ++i)
    args.push_back(b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, f->getArg(0), i)));
  args.push_back(f->getArg(1));
  args.push_back(f->getArg(2));
  args.push_back(f->getArg(3));
  b_.CreateRet(b_.CreateCall(impl, args));
  return reasons_;
}

}  // namespace

std::vector<std::string> emit_kernel(llvm::Module& m, const std::string& fname, const KernelSpec& s) {
  if (auto why = unsupported(s.expr)) throw CompileError("binding " + s.binding + " is not one kernel: " + *why);
  Emitter e(m, s);
  return e.run(fname);
}

}  // namespace stax::backends::cpu
