// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so
// that nothing in the build needs a GPU or the driver: the calls a launch
// needs (context, module from PTX, memory, launch), each checked.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stax::backends::gpu {

/// A driver error: missing library, no device, or a failing call.
struct DriverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Device {
 public:
  /// Loads the driver ($STAX_CUDA_DRIVER when set, else libcuda.so.1),
  /// initialises device 0 and its primary context. Throws DriverError
  /// ("no GPU driver (libcuda.so.1 not found)", ...).
  Device();
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// A module from PTX; its functions by name.
  uintptr_t load_module(const std::string& ptx);
  uintptr_t function(uintptr_t module, const std::string& name);
  /// The address of a module's global variable (cuModuleGetGlobal).
  uint64_t global(uintptr_t module, const std::string& name, size_t* bytes = nullptr);
  uint64_t alloc(size_t bytes);
  void free(uint64_t p);
  void upload(uint64_t dst, const void* src, size_t bytes);
  void download(void* dst, uint64_t src, size_t bytes);
  /// Launches f(args...) on a 1-D grid and waits for it.
  void launch(uintptr_t f, unsigned grid, unsigned block, std::vector<void*>& args);
  /// launch(), timed with CUDA events recorded around the launch on the
  /// default stream (cuEventElapsedTime, ms; `stax bench --backend gpu`).
  double launch_timed(uintptr_t f, unsigned grid, unsigned block, std::vector<void*>& args);
  /// A device-to-device copy of `bytes` (cuMemcpyDtoD), timed with events (ms).
  double copy_timed(uint64_t dst, uint64_t src, size_t bytes);
  /// A kernel's static __shared__ bytes (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).
  int shared_bytes(uintptr_t f);
  int sm_count() const { return sms_; }

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  int sms_ = 0;
};

}  // namespace stax::backends::gpu
