#include "backends/cpu/codegen.h"

#include "backends/cpu/emitter.h"
#include "backends/cpu/stream_stores.h"
#include "semantics/index_eval.h"
#include "semantics/lambda_eval.h"
#include "semantics/printer.h"
#include "semantics/views.h"

namespace stax::backends::cpu {

namespace {
/// The stack alignment of a kernel's entry point: a 512-bit register.
constexpr uint64_t kSpillAlign = 64;
}  // namespace

namespace detail {

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
  if (ks.tile > 0) return tiled_pointwise(ks.tile, begin, end, idx, body);
  loop(begin, end, [&](Value* i0) {
    idx.push_back(i0);
    nest(s, 1, idx, body);
    idx.pop_back();
  });
}

void Emitter::tiled_pointwise(int64_t T, Value* begin, Value* end, std::vector<Value*>& idx,
                              const std::function<void()>& body) {
  const Shape& s = spec_.types[0].shape;
  const size_t n = s.size();
  // The tiles of the last two dimensions from the tile row rt, row by row
  // within a tile.
  auto tile_row = [&](Value* rt) {
    Value* r0 = b_.CreateMul(rt, i64(T));
    loop(i64(0), i64(s[n - 1] / T), [&](Value* ct) {
      Value* c0 = b_.CreateMul(ct, i64(T));
      loop(i64(0), i64(T), [&](Value* rr) {
        idx.push_back(b_.CreateAdd(r0, rr));
        loop(i64(0), i64(T), [&](Value* cc) {
          idx.push_back(b_.CreateAdd(c0, cc));
          body();
          idx.pop_back();
        });
        idx.pop_back();
      });
    });
  };
  if (n == 2) return loop(begin, end, tile_row);  // the range counts tile rows
  const Shape outer(s.begin(), s.end() - 2);
  loop(begin, end, [&](Value* i0) {
    idx.push_back(i0);
    nest(outer, 1, idx, [&]() { loop(i64(0), i64(s[n - 2] / T), tile_row); });
    idx.pop_back();
  });
}

void Emitter::enter(llvm::Function* impl, unsigned first_buf, Value* begin, Value* fail, const KernelShape& ks) {
  for (size_t i = 0; i < spec_.names.size(); ++i) bufs_.push_back(impl->getArg(first_buf + unsigned(i)));
  fail_ = fail;
  pos_ = i64(0);
  // Folded buffers (chain members only: never whole kernels) hold the rows
  // from begin x rows-per-unit on.
  for (size_t i = 0; i < spec_.folded.size(); ++i) {
    if (!spec_.folded[i]) {
      origin_.push_back(nullptr);
      continue;
    }
    const sem::Shape& s = spec_.types[i].shape;
    const sem::Shape& out = spec_.types[0].shape;
    if (s.empty() || out.empty() || out[0] == 0 || ks.whole || s[0] != out[0] || ks.parallel_extent < 1 ||
        out[0] % ks.parallel_extent != 0)
      throw CompileError("a folded buffer of " + spec_.binding + " without rows of the kernel's range");
    const int64_t row = num_elements(s) / s[0], unit = out[0] / ks.parallel_extent;
    origin_.push_back(b_.CreateMul(begin, i64(unit * row)));
  }
}

void Emitter::export_kernel(const std::string& fname, llvm::Function* impl, const std::vector<const KernelSpec*>& specs) {
  auto* ptr = b_.getPtrTy();
  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, b_.getInt64Ty(), b_.getInt64Ty(), ptr}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fname, m_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  // The stack realigned to a cache line: the vectorised loops spill
  // 64-byte registers, and a spill slot that straddles two lines (the
  // caller's stack is 16-byte aligned, its offset set by ASLR) made the
  // same erf kernel 1.64x slower in some processes than in others
  // (17.8 against 29.2 ms over 2^24 elements; README: 'Stack alignment,
  // constant tables and prefetching').
  f->addFnAttr(llvm::Attribute::getWithStackAlignment(ctx_, llvm::Align(kSpillAlign)));
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f));
  std::vector<Value*> args;
  for (const KernelSpec* s : specs)
    for (size_t i = 0; i < s->names.size(); ++i) {
      auto* arg = b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, f->getArg(0), args.size()));
      if (i == 0 && s->stream) {  // stream_stores.h; the runtime checks the alignment
        arg->setMetadata(kStreamMetadata, llvm::MDNode::get(ctx_, {}));
        arg->setMetadata(llvm::LLVMContext::MD_align,
                         llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt64(kStreamAlign))}));
      }
      args.push_back(arg);
    }
  args.push_back(f->getArg(1));
  args.push_back(f->getArg(2));
  args.push_back(f->getArg(3));
  b_.CreateRet(b_.CreateCall(impl, args));
}

llvm::Function* Emitter::begin_impl(const std::string& fname, size_t nbufs) {
  // impl(ptr noalias b0, ..., i64 begin, i64 end, ptr noalias fail), inlined
  // into the exported fname(ptr bufs, i64 begin, i64 end, ptr fail).
  auto* ptr = b_.getPtrTy();
  std::vector<llvm::Type*> params(nbufs, ptr);
  params.push_back(b_.getInt64Ty());
  params.push_back(b_.getInt64Ty());
  params.push_back(ptr);
  auto* impl_ty = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
  auto* impl = llvm::Function::Create(impl_ty, llvm::Function::InternalLinkage, fname + "_impl", m_);
  impl->addFnAttr(llvm::Attribute::AlwaysInline);
  impl->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i]->isPointerTy()) impl->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
  alloca_block_ = llvm::BasicBlock::Create(ctx_, "entry", impl);
  auto* start = llvm::BasicBlock::Create(ctx_, "start", impl);
  llvm::IRBuilder<>(alloca_block_).CreateBr(start);
  b_.SetInsertPoint(start);
  return impl;
}

std::vector<std::string> Emitter::run(const std::string& fname) {
  llvm::Function* impl = begin_impl(fname, spec_.names.size());
  Value* begin = impl->getArg(unsigned(spec_.names.size()));
  Value* end = impl->getArg(unsigned(spec_.names.size() + 1));
  KernelShape ks = kernel_shape(spec_);
  enter(impl, 0, begin, impl->getArg(unsigned(spec_.names.size() + 2)), ks);
  // A whole kernel computes [0, extent) whatever range it is given:
  // CompiledProgram::run calls it once over that range. (A guard refusing
  // other ranges, one branch at entry, cost a fifth of fuzzing's
  // throughput at O3: 29-30 programs/s against 23-25.)
  if (ks.whole) {
    begin = i64(0);
    end = i64(ks.parallel_extent);
  }
  if (const auto* r = std::get_if<RedE>(&spec_.expr->p)) emit_reduction(*r, ks, begin, end);
  else emit_pointwise(ks, begin, end);
  b_.CreateRet(b_.getInt32(0));

  export_kernel(fname, impl, {&spec_});
  return reasons_;
}

}  // namespace detail

std::vector<std::string> emit_kernel(llvm::Module& m, const std::string& fname, const KernelSpec& s) {
  if (auto why = unsupported(s.expr)) throw CompileError("binding " + s.binding + " is not one kernel: " + *why);
  detail::Emitter e(m, s);
  return e.run(fname);
}

}  // namespace stax::backends::cpu
