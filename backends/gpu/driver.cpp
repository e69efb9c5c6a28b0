#include "backends/gpu/driver.h"

#include <dlfcn.h>

#include <cstdlib>

namespace stax::backends::gpu {

namespace {
// The few driver types a launch needs, by their ABI (cuda.h is not needed).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUdeviceptr = unsigned long long;
using CUevent = void*;
using CUstream = void*;
constexpr int kFuncAttrSharedSizeBytes = 1;  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
constexpr int kAttrMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
}  // namespace

struct Device::Api {
  void* lib = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr*, size_t*, CUmodule, const char*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                             void**, void**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUevent ev_start = nullptr, ev_stop = nullptr;  ///< created on first use

  /// Runs `body` between two events on the default stream; its time in ms.
  template <class Body>
  double timed(Body&& body) {
    if (!ev_start) {
      check(cuEventCreate(&ev_start, 0), "cuEventCreate");
      check(cuEventCreate(&ev_stop, 0), "cuEventCreate");
    }
    check(cuEventRecord(ev_start, nullptr), "cuEventRecord");
    body();
    check(cuEventRecord(ev_stop, nullptr), "cuEventRecord");
    check(cuEventSynchronize(ev_stop), "cuEventSynchronize");
    float ms = 0;
    check(cuEventElapsedTime(&ms, ev_start, ev_stop), "cuEventElapsedTime");
    return double(ms);
  }

  template <class F>
  void bind(F& f, const char* name) {
    void* s = dlsym(lib, name);
    if (!s) throw DriverError(std::string("the GPU driver lacks ") + name);
    f = reinterpret_cast<F>(s);
  }
  void check(CUresult r, const char* what) const {
    if (r == 0) return;
    const char* msg = nullptr;
    if (cuGetErrorString) cuGetErrorString(r, &msg);
    throw DriverError(std::string(what) + " failed: " + (msg ? msg : "error " + std::to_string(r)));
  }
};

Device::Device() : api_(std::make_unique<Api>()) {
  Api& a = *api_;
  // $STAX_CUDA_DRIVER: another driver library (the tests name a missing
  // one to check the no-driver message on a machine that has a GPU).
  const char* env = std::getenv("STAX_CUDA_DRIVER");
  const std::string lib = env && *env ? env : "libcuda.so.1";
  a.lib = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!a.lib) throw DriverError("no GPU driver (" + lib + " not found)");
  a.bind(a.cuGetErrorString, "cuGetErrorString");
  a.bind(a.cuInit, "cuInit");
  a.bind(a.cuDeviceGet, "cuDeviceGet");
  a.bind(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  a.bind(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  a.bind(a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  a.bind(a.cuCtxSetCurrent, "cuCtxSetCurrent");
  a.bind(a.cuCtxSynchronize, "cuCtxSynchronize");
  a.bind(a.cuModuleLoadData, "cuModuleLoadData");
  a.bind(a.cuModuleGetFunction, "cuModuleGetFunction");
  a.bind(a.cuModuleGetGlobal, "cuModuleGetGlobal_v2");
  a.bind(a.cuMemAlloc, "cuMemAlloc_v2");
  a.bind(a.cuMemFree, "cuMemFree_v2");
  a.bind(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  a.bind(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  a.bind(a.cuLaunchKernel, "cuLaunchKernel");
  a.bind(a.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  a.bind(a.cuFuncGetAttribute, "cuFuncGetAttribute");
  a.bind(a.cuEventCreate, "cuEventCreate");
  a.bind(a.cuEventRecord, "cuEventRecord");
  a.bind(a.cuEventSynchronize, "cuEventSynchronize");
  // The first symbol, which every driver keeps; cuEventElapsedTime_v2
  // (CUDA 12.8, the same signature) only where it is missing.
  if (void* s = dlsym(a.lib, "cuEventElapsedTime"))
    a.cuEventElapsedTime = reinterpret_cast<decltype(a.cuEventElapsedTime)>(s);
  else a.bind(a.cuEventElapsedTime, "cuEventElapsedTime_v2");
  a.bind(a.cuEventDestroy, "cuEventDestroy_v2");
  a.check(a.cuInit(0), "cuInit");
  a.check(a.cuDeviceGet(&a.dev, 0), "cuDeviceGet");
  a.check(a.cuDeviceGetAttribute(&sms_, kAttrMultiprocessorCount, a.dev), "cuDeviceGetAttribute");
  a.check(a.cuDevicePrimaryCtxRetain(&a.ctx, a.dev), "cuDevicePrimaryCtxRetain");
  a.check(a.cuCtxSetCurrent(a.ctx), "cuCtxSetCurrent");
}

Device::~Device() {
  if (api_->ev_start) api_->cuEventDestroy(api_->ev_start);
  if (api_->ev_stop) api_->cuEventDestroy(api_->ev_stop);
  if (api_->ctx) api_->cuDevicePrimaryCtxRelease(api_->dev);
  // The library stays loaded: the driver does not support being unloaded.
}

uintptr_t Device::load_module(const std::string& ptx) {
  CUmodule m = nullptr;
  api_->check(api_->cuModuleLoadData(&m, ptx.c_str()), "cuModuleLoadData");
  return reinterpret_cast<uintptr_t>(m);
}
uintptr_t Device::function(uintptr_t module, const std::string& name) {
  CUfunction f = nullptr;
  api_->check(api_->cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(module), name.c_str()), "cuModuleGetFunction");
  return reinterpret_cast<uintptr_t>(f);
}
uint64_t Device::global(uintptr_t module, const std::string& name, size_t* bytes) {
  CUdeviceptr p = 0;
  size_t n = 0;
  api_->check(api_->cuModuleGetGlobal(&p, &n, reinterpret_cast<CUmodule>(module), name.c_str()), "cuModuleGetGlobal");
  if (bytes) *bytes = n;
  return p;
}
uint64_t Device::alloc(size_t bytes) {
  CUdeviceptr p = 0;
  api_->check(api_->cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  return p;
}
void Device::free(uint64_t p) { api_->cuMemFree(p); }
void Device::upload(uint64_t dst, const void* src, size_t bytes) {
  if (bytes) api_->check(api_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}
void Device::download(void* dst, uint64_t src, size_t bytes) {
  if (bytes) api_->check(api_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}
void Device::launch(uintptr_t f, unsigned grid, unsigned block, std::vector<void*>& args) {
  api_->check(api_->cuLaunchKernel(reinterpret_cast<CUfunction>(f), grid, 1, 1, block, 1, 1, 0, nullptr, args.data(),
                                   nullptr),
              "cuLaunchKernel");
  api_->check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

double Device::launch_timed(uintptr_t f, unsigned grid, unsigned block, std::vector<void*>& args) {
  Api& a = *api_;
  return a.timed([&] {
    a.check(a.cuLaunchKernel(reinterpret_cast<CUfunction>(f), grid, 1, 1, block, 1, 1, 0, nullptr, args.data(),
                             nullptr),
            "cuLaunchKernel");
  });
}
double Device::copy_timed(uint64_t dst, uint64_t src, size_t bytes) {
  Api& a = *api_;
  return a.timed([&] { a.check(a.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD"); });
}
int Device::shared_bytes(uintptr_t f) {
  int n = 0;
  api_->check(api_->cuFuncGetAttribute(&n, kFuncAttrSharedSizeBytes, reinterpret_cast<CUfunction>(f)),
              "cuFuncGetAttribute");
  return n;
}

}  // namespace stax::backends::gpu
