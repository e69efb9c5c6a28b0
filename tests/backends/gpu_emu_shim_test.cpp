// The emulator's shim of the CUDA execution model (emu_shim.h), on kernels
// written by hand: a block reduction (block-stride partials, a
// __shfl_down_sync tree per warp, warp results through __shared__ memory
// after __syncthreads()) gives the bits of a C++ model of the same order,
// with the x86-64 register switch and with ucontext;
// a butterfly of __shfl_xor_sync; and the deliberately wrong kernels — the
// barrier left out (the read of another thread's write is reported, never
// some value), two writers between barriers, a deadlock between a barrier
// and a shuffle, a shuffle naming an exited lane.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/gpu/cuda_prelude.h"
#include "backends/gpu/emulator.h"

namespace gpu = stax::backends::gpu;

namespace {

const char* kKernels = R"CUDA(
extern "C" __global__ void blockred(const float* x, float* out, long long n, int barrier) {
  STAX_SHARED(float, sm, 8);
  const unsigned tid = threadIdx.x;
  float v = -0.0f;
  for (long long j = tid; j < n; j += blockDim.x) v = v + x[blockIdx.x * n + j];
  for (int h = 16; h >= 1; h /= 2) {
    const float o = __shfl_down_sync(0xffffffffu, v, h);
    v = v + o;
  }
  if (tid % 32 == 0) sm[tid / 32] = v;
  if (barrier) __syncthreads();
  if (tid == 0) {
    float r = -0.0f;
    for (int g = 0; g < 8; ++g) {
      const float a = sm[g];
      r = r + a;
    }
    out[blockIdx.x] = r;
  }
}
extern "C" void blockred_emu(const float* x, float* out, long long n, int barrier, unsigned grid) {
  stax_emu_launch(grid, 256, [&]() { blockred(x, out, n, barrier); });
}

extern "C" __global__ void butterfly(const int* x, int* out) {
  int v = x[threadIdx.x];
  for (int h = 1; h < 32; h *= 2) {
    const int o = __shfl_xor_sync(0xffffffffu, v, h);
    v = v + o;
  }
  out[threadIdx.x] = v;
}
extern "C" void butterfly_emu(const int* x, int* out) {
  stax_emu_launch(1, 64, [&]() { butterfly(x, out); });
}

// 0: two writers; 1: a deadlock (half a warp at a barrier, the other half at
// a shuffle); 2: a shuffle naming an exited lane; 3: a barrier reached by
// every live thread while some have exited (allowed).
extern "C" __global__ void wrong(int* out, int which) {
  STAX_SHARED(int, sm, 4);
  const unsigned tid = threadIdx.x;
  int v = int(tid);
  if (which == 0) {
    sm[0] = v;
    __syncthreads();
    const int a = sm[0];
    out[tid] = a;
  } else if (which == 1) {
    if (tid < 16) __syncthreads();
    else v = __shfl_down_sync(0xffffffffu, v, 1);
    out[tid] = v;
  } else if (which == 2) {
    if (tid == 5) return;
    out[tid] = __shfl_down_sync(0xffffffffu, v, 1);
  } else {
    if (tid >= 16) return;
    if (tid < 4) sm[tid] = v;
    __syncthreads();
    const int a = sm[tid % 4];
    out[tid] = a;
  }
}
extern "C" void wrong_emu(int* out, int which) {
  stax_emu_launch(1, 32, [&]() { wrong(out, which); });
}
)CUDA";

/// The kernels with the shim's x86-64 register switch (where it has one),
/// or with ucontext (the portable switch).
const gpu::EmuModule& module(bool portable = false) {
  static gpu::EmuModule fast(std::string(gpu::cuda_prelude()) + kKernels);
  static gpu::EmuModule ucontext("#define STAX_EMU_UCONTEXT 1\n" + std::string(gpu::cuda_prelude()) + kKernels);
  return portable ? ucontext : fast;
}

