#include "backends/gpu/emu_shim.h"

namespace stax::backends::gpu {

std::string_view cuda_emu_shim() {
  static constexpr std::string_view text = R"CUDA(// ---- stax shim: the CUDA execution model on the host (STAX_EMU), or
// the few names the device compiler needs
#ifdef STAX_EMU
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#define __global__
#define __device__
#define __forceinline__ inline
struct stax_dim3 { unsigned x, y, z; };
// The running thread's coordinates: the scheduler sets them before it
// resumes a fiber (fibers switch only through the scheduler).
static stax_dim3 threadIdx, blockIdx, blockDim, gridDim;

// Kernels with barriers or shuffles run each block's threads as fibers
// (a context switch of the callee-saved registers on x86-64, ucontext
// elsewhere — glibc's swapcontext makes two system calls per switch): a
// fiber runs until it waits at __syncthreads() or at a
// shuffle, or returns; when none can run, the scheduler completes the
// shuffles whose warps have arrived (the values of the lanes at that call),
// else releases the barrier once every live thread waits there, else
// reports a deadlock. The first error of a launch is kept for the host
// (stax_emu_error) and ends the launch.
enum { STAX_RUN = 0, STAX_BAR, STAX_SHFL, STAX_DONE };
#if defined(__x86_64__) && !defined(STAX_EMU_UCONTEXT)  // STAX_EMU_UCONTEXT: the portable switch
#define STAX_EMU_FAST_SWITCH 1
// Saves the callee-saved registers, MXCSR and the x87 control word on the
// current stack, stores its pointer in *from and continues on `to`.
extern "C" __attribute__((visibility("hidden"))) void stax_emu_switch(void** from, void* to);
__asm__(".text\n.p2align 4\n.globl stax_emu_switch\n.hidden stax_emu_switch\n"
        ".type stax_emu_switch,@function\nstax_emu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
        ".size stax_emu_switch, .-stax_emu_switch\n");
#endif
struct StaxFiber {
  ucontext_t ctx;
  void* sp;
  int state;
  unsigned long long val, got;  // a shuffle's value and result, as bits
  int delta, width, xor_mode;
  unsigned mask;
};
struct StaxEmu {
  StaxFiber* f;
  unsigned n;
  int cur;                         // the running fiber, -1 in the scheduler
  ucontext_t sched;
  void* sched_sp;
  unsigned long long epoch;        // barrier intervals, over all blocks
  unsigned long long block_serial; // blocks run in this module
  char* stacks;
  size_t stack_size;
  void (*body)(void*);
  void* arg;
  char err[512];
};
static StaxEmu stax_emu = {nullptr, 0, -1, {}, nullptr, 1, 0, nullptr, 0, nullptr, nullptr, {0}};

extern "C" const char* stax_emu_error() { return stax_emu.err; }
extern "C" void stax_emu_clear_error() { stax_emu.err[0] = 0; }
static void stax_emu_fail(const char* fmt, ...) {
  if (stax_emu.err[0]) return;  // the first error of the launch
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(stax_emu.err, sizeof stax_emu.err, fmt, ap);
  va_end(ap);
  if (!stax_emu.err[0]) strcpy(stax_emu.err, "error");
}

static void stax_emu_wait(int state) {
  StaxFiber& f = stax_emu.f[stax_emu.cur];
  f.state = state;
#ifdef STAX_EMU_FAST_SWITCH
  stax_emu_switch(&f.sp, stax_emu.sched_sp);
#else
  swapcontext(&f.ctx, &stax_emu.sched);
#endif
}
static void __syncthreads() {
  if (stax_emu.cur < 0) { stax_emu_fail("__syncthreads() outside a fiber launch"); return; }
  stax_emu_wait(STAX_BAR);
}
template <class T> static T stax_emu_shfl(unsigned mask, T v, int delta, int width, int xor_mode) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  if (stax_emu.cur < 0) { stax_emu_fail("a warp shuffle outside a fiber launch"); return v; }
  if (width < 1 || width > 32 || (width & (width - 1))) { stax_emu_fail("shuffle width %d", width); return v; }
  StaxFiber& f = stax_emu.f[stax_emu.cur];
  f.val = 0;
  memcpy(&f.val, &v, sizeof(T));
  f.delta = delta; f.width = width; f.xor_mode = xor_mode; f.mask = mask;
  stax_emu_wait(STAX_SHFL);
  T r;
  memcpy(&r, &stax_emu.f[stax_emu.cur].got, sizeof(T));
  return r;
}
template <class T> static T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return stax_emu_shfl(mask, v, int(delta), width, 0);
}
template <class T> static T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return stax_emu_shfl(mask, v, lane_mask, width, 1);
}

