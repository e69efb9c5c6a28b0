#include "backends/cpu/object_cache.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "mathlib/f32_lanes.h"

namespace stax::backends::cpu {

namespace fs = std::filesystem;

namespace {

/// Bumped whenever the entry layout, the kernels' calling convention or the
/// meaning of a kernel's range changes (v2: a range may count blocks of
/// rows; v3: so may a rank-1 fold's, KernelShape::transposed; v4: a small
/// kernel takes its whole range only, KernelShape::whole; v5: a rank-2
/// pointwise kernel's may count blocks of rows, KernelShape::tile), so that
/// old entries miss.
constexpr const char* kFormat = "stax-jit-object-v5";
constexpr char kMagic[8] = {'S', 'T', 'A', 'X', 'J', 'I', 'T', '1'};

std::array<uint8_t, 32> sha256(const std::string& a, const std::string& b) {
  llvm::SHA256 h;
  uint64_t n = a.size();
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&n), sizeof n));
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(a.data()), a.size()));
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(b.data()), b.size()));
  return h.final();
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

}  // namespace

std::string code_generator_identity() {
  std::string s = std::string(kFormat) + "\nLLVM " + LLVM_VERSION_STRING + "\n" +
                  llvm::sys::getProcessTriple() + "\ncpu " + llvm::sys::getHostCPUName().str() +
                  "\nfeatures";
  llvm::StringMap<bool> features;
  std::vector<std::string> on;
  if (llvm::sys::getHostCPUFeatures(features))
    for (const auto& f : features)
      if (f.second) on.push_back(f.first().str());
  std::sort(on.begin(), on.end());  // StringMap's order is not stable
  for (const std::string& f : on) s += " +" + f;
  for (const std::string& f : jit_disabled_features()) s += " -" + f;
  return s;
}

std::vector<std::string> jit_disabled_features() {
#if defined(__x86_64__)
  if (math::f32::isa_capped_at_avx2()) return {"avx512f"};
#endif
  return {};
}

std::optional<std::string> default_cache_dir() {
  auto env = [](const char* n) -> const char* {
    const char* v = std::getenv(n);
    return v && *v ? v : nullptr;
  };
  if (const char* on = env("STAX_JIT_CACHE"); on && std::string(on) == "0") return std::nullopt;
  if (const char* d = env("STAX_JIT_CACHE_DIR")) return std::string(d);
  if (const char* x = env("XDG_CACHE_HOME")) return std::string(x) + "/stax/jit";
  if (const char* h = env("HOME")) return std::string(h) + "/.cache/stax/jit";
  return std::nullopt;
}

ObjectFileCache::ObjectFileCache(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::string ObjectFileCache::path_of(const std::string& key) const {
  auto h = sha256(key, "");
  return dir_ + "/" + hex(h.data(), 16) + ".o";
}

// Layout: magic, key size, object size (little-endian u64), SHA-256 of the
// key and object, the key, the object.
std::optional<std::string> ObjectFileCache::load(const std::string& key) const {
  std::ifstream f(path_of(key), std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  constexpr size_t head = sizeof kMagic + 16 + 32;
  if (s.size() < head || std::memcmp(s.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  uint64_t nk, no;
  std::memcpy(&nk, s.data() + 8, 8);
  std::memcpy(&no, s.data() + 16, 8);
  if (nk != key.size() || s.size() - head < nk || s.size() - head - nk != no) return std::nullopt;
  if (s.compare(head, nk, key) != 0) return std::nullopt;
  std::string obj = s.substr(head + nk);
  auto sum = sha256(key, obj);
  if (std::memcmp(sum.data(), s.data() + 24, 32) != 0) return std::nullopt;
  return obj;
}

void ObjectFileCache::store(const std::string& key, const std::string& object) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;
  std::string final_path = path_of(key);
  // A name no other process or thread uses: rename() then replaces the
  // entry in one step.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string tmp = final_path + ".tmp" + std::to_string(rng());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    uint64_t nk = key.size(), no = object.size();
    auto sum = sha256(key, object);
    f.write(kMagic, sizeof kMagic);
    f.write(reinterpret_cast<const char*>(&nk), 8);
    f.write(reinterpret_cast<const char*>(&no), 8);
    f.write(reinterpret_cast<const char*>(sum.data()), 32);
    f.write(key.data(), std::streamsize(key.size()));
    f.write(object.data(), std::streamsize(object.size()));
    if (!f.flush()) {
      f.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, final_path, ec);
  if (ec) fs::remove(tmp, ec);
  if (++stores_ % 256 == 0) prune();
}

// A fuzzing campaign writes new kernels all the time: keep the directory
// under its bound by removing the oldest entries. Races with other
// processes are harmless: a removed entry is a miss.
void ObjectFileCache::prune() {
  std::error_code ec;
  struct E {
    fs::file_time_type t;
    int64_t size;
    fs::path p;
  };
  std::vector<E> es;
  int64_t total = 0;
  for (const auto& d : fs::directory_iterator(dir_, ec)) {
    std::error_code e2;
    if (d.path().extension() != ".o" || !d.is_regular_file(e2)) continue;
    int64_t n = int64_t(d.file_size(e2));
    auto t = d.last_write_time(e2);
    if (e2) continue;
    es.push_back({t, n, d.path()});
    total += n;
  }
  if (total <= max_bytes_) return;
  std::sort(es.begin(), es.end(), [](const E& a, const E& b) { return a.t < b.t; });
  for (const E& e : es) {
    if (total <= max_bytes_ * 3 / 4) break;  // some slack: not a scan per store
    if (fs::remove(e.p, ec)) total -= e.size;
  }
}

}  // namespace stax::backends::cpu
