// The CPU backend's on-disk cache of kernel object code (JIT
// compile latency). An entry is one file named after a hash of its key; it
// holds the full key text and the object, with a SHA-256 over both. A load
// checks the size, the key and the checksum, so a truncated, corrupted or
// foreign file (another LLVM, another host CPU, a hash collision) is a miss
// and the kernel is compiled again: a hit returns the bits that were stored.
// Writes go to a temporary file renamed into place, so concurrent processes
// (`stax fuzz --jobs`) see an entry whole or not at all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stax::backends::cpu {

/// What identifies the code generator: a format version, the LLVM version,
/// the host triple, CPU name and features. Part of every key.
std::string code_generator_identity();

/// The host features the JIT turns off: AVX-512's where the environment caps
/// the instruction sets at AVX2 (math::f32::isa_capped_at_avx2,
/// STAX_CPU_ISA=avx2), else none. Turning off avx512f turns off every
/// AVX-512 extension that implies it.
std::vector<std::string> jit_disabled_features();

/// The cache directory the environment asks for: none with STAX_JIT_CACHE=0,
/// else $STAX_JIT_CACHE_DIR, else $XDG_CACHE_HOME/stax/jit, else
/// $HOME/.cache/stax/jit; none when no such variable is set.
std::optional<std::string> default_cache_dir();

class ObjectFileCache {
 public:
  /// `dir` is created on first store. `max_bytes` bounds the directory:
  /// past it, the least recently written entries are removed.
  explicit ObjectFileCache(std::string dir, int64_t max_bytes = int64_t(256) << 20);

  /// The object stored under `key`, or nothing (absent, unreadable, or an
  /// entry that fails the checks).
  std::optional<std::string> load(const std::string& key) const;
  /// Stores atomically; an I/O failure is ignored (the cache is an
  /// optimisation, never a reason to fail a compilation).
  void store(const std::string& key, const std::string& object);

  /// The file an entry of `key` lives in (for tests that damage it).
  std::string path_of(const std::string& key) const;
  const std::string& dir() const { return dir_; }

 private:
  void prune();
  std::string dir_;
  int64_t max_bytes_;
  int64_t stores_ = 0;
};

}  // namespace stax::backends::cpu
