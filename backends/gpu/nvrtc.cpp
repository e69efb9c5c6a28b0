#include "backends/gpu/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace stax::backends::gpu {

namespace fs = std::filesystem;

std::vector<std::string> nvrtc_options(const std::string& arch) {
  return {"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "--gpu-architecture=" + arch,
          "--std=c++17", "--device-int128",
          // mathlib's fast paths carry no execution-space annotations
          "--device-as-default-execution-space"};
}

namespace {

// The few entry points of NVRTC's C API used here (nvrtc.h, CUDA 11-13): the
// program is an opaque pointer and every call returns an int status (0 is
// NVRTC_SUCCESS).
using Prog = void*;
struct Api {
  int (*create)(Prog*, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile)(Prog, int, const char* const*);
  int (*log_size)(Prog, size_t*);
  int (*log)(Prog, char*);
  int (*ptx_size)(Prog, size_t*);
  int (*ptx)(Prog, char*);
  int (*destroy)(Prog*);
  const char* (*error_string)(int);
  int (*version)(int*, int*);
};

std::string cuda_prefix() {
  const char* p = std::getenv("STAX_CUDA_PREFIX");
  return p && *p ? p : "/opt/stax-cuda";
}

/// The file REL (e.g. "nvidia/cuda_nvrtc/lib/libnvrtc.so.12") in a
/// site-packages folder of the wheels' virtual environment, or "".
std::string in_wheels(const std::string& rel) {
  std::error_code ec;
  fs::path lib = fs::path(cuda_prefix()) / "venv" / "lib";
  for (const auto& py : fs::directory_iterator(lib, ec)) {
    fs::path f = py.path() / "site-packages" / rel;
    if (fs::exists(f, ec)) return f.string();
  }
  return "";
}

struct Loaded {
  Api api{};
  bool ok = false;
  std::string status;
  fs::path dir;  ///< where libnvrtc was found
};

template <class F>
bool sym(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

Loaded load() {
  Loaded l;
  std::vector<std::string> tries;
  if (const char* e = std::getenv("STAX_NVRTC"); e && *e) tries.push_back(e);
  for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"})
    tries.push_back(n);
  if (std::string w = in_wheels("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"); !w.empty()) tries.push_back(w);
  void* h = nullptr;
  std::string which;
  for (const std::string& t : tries)
    if ((h = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      which = t;
      break;
    }
  if (!h) {
    l.status = "no NVRTC (libnvrtc.so.12 not found; scripts/setup.sh installs it under " + cuda_prefix() +
               ", or set STAX_NVRTC)";
    return l;
  }
  Api& a = l.api;
  bool all = sym(h, "nvrtcCreateProgram", a.create) && sym(h, "nvrtcCompileProgram", a.compile) &&
             sym(h, "nvrtcGetProgramLogSize", a.log_size) && sym(h, "nvrtcGetProgramLog", a.log) &&
             sym(h, "nvrtcGetPTXSize", a.ptx_size) && sym(h, "nvrtcGetPTX", a.ptx) &&
             sym(h, "nvrtcDestroyProgram", a.destroy) && sym(h, "nvrtcGetErrorString", a.error_string) &&
             sym(h, "nvrtcVersion", a.version);
  if (!all) {
    l.status = "no NVRTC (" + which + " lacks an entry point)";
    dlclose(h);
    return l;
  }
  int major = 0, minor = 0;
  a.version(&major, &minor);
  l.ok = true;
  l.status = which + " " + std::to_string(major) + "." + std::to_string(minor);
  // The folder the library came from: its toolkit's ptxas is the one that
  // reads the PTX version this NVRTC writes.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(a.version), &info) && info.dli_fname) l.dir = fs::path(info.dli_fname).parent_path();
  return l;  // the handle stays open for the process
}

const Loaded& nvrtc() {
  static const Loaded l = load();
  return l;
}

}  // namespace

bool have_nvrtc() { return nvrtc().ok; }
std::string nvrtc_status() { return nvrtc().status; }

std::string find_ptxas() {
  if (const char* e = std::getenv("STAX_PTXAS"); e && *e) return e;
  std::error_code ec;
  // Beside the loaded NVRTC: lib/ or lib64/ (a toolkit) or cuda_nvrtc/lib
  // (the wheels, whose ptxas is in cuda_nvcc/bin).
  if (const Loaded& l = nvrtc(); l.ok)
    for (const fs::path& f : {l.dir.parent_path() / "bin" / "ptxas",
                              l.dir.parent_path().parent_path() / "cuda_nvcc" / "bin" / "ptxas"})
      if (fs::exists(f, ec)) return f.string();
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  for (size_t i = 0; i <= p.size();) {
    size_t j = p.find(':', i);
    if (j == std::string::npos) j = p.size();
    fs::path f = fs::path(p.substr(i, j - i)) / "ptxas";
    if (j > i && fs::exists(f, ec)) return f.string();
    i = j + 1;
  }
  return in_wheels("nvidia/cuda_nvcc/bin/ptxas");
}

PtxResult compile_ptx(const std::string& source, const std::string& arch) {
  PtxResult r;
  const Loaded& l = nvrtc();
  if (!l.ok) {
    r.log = l.status;
    return r;
  }
  const Api& a = l.api;
  Prog prog = nullptr;
  if (a.create(&prog, source.c_str(), "stax_kernels.cu", 0, nullptr, nullptr) != 0) {
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  std::vector<std::string> opts = nvrtc_options(arch);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  int c = a.compile(prog, int(argv.size()), argv.data());
  size_t n = 0;
  a.log_size(prog, &n);
  r.log.resize(n);
  if (n) a.log(prog, r.log.data());
  while (!r.log.empty() && r.log.back() == '\0') r.log.pop_back();
  if (c == 0) {
    a.ptx_size(prog, &n);
    r.ptx.resize(n);
    a.ptx(prog, r.ptx.data());
    while (!r.ptx.empty() && r.ptx.back() == '\0') r.ptx.pop_back();
    r.ok = true;
  } else {
    r.log = std::string(a.error_string(c)) + "\n" + r.log;
  }
  a.destroy(&prog);
  return r;
}

}  // namespace stax::backends::gpu
