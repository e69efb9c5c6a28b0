// The Catch2 (v2, single header) main for every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdlib>

namespace {
// Tests never read or write the user's JIT object cache (backends/cpu/
// object_cache.h); the tests of the cache give it a temporary directory.
// Set before main, so the JIT and every `stax` a test starts see it.
const int kNoUserJitCache = ::setenv("STAX_JIT_CACHE", "0", 1);
}  // namespace
