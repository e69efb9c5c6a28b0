// Shared pieces of the fuzz targets (fuzz/README.md): the libFuzzer entry
// point's signature and a failure that prints what broke and aborts, so that
// libFuzzer (or the standalone driver) saves the input as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace stax::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// An invariant of the target failed: the input is a bug.
[[noreturn]] inline void fail(const std::string& what, const std::string& detail = {}) {
  std::fprintf(stderr, "stax fuzz target: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

}  // namespace stax::fuzz
