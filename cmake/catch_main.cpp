// The Catch2 (v2, single header) main for every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdlib>

#ifdef STAX_TEST_PROVER
#include "proofs/obligation.h"
#endif

namespace {
// Tests never read or write the user's JIT object cache (backends/cpu/
// object_cache.h); the tests of the cache give it a temporary directory.
// Set before main, so the JIT and every `stax` a test starts see it.
const int kNoUserJitCache = ::setenv("STAX_JIT_CACHE", "0", 1);
#ifdef STAX_TEST_PROVER
// The tests of the layers that link proofs discharge side conditions with Z3,
// as the stax command does (proofs::install_default_discharger).
const bool kProverInstalled = (stax::proofs::install_default_discharger(), true);
#endif
}  // namespace
