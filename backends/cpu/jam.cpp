#include "backends/cpu/jam.h"

#include "backends/cpu/emitter.h"
#include "semantics/count_domain.h"
#include "semantics/expr_util.h"

namespace stax::backends::cpu {

using namespace stax::sem;

namespace {

/// A pointwise kernel whose range counts the rows of its first dimension.
bool plain_pointwise(const KernelSpec& s, const KernelShape& ks) {
  const Shape& out = s.types[0].shape;
  return !std::holds_alternative<RedE>(s.expr->p) && !ks.lanes && ks.tile == 0 && !ks.whole && !out.empty() &&
         ks.parallel_extent == out[0] && !expr_may_fail(s.expr);
}

/// Whether a map of `e` calls a function of the math library.
bool calls_math(const Expr& e) {
  static const std::set<ScalarOp> math = {ScalarOp::Exp,  ScalarOp::Log,     ScalarOp::Log2, ScalarOp::Log10,
                                          ScalarOp::Log1p, ScalarOp::Expm1,  ScalarOp::Tanh, ScalarOp::Sigmoid,
                                          ScalarOp::Erf,  ScalarOp::Sin,     ScalarOp::Cos,  ScalarOp::Pow};
  return sem::any_node(e, [](const Expr& n) {
    if (const auto* m = std::get_if<MapE>(&n->p))
      for (ScalarOp op : count_ops(m->fn).used)
        if (math.count(op)) return true;
    return false;
  });
}

}  // namespace

std::optional<size_t> plan_jam(const Chain& c, const std::vector<KernelSpec>& specs,
                               const std::vector<KernelShape>& shapes) {
  const KernelSpec& late = specs[c.last];
  if (c.chunk >= c.rows || !plain_pointwise(late, shapes[c.last])) return std::nullopt;
  for (size_t j = c.last; j-- > c.first;) {
    if (!plain_pointwise(specs[j], shapes[j]) || specs[j].types[0].shape != late.types[0].shape) continue;
    if (calls_math(specs[j].expr)) return j;
  }
  return std::nullopt;
}

std::string jam_key(const std::string& early_key, const std::string& late_key, int64_t chunk_units) {
  return "jam " + std::to_string(chunk_units) + "\n" + early_key + "with\n" + late_key;
}

std::vector<std::string> emit_jam(llvm::Module& m, const std::string& fname, const KernelSpec& early,
                                  const KernelSpec& late, int64_t chunk_units) {
  for (const KernelSpec* s : {&early, &late})
    if (auto why = unsupported(s->expr)) throw CompileError("binding " + s->binding + " is not one kernel: " + *why);
  detail::Emitter a(m, early), b(m, late);
  const KernelShape ka = kernel_shape(early), kb = kernel_shape(late);
  if (!plain_pointwise(early, ka) || !plain_pointwise(late, kb) || early.types[0].shape != late.types[0].shape)
    throw CompileError("jam of " + early.binding + " and " + late.binding + ": not two pointwise kernels of one shape");
  const size_t na = early.names.size(), nb = late.names.size();
  llvm::Function* impl = a.begin_impl(fname, na + nb);
  b.alloca_block_ = a.alloca_block_;
  b.b_.SetInsertPoint(a.b_.GetInsertBlock());
  llvm::Value* begin = impl->getArg(unsigned(na + nb));
  llvm::Value* end = impl->getArg(unsigned(na + nb + 1));
  llvm::Value* fail = impl->getArg(unsigned(na + nb + 2));
  constexpr uint64_t kRecordWords = sizeof(FailRecord) / sizeof(int64_t);
  a.enter(impl, 0, begin, fail, ka);
  llvm::Value* begin_b = b.b_.CreateSub(begin, b.i64(chunk_units));
  b.enter(impl, unsigned(na), begin_b, b.b_.CreateConstInBoundsGEP1_64(b.b_.getInt64Ty(), fail, kRecordWords), kb);
  a.b_.SetInsertPoint(b.b_.GetInsertBlock());
  const Shape& s = early.types[0].shape;
  auto body = [&](const std::vector<llvm::Value*>& idx) {
    a.pos_ = a.flat(idx, s);
    a.store(a.elem(early.expr, idx), a.pos_);
    // The late member's element at the same place, chunk_units rows up.
    b.b_.SetInsertPoint(a.b_.GetInsertBlock());
    std::vector<llvm::Value*> up = idx;
    up[0] = b.b_.CreateSub(idx[0], b.i64(chunk_units));
    b.pos_ = b.flat(up, s);
    b.store(b.elem(late.expr, up), b.pos_);
    a.b_.SetInsertPoint(b.b_.GetInsertBlock());
  };
  // The early member's 4-byte inputs of its own shape that live in memory
  // (not folded): the chain's first members read them over the next chunk,
  // after this loop. A prefetch into L2 a cache line a step, chunk_units
  // rows ahead, brings that chunk in while this one computes (a prefetch
  // never faults, past the end of a buffer too).
  std::vector<size_t> ahead;
  for (size_t i = 1; i < na; ++i)
    if (early.types[i].shape == s && (i >= early.folded.size() || !early.folded[i]) &&
        dtype_bytes(early.types[i].dtype) == 4)
      ahead.push_back(i);
  const int64_t line = kCacheLineBytes / 4, inner = s.back();
  std::vector<llvm::Value*> idx;
  if (ahead.empty() || s.size() != 2 || inner % line != 0) {
    a.loop(begin, end, [&](llvm::Value* i0) {
      idx.push_back(i0);
      a.nest(s, 1, idx, [&]() { body(idx); });
      idx.pop_back();
    });
  } else {
    a.loop(begin, end, [&](llvm::Value* i0) {
      a.loop(a.i64(0), a.i64(inner / line), [&](llvm::Value* jb) {
        llvm::Value* j0 = a.b_.CreateMul(jb, a.i64(line));
        llvm::Value* next = a.b_.CreateAdd(a.b_.CreateMul(a.b_.CreateAdd(i0, a.i64(chunk_units)), a.i64(inner)), j0);
        for (size_t i : ahead) {
          llvm::Value* p = a.b_.CreateGEP(a.b_.getInt8Ty(), a.bufs_[i], a.b_.CreateMul(next, a.i64(4)));
          a.b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {p->getType()},
                               {p, a.b_.getInt32(0), a.b_.getInt32(2), a.b_.getInt32(1)});
        }
        a.loop(a.i64(0), a.i64(line), [&](llvm::Value* jj) { body({i0, a.b_.CreateAdd(j0, jj)}); }, false, int(line));
      });
    });
  }
  a.b_.CreateRet(a.b_.getInt32(0));
  a.export_kernel(fname, impl, {&early, &late});
  if (!a.reasons_.empty() || !b.reasons_.empty())
    throw CompileError("jam of " + early.binding + " and " + late.binding + ": a kernel that may fail");
  return a.reasons_;
}

}  // namespace stax::backends::cpu
