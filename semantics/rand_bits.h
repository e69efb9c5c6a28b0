#pragma once
// The counter-based hash of rand(key) (docs/design.md §3): 24 random bits for each
// (key, flat index), splitmix64's finaliser over a linear mix of the two.
// One definition for every executor: the interpreter and the CPU backend
// (rand_value, semantics/ir.cpp) and the GPU backend, whose device code
// compiles this same text (backends/gpu/cuda_math.cpp embeds it; keep to
// <cstdint>, no other includes).
#include <cstdint>

namespace stax::sem {

inline uint32_t rand_bits24(uint64_t key, int64_t flat) {
  uint64_t z = key * 0x9e3779b97f4a7c15ULL + uint64_t(flat) * 0xd1b54a32d192ed03ULL + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return uint32_t(z >> 40);
}

}  // namespace stax::sem
