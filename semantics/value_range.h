// Integer value ranges of tensors (Def. 6.4, Prop. 6.4; Example 6.3): the
// Interval domain over scalar lambdas, lifted to tensor expressions. Used for
// the facts of indirect loads: g2's index map(mod(mul(i, 3), 128), iota) has
// values in [0, 127]; an input's values span its dtype.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "semantics/ir.h"

namespace stax::sem {

struct ValueRange {
  int64_t lo = 0, hi = 0;
  bool from_memory = false;  ///< an input (or anything unknown): the dtype's full range
  std::string why;           ///< how it was derived, for the obligation's facts
};

/// The full range of an integer (or bool) dtype; floats get int64's range.
ValueRange dtype_range(sem::DType t);

/// Value ranges of every input and binding of a program, by name.
std::map<std::string, ValueRange> value_ranges(const sem::Program& p);

}  // namespace stax::sem
