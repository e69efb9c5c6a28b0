#include <catch2/catch.hpp>

#include "semantics/dtype.h"

using namespace stax::sem;

TEST_CASE("f16 round trip of the named values") {
  CHECK(f32_to_f16_bits(1.0f) == 0x3c00);
  CHECK(f32_to_f16_bits(65504.0f) == 0x7bff);
  CHECK(f32_to_f16_bits(65520.0f) == 0x7c00);  // halfway to 2^16 rounds to even: inf
  CHECK(f32_to_f16_bits(0x1p-24f) == 0x0001);  // smallest subnormal
}
