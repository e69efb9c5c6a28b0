// Deterministic random inputs (`stax run --random-inputs SEED`): normal
// values mixed with the special ones (±0, ±inf, NaN, subnormals, huge and
// tiny magnitudes). Integer inputs that a program uses as indirect indices are
// drawn from [-s, s) for the extent s they index, so both wrap-around and
// in-range values occur; other integers are small, with the extremes mixed in.
#pragma once

#include <cstdint>
#include <random>

#include "semantics/evaluator.h"

namespace stax::sem {

struct RandomOptions {
  double special_fraction = 0.125;  ///< share of special values among floats
};

/// A reproducible stream (splitmix64): the same seed gives the same values
/// on every platform and library version.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  ///< [0, 1)
  double normal();
  int64_t range(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo)); }  ///< [lo, hi)

 private:
  uint64_t s_;
};

/// Fills a tensor of the given type; throws ResourceError beyond 2^32
/// elements.
Tensor random_tensor(const TensorType& t, Rng& rng, const RandomOptions& opt = {}, int64_t index_extent = 0);
/// Draws every input of a program; input k uses a stream derived from (seed, k).
Inputs random_inputs(const Program& p, uint64_t seed, const RandomOptions& opt = {});
/// The smallest extent an integer input indexes through load(...), or 0.
int64_t index_extent_hint(const Program& p, const std::string& name);

}  // namespace stax::sem