// __shared__ arrays with a race detector: each element remembers the block,
// the barrier interval and the thread of its last write. Reading an element
// this block has not written, or one another thread wrote since the last
// __syncthreads(), and two threads writing one element in an interval, are
// errors — never some value.
template <class T, int N> struct StaxShared {
  T v[N];
  unsigned long long blk[N], ep[N];
  unsigned who[N];
  struct Ref {
    StaxShared* s;
    long long i;
    operator T() const { return s->read(i); }
    Ref& operator=(T x) { s->write(i, x); return *this; }
  };
  Ref operator[](long long i) { return Ref{this, i}; }
  bool in_range(long long i, const char* what) {
    if (i >= 0 && i < N) return true;
    stax_emu_fail("thread %u of block %u %s __shared__ element %lld of %d", threadIdx.x, blockIdx.x, what, i, N);
    return false;
  }
  T read(long long i) {
    if (!in_range(i, "reads")) return T();
    if (blk[i] != stax_emu.block_serial)
      stax_emu_fail("thread %u of block %u reads __shared__ element %lld, which no thread of the block has written",
                    threadIdx.x, blockIdx.x, i);
    else if (ep[i] == stax_emu.epoch && who[i] != threadIdx.x)
      stax_emu_fail("race: thread %u of block %u reads __shared__ element %lld, written by thread %u since the last "
                    "__syncthreads()", threadIdx.x, blockIdx.x, i, who[i]);
    return v[i];
  }
  void write(long long i, T x) {
    if (!in_range(i, "writes")) return;
    if (blk[i] == stax_emu.block_serial && ep[i] == stax_emu.epoch && who[i] != threadIdx.x)
      stax_emu_fail("race: threads %u and %u of block %u write __shared__ element %lld between two barriers", who[i],
                    threadIdx.x, blockIdx.x, i);
    v[i] = x;
    blk[i] = stax_emu.block_serial;
    ep[i] = stax_emu.epoch;
    who[i] = threadIdx.x;
  }
};
// Static: one array for all the block's fibers (blocks run one at a time).
#define STAX_SHARED(T, name, N) static StaxShared<T, N> name

static void stax_emu_entry() {
  stax_emu.body(stax_emu.arg);
  stax_emu.f[stax_emu.cur].state = STAX_DONE;
#ifdef STAX_EMU_FAST_SWITCH
  stax_emu_switch(&stax_emu.f[stax_emu.cur].sp, stax_emu.sched_sp);  // never resumed
  abort();
#endif  // else uc_link returns to the scheduler
}

// Completes the shuffles of warps whose lanes in the mask have all arrived.
static bool stax_emu_shuffles() {
  bool progressed = false;
  StaxFiber* f = stax_emu.f;
  for (unsigned base = 0; base < stax_emu.n; base += 32) {
    unsigned hi = base + 32 < stax_emu.n ? base + 32 : stax_emu.n;
    int first = -1;
    for (unsigned l = base; l < hi; ++l)
      if (f[l].state == STAX_SHFL) { first = int(l); break; }
    if (first < 0) continue;
    unsigned mask = f[first].mask;
    bool ready = true;
    for (unsigned l = base; l < hi; ++l) {
      if (!(mask >> (l - base) & 1u)) continue;
      if (f[l].state == STAX_DONE) {
        stax_emu_fail("lane %u of warp %u (block %u) has exited, but the shuffle's mask 0x%x names it", l - base,
                      base / 32, blockIdx.x, mask);
        return false;
      }
      if (f[l].state != STAX_SHFL) ready = false;
      else if (f[l].mask != mask) {
        stax_emu_fail("the lanes of warp %u (block %u) shuffle with different masks", base / 32, blockIdx.x);
        return false;
      }
    }
    if (!ready) continue;
    for (unsigned l = base; l < hi; ++l) {
      if (f[l].state != STAX_SHFL) continue;
      int i = int(l - base), w = f[l].width;
      int src = f[l].xor_mode ? (i ^ f[l].delta) : i + f[l].delta;
      if (f[l].xor_mode ? (src / w != i / w) : ((i % w) + f[l].delta >= w || f[l].delta < 0)) src = i;
      if (src < 0 || base + unsigned(src) >= hi || !(mask >> src & 1u) || f[base + unsigned(src)].state != STAX_SHFL) {
        stax_emu_fail("lane %d of warp %u (block %u) reads lane %d, which is not in the shuffle", i, base / 32,
                      blockIdx.x, src);
        return false;
      }
      f[l].got = f[base + unsigned(src)].val;
    }
    for (unsigned l = base; l < hi; ++l)
      if (f[l].state == STAX_SHFL) f[l].state = STAX_RUN;
    progressed = true;
  }
  return progressed;
}

