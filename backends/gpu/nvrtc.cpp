#include "backends/gpu/nvrtc.h"

#ifdef STAX_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace stax::backends::gpu {

std::vector<std::string> nvrtc_options(const std::string& arch) {
  return {"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "--gpu-architecture=" + arch,
          "--std=c++17"};
}

#ifdef STAX_HAVE_NVRTC

bool have_nvrtc() { return true; }

PtxResult compile_ptx(const std::string& source, const std::string& arch) {
  PtxResult r;
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "stax_kernels.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  std::vector<std::string> opts = nvrtc_options(arch);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  nvrtcResult c = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  r.log.resize(n);
  if (n) nvrtcGetProgramLog(prog, r.log.data());
  while (!r.log.empty() && r.log.back() == '\0') r.log.pop_back();
  if (c == NVRTC_SUCCESS) {
    nvrtcGetPTXSize(prog, &n);
    r.ptx.resize(n);
    nvrtcGetPTX(prog, r.ptx.data());
    while (!r.ptx.empty() && r.ptx.back() == '\0') r.ptx.pop_back();
    r.ok = true;
  } else {
    r.log = std::string(nvrtcGetErrorString(c)) + "\n" + r.log;
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

#else

bool have_nvrtc() { return false; }

PtxResult compile_ptx(const std::string&, const std::string&) {
  PtxResult r;
  r.log = "no NVRTC in this build (CMake did not find the CUDA toolkit)";
  return r;
}

#endif

}  // namespace stax::backends::gpu
