// Non-temporal stores of streamed outputs (backends/cpu/stream_stores.h): a
// program output that no kernel reads, of at least CpuOptions::stream_bytes
// and 4 MiB, is streamed; its aligned vector stores become !nontemporal and
// the bits stay the interpreter's. The wrong cases: a store one float off
// the alignment, and rows whose width is no multiple of the vector, must not
// be marked (movntps on them would fault).
#include <catch2/catch.hpp>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/stream_stores.h"
#include "oracle/fuzz.h"
#include "semantics/evaluator.h"
#include "semantics/random_inputs.h"
#include "tests/test_util.h"

using namespace stax;
using namespace stax::sem;
namespace cpu = stax::backends::cpu;

namespace {

/// A softmax over rows of `cols` columns, 1,100 rows (over 4 MiB of output
/// from 954 columns on).
std::string softmax(int cols) {
  const std::string r = "1100", c = std::to_string(cols), rc = "[" + r + ", " + c + "]";
  return "input x : f32" + rc + "\nlet m : f32[" + r + "] = red(max, -inf, [" + c + "], x)\n" +
         "let e : f32" + rc + " = map(fn(a, b) => exp(sub(a, b)), x, view(m, " + rc + ", (i, j) -> (i)))\n" +
         "let s : f32[" + r + "] = red(sum, 0.0, [" + c + "], e)\n" + "let y : f32" + rc +
         " = map(fn(a, q) => div(a, q), e, view(s, " + rc + ", (i, j) -> (i)))\noutput y\n";
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

/// A module with one function: the tagged output pointer loaded from
/// `args`, and a loop over i in steps of 16 floats storing a <16 x float> at
/// element i plus `skew` bytes.
std::unique_ptr<llvm::Module> store_loop(llvm::LLVMContext& ctx, int skew) {
  auto m = std::make_unique<llvm::Module>("t", ctx);
  m->setTargetTriple("x86_64-pc-linux-gnu");
  m->setDataLayout("e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128");
  llvm::IRBuilder<> b(ctx);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "k", *m);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", f);
  b.SetInsertPoint(entry);
  auto* out = b.CreateLoad(b.getPtrTy(), f->getArg(0));
  out->setMetadata(cpu::kStreamMetadata, llvm::MDNode::get(ctx, {}));
  out->setMetadata(llvm::LLVMContext::MD_align,
                   llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(b.getInt64(cpu::kStreamAlign))}));
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* p = b.CreateInBoundsGEP(b.getFloatTy(), out, i);
  if (skew) p = b.CreateInBoundsGEP(b.getInt8Ty(), p, b.getInt64(skew));
  b.CreateAlignedStore(llvm::Constant::getNullValue(llvm::FixedVectorType::get(b.getFloatTy(), 16)), p,
                       llvm::Align(4));
  auto* next = b.CreateAdd(i, b.getInt64(16), "", /*HasNUW=*/true);
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpULT(next, f->getArg(1)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return m;
}

}  // namespace

TEST_CASE("the pass marks aligned vector stores into a tagged output, and no other") {
  llvm::LLVMContext ctx;
  auto aligned = store_loop(ctx, 0);
  CHECK(cpu::mark_stream_stores(*aligned) == 1);
  // Wrong case: one float off the 64-byte alignment.
  for (int skew : {4, 32}) {
    auto off = store_loop(ctx, skew);
    CHECK(cpu::mark_stream_stores(*off) == 0);
  }
  // Not an x86-64 target: nothing.
  auto other = store_loop(ctx, 0);
  other->setTargetTriple("aarch64-unknown-linux-gnu");
  CHECK(cpu::mark_stream_stores(*other) == 0);
}

TEST_CASE("a large output no kernel reads is streamed, with the interpreter's bits") {
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    Program p = test::parse_ok(softmax(1024));
    cpu::CpuOptions opt{threads, true, 3};
    opt.min_parallel_work = 0;
    opt.stream_bytes = 0;
    cpu::CompiledProgram cp(p, opt);
    REQUIRE(cp.kernels().back().binding == "y");
    for (const cpu::KernelReport& k : cp.kernels()) CHECK(k.streamed == (k.binding == "y"));
    const std::string ir = cp.ir(cp.kernels().size() - 1);
    CHECK(count(ir, "!nontemporal") >= 1);
    CHECK(count(ir, "@llvm.x86.sse.sfence()") >= 1);
    Inputs in = random_inputs(p, 3);
    IeeeOutcome a = eval_ieee(p, in), b = cp.run(in);
    std::optional<std::string> diff = oracle::outcome_difference(p, a, b);
    INFO(diff.value_or(""));
    CHECK(!diff);
  }
}

TEST_CASE("small outputs, outputs read by a later kernel and unaligned rows are not streamed") {
  cpu::CpuOptions opt{1, true, 3};
  opt.stream_bytes = 0;
  // Under 4 MiB: the allocator does not align it.
  cpu::CompiledProgram small(test::parse_ok(softmax(900)), opt);
  CHECK(!small.kernels().back().streamed);
  // Off.
  opt.stream_bytes = -1;
  cpu::CompiledProgram off(test::parse_ok(softmax(1024)), opt);
  CHECK(!off.kernels().back().streamed);
  // The default (16 MiB) leaves a 4.5 MB output alone.
  cpu::CompiledProgram dflt(test::parse_ok(softmax(1024)), cpu::CpuOptions{1, true, 3});
  CHECK(!dflt.kernels().back().streamed);
  // y read by t: not streamed, t is.
  opt.stream_bytes = 0;
  Program rt = test::parse_ok(
      "input x : f32[1100, 1024]\nlet y : f32[1100, 1024] = map(fn(a) => mul(a, a), x)\n"
      "let t : f32[1100, 1024] = map(fn(a) => add(a, a), y)\noutput y\noutput t\n");
  cpu::CompiledProgram c2(rt, opt);
  CHECK(!c2.kernels().at(0).streamed);
  CHECK(c2.kernels().at(1).streamed);
  // Rows of 1,001 floats (4,004 bytes): streamed, but no vector store is
  // proved aligned, so none is marked; the bits are the same. (Rows of
  // 1,000 floats are 32-byte aligned: their 8-lane stores are marked.)
  Program odd = test::parse_ok(softmax(1001));
  cpu::CompiledProgram c3(odd, opt);
  REQUIRE(c3.kernels().back().streamed);
  CHECK(count(c3.ir(c3.kernels().size() - 1), "!nontemporal") == 0);
  cpu::CompiledProgram c4(test::parse_ok(softmax(1000)), opt);
  const std::string ir4 = c4.ir(c4.kernels().size() - 1);
  CHECK(count(ir4, "store <8 x float>") >= 1);
  CHECK(count(ir4, "!nontemporal") == count(ir4, "store <8 x float>"));
  Inputs in = random_inputs(odd, 4);
  std::optional<std::string> diff = oracle::outcome_difference(odd, eval_ieee(odd, in), c3.run(in));
  INFO(diff.value_or(""));
  CHECK(!diff);
}