template <class F>
F fn(const char* name, bool portable = false) {
  // Through void (*)(): the hand-written launchers have their own signatures.
  return reinterpret_cast<F>(reinterpret_cast<void (*)()>(module(portable).launcher(name)));
}

/// The order of blockred: 256 threads, warps of 32, shuffle trees, then the
/// 8 warp results in turn.
float model(const float* x, int64_t n) {
  std::vector<float> v(256, -0.0f);
  for (int t = 0; t < 256; ++t)
    for (int64_t j = t; j < n; j += 256) v[size_t(t)] = v[size_t(t)] + x[j];
  float r = -0.0f;
  for (int g = 0; g < 8; ++g) {
    float* l = v.data() + g * 32;
    for (int h = 16; h >= 1; h /= 2) {
      std::vector<float> o(l, l + 32);
      for (int i = 0; i < 32; ++i) l[i] = o[size_t(i)] + (i + h < 32 ? o[size_t(i + h)] : o[size_t(i)]);
    }
    r = r + l[0];
  }
  return r;
}

}  // namespace

TEST_CASE("emulator shim: a hand-written block reduction gives the bits of its order") {
  bool portable = GENERATE(false, true);
  INFO((portable ? "ucontext" : "register switch"));
  auto run = fn<void (*)(const float*, float*, long long, int, unsigned)>("blockred", portable);
  std::mt19937 gen(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int64_t n : {1, 100, 256, 1000, 4099}) {
    const unsigned rows = 3;
    std::vector<float> x(size_t(n) * rows), out(rows, 0.0f);
    for (float& v : x) v = d(gen) * 1000.0f;
    module(portable).clear_error();
    run(x.data(), out.data(), n, 1, rows);
    INFO("n = " << n);
    REQUIRE(module(portable).error() == "");
    for (unsigned r = 0; r < rows; ++r)
      CHECK(std::bit_cast<uint32_t>(out[r]) == std::bit_cast<uint32_t>(model(x.data() + r * size_t(n), n)));
  }
}

TEST_CASE("emulator shim: without the barrier the read of another thread's write is an error") {
  auto run = fn<void (*)(const float*, float*, long long, int, unsigned)>("blockred");
  std::vector<float> x(2 * 1000, 1.0f), out(2, 0.0f);
  module().clear_error();
  run(x.data(), out.data(), 1000, 0, 2);
  std::string err = module().error();
  INFO(err);
  CHECK(err.find("reads __shared__ element 1") != std::string::npos);
  // And the same launch with the barrier is clean again.
  module().clear_error();
  run(x.data(), out.data(), 1000, 1, 2);
  CHECK(module().error() == "");
  CHECK(out[0] == 1000.0f);
}

TEST_CASE("emulator shim: __shfl_xor_sync exchanges within each warp") {
  auto run = fn<void (*)(const int*, int*)>("butterfly");
  std::vector<int> x(64), out(64, -1);
  for (int i = 0; i < 64; ++i) x[size_t(i)] = i * i;
  module().clear_error();
  run(x.data(), out.data());
  REQUIRE(module().error() == "");
  int w0 = 0, w1 = 0;
  for (int i = 0; i < 32; ++i) w0 += i * i;
  for (int i = 32; i < 64; ++i) w1 += i * i;
  for (int i = 0; i < 64; ++i) CHECK(out[size_t(i)] == (i < 32 ? w0 : w1));
}

TEST_CASE("emulator shim: races, deadlocks and missing lanes are reported") {
  auto run = fn<void (*)(int*, int)>("wrong");
  std::vector<int> out(32);
  const char* want[] = {"race: threads 0 and 1 of block 0 write __shared__ element 0", "deadlock in block 0: 16 threads",
                        "lane 5 of warp 0 (block 0) has exited", ""};
  for (int which = 0; which < 4; ++which) {
    module().clear_error();
    run(out.data(), which);
    std::string err = module().error();
    INFO("case " << which << ": " << err);
    if (*want[which]) CHECK(err.find(want[which]) != std::string::npos);
    else CHECK(err == "");
  }
}
