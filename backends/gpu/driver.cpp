#include "backends/gpu/driver.h"

#include <dlfcn.h>

namespace stax::backends::gpu {

namespace {
// The few driver types a launch needs, by their ABI (cuda.h is not needed).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUdeviceptr = unsigned long long;
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
  a.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a.lib) throw DriverError("no GPU driver (libcuda.so.1 not found)");
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
  a.check(a.cuInit(0), "cuInit");
  a.check(a.cuDeviceGet(&a.dev, 0), "cuDeviceGet");
  a.check(a.cuDeviceGetAttribute(&sms_, kAttrMultiprocessorCount, a.dev), "cuDeviceGetAttribute");
  a.check(a.cuDevicePrimaryCtxRetain(&a.ctx, a.dev), "cuDevicePrimaryCtxRetain");
  a.check(a.cuCtxSetCurrent(a.ctx), "cuCtxSetCurrent");
}

Device::~Device() {
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

}  // namespace stax::backends::gpu
