#include "backends/gpu/emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/cpu/jit.h"

namespace stax::backends::gpu {

namespace fs = std::filesystem;

std::string emu_compile_command() {
  return std::string(STAX_HOST_CXX) + " -std=c++20 -O1 -ffp-contract=off -fno-fast-math -shared -fPIC -DSTAX_EMU";
}

EmuModule::EmuModule(const std::string& source) {
  char tmpl[] = "/tmp/stax-gpu-emu-XXXXXX";
  if (!mkdtemp(tmpl)) throw cpu::CompileError("gpu-emu: cannot create a temporary directory");
  fs::path dir(tmpl);
  fs::path cu = dir / "kernels.cpp", so = dir / "kernels.so", log = dir / "log.txt";
  std::ofstream(cu) << source;
  std::string cmd = emu_compile_command() + " -x c++ '" + cu.string() + "' -o '" + so.string() + "' > '" +
                    log.string() + "' 2>&1";
  int rc = std::system(cmd.c_str());
  std::string out;
  if (rc != 0) {
    std::ostringstream ss;
    ss << std::ifstream(log).rdbuf();
    out = ss.str();
  } else {
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) out = dlerror();
  }
  // The file stays while it is loaded: glibc recognises a loaded object by
  // its inode, and a new file reusing a freed inode would get the old code.
  dir_ = dir.string();
  if (!handle_) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw cpu::CompileError("gpu-emu: the host compiler rejected the kernels:\n" + out);
  }
}

EmuModule::~EmuModule() {
  if (handle_) dlclose(handle_);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

EmuLaunch EmuModule::launcher(const std::string& kernel) const {
  void* f = dlsym(handle_, (kernel + "_emu").c_str());
  if (!f) throw cpu::CompileError("gpu-emu: no launcher for " + kernel);
  return reinterpret_cast<EmuLaunch>(f);
}

std::string EmuModule::error() const {
  void* f = dlsym(handle_, "stax_emu_error");
  if (!f) throw cpu::CompileError("gpu-emu: no stax_emu_error in the module");
  return reinterpret_cast<const char* (*)()>(f)();
}

void EmuModule::clear_error() const {
  void* f = dlsym(handle_, "stax_emu_clear_error");
  if (!f) throw cpu::CompileError("gpu-emu: no stax_emu_clear_error in the module");
  reinterpret_cast<void (*)()>(f)();
}

void* EmuModule::tables() const {
  void* f = dlsym(handle_, "stax_tables_addr");
  if (!f) throw cpu::CompileError("gpu-emu: no stax_tables_addr in the module");
  return reinterpret_cast<void* (*)()>(f)();
}

}  // namespace stax::backends::gpu