static void stax_emu_block(unsigned b) {
  blockIdx.x = b;
  ++stax_emu.block_serial;
  ++stax_emu.epoch;
  for (unsigned t = 0; t < stax_emu.n; ++t) {
    StaxFiber& f = stax_emu.f[t];
    char* base = stax_emu.stacks + size_t(t) * stax_emu.stack_size;
#ifdef STAX_EMU_FAST_SWITCH
    // The frame stax_emu_switch pops: MXCSR and control word, six
    // registers, then `ret` into the entry with the stack as after a call.
    unsigned long long* top = (unsigned long long*)((size_t)(base + stax_emu.stack_size) & ~(size_t)15);
    unsigned long long* sp = top - 9;  // 16-byte aligned + 8 once entered
    unsigned csr[2];
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(csr[0]), "=m"(csr[1]));
    memcpy(sp, csr, 8);
    for (int i = 1; i <= 6; ++i) sp[i] = 0;
    sp[7] = (unsigned long long)(size_t)&stax_emu_entry;
    sp[8] = 0;
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = base;
    f.ctx.uc_stack.ss_size = stax_emu.stack_size;
    f.ctx.uc_link = &stax_emu.sched;
    makecontext(&f.ctx, stax_emu_entry, 0);
#endif
    f.state = STAX_RUN;
  }
  for (;;) {
    for (unsigned t = 0; t < stax_emu.n; ++t) {
      if (stax_emu.f[t].state != STAX_RUN) continue;
      stax_emu.cur = int(t);
      threadIdx.x = t;
#ifdef STAX_EMU_FAST_SWITCH
      stax_emu_switch(&stax_emu.sched_sp, stax_emu.f[t].sp);
#else
      swapcontext(&stax_emu.sched, &stax_emu.f[t].ctx);
#endif
      stax_emu.cur = -1;
    }
    if (stax_emu.err[0]) return;
    if (stax_emu_shuffles()) continue;
    if (stax_emu.err[0]) return;
    unsigned live = 0, bar = 0, shfl = 0;
    for (unsigned t = 0; t < stax_emu.n; ++t) {
      live += stax_emu.f[t].state != STAX_DONE;
      bar += stax_emu.f[t].state == STAX_BAR;
      shfl += stax_emu.f[t].state == STAX_SHFL;
    }
    if (live == 0) return;
    if (bar == live) {  // exited threads do not hold a barrier back
      ++stax_emu.epoch;
      for (unsigned t = 0; t < stax_emu.n; ++t)
        if (stax_emu.f[t].state == STAX_BAR) stax_emu.f[t].state = STAX_RUN;
      continue;
    }
    stax_emu_fail("deadlock in block %u: %u threads wait at __syncthreads(), %u at a shuffle whose lanes never come", b,
                  bar, shfl);
    return;
  }
}

template <class F> static void stax_emu_trampoline(void* p) { (*static_cast<F*>(p))(); }

// Runs `body` (the kernel call) as grid x block threads, block by block.
template <class F> static void stax_emu_launch(unsigned grid, unsigned block, F body) {
  gridDim.x = grid; blockDim.x = block;
  gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;
  stax_emu.n = block;
  stax_emu.stack_size = size_t(256) << 10;
  size_t bytes = stax_emu.stack_size * block;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  StaxFiber* fibers = static_cast<StaxFiber*>(calloc(block, sizeof(StaxFiber)));
  if (mem == MAP_FAILED || !fibers) {
    stax_emu_fail("no memory for %u fibers", block);
    if (mem != MAP_FAILED) munmap(mem, bytes);
    free(fibers);
    return;
  }
  stax_emu.stacks = static_cast<char*>(mem);
  stax_emu.f = fibers;
  stax_emu.body = stax_emu_trampoline<F>;
  stax_emu.arg = &body;
  for (unsigned b = 0; b < grid && !stax_emu.err[0]; ++b) stax_emu_block(b);
  stax_emu.f = nullptr;
  stax_emu.n = 0;
  threadIdx.x = 0;
  free(fibers);
  munmap(mem, bytes);
}
#else
#define STAX_SHARED(T, name, N) __shared__ T name[N]
#endif
)CUDA";
  return text;
}

}  // namespace stax::backends::gpu
